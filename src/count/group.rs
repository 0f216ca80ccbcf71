//! One group of up to 64 rules sharing one snapshot, one neighbour index and one set of
//! levels: the online algorithm itself.
//!
//! A set is owned by its oldest member, which lists it; the new point `e` is always the
//! newest member of the sets it creates. So the new sets containing `e` are exactly:
//! `{p, e}` for each neighbour `p` (a pair satisfying some rule), and `S ∪ {e}` for each
//! kept set `S` whose owner is a neighbour and whose other members are neighbours too
//! (marked with the event's stamp), with the rules of `S`, of every pair `{q, e}`
//! (q ∈ S) intersected — the seed's join of two (k−1)-sets and their closing pair, done
//! online. A new set completing a rule (n members) is a match; it is kept for the rules
//! that need more members, if the cap allows.
//!
//! Expiry needs no scan either: a point leaves (with every set it owns) once the longest
//! window has passed over it; and each window class has a cursor over the points, so the
//! sets whose longest window has passed over their owner are freed on time.

use std::collections::VecDeque;

use smallvec::SmallVec;

use crate::event::{Point, Space};

use super::levels::{Levels, SetRef};
use super::metric::Embedded;
use super::neighbours::{Lookup, Neighbours};
use super::rules::{PairEnd, Rules};
use super::{Budget, Rule};

/// A set listed by its owner, with its expiry class.
#[derive(Clone, Copy, Debug)]
struct Owned {
    set: SetRef,
    class: u32,
}

/// A live point.
struct Live<T, D> {
    cause: u64,
    time: i64,
    at: Point,
    embedded: Embedded,
    distinct: Option<D>,
    payload: T,
    /// The sets this point is the oldest member of.
    owned: SmallVec<[Owned; 4]>,
    /// The stamp of the last event that found this point a neighbour.
    stamp: u64,
    /// The rules that pair held for (valid while `stamp` is current).
    pair: u64,
}

/// A set found during one insertion, before it is stored.
#[derive(Clone, Copy, Debug)]
struct Found {
    /// Range in `scratch_members`.
    start: usize,
    len: usize,
    /// Rules it completes.
    complete: u64,
    /// Rules it must be kept for.
    keep: u64,
}

/// The index for one group of rules.
pub(super) struct Group<T, D> {
    space: Space,
    rules: Rules,
    /// Global index of this group's rule 0.
    offset: usize,
    levels: Levels,
    neighbours: Neighbours,
    reach: f64,
    /// Live points, oldest first; `points[0]` has id `base`.
    points: VecDeque<Live<T, D>>,
    base: u64,
    /// Per expiry class: the first point whose sets of that class are not yet freed.
    cursors: Vec<u64>,
    stamp: u64,
    scratch_candidates: Vec<u64>,
    scratch_neighbours: Vec<(u64, u64)>,
    scratch_members: Vec<u64>,
    scratch_found: Vec<Found>,
    scratch_matches: Vec<(usize, usize, usize)>,
}

impl<T: Clone, D: Eq + Clone> Group<T, D> {
    /// A group for `rules` (at most 64), whose first rule has global index `offset`.
    pub(super) fn new(space: Space, rules: &[Rule], offset: usize, lookup: Lookup) -> Self {
        let rules = Rules::new(space, rules);
        let reach = rules.reach_squared().max(0.0).sqrt();
        let dims = match space {
            Space::Planar => 2,
            Space::Wgs84 => 3,
        };
        Group {
            space,
            cursors: vec![0; rules.class_windows().len()],
            rules,
            offset,
            levels: Levels::default(),
            neighbours: Neighbours::new(lookup, dims, reach),
            reach,
            points: VecDeque::new(),
            base: 0,
            stamp: 0,
            scratch_candidates: Vec::new(),
            scratch_neighbours: Vec::new(),
            scratch_members: Vec::new(),
            scratch_found: Vec::new(),
            scratch_matches: Vec::new(),
        }
    }

    fn point(&self, id: u64) -> &Live<T, D> {
        &self.points[(id - self.base) as usize]
    }

    fn point_mut(&mut self, id: u64) -> &mut Live<T, D> {
        &mut self.points[(id - self.base) as usize]
    }

    /// The id the next stored point gets.
    fn next_id(&self) -> u64 {
        self.base + self.points.len() as u64
    }

    /// Frees what no rule can use at `now` or later.
    pub(super) fn expire(&mut self, now: i64, budget: &mut Budget) {
        for c in 0..self.cursors.len() {
            let window = self.rules.class_windows()[c];
            let end = self.next_id();
            let mut id = self.cursors[c].max(self.base);
            while id < end && now.saturating_sub(self.point(id).time) > window {
                let class = c as u32;
                let mut owned = std::mem::take(&mut self.point_mut(id).owned);
                owned.retain(|o| {
                    if o.class == class {
                        self.levels.remove(o.set);
                        budget.live -= 1;
                        false
                    } else {
                        true
                    }
                });
                self.point_mut(id).owned = owned;
                id += 1;
            }
            self.cursors[c] = id;
        }
        let max_window = self.rules.keeps_points().unwrap_or(i64::MIN);
        while let Some(front) = self.points.front() {
            if now.saturating_sub(front.time) <= max_window {
                break;
            }
            for o in &front.owned {
                self.levels.remove(o.set);
                budget.live -= 1;
            }
            self.neighbours.remove_oldest(self.base, &front.embedded);
            self.points.pop_front();
            self.base += 1;
        }
    }

    /// Inserts a point (after `expire(time)`), appending its matches, sorted by rule
    /// then members, to `out`.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert(
        &mut self,
        cause: u64,
        time: i64,
        at: Point,
        embedded: &Embedded,
        distinct: &Option<D>,
        payload: &T,
        budget: &mut Budget,
        out: &mut Vec<(usize, Vec<T>)>,
    ) {
        for &bit in self.rules.singles() {
            if self.rules.single_matches(bit, distinct.is_some()) {
                out.push((self.offset + bit, vec![payload.clone()]));
            }
        }
        if self.rules.keeps_points().is_none() {
            return;
        }
        let id = self.next_id();
        self.stamp += 1;
        let stamp = self.stamp;

        // 1. Neighbours: the live points whose pair with e satisfies some rule.
        let mut candidates = std::mem::take(&mut self.scratch_candidates);
        let mut neighbours = std::mem::take(&mut self.scratch_neighbours);
        candidates.clear();
        neighbours.clear();
        self.neighbours.query(embedded, self.reach, &mut candidates);
        let e = PairEnd {
            cause,
            time,
            at,
            embedded,
            distinct: distinct.as_ref(),
        };
        for &q in &candidates {
            let p = self.point(q);
            let older = PairEnd {
                cause: p.cause,
                time: p.time,
                at: p.at,
                embedded: &p.embedded,
                distinct: p.distinct.as_ref(),
            };
            let pair = self.rules.pair_mask(&older, &e);
            if pair != 0 {
                let p = self.point_mut(q);
                p.stamp = stamp;
                p.pair = pair;
                neighbours.push((q, pair));
            }
        }
        // Deterministic regardless of the lookup: the cap keeps sets first come, first served.
        neighbours.sort_unstable_by_key(|&(q, _)| q);

        // 2. The new sets containing e: {p, e}, and S ∪ {e} for S owned by a neighbour p
        //    with all of S among the neighbours.
        let mut members = std::mem::take(&mut self.scratch_members);
        let mut found = std::mem::take(&mut self.scratch_found);
        members.clear();
        found.clear();
        for &(p, pair) in &neighbours {
            self.found(&[p, id], pair, &mut members, &mut found);
            for o in &self.point(p).owned {
                let mut mask = self.levels.mask(o.set) & pair;
                if mask == 0 {
                    continue;
                }
                let set = self.levels.members(o.set);
                for &q in &set[1..] {
                    let q = self.point(q);
                    if q.stamp != stamp {
                        mask = 0;
                        break;
                    }
                    mask &= q.pair;
                    if mask == 0 {
                        break;
                    }
                }
                if mask != 0 {
                    let start = members.len();
                    members.extend_from_slice(set);
                    members.push(id);
                    self.record(start, mask, &mut members, &mut found);
                }
            }
        }

        // 3. Keep what must grow, within the cap.
        for f in &found {
            if f.keep == 0 {
                continue;
            }
            if budget.live >= budget.max {
                budget.refused += 1;
                continue;
            }
            let set = &members[f.start..f.start + f.len];
            if let Some(r) = self.levels.add(set, f.keep) {
                budget.live += 1;
                let class = self.rules.class_of(f.keep) as u32;
                self.point_mut(set[0]).owned.push(Owned { set: r, class });
            } else {
                budget.refused += 1;
            }
        }

        // 4. Store e.
        self.neighbours.insert(id, embedded);
        self.points.push_back(Live {
            cause,
            time,
            at,
            embedded: *embedded,
            distinct: distinct.clone(),
            payload: payload.clone(),
            owned: SmallVec::new(),
            stamp: 0,
            pair: 0,
        });

        // 5. Report: rules in order, then sets by their members in insertion order.
        let mut matches = std::mem::take(&mut self.scratch_matches);
        matches.clear();
        for f in &found {
            let mut m = f.complete;
            while m != 0 {
                let bit = m.trailing_zeros() as usize;
                m &= m - 1;
                matches.push((bit, f.start, f.len));
            }
        }
        matches.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| members[a.1..a.1 + a.2].cmp(&members[b.1..b.1 + b.2]))
        });
        for &(bit, start, len) in &matches {
            let payloads = members[start..start + len]
                .iter()
                .map(|&q| self.point(q).payload.clone())
                .collect();
            out.push((self.offset + bit, payloads));
        }

        self.scratch_candidates = candidates;
        self.scratch_neighbours = neighbours;
        self.scratch_members = members;
        self.scratch_found = found;
        self.scratch_matches = matches;
    }

    /// Records the pair `set` (two ids) with the rules `pair` it satisfies.
    fn found(&self, set: &[u64], pair: u64, members: &mut Vec<u64>, found: &mut Vec<Found>) {
        let start = members.len();
        members.extend_from_slice(set);
        self.record(start, pair, members, found);
    }

    /// Records the set `members[start..]` serving `mask`, if it completes or must grow.
    fn record(&self, start: usize, mask: u64, members: &mut Vec<u64>, found: &mut Vec<Found>) {
        let len = members.len() - start;
        let complete = mask & self.rules.complete(len);
        let keep = mask & self.rules.need(len);
        if complete == 0 && keep == 0 {
            members.truncate(start);
            return;
        }
        found.push(Found {
            start,
            len,
            complete,
            keep,
        });
    }

    /// Live points.
    pub(super) fn live_points(&self) -> usize {
        self.points.len()
    }

    /// Live sets with `k` members.
    pub(super) fn live_sets(&self, k: usize) -> usize {
        self.levels.live(k)
    }

    /// The largest member count any set has had.
    pub(super) fn highest_level(&self) -> usize {
        self.levels.highest()
    }
}

//! One group of up to 64 rules sharing one snapshot, one neighbour index and one set of
//! levels: the online algorithm itself.
//!
//! A kept set is owned by its oldest member; the new point `e` is always the newest
//! member of the sets it creates. So the new sets containing `e` are exactly: `{p, e}`
//! for each neighbour `p` (a pair satisfying some rule), and `S ∪ {e}` for each kept set
//! `S` whose owner is a neighbour and whose other members are neighbours too (looked
//! up in the sorted list of neighbours, which is small and in cache), serving the
//! rules of `S` and of every pair `{q, e}` (q ∈ S) — the note's join of two
//! (k−1)-sets and their closing pair, done online. A new set
//! that completes a rule (n members) is a match; it is kept for the rules that need
//! more members, if the cap allows.
//!
//! Expiry needs no scan either: a point leaves, with every set it owns, once the
//! longest window has passed over it; and each shorter window class has a cursor over
//! the points, so that the sets whose longest window has passed over their owner are
//! dropped on time.

use std::collections::VecDeque;

use crate::event::{Point, Space};

use super::levels::{Levels, Owned};
use super::metric::Embedded;
use super::neighbours::{Lookup, Neighbours};
use super::rules::{PairEnd, Rules};
use super::{Matches, Rule, SetBudget};

/// A live point.
#[derive(serde::Serialize, serde::Deserialize)]
struct Live<D> {
    cause: u64,
    time: i64,
    at: Point,
    embedded: Embedded,
    distinct: Option<D>,
    /// The sets this point is the oldest member of.
    owned: Owned,
}

/// Asks for every cache line of `*v`.
#[inline]
fn prefetch_lines<V>(v: &V) {
    let p = (v as *const V).cast::<u8>();
    for offset in (0..std::mem::size_of::<V>()).step_by(64) {
        crate::hint::prefetch(p.wrapping_add(offset));
    }
    crate::hint::prefetch(p.wrapping_add(std::mem::size_of::<V>().saturating_sub(1)));
}

/// A set found during one insertion, before it is kept or reported.
#[derive(Clone, Copy, Debug)]
struct Found {
    /// Its members are `scratch_members[start..start + len]`.
    start: usize,
    len: usize,
    /// Rules it completes.
    complete: u64,
    /// Rules it must be kept for.
    keep: u64,
}

/// The index for one group of rules.
#[derive(serde::Serialize, serde::Deserialize)]
pub(super) struct Group<T, D> {
    rules: Rules,
    /// Global index of this group's rule 0.
    offset: usize,
    levels: Levels,
    neighbours: Neighbours,
    /// Live points, oldest first; `points[0]` has id `base`. Payloads have
    /// the same indices.
    points: VecDeque<Live<D>>,
    payloads: VecDeque<T>,
    base: u64,
    /// Per expiry class: the first point whose sets of that class are not yet dropped.
    cursors: Vec<u64>,
    #[serde(skip)]
    scratch_candidates: Vec<u64>,
    #[serde(skip)]
    scratch_neighbours: Vec<(u64, u64)>,
    #[serde(skip)]
    scratch_members: Vec<u64>,
    #[serde(skip)]
    scratch_found: Vec<Found>,
    #[serde(skip)]
    scratch_matches: Vec<(usize, usize, usize)>,
    /// (packed middle members, start) of one owner's matches, for sorting.
    #[serde(skip)]
    scratch_keyed: Vec<(u128, usize)>,
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
            cursors: vec![0; rules.class_windows().len()],
            rules,
            offset,
            levels: Levels::default(),
            neighbours: Neighbours::new(lookup, dims, reach),
            points: VecDeque::new(),
            payloads: VecDeque::new(),
            base: 0,
            scratch_candidates: Vec::new(),
            scratch_neighbours: Vec::new(),
            scratch_members: Vec::new(),
            scratch_found: Vec::new(),
            scratch_matches: Vec::new(),
            scratch_keyed: Vec::new(),
        }
    }

    fn index(&self, id: u64) -> usize {
        (id - self.base) as usize
    }

    /// The id the next stored point gets.
    fn next_id(&self) -> u64 {
        self.base + self.points.len() as u64
    }

    /// Drops what no rule can use at `now` or later.
    pub(super) fn expire(&mut self, now: i64, budget: &mut SetBudget) {
        let max_window = self.rules.max_window().unwrap_or(i64::MIN);
        for c in 0..self.cursors.len() {
            let window = self.rules.class_windows()[c];
            if window >= max_window {
                // These sets leave with their owner, below.
                continue;
            }
            let end = self.next_id();
            let mut id = self.cursors[c].max(self.base);
            while id < end {
                let i = self.index(id);
                if now.saturating_sub(self.points[i].time) <= window {
                    break;
                }
                let levels = &mut self.levels;
                self.points[i].owned.drop_class(c as u32, |h| {
                    levels.removed(h.level());
                    budget.live -= 1;
                });
                id += 1;
            }
            self.cursors[c] = id;
        }
        while self
            .points
            .front()
            .is_some_and(|front| now.saturating_sub(front.time) > max_window)
        {
            self.pop_oldest(budget);
        }
    }

    /// Drops the points inserted before the `id`-th (and every set containing them).
    pub(super) fn drop_before(&mut self, id: u64, budget: &mut SetBudget) {
        while self.base < id && !self.points.is_empty() {
            self.pop_oldest(budget);
        }
    }

    /// Drops the oldest point and the sets it is in: it is the oldest member of each,
    /// so it owns them all.
    fn pop_oldest(&mut self, budget: &mut SetBudget) {
        let Some(front) = self.points.pop_front() else {
            return;
        };
        for h in front.owned.heads() {
            self.levels.removed(h.level());
            budget.live -= 1;
        }
        self.neighbours.remove_oldest(self.base, &front.embedded);
        self.payloads.pop_front();
        self.base += 1;
    }

    /// Inserts a point (after `expire(time)`), appending its matches to `out`: rules in
    /// order, each rule's sets in the lexicographic order of their members' ids.
    /// `ahead` gets each neighbour's payload as soon as the neighbour is found.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn insert(
        &mut self,
        cause: u64,
        time: i64,
        at: Point,
        embedded: &Embedded,
        distinct: &Option<D>,
        payload: &T,
        budget: &mut SetBudget,
        (limit, out): (usize, &mut Matches<T>),
        ahead: &mut impl FnMut(&T),
    ) -> u64 {
        for &bit in self.rules.singles() {
            if self.rules.single_matches(bit, distinct.is_some()) {
                out.push(self.offset + bit, std::iter::once(payload.clone()));
            }
        }
        if self.rules.max_window().is_none() {
            return 0;
        }
        let id = self.next_id();

        // 1. Neighbours: the live points whose pair with e satisfies some rule.
        let mut candidates = std::mem::take(&mut self.scratch_candidates);
        let mut neighbours = std::mem::take(&mut self.scratch_neighbours);
        candidates.clear();
        neighbours.clear();
        self.neighbours
            .query(embedded, self.rules.reach_squared(), &mut candidates);
        // The candidates' entries lie anywhere in the window: ask for them all before
        // reading the first, so that their misses overlap.
        for &q in &candidates {
            let i = self.index(q);
            prefetch_lines(&self.points[i]);
            crate::hint::prefetch(&self.payloads[i]);
        }
        let e = PairEnd {
            cause,
            time,
            at,
            embedded,
            distinct: distinct.as_ref(),
        };
        for &q in &candidates {
            let i = self.index(q);
            let p = &self.points[i];
            let older = PairEnd {
                cause: p.cause,
                time: p.time,
                at: p.at,
                embedded: &p.embedded,
                distinct: p.distinct.as_ref(),
            };
            let pair = self.rules.pair_mask(&older, &e);
            if pair != 0 {
                neighbours.push((q, pair));
                ahead(&self.payloads[i]);
            }
        }
        // Independent of the lookup's order: the cap keeps sets first come, first served.
        neighbours.sort_unstable_by_key(|&(q, _)| q);

        // 2. The new sets containing e: {p, e}, and S ∪ {e} for each S owned by a
        //    neighbour p with all of S among the neighbours.
        let mut members = std::mem::take(&mut self.scratch_members);
        let mut found = std::mem::take(&mut self.scratch_found);
        members.clear();
        found.clear();
        // With the cap reached nothing found now can be kept, so a set S ∪ {e} matters
        // only if it completes a rule: S must have n − 1 members for some rule n. When
        // no such S is kept, the owned sets are not read at all (with n = 1024 and a
        // full cap, reading them and refusing every extension cost 80 ms an event).
        let full = budget.live >= budget.max;
        let grow = !full
            || self
                .rules
                .sizes()
                .any(|n| n >= 3 && self.levels.live(n - 1) > 0);
        for (k, &(p, pair)) in neighbours.iter().enumerate() {
            // The sets p owns have their other members after p.
            let later = &neighbours[k + 1..];
            let start = members.len();
            members.extend_from_slice(&[p, id]);
            self.record(start, pair, &mut members, &mut found);
            if !grow {
                continue;
            }
            for (head, others) in self.points[self.index(p)].owned.iter() {
                let mut mask = head.mask & pair;
                if full {
                    mask &= self.rules.complete(head.level() + 1);
                }
                for &d in others {
                    if mask == 0 {
                        break;
                    }
                    // The neighbours are few and sorted, and in cache.
                    let q = p + u64::from(d);
                    mask &= match later.binary_search_by_key(&q, |&(n, _)| n) {
                        Ok(j) => later[j].1,
                        Err(_) => 0,
                    };
                }
                if mask != 0 {
                    let start = members.len();
                    members.push(p);
                    members.extend(others.iter().map(|&d| p + u64::from(d)));
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
            let class = self.rules.class_of(f.keep) as u32;
            let owner = self.index(set[0]);
            if self.points[owner]
                .owned
                .push(set[0], &set[1..], f.keep, class)
            {
                budget.live += 1;
                self.levels.added(set.len());
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
            owned: Owned::default(),
        });
        self.payloads.push_back(payload.clone());

        // 5. Report: rules in order, each rule's sets in lexicographic order. Found sets
        //    come by owner (first member) ascending, often already in order.
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
        if !matches.is_sorted_by_key(|m| m.0) {
            matches.sort_by_key(|m| m.0);
        }
        // Within one rule (one size), sort each owner's run by its middle members.
        let set = |m: &(usize, usize, usize)| &members[m.1..m.1 + m.2];
        let mut keyed = std::mem::take(&mut self.scratch_keyed);
        let mut i = 0;
        while i < matches.len() {
            let (bit, owner) = (matches[i].0, members[matches[i].1]);
            let run = matches[i..]
                .iter()
                .take_while(|m| m.0 == bit && members[m.1] == owner)
                .count();
            let run = &mut matches[i..i + run];
            i += run.len();
            if run.is_sorted_by(|a, b| set(a) <= set(b)) {
                continue;
            }
            if run[0].2 <= 6 {
                // Middle members belong to a kept set, so lie within 2³² of the owner:
                // up to four pack into a u128 that orders like the slices.
                keyed.clear();
                keyed.extend(run.iter().map(|m| {
                    let middle = set(m)[1..m.2 - 1]
                        .iter()
                        .fold(0u128, |k, &q| k << 32 | u128::from((q - owner) as u32));
                    (middle, m.1)
                }));
                keyed.sort_unstable();
                for (m, &(_, start)) in run.iter_mut().zip(&keyed) {
                    m.1 = start;
                }
            } else {
                run.sort_unstable_by(|a, b| set(a).cmp(set(b)));
            }
        }
        self.scratch_keyed = keyed;
        // At most `limit` per rule (matches come by rule), the first in order.
        let (mut cut, mut rule, mut reported) = (0, usize::MAX, 0);
        for &(bit, start, len) in &matches {
            if bit != rule {
                (rule, reported) = (bit, 0);
            }
            reported += 1;
            if reported > limit {
                cut += u64::from(reported == limit + 1);
                continue;
            }
            let payloads = members[start..start + len]
                .iter()
                .map(|&q| self.payloads[self.index(q)].clone());
            out.push(self.offset + bit, payloads);
        }

        self.scratch_candidates = candidates;
        self.scratch_neighbours = neighbours;
        self.scratch_members = members;
        self.scratch_found = found;
        self.scratch_matches = matches;
        cut
    }

    /// Records the set `members[start..]` serving `mask`, if it completes a rule or must
    /// grow; forgets it otherwise.
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

    /// Kept sets with `k` members.
    pub(super) fn live_sets(&self, k: usize) -> usize {
        self.levels.live(k)
    }

    /// The largest member count any kept set has had.
    pub(super) fn highest_level(&self) -> usize {
        self.levels.highest()
    }
}

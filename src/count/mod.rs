//! The counting rule on a level-wise index: n points pairwise closer than a distance,
//! inside a time window, found online as each point arrives.
//!
//! **Architecture Invariant:** `count` knows nothing of Petri nets, tokens or events
//! beyond [`Timestamp`], [`Point`] and [`Space`]; a point carries an opaque payload.
//!
//! # What it detects
//!
//! A [`Rule`] `(n, distance d, window W, distinct)` matches every set of `n` points,
//! inserted by different calls, such that
//! - every two members are strictly closer than `d` (planar Euclidean, or geodesic
//!   metres on WGS84 — `crate::spatial::distance`, measured from the earlier-inserted
//!   member to the later one);
//! - the set fits the window: latest time − earliest time ≤ `W`;
//! - no two members were inserted with the same `cause` (one input event);
//! - with `distinct`, every member has a distinct value and the values are pairwise
//!   different (a point without a value is in no set of a distinct rule).
//!
//! Each match is reported exactly once, by the [`CountIndex::insert`] call of its last
//! member, as the rule's index and its members' payloads in insertion order; the
//! matches of one call come by rule index, then in the lexicographic order of their
//! members' insertion (whatever the neighbour index and the other rules).
//!
//! The definition is pairwise: pairwise closeness does not put the points in a circle
//! of diameter `d` (Jung's theorem only gives radius `d/√3`), so no enclosing-circle
//! test replaces it. A rule with `n = 1` matches every point on its own
//! (if `W ≥ 0`, and with `distinct` if the point has a value); `n = 0` matches nothing.
//!
//! # The index
//!
//! This follows the note on counting rules over spatio-temporal streams with a
//! level-wise index. The *live snapshot* is the points inside the longest window. Level
//! L2 holds the close pairs, Lk the k-sets grown from L(k−1) (two (k−1)-sets sharing
//! k−2 members whose two other members form a pair). Online, a new point `e` finds its
//! neighbours N(e) through an index of live points; every L(n−1) set inside N(e), joined
//! with `e`, is a new match; and `e` joins the levels. The note's scans of whole levels
//! are replaced by ownership: each kept set is stored with its oldest member (see
//! `levels`), so an insertion only reads the sets owned by its neighbours, and an
//! expiry only the sets owned by the leaving point (see `group`).
//!
//! All rules share one index (the note's multi-rule part). Each set carries the mask of
//! the rules it still serves: a pair gets the rules whose distance, window and distinct
//! condition it meets; the counting table lists per level the rules that still need it
//! (a rule with `n = 3` is not kept in L3: its 3-sets are matches, reported and not
//! stored); growing a set intersects its mask with the masks of the pairs that close
//! it, and stops as soon as the intersection is empty. A set is freed as soon as the
//! longest window among its rules has passed over its oldest member, so a set that
//! fits a long rule's window but not a short one's lives on for the long rule only.
//! Rules come in groups of 64 (one bit each); more rules make more groups, each with
//! its own snapshot.
//!
//! Neighbours come from a hashed grid (cells three times the largest reach; WGS84 points
//! embedded on a sphere in 3-D, so no seam at the antimeridian or the poles) rather
//! than an R*-tree: see `neighbours` for why and the benches (`benches/count.rs`) for
//! the figures. Closeness is decided on the embedding where it is certain and by the
//! exact distance in a thin band around `d` (see `metric`).
//!
//! # The cap
//!
//! Dense clusters make the levels combinatorial (50 points close together, n = 5: some
//! two million 4-sets). `max_sets` bounds the sets kept, over all levels and groups.
//! When it is reached, a new set that would have to be kept (because some rule needs
//! more members) is not stored and is counted in [`CountIndex::refused`]; it is still
//! reported if it completes a rule. A match is found if and only if each of its
//! prefixes in insertion order with 2 … n−1 members was kept when it was formed; so a
//! refusal loses exactly the matches (and sets) that extend the refused set. Sets are
//! kept first come, first served (by insertion, then neighbours in insertion order), and
//! expiry makes room again. A set costs its owner 16 bytes plus 4 per other member.
//! The matches of one call are bounded by the kept sets and the live points (once per
//! rule), so memory is bounded by `max_sets` and the live points; the caller may
//! bound the matches reported per rule further (`insert_with`'s `limit`).
//!
//! With the cap reached, nothing a call forms can be kept, so it forms only the sets
//! that complete a rule: it reads the kept sets of its neighbours only if some rule's
//! `n − 1` level holds sets, and of those only the ones of a completing size. Its
//! matches are the same; [`CountIndex::refused`] then counts the pairs refused, not
//! the larger sets that could only have been refused.

// The runtime's `Count` unit is wired separately; until it calls this module, only the
// tests and the benches do.

mod group;
mod levels;
mod metric;
mod neighbours;
mod rules;

#[cfg(test)]
mod reference;
#[cfg(test)]
mod tests;

use crate::event::{Point, Space, Timestamp};

use group::Group;
pub(crate) use neighbours::Lookup;

/// One counting rule: `n` points pairwise closer than `distance`, within `window`.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Rule {
    /// How many points make a match.
    pub(crate) n: usize,
    /// Pairs must be strictly closer than this (planar units, or metres on WGS84).
    pub(crate) distance: f64,
    /// Latest minus earliest member time must not exceed this (microseconds).
    pub(crate) window: i64,
    /// Members must each have a distinct value, pairwise different.
    pub(crate) distinct: bool,
}

/// The matches of insertions, flat: for each, its rule and its members' payloads in
/// insertion order. Reused across calls, it allocates only when it grows.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Matches<T> {
    /// (rule index, start and length in `payloads`) per match.
    sets: Vec<(usize, usize, usize)>,
    payloads: Vec<T>,
}

impl<T> Default for Matches<T> {
    fn default() -> Self {
        Matches {
            sets: Vec::new(),
            payloads: Vec::new(),
        }
    }
}

impl<T> Matches<T> {
    /// No matches.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Forgets every match, keeping the storage.
    pub(crate) fn clear(&mut self) {
        self.sets.clear();
        self.payloads.clear();
    }

    /// The number of matches.
    pub(crate) fn len(&self) -> usize {
        self.sets.len()
    }

    /// Are there none?
    #[cfg_attr(not(test), allow(dead_code))] // paired with `len`
    pub(crate) fn is_empty(&self) -> bool {
        self.sets.is_empty()
    }

    /// Each match: its rule's index and its members' payloads in insertion order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (usize, &[T])> + '_ {
        self.sets
            .iter()
            .map(|&(rule, start, len)| (rule, &self.payloads[start..start + len]))
    }

    /// Appends a match.
    #[inline]
    fn push(&mut self, rule: usize, payloads: impl Iterator<Item = T>) {
        let start = self.payloads.len();
        self.payloads.extend(payloads);
        self.sets.push((rule, start, self.payloads.len() - start));
    }
}

/// The cap on kept sets, shared by the groups.
#[derive(Clone, Copy, Debug, serde::Serialize, serde::Deserialize)]
struct SetBudget {
    /// The most sets kept at once.
    max: usize,
    /// Sets kept now.
    live: usize,
    /// Sets not kept because `live` had reached `max`.
    refused: u64,
}

/// The level-wise index for a list of rules sharing one stream of points.
///
/// `T` is the payload reported for each member of a match; `D` the distinct value.
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct CountIndex<T, D> {
    space: Space,
    max_n: usize,
    groups: Vec<Group<T, D>>,
    budget: SetBudget,
}

impl<T: Clone, D: Eq + Clone> CountIndex<T, D> {
    /// An index for `rules` in `space`, keeping at most `max_sets` sets.
    pub(crate) fn new(space: Space, rules: Vec<Rule>, max_sets: usize) -> Self {
        Self::with_lookup(space, rules, max_sets, Lookup::default())
    }

    /// As [`CountIndex::new`], finding neighbours with `lookup`.
    pub(crate) fn with_lookup(
        space: Space,
        rules: Vec<Rule>,
        max_sets: usize,
        lookup: Lookup,
    ) -> Self {
        let groups = rules
            .chunks(rules::GROUP)
            .enumerate()
            .map(|(g, chunk)| Group::new(space, chunk, g * rules::GROUP, lookup))
            .collect();
        CountIndex {
            space,
            max_n: rules.iter().map(|r| r.n).max().unwrap_or(0),
            groups,
            budget: SetBudget {
                max: max_sets,
                live: 0,
                refused: 0,
            },
        }
    }

    /// Drops the points (and every set containing them) that no rule's window can use
    /// at `now` or later, and the sets whose rules' windows have all passed over them.
    /// Later insertions must not be earlier than `now`.
    pub(crate) fn expire(&mut self, now: Timestamp) {
        for g in &mut self.groups {
            g.expire(now.micros(), &mut self.budget);
        }
    }

    /// Drops the points inserted before the `n`-th (counting from 0), and every set
    /// containing them, whatever their time: to keep within a cap on live points.
    pub(crate) fn drop_before(&mut self, n: u64) {
        for g in &mut self.groups {
            g.drop_before(n, &mut self.budget);
        }
    }

    /// Inserts a point caused by input event `cause` (points of one cause never share a
    /// set) at `time` (non-decreasing across calls; this expires first), and appends to
    /// `out` one match (rule index, members' payloads in insertion order) per newly
    /// complete set — rules in index order, and for each rule sets in the lexicographic
    /// order of their members' insertion.
    #[cfg_attr(not(test), allow(dead_code))] // the runtime uses `insert_with`
    pub(crate) fn insert(
        &mut self,
        cause: u64,
        time: Timestamp,
        at: Point,
        distinct: Option<D>,
        payload: T,
        out: &mut Matches<T>,
    ) {
        self.insert_with(cause, time, at, distinct, payload, usize::MAX, out, |_| {});
    }

    /// As [`CountIndex::insert`], reporting at most `limit` matches per rule (the
    /// first in the order above), and calling `ahead` with the payload of each
    /// neighbour as soon as it is found, before any match is made: a chance to fetch
    /// into cache what the caller will read of the matches' members. Returns the
    /// number of rules that had more matches than `limit`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn insert_with(
        &mut self,
        cause: u64,
        time: Timestamp,
        at: Point,
        distinct: Option<D>,
        payload: T,
        limit: usize,
        out: &mut Matches<T>,
        mut ahead: impl FnMut(&T),
    ) -> u64 {
        self.expire(time);
        let embedded = metric::embed(self.space, at);
        let mut cut = 0;
        for g in &mut self.groups {
            cut += g.insert(
                cause,
                time.micros(),
                at,
                &embedded,
                &distinct,
                &payload,
                &mut self.budget,
                (limit, out),
                &mut ahead,
            );
        }
        cut
    }

    /// The points in the live snapshot (per group; a point counts once per group).
    pub(crate) fn live_points(&self) -> usize {
        self.groups.iter().map(|g| g.live_points()).sum()
    }

    /// Live sets per level, levels 2 ..= the largest `n` (entry `i` is level `i + 2`).
    /// The top level is always empty: complete sets are reported, not kept. For a huge
    /// `n` the list stops at level 65 or one above the highest level that has held a
    /// set, whichever is higher.
    pub(crate) fn live_sets(&self) -> Vec<usize> {
        let highest = self.groups.iter().map(|g| g.highest_level()).max();
        let top = self.max_n.min(highest.unwrap_or(0).max(64) + 1);
        (2..=top)
            .map(|k| self.groups.iter().map(|g| g.live_sets(k)).sum())
            .collect()
    }

    /// Sets not kept because `max_sets` was reached (see the module documentation).
    pub(crate) fn refused(&self) -> u64 {
        self.budget.refused
    }
}

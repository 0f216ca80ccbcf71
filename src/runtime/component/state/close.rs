//! `Close(of, max, within, distinct: attr)`: a state per unordered pair of different
//! values of `attr`, true while the two values' latest located occurrences are at
//! most `within` apart in time and `max` apart in space. A pair changes only when one
//! of its two values has a new occurrence y, paired with the other's latest x; its
//! transitions are at y, with `ids` = ids(x) ∪ ids(y).
//!
//! The latest occurrence of each value is kept in a grid of cells `max` wide (planar
//! squares, or cubes on the sphere for WGS84, where a chord is never longer than the
//! geodesic), so a new occurrence looks only at the values near it and
//! at the pairs it is in that hold, never at every value.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};
use smallvec::SmallVec;

use super::keyed::Keyed;
use super::{first_by_ids, give_room, since, take_room, transition, Graves};
use crate::event::{Point, Space, Timestamp};
use crate::model::Attr;
use crate::runtime::component::Cx;
use crate::runtime::token::{KeyVal, Since, StateKeyVal, Token};
use crate::spatial::{floor_to_i64, on_sphere, within_distance};

type Cell = (i64, i64, i64);

/// A value's latest located occurrence as its cell files it: what the pairing test
/// reads, so that scanning a cell reads 32 bytes an occurrence, inline in the cell's
/// entry for a cell of one or two.
#[derive(Clone, Copy, Debug, Serialize, Deserialize)]
struct Latest {
    at: Point,
    end: Timestamp,
    /// The value's number in [`Close::values`].
    value: u32,
    /// The value's [`KeyVal::tag`]: a report finds its value's entry among the
    /// cells around it by this (and then its key), without a look-up in the table of
    /// every value. Not saved: set again when a snapshot is loaded.
    #[serde(skip)]
    tag: u32,
}

/// What `Close` keeps of one value: its latest located occurrence (`None` only when
/// the cap turned it away while the value holds pairs) and the values it holds a
/// pair with, by number. A value is forgotten when it has neither.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Value {
    latest: Option<(Cell, Token)>,
    partners: FxHashSet<u32>,
}

impl Value {
    fn new() -> Value {
        Value {
            latest: None,
            partners: FxHashSet::default(),
        }
    }
}

/// The component of `Close`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Close {
    attr: Attr,
    max: f64,
    within: i64,
    /// Each value, numbered.
    values: Keyed<Value, KeyVal>,
    /// How many values have a latest occurrence.
    located: usize,
    /// The latest occurrences in each cell.
    cells: FxHashMap<Cell, SmallVec<[Latest; 2]>>,
    /// The state place: the pairs that hold (by their numbers, the lower first),
    /// since when.
    holds: FxHashMap<(u32, u32), Since>,
    next_sweep: Timestamp,
    /// The located values by the end of a latest occurrence each has had, earliest
    /// first: a sweep takes out those whose end is too old and visits only them, and
    /// the values [`Close::unparked`] names, never every value.
    #[serde(skip)]
    expiry: BinaryHeap<Reverse<(Timestamp, u32)>>,
    /// By value number: the end its entry in `expiry` carries, if it has one (a
    /// located value has one, unless a sweep found its latest occurrence too old
    /// while it held a pair).
    #[serde(skip)]
    queued: Vec<Option<Timestamp>>,
    /// Values a sweep left without an entry in `expiry` (their latest occurrence too
    /// old, a pair held) that have since lost their last pair.
    #[serde(skip)]
    unparked: Vec<u32>,
    /// Latest occurrences replaced by newer ones, dropped a little later.
    #[serde(skip)]
    graves: Graves,
}

/// A pair of value numbers, in their fixed order.
fn pair(a: u32, b: u32) -> (u32, u32) {
    (a.min(b), a.max(b))
}

impl Close {
    pub(crate) fn new(attr: Attr, max: f64, within: i64) -> Close {
        Close {
            attr,
            max,
            within,
            values: Keyed::default(),
            located: 0,
            cells: FxHashMap::default(),
            holds: FxHashMap::default(),
            next_sweep: Timestamp::MIN,
            expiry: BinaryHeap::new(),
            queued: Vec::new(),
            unparked: Vec::new(),
            graves: Graves::default(),
        }
    }

    pub(crate) fn live(&self) -> usize {
        self.located + self.holds.len()
    }

    /// Takes the state of `saved`, the same component in a snapshot.
    pub(crate) fn load(&mut self, saved: Close) {
        *self = saved;
        let values = &self.values;
        for x in self.cells.values_mut().flatten() {
            x.tag = values.key(x.value).tag();
        }
        let located: Vec<(u32, Timestamp)> = self
            .values
            .iter()
            .filter_map(|(i, _, v)| v.latest.as_ref().map(|(_, tok)| (i, tok.end)))
            .collect();
        for (i, end) in located {
            self.queue(i, end);
        }
    }

    /// Gives value `i`, whose latest occurrence ends at `end`, its entry in
    /// `expiry` (unless it has one, which a sweep moves on when it comes out).
    #[inline]
    fn queue(&mut self, i: u32, end: Timestamp) {
        let i = i as usize;
        if self.queued.len() <= i {
            self.queued.resize(i + 1, None);
        }
        if self.queued[i].is_none() {
            self.queued[i] = Some(end);
            self.expiry.push(Reverse((end, i as u32)));
        }
    }

    /// The cells' side: `max`, widened by 1 % on WGS84, where cells are filed on the
    /// mean sphere (whose chords differ from the ellipsoid's geodesics by far less).
    fn cell_side(&self, space: Space) -> f64 {
        let side = if self.max > 0.0 { self.max } else { 1.0 };
        match space {
            Space::Planar => side,
            Space::Wgs84 => side * 1.01,
        }
    }

    fn cell(&self, space: Space, p: Point) -> Cell {
        let side = self.cell_side(space);
        match space {
            Space::Planar => (floor_to_i64(p.x / side), floor_to_i64(p.y / side), 0),
            Space::Wgs84 => {
                let [x, y, z] = on_sphere(p);
                (
                    floor_to_i64(x / side),
                    floor_to_i64(y / side),
                    floor_to_i64(z / side),
                )
            }
        }
    }

    /// Is cell `d` next to `c` (or `c`)?
    fn next_to(c: Cell, d: Cell) -> bool {
        (c.0 - d.0).abs() <= 1 && (c.1 - d.1).abs() <= 1 && (c.2 - d.2).abs() <= 1
    }

    /// Drops the latest occurrences too old to make a pair true that are in no pair
    /// that holds: they can change nothing but a pair's end, and they have none.
    ///
    /// Only the values `expiry` holds too old, and those `unparked` names, are
    /// visited: a value whose latest occurrence ends before the horizon has its
    /// entry there taken out now or at an earlier sweep, which either moved it on
    /// (the value had reported since), dropped the value, or left it out while it
    /// held a pair; such a value is named in `unparked` when it loses its last pair.
    fn sweep(&mut self, now: Timestamp, cx: &mut Cx<'_>) {
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now.saturating_add((self.within / 2).max(1_000_000));
        let horizon = now.saturating_add(-self.within);
        let mut dropped = 0;
        while let Some(&Reverse((end, i))) = self.expiry.peek() {
            if end >= horizon {
                break;
            }
            self.expiry.pop();
            // (An entry of a value since dropped, whose number may be another's now,
            // carries an end the value's own entry does not.)
            let Some((_, v)) = self.values.slot_mut(i) else {
                continue;
            };
            let queued = &mut self.queued[i as usize];
            if *queued != Some(end) {
                continue;
            }
            let latest = v.latest.as_ref().map_or(end, |(_, tok)| tok.end);
            if latest > end {
                *queued = Some(latest);
                self.expiry.push(Reverse((latest, i)));
            } else if v.partners.is_empty() {
                dropped += self.drop_value(i);
            } else {
                *queued = None;
            }
        }
        for i in std::mem::take(&mut self.unparked) {
            let Some((_, v)) = self.values.slot_mut(i) else {
                continue;
            };
            let stale = v.latest.as_ref().is_some_and(|(_, tok)| tok.end < horizon);
            if self.queued[i as usize].is_none() && stale && v.partners.is_empty() {
                dropped += self.drop_value(i);
            }
        }
        self.located -= dropped;
        give_room(cx.budget, dropped);
    }

    /// Forgets located value `i`, which holds no pair, and its latest occurrence: 1.
    fn drop_value(&mut self, i: u32) -> usize {
        self.queued[i as usize] = None;
        let (_, v) = self.values.remove(i);
        if let Some((c, _)) = v.latest {
            self.unfile(i, c);
        }
        1
    }

    /// Takes value `i`'s latest occurrence, in cell `c`, out of its cell.
    #[inline]
    fn unfile(&mut self, i: u32, c: Cell) {
        if let Some(entries) = self.cells.get_mut(&c) {
            if let Some(j) = entries.iter().position(|x| x.value == i) {
                entries.swap_remove(j);
            }
            if entries.is_empty() {
                self.cells.remove(&c);
            }
        }
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, &Token)], cx: &mut Cx<'_>) {
        self.sweep(cx.now, cx);
        // One new latest occurrence per value: the step's first by ids.
        type Occurrences<'t> = (&'t KeyVal, SmallVec<[&'t Token; 1]>);
        let mut values: SmallVec<[Occurrences<'_>; 1]> = SmallVec::new();
        for &(_, tok) in inbox {
            if tok.term.location.is_none() {
                continue;
            }
            let Some(v) = tok.key(&self.attr) else {
                continue;
            };
            match values.iter_mut().find(|(u, _)| *u == v) {
                Some((_, ts)) => ts.push(tok),
                None => values.push((v, SmallVec::from_elem(tok, 1))),
            }
        }
        for (v, toks) in values {
            if let Some(y) = first_by_ids(toks) {
                self.occurrence(v, y, cx);
            }
        }
    }

    /// The latest token of value `i` (which has one).
    fn latest_tok(&self, i: u32) -> &Token {
        &self
            .values
            .get(i)
            .latest
            .as_ref()
            .expect("a located value")
            .1
    }

    /// Value `v`'s new occurrence `y`.
    fn occurrence(&mut self, v: &KeyVal, y: &Token, cx: &mut Cx<'_>) {
        let Some(p) = y.term.location else { return };
        let space = cx.space;
        let c = self.cell(space, p);
        let dz = if space == Space::Wgs84 { 1 } else { 0 };
        // The cells around y are looked up first and read after, so that the look-ups
        // (each a cache miss among many objects) are in flight together.
        let mut around: SmallVec<[&[Latest]; 27]> = SmallVec::new();
        let mut here: &[Latest] = &[];
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -dz..=dz {
                    if let Some(entries) = self.cells.get(&(c.0 + i, c.1 + j, c.2 + k)) {
                        around.push(entries);
                        if (i, j, k) == (0, 0, 0) {
                            here = entries;
                        }
                    }
                }
            }
        }
        // v's own latest occurrence is most often in y's cell (a report lies near the
        // one before): found there by its tag and key, its entry is read without a
        // look-up in the table of every value.
        let tag = v.tag();
        let values = &self.values;
        let mut me = here
            .iter()
            .find(|x| x.tag == tag && values.key(x.value) == v)
            .map(|x| x.value)
            .or_else(|| values.find(v));
        debug_assert_eq!(me, values.find(v), "the entry of v");
        let mine = me.map(|m| &self.values.get(m).partners);
        let holds = |u: u32| mine.is_some_and(|s| s.contains(&u));
        // The pairs that change: with the values near y (only they can be close),
        // and with those far away that v holds a pair with (which end).
        let mut changed: SmallVec<[(u32, bool); 8]> = SmallVec::new();
        // The partners met among the values near y: a partner's latest occurrence is
        // filed in its cell, so a partner met here is next to y and one not met is far
        // (or has none), and only those not met need their own entries read.
        let mut met = 0;
        for x in around.iter().copied().flatten() {
            if Some(x.value) == me {
                continue;
            }
            let held = holds(x.value);
            met += usize::from(held);
            let close = y.end.since(x.end).abs() <= self.within
                && within_distance(space, p, x.at, self.max);
            if close != held {
                changed.push((x.value, close));
            }
        }
        if mine.is_some_and(|s| s.len() > met) {
            let near = |u: u32| around.iter().copied().flatten().any(|x| x.value == u);
            for &u in mine.into_iter().flatten() {
                if near(u) {
                    continue;
                }
                if let Some((d, _)) = &self.values.get(u).latest {
                    debug_assert!(!Self::next_to(c, *d), "a value near y is in its cells");
                    changed.push((u, false));
                }
            }
        }
        drop(around);
        // Transitions in the order of the other values' latest occurrences' ids.
        let keys = &self.values;
        changed.sort_by(|a, b| {
            let (ta, tb) = (self.latest_tok(a.0), self.latest_tok(b.0));
            ta.seqs()
                .cmp(tb.seqs())
                .then_with(|| key(keys, a.0).cmp(key(keys, b.0)))
        });
        let changes: SmallVec<[(u32, bool, Token); 8]> = changed
            .into_iter()
            .map(|(u, close)| (u, close, Token::merge(&[self.latest_tok(u)], y)))
            .collect();
        for (u, close, merged) in changes {
            let uv = key(&self.values, u);
            let kv = if uv <= v {
                StateKeyVal::Pair(uv.clone(), v.clone())
            } else {
                StateKeyVal::Pair(v.clone(), uv.clone())
            };
            if close {
                if !take_room(cx.budget) {
                    continue;
                }
                let m = *me.get_or_insert_with(|| self.values.insert(v.clone(), Value::new()));
                let s = since(&merged, cx.now);
                self.holds.insert(pair(u, m), s.clone());
                self.values.get_mut(u).partners.insert(m);
                self.values.get_mut(m).partners.insert(u);
                cx.emit(transition(&merged, cx.now, true, s, kv));
            } else if let Some(m) = me {
                if let Some(s) = self.holds.remove(&pair(u, m)) {
                    give_room(cx.budget, 1);
                    let other = self.values.get_mut(u);
                    other.partners.remove(&m);
                    let parked = self.queued.get(u as usize).is_none_or(Option::is_none);
                    if other.partners.is_empty() && parked {
                        self.unparked.push(u);
                    }
                    self.values.get_mut(m).partners.remove(&u);
                    cx.emit(transition(&merged, cx.now, false, s, kv));
                }
            }
        }
        // y is v's latest occurrence now.
        let old = me.and_then(|m| self.values.get(m).latest.as_ref().map(|l| l.0));
        match (me, old) {
            (Some(m), Some(d)) => self.unfile(m, d),
            _ => {
                if !take_room(cx.budget) {
                    // Turned away: a value with neither an occurrence nor a pair is
                    // forgotten.
                    if let Some(m) = me {
                        if self.values.get(m).partners.is_empty() {
                            self.values.remove(m);
                            if let Some(q) = self.queued.get_mut(m as usize) {
                                *q = None;
                            }
                        }
                    }
                    return;
                }
                self.located += 1;
            }
        }
        let m = match me {
            Some(m) => m,
            None => self.values.insert(v.clone(), Value::new()),
        };
        let old = self.values.get_mut(m).latest.replace((c, y.clone()));
        if let Some((_, old)) = old {
            self.graves.bury(old, cx.released);
        }
        self.queue(m, y.end);
        self.cells.entry(c).or_default().push(Latest {
            at: p,
            end: y.end,
            value: m,
            tag: v.tag(),
        });
    }
}

/// The value numbered `i`.
fn key(values: &Keyed<Value, KeyVal>, i: u32) -> &KeyVal {
    values.key(i)
}

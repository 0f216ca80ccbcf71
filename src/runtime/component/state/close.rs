//! `Close(of, max, within, distinct: attr)`: a state per unordered pair of different
//! values of `attr`, true while the two values' latest located occurrences are at
//! most `within` apart in time and `max` apart in space. A pair changes only when one
//! of its two values has a new occurrence y, paired with the other's latest x; its
//! transitions are at y, with `ids` = ids(x) ∪ ids(y).
//!
//! The latest occurrence of each value is kept in a grid of cells `max` wide (planar
//! squares, or cubes on the sphere for WGS84, where a chord is never longer than the
//! geodesic), so a new occurrence looks only at the values near it and at the pairs
//! it is in that hold, never at every value.

use rustc_hash::{FxHashMap, FxHashSet};
use serde::{Deserialize, Serialize};

use super::{first_by_ids, give_room, since, take_room, transition};
use crate::event::{Point, Space, Timestamp};
use crate::model::Attr;
use crate::runtime::component::Cx;
use crate::runtime::token::{KeyVal, Since, StateKeyVal, Token};
use crate::spatial::{distance, floor_to_i64, on_sphere};

type Cell = (i64, i64, i64);

/// A value's latest located occurrence, filed in its cell with what the pairing
/// test reads (so that scanning a cell reads one array, not each token's event).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Latest {
    value: KeyVal,
    at: Point,
    end: Timestamp,
    tok: Token,
}

/// The component of `Close`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct Close {
    attr: Attr,
    max: f64,
    within: i64,
    /// The cell of each value's latest located occurrence.
    latest: FxHashMap<KeyVal, Cell>,
    /// The latest occurrences in each cell.
    cells: FxHashMap<Cell, Vec<Latest>>,
    /// The state place: the pairs that hold (in the pair's order), since when.
    holds: FxHashMap<(KeyVal, KeyVal), Since>,
    /// For each value, the values it holds a pair with.
    partners: FxHashMap<KeyVal, FxHashSet<KeyVal>>,
    next_sweep: Timestamp,
}

/// A pair of values, in their fixed order.
fn pair(a: &KeyVal, b: &KeyVal) -> (KeyVal, KeyVal) {
    if a <= b {
        (a.clone(), b.clone())
    } else {
        (b.clone(), a.clone())
    }
}

impl Close {
    pub(crate) fn new(attr: Attr, max: f64, within: i64) -> Close {
        Close {
            attr,
            max,
            within,
            latest: FxHashMap::default(),
            cells: FxHashMap::default(),
            holds: FxHashMap::default(),
            partners: FxHashMap::default(),
            next_sweep: Timestamp::MIN,
        }
    }

    pub(crate) fn live(&self) -> usize {
        self.latest.len() + self.holds.len()
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
    fn sweep(&mut self, now: Timestamp, cx: &mut Cx<'_>) {
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now.saturating_add((self.within / 2).max(1_000_000));
        let horizon = now.saturating_add(-self.within);
        let (latest, partners) = (&mut self.latest, &self.partners);
        let mut dropped = 0;
        self.cells.retain(|_, entries| {
            entries.retain(|x| {
                let stale = x.end < horizon && !partners.contains_key(&x.value);
                if stale {
                    latest.remove(&x.value);
                    dropped += 1;
                }
                !stale
            });
            !entries.is_empty()
        });
        give_room(cx.budget, dropped);
    }

    /// Takes value `v`'s latest occurrence out of its cell.
    fn remove_latest(&mut self, v: &KeyVal) {
        if let Some(c) = self.latest.remove(v) {
            if let Some(entries) = self.cells.get_mut(&c) {
                if let Some(i) = entries.iter().position(|x| x.value == *v) {
                    entries.swap_remove(i);
                }
                if entries.is_empty() {
                    self.cells.remove(&c);
                }
            }
        }
    }

    pub(crate) fn fire_step(&mut self, inbox: &[(usize, Token)], cx: &mut Cx<'_>) {
        self.sweep(cx.now, cx);
        // One new latest occurrence per value: the step's first by ids.
        let mut values: Vec<(KeyVal, Vec<&Token>)> = Vec::new();
        for (_, tok) in inbox {
            if tok.term.location.is_none() {
                continue;
            }
            let Some(v) = tok.key(&self.attr) else {
                continue;
            };
            match values.iter_mut().find(|(u, _)| u == v) {
                Some((_, ts)) => ts.push(tok),
                None => values.push((v.clone(), vec![tok])),
            }
        }
        for (v, toks) in values {
            if let Some(y) = first_by_ids(toks) {
                self.occurrence(v, y, cx);
            }
        }
    }

    /// Value `v`'s new occurrence `y`.
    fn occurrence(&mut self, v: KeyVal, y: &Token, cx: &mut Cx<'_>) {
        let Some(p) = y.term.location else { return };
        let space = cx.space;
        let c = self.cell(space, p);
        let dz = if space == Space::Wgs84 { 1 } else { 0 };
        let mine = self.partners.get(&v);
        let holds = |u: &KeyVal| mine.is_some_and(|s| s.contains(u));
        // The pairs that change: with the values near y (only they can be close),
        // and with those far away that v holds a pair with (which end).
        let mut changed: Vec<(&Latest, bool)> = Vec::new();
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -dz..=dz {
                    let Some(entries) = self.cells.get(&(c.0 + i, c.1 + j, c.2 + k)) else {
                        continue;
                    };
                    for x in entries {
                        if x.value == v {
                            continue;
                        }
                        let close = y.end.since(x.end).abs() <= self.within
                            && distance(space, p, x.at) <= self.max;
                        if close != holds(&x.value) {
                            changed.push((x, close));
                        }
                    }
                }
            }
        }
        for u in mine.into_iter().flatten() {
            let Some(&d) = self.latest.get(u) else {
                continue;
            };
            if Self::next_to(c, d) {
                continue;
            }
            if let Some(x) = self
                .cells
                .get(&d)
                .and_then(|e| e.iter().find(|x| x.value == *u))
            {
                changed.push((x, false));
            }
        }
        // Transitions in the order of the other values' latest occurrences' ids.
        changed.sort_by(|a, b| {
            a.0.tok
                .seqs()
                .cmp(b.0.tok.seqs())
                .then(a.0.value.cmp(&b.0.value))
        });
        let changes: Vec<(KeyVal, bool, Token)> = changed
            .into_iter()
            .map(|(x, close)| (x.value.clone(), close, Token::merge(&[&x.tok], y)))
            .collect();
        for (u, close, merged) in changes {
            let key = pair(&u, &v);
            let kv = StateKeyVal::Pair(key.0.clone(), key.1.clone());
            if close {
                if !take_room(cx.budget) {
                    continue;
                }
                let s = since(&merged, cx.now);
                self.holds.insert(key, s.clone());
                self.partners
                    .entry(u.clone())
                    .or_default()
                    .insert(v.clone());
                self.partners.entry(v.clone()).or_default().insert(u);
                cx.emit(transition(&merged, cx.now, true, s, kv));
            } else if let Some(s) = self.holds.remove(&key) {
                give_room(cx.budget, 1);
                for (a, b) in [(&u, &v), (&v, &u)] {
                    if let Some(set) = self.partners.get_mut(a) {
                        set.remove(b);
                        if set.is_empty() {
                            self.partners.remove(a);
                        }
                    }
                }
                cx.emit(transition(&merged, cx.now, false, s, kv));
            }
        }
        // y is v's latest occurrence now.
        if self.latest.contains_key(&v) {
            self.remove_latest(&v);
        } else if !take_room(cx.budget) {
            return;
        }
        self.latest.insert(v.clone(), c);
        self.cells.entry(c).or_default().push(Latest {
            value: v,
            at: p,
            end: y.end,
            tok: y.clone(),
        });
    }
}

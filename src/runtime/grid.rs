//! Grid places: a place split into cells twice as wide as a `Dist` operator's maximum
//! distance, so a terminator looks for initiators only in the cells its reach
//! overlaps (one or two per axis) instead of scanning every waiting token. Planar
//! points are filed by (x, y) in squares; WGS84 points by their position on a sphere
//! of the earth's mean radius, in cubes sized by the chord that bounds the geodesic
//! distance (so there is no seam at ±180° and nothing special at the poles).
//!
//! **Why twice.** Cells as wide as the reach made every terminator look up nine
//! cells (27 on WGS84), most of them empty on the benchmark net: 6 % of all its
//! instructions went away with cells twice as wide (callgrind, 200,000 events:
//! 1,487.6 M before, 1,439 M with cells as wide as the reach but only the cells the
//! reach overlaps, 1,398 M twice as wide, 1,388 M three times). Three times saves a
//! little more when cells are sparse, but a query then covers about 25 r² instead of
//! 16 r², half again as many tokens to test when they are dense.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::bind::{scan, MAX_FIRINGS};
use super::place::{Place, TokenBudget};
use super::token::{KeyVal, Token};
use crate::event::{Point, Space, Timestamp};
use crate::model::{Attr, Context};

/// A cell's coordinates.
type Cell = (i64, i64, i64);

/// A chord on the sphere WGS84 points are filed on (`spatial::on_sphere`) is at most the great-circle distance, which is at most the
/// geodesic distance divided by 0.99442; cubes are this much wider than `max`.
const WGS84_WIDEN: f64 = 1.0 / 0.993;

/// A candidate initiator: its cell, its position in the cell's bucket, its serial.
type Candidate = (Cell, usize, u64);

/// Tokens waiting for a distance condition, filed by cell (and by key within a cell).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct GridPlace {
    space: Space,
    side: f64,
    /// How far, in the filing coordinates, a partner may be (the distance, widened on
    /// WGS84 as the chord bound requires).
    reach: f64,
    key: Option<Attr>,
    window: Option<i64>,
    cells: FxHashMap<Cell, Place>,
    next_sweep: Timestamp,
}

impl GridPlace {
    /// A grid for pairs at most `max` apart (planar components, or metres on WGS84).
    pub(crate) fn new(space: Space, max: f64, key: Option<Attr>, window: Option<i64>) -> GridPlace {
        let widen = match space {
            Space::Planar => 1.0,
            Space::Wgs84 => WGS84_WIDEN,
        };
        let reach = if max > 0.0 && max.is_finite() {
            max * widen
        } else {
            0.0
        };
        // Cells twice the reach: a terminator looks in one or two cells per axis
        // (four on average on a plane) rather than three.
        let side = (2.0 * reach).max(1e-6);
        GridPlace {
            space,
            side,
            reach,
            key,
            window,
            cells: FxHashMap::default(),
            next_sweep: Timestamp::MIN,
        }
    }

    /// The coordinates a point is filed by: (x, y, 0) on a plane, its position on the
    /// sphere on WGS84.
    fn coords(&self, p: Point) -> [f64; 3] {
        match self.space {
            Space::Planar => [p.x, p.y, 0.0],
            Space::Wgs84 => crate::spatial::on_sphere(p),
        }
    }

    fn at(&self, v: f64) -> i64 {
        crate::spatial::floor_to_i64(v / self.side)
    }

    fn cell(&self, p: Point) -> Cell {
        let [x, y, z] = self.coords(p);
        (self.at(x), self.at(y), self.at(z))
    }

    /// The cells that may hold a partner of a point at `p`, per axis: from the cell of
    /// the lowest coordinate within reach to that of the highest (margins cover
    /// rounding). `None` when that spans more than a few cells (coordinates so large
    /// that the cell size is below their rounding): then every cell is looked at.
    fn around(&self, p: Point) -> Option<[(i64, i64); 3]> {
        let c = self.coords(p);
        let dims = if self.space == Space::Planar { 2 } else { 3 };
        let mut span = [(0, 0); 3];
        for (i, &v) in c.iter().enumerate().take(dims) {
            let margin = self.reach * (1.0 + 1e-9) + v.abs() * 1e-15 + 1e-9;
            let (lo, hi) = (self.at(v - margin), self.at(v + margin));
            if hi.saturating_sub(lo) > 3 {
                return None;
            }
            span[i] = (lo, hi);
        }
        Some(span)
    }

    /// The cells' places (for statistics).
    pub(crate) fn places(&self) -> impl Iterator<Item = &Place> {
        self.cells.values()
    }

    /// Files `tok` in its cell. A token without a location can satisfy no distance,
    /// so it is not kept.
    pub(crate) fn push(
        &mut self,
        k: Option<&KeyVal>,
        tok: Token,
        now: Timestamp,
        budget: &mut TokenBudget,
    ) {
        self.sweep(now, budget);
        let Some(p) = tok.term.location else { return };
        let cell = self.cell(p);
        let (key, window) = (&self.key, self.window);
        let place = self
            .cells
            .entry(cell)
            .or_insert_with(|| Place::new(key.clone(), window));
        place.push(k, tok, now, budget);
        if place.len() == 0 {
            // Turned away by the cap: keep no empty cell for it.
            self.cells.remove(&cell);
        }
    }

    /// Drops every cell's expired tokens, and empty cells, once per window.
    fn sweep(&mut self, now: Timestamp, budget: &mut TokenBudget) {
        let Some(w) = self.window else { return };
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now.saturating_add(w.max(1_000_000));
        let horizon = now.saturating_add(-w);
        self.cells.retain(|_, place| {
            place.expire_all(horizon, budget);
            place.len() > 0
        });
    }

    /// Chooses initiators for `y` among the tokens of the cells around it that
    /// pass `eligible`, per `ctx` (as [`super::bind::bind`] does in one bucket), calls
    /// `fire` with each chosen group (one initiator, or all of them for `Cumulative`),
    /// and removes them when the context consumes. Returns whether anything fired.
    pub(crate) fn terminate(
        &mut self,
        y: &Token,
        ctx: Context,
        now: Timestamp,
        budget: &mut TokenBudget,
        mut eligible: impl FnMut(&Token) -> bool,
        mut fire: impl FnMut(&[&Token]),
    ) -> bool {
        self.sweep(now, budget);
        let k = match &self.key {
            None => None,
            Some(attr) => match y.key(attr) {
                Some(k) => Some(k),
                None => return false,
            },
        };
        let Some(p) = y.term.location else {
            return false;
        };
        let cells: SmallVec<[Cell; 8]> = match self.around(p) {
            Some([(x0, x1), (y0, y1), (z0, z1)]) => (x0..=x1)
                .flat_map(|x| (y0..=y1).flat_map(move |y| (z0..=z1).map(move |z| (x, y, z))))
                .filter(|c| self.cells.contains_key(c))
                .collect(),
            None => self.cells.keys().copied().collect(),
        };
        let mut found: SmallVec<[Candidate; 8]> = SmallVec::new();
        let mut cut = false;
        for cell in cells {
            let Some(place) = self.cells.get_mut(&cell) else {
                continue;
            };
            place.with_live_bucket(k, now, budget, |b| {
                let (newest_first, one) = match ctx {
                    Context::Recent => (true, true),
                    Context::Chronicle => (false, true),
                    _ => (false, false),
                };
                // Each cell's tokens: the search gives up after as many in a cell as in
                // one place.
                cut |= scan(b, newest_first, &mut eligible, |i| {
                    found.push((cell, i, b[i].serial));
                    !one
                });
                ((), 0)
            });
        }
        budget.truncated += u64::from(cut);
        if found.is_empty() {
            return false;
        }
        found.sort_unstable_by_key(|c| c.2);
        match ctx {
            Context::Recent => found.drain(..found.len() - 1).for_each(drop),
            Context::Chronicle => found.truncate(1),
            Context::Cumulative => {}
            Context::Continuous | Context::Unrestricted => {
                if found.len() > MAX_FIRINGS {
                    // The oldest fire, as in one bucket.
                    found.truncate(MAX_FIRINGS);
                    budget.truncated += 1;
                }
            }
        }
        {
            let token = |c: &Candidate| -> &Token {
                let b = self.cells[&c.0].bucket(k).expect("candidate bucket exists");
                &b[c.1]
            };
            if ctx == Context::Cumulative {
                let xs: SmallVec<[&Token; 8]> = found.iter().map(token).collect();
                fire(&xs);
            } else {
                for c in &found {
                    fire(&[token(c)]);
                }
            }
        }
        if ctx.consumes() {
            // Remove from the back of each bucket first so positions stay valid.
            found.sort_unstable_by(|a, b| (a.0, b.1).cmp(&(b.0, a.1)));
            for (cell, i, _) in found {
                if let Some(place) = self.cells.get_mut(&cell) {
                    place.with_bucket(k, budget, |b| (b.remove(i), 1));
                }
            }
        }
        true
    }
}

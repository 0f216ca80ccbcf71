//! Grid places: a place split into cells as wide as a `Dist` operator's maximum
//! distance, so a terminator looks for initiators only in the cells around it instead
//! of scanning every waiting token. Planar points are filed by (x, y) in squares;
//! WGS84 points by their position on a sphere of the earth's mean radius, in cubes
//! wide enough that a pair within the geodesic distance is never two cells apart (so
//! there is no seam at ±180° and nothing special at the poles).

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::place::{Budget, Place};
use super::token::{KeyVal, Token};
use crate::event::{Point, Space, Timestamp};
use crate::model::{Attr, Context};

/// A cell's coordinates.
type Cell = (i64, i64, i64);

/// The sphere on which WGS84 points are filed (IUGG mean radius, metres).
const EARTH_R: f64 = 6_371_008.771_4;
/// A chord on that sphere is at most the great-circle distance, which is at most the
/// geodesic distance divided by 0.99442; cubes are this much wider than `max`.
const WGS84_WIDEN: f64 = 1.0 / 0.993;

/// A candidate initiator: its cell, its position in the cell's bucket, its serial.
type Candidate = (Cell, usize, u64);

/// Tokens waiting for a distance condition, filed by cell (and by key within a cell).
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct GridPlace {
    space: Space,
    side: f64,
    key: Option<Attr>,
    window: Option<i64>,
    cells: FxHashMap<Cell, Place>,
    next_sweep: Timestamp,
}

impl GridPlace {
    /// A grid for pairs at most `max` apart (planar units, or metres on WGS84).
    pub(crate) fn new(space: Space, max: f64, key: Option<Attr>, window: Option<i64>) -> GridPlace {
        let widen = match space {
            Space::Planar => 1.0,
            Space::Wgs84 => WGS84_WIDEN,
        };
        // A little wider still, so that rounding never puts a pair two cells apart.
        let side = if max > 0.0 && max.is_finite() {
            max * widen * (1.0 + 1e-9) + 1e-6
        } else {
            1e-6
        };
        GridPlace {
            space,
            side,
            key,
            window,
            cells: FxHashMap::default(),
            next_sweep: Timestamp::MIN,
        }
    }

    fn cell(&self, p: Point) -> Cell {
        let at = |v: f64| crate::spatial::floor_to_i64(v / self.side);
        match self.space {
            Space::Planar => (at(p.x), at(p.y), 0),
            Space::Wgs84 => {
                let (sin_lat, cos_lat) = p.y.to_radians().sin_cos();
                let (sin_lon, cos_lon) = p.x.to_radians().sin_cos();
                (
                    at(EARTH_R * cos_lat * cos_lon),
                    at(EARTH_R * cos_lat * sin_lon),
                    at(EARTH_R * sin_lat),
                )
            }
        }
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
        budget: &mut Budget,
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
    fn sweep(&mut self, now: Timestamp, budget: &mut Budget) {
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
        budget: &mut Budget,
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
        let (cx, cy, cz) = self.cell(p);
        let depth = if self.space == Space::Planar { 0 } else { 1 };
        let mut found: SmallVec<[Candidate; 8]> = SmallVec::new();
        for (dx, dy, dz) in (-1..=1).flat_map(|dx| {
            (-1..=1).flat_map(move |dy| (-depth..=depth).map(move |dz| (dx, dy, dz)))
        }) {
            {
                let cell = (
                    cx.saturating_add(dx),
                    cy.saturating_add(dy),
                    cz.saturating_add(dz),
                );
                let Some(place) = self.cells.get_mut(&cell) else {
                    continue;
                };
                place.with_live_bucket(k, now, budget, |b| {
                    match ctx {
                        Context::Recent => {
                            if let Some(i) = b.iter().rposition(&mut eligible) {
                                found.push((cell, i, b[i].serial));
                            }
                        }
                        Context::Chronicle => {
                            if let Some(i) = b.iter().position(&mut eligible) {
                                found.push((cell, i, b[i].serial));
                            }
                        }
                        _ => {
                            for (i, x) in b.iter().enumerate() {
                                if eligible(x) {
                                    found.push((cell, i, x.serial));
                                }
                            }
                        }
                    }
                    ((), 0)
                });
            }
        }
        if found.is_empty() {
            return false;
        }
        found.sort_unstable_by_key(|c| c.2);
        match ctx {
            Context::Recent => found.drain(..found.len() - 1).for_each(drop),
            Context::Chronicle => found.truncate(1),
            _ => {}
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

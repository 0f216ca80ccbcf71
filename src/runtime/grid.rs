//! Grid places: a place split into square cells as wide as a `Dist` operator's
//! maximum distance, so a terminator looks for initiators only in the 3 × 3 cells
//! around it instead of scanning every waiting token.

use rustc_hash::FxHashMap;
use smallvec::SmallVec;

use super::place::{Budget, Place};
use super::token::{KeyVal, Token};
use crate::event::{Point, Timestamp};
use crate::model::{Attr, Context};

/// A cell's coordinates.
type Cell = (i64, i64);

/// A candidate initiator: its cell, its position in the cell's bucket, its serial.
type Candidate = (Cell, usize, u64);

/// Tokens waiting for a distance condition, filed by cell (and by key within a cell).
#[derive(Clone, Debug)]
pub(crate) struct GridPlace {
    side: f64,
    key: Option<Attr>,
    window: Option<i64>,
    cells: FxHashMap<Cell, Place>,
    next_sweep: Timestamp,
}

impl GridPlace {
    /// A grid for pairs at most `max` apart (planar units).
    pub(crate) fn new(max: f64, key: Option<Attr>, window: Option<i64>) -> GridPlace {
        // A little wider than `max`, so that rounding never puts a pair two cells apart.
        let side = if max > 0.0 && max.is_finite() {
            max * (1.0 + 1e-9)
        } else {
            1e-9
        };
        GridPlace {
            side,
            key,
            window,
            cells: FxHashMap::default(),
            next_sweep: Timestamp::MIN,
        }
    }

    fn cell(&self, p: Point) -> Cell {
        (
            (p.x / self.side).floor() as i64,
            (p.y / self.side).floor() as i64,
        )
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
        self.cells
            .entry(cell)
            .or_insert_with(|| Place::new(key.clone(), window))
            .push(k, tok, now, budget);
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
            place.remove_all_where(budget, |t| t.start < horizon);
            place.len() > 0
        });
    }

    /// Chooses initiators for `y` among the tokens of the 3 × 3 cells around it that
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
        let (cx, cy) = self.cell(p);
        let mut found: SmallVec<[Candidate; 8]> = SmallVec::new();
        for dx in -1..=1 {
            for dy in -1..=1 {
                let cell = (cx.saturating_add(dx), cy.saturating_add(dy));
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

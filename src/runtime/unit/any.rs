//! `Any(m, of)`: m occurrences of m different operands, the last one the terminator.

use super::super::place::Place;
use super::super::token::Token;
use super::{distinct_ok, eligible, Cx};
use crate::model::{Context, PairOpts};

use smallvec::SmallVec;

/// Candidate initiators: (operand, position in its bucket, serial).
type Cands = SmallVec<[(usize, usize, u64); 8]>;

/// The `Any` component: one place per operand.
#[derive(Clone, Debug)]
pub(crate) struct Any {
    m: usize,
    opts: PairOpts,
    places: Vec<Place>,
    /// Arrival counter: recency across the places is the order in which this
    /// component received the occurrences (by step, then input arc, then arrival).
    arrivals: u64,
}

impl Any {
    pub(crate) fn new(m: usize, n: usize, opts: PairOpts) -> Any {
        let places = (0..n)
            .map(|_| Place::new(opts.key.clone(), opts.window))
            .collect();
        Any {
            m,
            opts,
            places,
            arrivals: 0,
        }
    }

    pub(crate) fn places(&self) -> Vec<&Place> {
        self.places.iter().collect()
    }

    pub(crate) fn fire(&mut self, role: usize, y: &Token, cx: &mut Cx<'_>) {
        if !y.fits(self.opts.window) {
            return;
        }
        let Some(key) = self.places[role].key_of(y) else {
            return;
        };
        let ctx = self.opts.context;
        let mut consumed = false;
        if self.m == 1 {
            cx.emit(Token::merge(&[], y));
            consumed = ctx.consumes();
        } else {
            // (operand, position in its bucket, serial) of each candidate initiator.
            let mut cands: Cands = SmallVec::new();
            for (j, place) in self.places.iter_mut().enumerate() {
                if j == role {
                    continue;
                }
                let Some(bucket) = place.bucket(key) else {
                    continue;
                };
                let ok = |x: &Token| eligible(&self.opts, x, y);
                match ctx {
                    Context::Recent => {
                        if let Some(i) = bucket.iter().rposition(ok) {
                            cands.push((j, i, bucket[i].serial));
                        }
                    }
                    Context::Chronicle => {
                        if let Some(i) = bucket.iter().position(ok) {
                            cands.push((j, i, bucket[i].serial));
                        }
                    }
                    _ => cands.extend(
                        bucket
                            .iter()
                            .enumerate()
                            .filter(|(_, x)| ok(x))
                            .map(|(i, x)| (j, i, x.serial)),
                    ),
                }
            }
            let chosen = self.choose(key, cands);
            if !chosen.is_empty() {
                let merged = {
                    let xs: SmallVec<[&Token; 8]> = chosen
                        .iter()
                        .map(|&(j, i, _)| self.token(key, j, i))
                        .collect();
                    Token::merge(&xs, y)
                };
                cx.emit(merged);
                if ctx.consumes() {
                    consumed = true;
                    let mut by_place = chosen;
                    by_place.sort_unstable_by(|a, b| (a.0, b.1).cmp(&(b.0, a.1)));
                    for (j, i, _) in by_place {
                        self.places[j].with_bucket(key, cx.budget, |b| (b.remove(i), 1));
                    }
                }
            }
        }
        if !consumed {
            let mut stored = y.clone();
            self.arrivals += 1;
            stored.serial = self.arrivals;
            self.places[role].push(key, stored, cx.now, cx.budget);
        }
    }

    fn token(&self, key: Option<&super::super::token::KeyVal>, j: usize, i: usize) -> &Token {
        &self.places[j].bucket(key).expect("candidate bucket exists")[i]
    }

    /// Picks the initiators among candidates: `Recent` the m-1 most recent operands'
    /// occurrences, `Chronicle` the m-1 oldest, `Cumulative` all of them provided
    /// m-1 different operands are present. Empty when there are not enough.
    fn choose(&self, key: Option<&super::super::token::KeyVal>, mut cands: Cands) -> Cands {
        let need = self.m - 1;
        match self.opts.context {
            Context::Cumulative => {
                // All of them, oldest first, skipping any that would break `distinct`.
                cands.sort_unstable_by_key(|c| c.2);
                let mut chosen: Cands = SmallVec::new();
                for c in cands {
                    let x = self.token(key, c.0, c.1);
                    if chosen
                        .iter()
                        .all(|d| distinct_ok(&self.opts, self.token(key, d.0, d.1), x))
                    {
                        chosen.push(c);
                    }
                }
                let mut ops: SmallVec<[usize; 8]> = chosen.iter().map(|c| c.0).collect();
                ops.sort_unstable();
                ops.dedup();
                if ops.len() < need {
                    chosen.clear();
                }
                chosen
            }
            ctx => {
                if ctx == Context::Recent {
                    cands.sort_unstable_by_key(|c| std::cmp::Reverse(c.2));
                } else {
                    cands.sort_unstable_by_key(|c| c.2);
                }
                let mut chosen: Cands = SmallVec::new();
                for c in cands {
                    if chosen.len() == need {
                        break;
                    }
                    let x = self.token(key, c.0, c.1);
                    if chosen
                        .iter()
                        .all(|d| distinct_ok(&self.opts, self.token(key, d.0, d.1), x))
                    {
                        chosen.push(c);
                    }
                }
                if chosen.len() < need {
                    chosen.clear();
                }
                chosen
            }
        }
    }
}

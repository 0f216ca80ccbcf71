//! `Seq`, `And`, `Dist` and `Direction(from:)`: a terminator pairs with an initiator
//! waiting in the other operand's place, under the context's binding rule.

use super::super::bind::{bind, remove_positions, Binding};
use super::super::grid::GridPlace;
use super::super::place::{Place, TokenBudget};
use super::super::token::{Extra, KeyVal, Token};
use super::{eligible, Cx};
use crate::event::{Space, Timestamp};
use crate::model::{PairKind, PairOpts};
use crate::spatial::{distance, within_distance};

/// A binary pairing component: places `a` (initiators from the first operand) and
/// `b` (from the second, for the symmetric operators), one firing transition per
/// terminating operand.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Pair {
    kind: PairKind,
    opts: PairOpts,
    /// Both operands are the same event: one place, every token is both x and y.
    same: bool,
    a: Store,
    b: Store,
}

/// Where initiators wait: a plain place, or, for a planar `Dist`, a grid of cells as
/// wide as the distance so a terminator only looks at its neighbourhood.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
enum Store {
    Flat(Place),
    Grid(GridPlace),
}

impl Store {
    fn push(&mut self, k: Option<&KeyVal>, tok: Token, now: Timestamp, budget: &mut TokenBudget) {
        match self {
            Store::Flat(p) => p.push(k, tok, now, budget),
            Store::Grid(g) => g.push(k, tok, now, budget),
        }
    }

    fn places(&self) -> Vec<&Place> {
        match self {
            Store::Flat(p) => vec![p],
            Store::Grid(g) => g.places().collect(),
        }
    }
}

/// Which operand the terminator came from.
#[derive(Clone, Copy, PartialEq)]
enum Side {
    A,
    B,
    Both,
}

impl Pair {
    pub(crate) fn new(kind: PairKind, opts: PairOpts, same: bool, space: Space) -> Pair {
        let place = || match &kind {
            PairKind::Dist { max } => {
                Store::Grid(GridPlace::new(space, *max, opts.key.clone(), opts.window))
            }
            _ => Store::Flat(Place::new(opts.key.clone(), opts.window)),
        };
        Pair {
            a: place(),
            b: place(),
            kind,
            opts,
            same,
        }
    }

    pub(crate) fn places(&self) -> Vec<&Place> {
        if self.same || self.kind == PairKind::Seq {
            self.a.places()
        } else {
            let mut v = self.a.places();
            v.extend(self.b.places());
            v
        }
    }

    pub(crate) fn fire(&mut self, role: usize, y: &Token, cx: &mut Cx<'_>) {
        if !y.fits(self.opts.window) {
            return;
        }
        let side = match (self.same, role) {
            (true, 0) => Side::Both,
            (true, _) => return, // the same token on the second arc: already handled
            (false, 0) => Side::A,
            (false, _) => Side::B,
        };
        let symmetric = self.kind != PairKind::Seq;
        // Where y looks for initiators, and where y waits as one.
        let (terminates_in, waits_in) = match (side, symmetric) {
            (Side::Both, _) => (Some(true), Some(true)),
            (Side::A, true) => (Some(false), Some(true)),
            (Side::B, true) => (Some(true), Some(false)),
            (Side::A, false) => (None, Some(true)),
            (Side::B, false) => (Some(true), None),
        };
        let key = match &self.opts.key {
            None => None,
            Some(attr) => match y.key(attr) {
                Some(k) => Some(k),
                None => return,
            },
        };
        let mut consumed = false;
        if let Some(in_a) = terminates_in {
            let store = if in_a { &mut self.a } else { &mut self.b };
            let (kind, opts) = (&self.kind, &self.opts);
            let space = cx.space;
            let with_distance = |mut t: Token, x: Option<&Token>| {
                if let (PairKind::Dist { .. }, Some(x)) = (kind, x) {
                    if let (Some(p), Some(q)) = (x.term.location, y.term.location) {
                        t.extra = Extra::Distance(distance(space, p, q));
                    }
                }
                t
            };
            let fired = match store {
                Store::Flat(place) => place
                    .with_live_bucket(key, cx.now, cx.budget, |bucket| {
                        let (binding, cut) = bind(
                            opts.context,
                            bucket,
                            |x| eligible(opts, x, y) && condition(kind, space, side, x, y),
                            |x| no_partner_run(opts, x, y),
                        );
                        binding.fire(bucket, y, |t, x| cx.out.push(with_distance(t, x)));
                        let fired = binding != Binding::None;
                        let removed = if fired && opts.context.consumes() {
                            remove_positions(bucket, binding.positions())
                        } else {
                            0
                        };
                        ((fired, cut), removed)
                    })
                    .map(|(fired, cut)| {
                        cx.budget.truncated += u64::from(cut);
                        fired
                    }),
                Store::Grid(grid) => Some(grid.terminate(
                    y,
                    opts.context,
                    cx.now,
                    cx.budget,
                    |x| eligible(opts, x, y) && condition(kind, space, side, x, y),
                    |xs| {
                        let x = if let [x] = xs { Some(*x) } else { None };
                        cx.out.push(with_distance(Token::merge(xs, y), x));
                    },
                )),
            };
            consumed = fired.unwrap_or(false) && self.opts.context.consumes();
        }
        if let (Some(in_a), false) = (waits_in, consumed) {
            let store = if in_a { &mut self.a } else { &mut self.b };
            let mut tok = y.clone();
            if let (Some(attr), Store::Flat(place)) = (&self.opts.distinct, &*store) {
                tok.run = run_of(place.bucket(key).and_then(|b| b.back()), &tok, attr);
            }
            store.push(key, tok, cx.now, cx.budget);
        }
    }
}

/// The first serial of the run of `tok` (of equal values of `attr`, or all without
/// it) when it waits after `back`.
fn run_of(back: Option<&Token>, tok: &Token, attr: &crate::model::Attr) -> u64 {
    match back {
        Some(x) if x.run != 0 && x.serial < tok.serial && x.key(attr) == tok.key(attr) => x.run,
        _ => tok.serial,
    }
}

/// With `distinct`, when `x` (not eligible for `y`) is of `y`'s value, or one of them
/// has none, no token of its run is eligible either: the run's first serial.
fn no_partner_run(opts: &PairOpts, x: &Token, y: &Token) -> Option<u64> {
    let attr = opts.distinct.as_ref()?;
    let (v, w) = (x.key(attr), y.key(attr));
    (v.is_none() || w.is_none() || v == w).then_some(x.run)
}

/// The operator's own condition on the pair (x initiator, y terminator from `side`).
fn condition(kind: &PairKind, space: Space, side: Side, x: &Token, y: &Token) -> bool {
    match kind {
        PairKind::Seq | PairKind::And => true,
        PairKind::Dist { max } => match (x.term.location, y.term.location) {
            (Some(p), Some(q)) => within_distance(space, p, q, *max),
            _ => false,
        },
        PairKind::Direction { rels } => match (x.term.location, y.term.location) {
            // `a` is `of`, `b` is `from`: the `of` location relative to the `from` one.
            (Some(px), Some(py)) => match side {
                Side::A => rels.holds_point(py, px),
                Side::B => rels.holds_point(px, py),
                Side::Both => rels.holds_point(py, px) || rels.holds_point(px, py),
            },
            _ => false,
        },
    }
}

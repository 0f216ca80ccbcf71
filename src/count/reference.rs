//! The brute-force reference: on each insertion, every subset of the earlier points
//! that ends at the new point, checked against the definition directly.

use crate::event::{Point, Space, Timestamp};

use super::metric;
use super::Rule;

/// A point as the reference remembers it.
struct Seen<D> {
    cause: u64,
    time: i64,
    at: Point,
    distinct: Option<D>,
}

/// Every point ever inserted, and nothing else.
pub(super) struct Reference<D> {
    space: Space,
    rules: Vec<Rule>,
    points: Vec<Seen<D>>,
}

impl<D: Eq + Clone> Reference<D> {
    /// A reference for `rules`.
    pub(super) fn new(space: Space, rules: Vec<Rule>) -> Self {
        Reference {
            space,
            rules,
            points: Vec::new(),
        }
    }

    /// Does the pair `(i, j)` (i inserted before j) fit rule `r`?
    fn pair(&self, r: &Rule, i: usize, j: usize) -> bool {
        let (a, b) = (&self.points[i], &self.points[j]);
        let distinct =
            !r.distinct || matches!((&a.distinct, &b.distinct), (Some(x), Some(y)) if x != y);
        a.cause != b.cause
            && distinct
            && (b.time - a.time).abs() <= r.window
            && metric::exact(self.space, a.at, b.at) < r.distance
    }

    /// Inserts a point; returns the new matches as (rule, member insertion indices),
    /// in rule order then lexicographic order.
    pub(super) fn insert(
        &mut self,
        cause: u64,
        time: Timestamp,
        at: Point,
        distinct: Option<D>,
    ) -> Vec<(usize, Vec<usize>)> {
        let e = self.points.len();
        self.points.push(Seen {
            cause,
            time: time.micros(),
            at,
            distinct,
        });
        let mut out = Vec::new();
        for (ri, r) in self.rules.iter().enumerate() {
            match r.n {
                0 => {}
                1 => {
                    let ok = r.window >= 0 && (!r.distinct || self.points[e].distinct.is_some());
                    if ok {
                        out.push((ri, vec![e]));
                    }
                }
                n => {
                    let mut chosen = Vec::with_capacity(n.min(e + 1));
                    self.extend(r, n, e, 0, &mut chosen, &mut |set| out.push((ri, set)));
                }
            }
        }
        out
    }

    /// Every way to complete `chosen` (increasing indices below `e`, pairwise fitting
    /// the rule and each fitting with `e`) to `n - 1` points, in lexicographic order.
    fn extend(
        &self,
        r: &Rule,
        n: usize,
        e: usize,
        from: usize,
        chosen: &mut Vec<usize>,
        emit: &mut dyn FnMut(Vec<usize>),
    ) {
        if chosen.len() == n - 1 {
            let mut set = chosen.clone();
            set.push(e);
            emit(set);
            return;
        }
        for i in from..e {
            if self.pair(r, i, e) && chosen.iter().all(|&c| self.pair(r, c, i)) {
                chosen.push(i);
                self.extend(r, n, e, i + 1, chosen, emit);
                chosen.pop();
            }
        }
    }
}

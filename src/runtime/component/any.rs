//! `Any(m, of)`: m occurrences of m different operands, the last one the terminator.

use super::super::bind::scan;
use super::super::place::Place;
use super::super::token::Token;
use super::{distinct_ok, eligible, Cx};
use crate::model::{Context, PairOpts};

use smallvec::SmallVec;

/// The most sets one terminator fires in the `Unrestricted` and `Continuous` contexts.
pub(crate) const MAX_SETS: usize = super::super::bind::MAX_FIRINGS;

/// The most steps (partial sets tried) of the search for one terminator's sets: with
/// `distinct`, most choices of operands may give no set at all, and there are
/// exponentially many choices.
pub(crate) const MAX_STEPS: usize = 1_000_000;

/// The search for one terminator's sets: what it has found, and what it may still do.
struct Search {
    out: Vec<SmallVec<[(usize, usize); 8]>>,
    steps_left: usize,
    /// Stopped at [`MAX_SETS`] sets or [`MAX_STEPS`] steps, with sets maybe left.
    cut: bool,
}
/// Candidate initiators: (operand, position in its bucket, serial).
type Cands = SmallVec<[(usize, usize, u64); 8]>;

/// The `Any` component: one place per operand.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
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
            let mut passed_cut = false;
            for (j, place) in self.places.iter_mut().enumerate() {
                if j == role {
                    continue;
                }
                let Some(bucket) = place.bucket(key) else {
                    continue;
                };
                let ok = |x: &Token| eligible(&self.opts, x, y);
                let (newest_first, one) = match ctx {
                    Context::Recent => (true, true),
                    Context::Chronicle => (false, true),
                    _ => (false, false),
                };
                passed_cut |= scan(bucket, newest_first, ok, |i| {
                    cands.push((j, i, bucket[i].serial));
                    !one
                });
            }
            cx.budget.truncated += u64::from(passed_cut);
            if matches!(ctx, Context::Unrestricted | Context::Continuous) {
                let sets = self.sets(key, &cands, cx);
                for set in &sets {
                    let xs: SmallVec<[&Token; 8]> =
                        set.iter().map(|&(j, i)| self.token(key, j, i)).collect();
                    cx.out.push(Token::merge(&xs, y));
                }
                if ctx == Context::Continuous && !sets.is_empty() {
                    consumed = true;
                    let mut used: Vec<(usize, usize)> = sets.into_iter().flatten().collect();
                    used.sort_unstable_by(|a, b| (a.0, b.1).cmp(&(b.0, a.1)));
                    used.dedup();
                    for (j, i) in used {
                        self.places[j].with_bucket(key, cx.budget, |b| (b.remove(i), 1));
                    }
                }
            } else {
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
        }
        if !consumed {
            let mut stored = y.clone();
            self.arrivals += 1;
            stored.serial = self.arrivals;
            self.places[role].push(key, stored, cx.now, cx.budget);
        }
    }

    /// `Unrestricted` and `Continuous`: every set of one eligible occurrence from each of
    /// m-1 different other operands (pairwise distinct with `distinct`), operands in
    /// arc order and, within one, oldest first, the first operand varying slowest. At
    /// most [`MAX_SETS`] per terminator, found in at most [`MAX_STEPS`] steps: a
    /// terminator whose search stops there fires the sets found so far, and
    /// `truncated_firings` counts it.
    fn sets(
        &self,
        key: Option<&super::super::token::KeyVal>,
        cands: &Cands,
        cx: &mut Cx<'_>,
    ) -> Vec<SmallVec<[(usize, usize); 8]>> {
        // Candidates per operand, in arc order, oldest first (as gathered).
        let mut lists: Vec<(usize, Vec<usize>)> = Vec::new();
        for &(j, i, _) in cands {
            match lists.last_mut() {
                Some((lj, v)) if *lj == j => v.push(i),
                _ => lists.push((j, vec![i])),
            }
        }
        let need = self.m - 1;
        let mut search = Search {
            out: Vec::new(),
            steps_left: MAX_STEPS,
            cut: false,
        };
        let mut roles: Vec<usize> = Vec::with_capacity(need);
        let mut picked: SmallVec<[(usize, usize); 8]> = SmallVec::new();
        self.combine(key, &lists, need, 0, &mut roles, &mut picked, &mut search);
        if search.cut {
            cx.budget.truncated += 1;
        }
        search.out
    }

    /// Chooses `need` more operands from `lists[from..]`, then their occurrences.
    #[allow(clippy::too_many_arguments)]
    fn combine(
        &self,
        key: Option<&super::super::token::KeyVal>,
        lists: &[(usize, Vec<usize>)],
        need: usize,
        from: usize,
        roles: &mut Vec<usize>,
        picked: &mut SmallVec<[(usize, usize); 8]>,
        search: &mut Search,
    ) {
        if roles.len() == need {
            self.product(key, lists, roles, 0, picked, search);
            return;
        }
        // Too few operands left to choose from: no set down this way.
        let left = need - roles.len();
        if lists.len() < from + left {
            return;
        }
        for r in from..=lists.len() - left {
            if search.cut {
                return;
            }
            roles.push(r);
            self.combine(key, lists, need, r + 1, roles, picked, search);
            roles.pop();
        }
    }

    /// One occurrence of each chosen operand, the first varying slowest.
    fn product(
        &self,
        key: Option<&super::super::token::KeyVal>,
        lists: &[(usize, Vec<usize>)],
        roles: &[usize],
        depth: usize,
        picked: &mut SmallVec<[(usize, usize); 8]>,
        search: &mut Search,
    ) {
        if search.steps_left == 0 {
            search.cut = true;
            return;
        }
        search.steps_left -= 1;
        if depth == roles.len() {
            if search.out.len() == MAX_SETS {
                search.cut = true;
            } else {
                search.out.push(picked.clone());
            }
            return;
        }
        let (j, ref idx) = lists[roles[depth]];
        for &i in idx {
            if search.cut {
                return;
            }
            let x = self.token(key, j, i);
            if picked
                .iter()
                .all(|&(pj, pi)| distinct_ok(&self.opts, self.token(key, pj, pi), x))
            {
                picked.push((j, i));
                self.product(key, lists, roles, depth + 1, picked, search);
                picked.pop();
            }
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

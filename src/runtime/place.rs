//! Places: multisets of waiting tokens, split by `key`, dropped when their window passes.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::token::{KeyVal, Token};
use crate::event::Timestamp;
use crate::model::Attr;

/// The net-wide cap on live tokens, and what it cost.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct TokenBudget {
    pub(crate) live: usize,
    pub(crate) peak: usize,
    pub(crate) cap: usize,
    /// Tokens evicted (or refused) because the cap was reached.
    pub(crate) evicted: u64,
    /// Occurrences not made because a search or a step reached its bound.
    pub(crate) truncated: u64,
    /// The step [`TokenBudget::made`] counts for.
    #[serde(skip)]
    step: u64,
    /// Tokens made in that step.
    #[serde(skip)]
    made: usize,
}

/// The fewest tokens one step (an input event or a timed instant) may make, all
/// components together; the bound is the larger of this and the token cap.
pub(crate) const MIN_STEP_TOKENS: usize = 1_000_000;

impl TokenBudget {
    pub(crate) fn new(cap: usize) -> TokenBudget {
        TokenBudget {
            live: 0,
            peak: 0,
            cap,
            evicted: 0,
            truncated: 0,
            step: 0,
            made: 0,
        }
    }

    /// How many of `n` new tokens step `step` may still make: one step makes at most
    /// the larger of the cap and [`MIN_STEP_TOKENS`], so the work of one event stays
    /// bounded however deep the net passes its tokens on. What is cut is counted in
    /// `truncated`.
    pub(crate) fn allow(&mut self, step: u64, n: usize) -> usize {
        if step != self.step {
            self.step = step;
            self.made = 0;
        }
        let left = self.cap.max(MIN_STEP_TOKENS).saturating_sub(self.made);
        let allowed = n.min(left);
        self.made += allowed;
        self.truncated += (n - allowed) as u64;
        allowed
    }

    pub(crate) fn add(&mut self) {
        self.live += 1;
        self.peak = self.peak.max(self.live);
    }
}

/// Tokens waiting to take part in a transition, in arrival order within each key.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Place {
    key: Option<Attr>,
    window: Option<i64>,
    /// Unkeyed places keep everything under one bucket.
    flat: VecDeque<Token>,
    keyed: FxHashMap<KeyVal, VecDeque<Token>>,
    len: usize,
    next_sweep: Timestamp,
}

/// A place's tokens that share a key with some token (all of them when unkeyed).
pub(crate) type Bucket = VecDeque<Token>;

impl Place {
    /// A place whose tokens are matched on attribute `key` and live for `window`.
    pub(crate) fn new(key: Option<Attr>, window: Option<i64>) -> Place {
        Place {
            key,
            window,
            flat: VecDeque::new(),
            keyed: FxHashMap::default(),
            len: 0,
            next_sweep: Timestamp::MIN,
        }
    }

    /// Number of tokens held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The key value `tok` is filed under: `Some(None)` for an unkeyed place,
    /// `None` when the place is keyed and `tok` lacks the attribute.
    pub(crate) fn key_of<'t>(&self, tok: &'t Token) -> Option<Option<&'t KeyVal>> {
        match &self.key {
            None => Some(None),
            Some(attr) => tok.key(attr).map(Some),
        }
    }

    /// The bucket for key `k`, if it holds anything.
    pub(crate) fn bucket(&self, k: Option<&KeyVal>) -> Option<&Bucket> {
        match k {
            None => Some(&self.flat),
            Some(k) => self.keyed.get(k),
        }
    }

    /// Mutable access to the bucket for `k`; `f` reports how many tokens it removed.
    pub(crate) fn with_bucket<R>(
        &mut self,
        k: Option<&KeyVal>,
        budget: &mut TokenBudget,
        f: impl FnOnce(&mut Bucket) -> (R, usize),
    ) -> Option<R> {
        let b = match k {
            None => &mut self.flat,
            Some(k) => self.keyed.get_mut(k)?,
        };
        let (r, removed) = f(b);
        let empty = b.is_empty();
        self.len -= removed;
        budget.live -= removed;
        // With a window, an emptied bucket is kept for its key's next token (the sweep
        // drops it if none comes within a window); without one, at once.
        if empty && self.window.is_none() {
            if let Some(k) = k {
                self.keyed.remove(k);
            }
        }
        Some(r)
    }

    /// Files `tok` under `k`. If the budget is spent, the oldest token of the bucket
    /// gives way, or, with none to give, `tok` is turned away.
    ///
    /// Tokens of the bucket that can no longer fit a window ending at `now` or later
    /// are dropped first, as in [`Place::with_live_bucket`].
    pub(crate) fn push(
        &mut self,
        k: Option<&KeyVal>,
        tok: Token,
        now: Timestamp,
        budget: &mut TokenBudget,
    ) {
        let horizon = self.sweep(now, budget);
        let b = match k {
            None => &mut self.flat,
            Some(k) => match self.keyed.get_mut(k) {
                Some(b) => b,
                None if budget.live >= budget.cap => {
                    // No token of its key to give up: refuse the newcomer rather than
                    // exceed the cap (and keep no empty bucket for it).
                    budget.evicted += 1;
                    return;
                }
                None => self.keyed.entry(k.clone()).or_default(),
            },
        };
        if let Some(horizon) = horizon {
            let expired = pop_expired(b, horizon);
            self.len -= expired;
            budget.live -= expired;
        }
        if budget.live >= budget.cap {
            budget.evicted += 1;
            if b.pop_front().is_none() {
                // Nothing of ours to give up: refuse the newcomer rather than exceed the cap.
                if let Some(k) = k {
                    self.keyed.remove(k);
                }
                return;
            }
            self.len -= 1;
            budget.live -= 1;
        }
        b.push_back(tok);
        self.len += 1;
        budget.add();
    }

    /// Removes every token in the bucket of `k` that `drop` selects.
    pub(crate) fn remove_where(
        &mut self,
        k: Option<&KeyVal>,
        budget: &mut TokenBudget,
        mut drop: impl FnMut(&Token) -> bool,
    ) {
        self.with_bucket(k, budget, |b| {
            let before = b.len();
            b.retain(|t| !drop(t));
            ((), before - b.len())
        });
    }

    /// Drops the tokens at the front of every bucket that start before `horizon`, and
    /// the buckets left empty.
    pub(crate) fn expire_all(&mut self, horizon: Timestamp, budget: &mut TokenBudget) {
        let mut removed = pop_expired(&mut self.flat, horizon);
        self.keyed.retain(|_, b| {
            removed += pop_expired(b, horizon);
            !b.is_empty()
        });
        self.len -= removed;
        budget.live -= removed;
    }

    /// The horizon of the window at `now` (tokens starting before it can no longer
    /// take part), after sweeping every bucket if a window has passed since the last
    /// sweep; `None` for a place without a window.
    fn sweep(&mut self, now: Timestamp, budget: &mut TokenBudget) -> Option<Timestamp> {
        let w = self.window?;
        let horizon = now.saturating_add(-w);
        if now >= self.next_sweep {
            self.next_sweep = now.saturating_add(w.max(1_000_000));
            self.expire_all(horizon, budget);
        }
        Some(horizon)
    }

    /// Like [`Place::with_bucket`], after dropping the tokens of the bucket that can no
    /// longer fit the window of any occurrence ending at `now` or later (cheap: from
    /// the front). A sweep of all buckets once per window (at least a second) drops
    /// their expired fronts and the buckets left empty, so keys that went quiet hold
    /// no memory for more than two windows.
    pub(crate) fn with_live_bucket<R>(
        &mut self,
        k: Option<&KeyVal>,
        now: Timestamp,
        budget: &mut TokenBudget,
        f: impl FnOnce(&mut Bucket) -> (R, usize),
    ) -> Option<R> {
        let Some(horizon) = self.sweep(now, budget) else {
            return self.with_bucket(k, budget, f);
        };
        self.with_bucket(k, budget, |b| {
            let expired = pop_expired(b, horizon);
            let (r, removed) = f(b);
            (r, expired + removed)
        })
    }
}

/// Pops the tokens at the front of `b` that start before `horizon`; how many.
fn pop_expired(b: &mut Bucket, horizon: Timestamp) -> usize {
    let before = b.len();
    while b.front().is_some_and(|t| t.start < horizon) {
        b.pop_front();
    }
    before - b.len()
}

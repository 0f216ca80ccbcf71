//! Snoop's aperiodic and periodic operators `A`, `A*`, `P`, `P*`: a `start` opens an
//! interval (a newer one replaces it), the next `end` or the window closes it.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::super::bind::MAX_FIRINGS;
use super::super::place::TokenBudget;
use super::super::token::{Extra, KeyVal, Token};
use super::Cx;
use crate::event::Timestamp;
use crate::model::IntervalKind;

/// An open interval.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Open {
    start: Token,
    /// Distinguishes this interval from earlier ones under the same key (for timers).
    tag: u64,
    /// `A*`: the occurrences of `e` inside, in order.
    inside: VecDeque<Token>,
    /// `P`: the time a run of timers was moving to when this interval last ticked,
    /// and its ticks in that run (to stop at [`MAX_FIRINGS`]; a run of timers never
    /// spans a snapshot, so it is not kept in one).
    #[serde(skip)]
    burst: Option<(Timestamp, usize)>,
}

impl Open {
    /// Tokens held: the start and the occurrences inside.
    fn len(&self) -> usize {
        1 + self.inside.len()
    }
}

/// The interval component: the open-interval place (one token per key), the
/// accumulating place of `A*`, and the timer transition of `P`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Interval {
    kind: IntervalKind,
    window: Option<i64>,
    key: Option<crate::model::Attr>,
    open: FxHashMap<Option<KeyVal>, Open>,
    /// Tag of each interval with a pending timer, and its key.
    tags: FxHashMap<u64, Option<KeyVal>>,
    next_tag: u64,
    next_sweep: Timestamp,
}

impl Interval {
    pub(crate) fn new(
        kind: IntervalKind,
        window: Option<i64>,
        key: Option<crate::model::Attr>,
    ) -> Interval {
        Interval {
            kind,
            window,
            key,
            open: FxHashMap::default(),
            tags: FxHashMap::default(),
            next_tag: 0,
            next_sweep: Timestamp::MIN,
        }
    }

    pub(crate) fn live(&self) -> usize {
        self.open.values().map(Open::len).sum()
    }

    fn roles(&self) -> (usize, Option<usize>, usize) {
        match self.kind {
            IntervalKind::A | IntervalKind::AStar => (0, Some(1), 2),
            IntervalKind::P { .. } | IntervalKind::PStar { .. } => (0, None, 1),
        }
    }

    /// Does an occurrence ending at `end` still fit the window of the interval opened by `start`?
    fn fits(&self, start: &Token, y: &Token) -> bool {
        self.window
            .is_none_or(|w| y.end.since(start.start.min(y.start)) <= w)
    }

    fn period(&self) -> Option<i64> {
        match self.kind {
            IntervalKind::P { period } | IntervalKind::PStar { period } => Some(period),
            _ => None,
        }
    }

    /// The time of the k-th tick of an interval opened at `t0`, if within the window.
    fn tick_time(&self, t0: Timestamp, k: i64) -> Option<Timestamp> {
        let period = self.period()?;
        let offset = period.checked_mul(k)?;
        if self.window.is_some_and(|w| offset > w) {
            return None;
        }
        let t = t0.saturating_add(offset);
        (t.since(t0) == offset).then_some(t)
    }

    fn sweep(&mut self, now: Timestamp, budget: &mut TokenBudget) {
        let Some(w) = self.window else { return };
        if now < self.next_sweep {
            return;
        }
        self.next_sweep = now.saturating_add((w / 2).max(1_000_000));
        let horizon = now.saturating_add(-w);
        let tags = &mut self.tags;
        // P ticks until t0 + W, t0 the start's time; the others fire only occurrences
        // that fit W from the start's earliest constituent.
        let periodic = matches!(self.kind, IntervalKind::P { .. });
        self.open.retain(|_, o| {
            let from = if periodic { o.start.end } else { o.start.start };
            let keep = from >= horizon;
            if !keep {
                tags.remove(&o.tag);
                budget.live -= o.len();
            }
            keep
        });
    }

    pub(crate) fn fire(&mut self, role: usize, y: &Token, cx: &mut Cx<'_>) {
        self.sweep(cx.now, cx.budget);
        let key = match &self.key {
            None => None,
            Some(attr) => match y.key(attr) {
                Some(k) => Some(k.clone()),
                None => return,
            },
        };
        let (start_role, e_role, end_role) = self.roles();
        if role == start_role {
            // A newer start replaces the open interval, even one too long to fire anything.
            if let Some(old) = self.open.remove(&key) {
                self.tags.remove(&old.tag);
                cx.budget.live -= old.len();
            }
            if cx.budget.live >= cx.budget.cap {
                // No interval of its key to give up: turned away by the cap.
                cx.budget.evicted += 1;
                return;
            }
            let tag = self.next_tag;
            self.next_tag += 1;
            self.open.insert(
                key.clone(),
                Open {
                    start: y.clone(),
                    tag,
                    inside: VecDeque::new(),
                    burst: None,
                },
            );
            cx.budget.add();
            if let IntervalKind::P { .. } = self.kind {
                if let Some(t) = self.tick_time(y.end, 1) {
                    self.tags.insert(tag, key);
                    cx.timers.set(t, cx.component, tag);
                }
            }
            return;
        }
        let Some(open) = self.open.get(&key) else {
            return;
        };
        if open.start.cause >= y.cause {
            return; // not after the start
        }
        if !self.fits(&open.start, y) {
            // The window closed the interval.
            let (tag, len) = (open.tag, open.len());
            self.open.remove(&key);
            self.tags.remove(&tag);
            cx.budget.live -= len;
            return;
        }
        if Some(role) == e_role {
            match self.kind {
                IntervalKind::A => cx.emit(Token::merge(&[&open.start], y)),
                _ => {
                    if let Some(o) = self.open.get_mut(&key) {
                        if cx.budget.live >= cx.budget.cap {
                            // The cap evicts the oldest occurrence inside.
                            cx.budget.evicted += 1;
                            if o.inside.pop_front().is_none() {
                                return;
                            }
                            cx.budget.live -= 1;
                        }
                        o.inside.push_back(y.clone());
                        cx.budget.add();
                    }
                }
            }
        } else if role == end_role {
            let Some(o) = self.open.remove(&key) else {
                return;
            };
            self.tags.remove(&o.tag);
            cx.budget.live -= o.len();
            match self.kind {
                IntervalKind::AStar if !o.inside.is_empty() => {
                    let mut xs: Vec<&Token> = vec![&o.start];
                    xs.extend(o.inside.iter());
                    let merged = Token::merge(&xs, y);
                    // The whole occurrence fits the window, from its earliest constituent.
                    if merged.fits(self.window) {
                        cx.emit(merged);
                    }
                }
                IntervalKind::PStar { period } => {
                    // Ticks t0 + k·T strictly before the end and within the window.
                    let t0 = o.start.end;
                    let span = y.end.since(t0);
                    let mut ticks = if span > 0 { (span - 1) / period } else { 0 };
                    if let Some(w) = self.window {
                        ticks = ticks.min(w / period);
                    }
                    let mut t = Token::merge(&[&o.start], y);
                    t.extra = Extra::Ticks(ticks as u64);
                    cx.emit(t);
                }
                _ => {}
            }
        }
    }

    /// A periodic tick of the interval tagged `tag` is due at `at`, in a run of timers
    /// up to `until`. An interval ticks at most [`MAX_FIRINGS`] times in one run (a
    /// stream that jumps ahead by years at a period of milliseconds would otherwise
    /// make billions of detections at once): then it goes on from its first tick after
    /// `until`, and `truncated_firings` counts the ticks passed over.
    pub(crate) fn tick(&mut self, at: Timestamp, tag: u64, until: Timestamp, cx: &mut Cx<'_>) {
        let Some(key) = self.tags.remove(&tag) else {
            return;
        };
        let Some(period) = self.period() else { return };
        let Some(o) = self.open.get_mut(&key) else {
            return;
        };
        if o.tag != tag {
            return;
        }
        let fired = match o.burst {
            Some((to, n)) if to == until => n + 1,
            _ => 1,
        };
        o.burst = Some((until, fired));
        let Some(o) = self.open.get(&key) else { return };
        if fired > MAX_FIRINGS {
            // The ticks from `at` up to (not including) the first after `until`.
            let t0 = o.start.end;
            let k_at = at.since(t0) / period;
            let k_next = (until.since(t0) / period + 1).max(k_at + 1);
            cx.budget.truncated += (k_next - k_at) as u64;
            if let Some(next) = self.tick_time(t0, k_next) {
                self.tags.insert(tag, key);
                cx.timers.set(next, cx.component, tag);
            }
            return;
        }
        {
            let start = &o.start;
            cx.emit(Token {
                start: start.start,
                end: at,
                cause: cx.cause,
                serial: 0,
                run: 0,
                term: start.term.clone(),
                members: start.members.clone(),
                extra: Extra::None,
            });
            let k = at.since(start.end) / period + 1;
            if let Some(next) = self.tick_time(start.end, k) {
                self.tags.insert(tag, key);
                cx.timers.set(next, cx.component, tag);
            }
        }
    }
}

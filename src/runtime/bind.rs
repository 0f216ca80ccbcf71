//! Binding rules: how a transition chooses initiator tokens in a place, per context.

use super::place::Bucket;
use super::token::Token;
use crate::model::Context;

/// The most firings one terminator makes in one operator (`Unrestricted` and
/// `Continuous` pairing, `Any`'s sets, `Count`'s matches): beyond it, a terminator's
/// detections would all be held at once before any is written.
pub(crate) const MAX_FIRINGS: usize = 100_000;

/// The most waiting tokens one terminator's search for initiators passes over as not
/// eligible (another key of `distinct`, the wrong direction, out of the window), in
/// one place or grid cell: beyond it the search gives up, so that a terminator with
/// no partner among a million waiting tokens costs what it costs among ten thousand.
pub(crate) const MAX_PASSED: usize = 10_000;

/// The initiators a terminator fires with, as positions in a bucket (oldest first).
#[derive(Debug, PartialEq)]
pub(crate) enum Binding {
    /// Nothing eligible.
    None,
    /// One firing with one initiator.
    One([usize; 1]),
    /// One firing per listed initiator.
    Each(Vec<usize>),
    /// One firing with all listed initiators merged.
    Merged(Vec<usize>),
}

/// Calls `take` with the position of each token of `bucket` that passes `eligible`,
/// newest first if `newest_first`, else oldest first, until `take` returns `false`.
/// Gives up after passing over [`MAX_PASSED`] tokens that do not pass; returns whether
/// it gave up with tokens left unread.
pub(crate) fn scan(
    bucket: &Bucket,
    newest_first: bool,
    eligible: impl FnMut(&Token) -> bool,
    take: impl FnMut(usize) -> bool,
) -> bool {
    scan_runs(bucket, newest_first, eligible, |_| None, take)
}

/// As [`scan`], and newest first, when a token that does not pass is the newest of a
/// run none of which can pass (`run` gives the run's first serial: see
/// [`Token::run`]), passes over the whole run at once, by a binary search on the
/// serials (a place's tokens are in serial order), counting it as one token passed.
pub(crate) fn scan_runs(
    bucket: &Bucket,
    newest_first: bool,
    mut eligible: impl FnMut(&Token) -> bool,
    run: impl Fn(&Token) -> Option<u64>,
    mut take: impl FnMut(usize) -> bool,
) -> bool {
    let n = bucket.len();
    let mut passed = 0;
    let (mut read, mut next) = (0, if newest_first { n } else { 0 });
    while read < n {
        let i = if newest_first { next - 1 } else { next };
        let x = &bucket[i];
        let mut step = 1;
        if eligible(x) {
            if !take(i) {
                return false;
            }
        } else {
            if newest_first {
                if let Some(first) = run(x).filter(|&f| f != 0 && f < x.serial) {
                    // Tokens `start..i` have serials from `first` on: all in the run.
                    // (Serials are in order, so the first of them says it for all: a
                    // check of every one would make each pass O(run) in debug builds.)
                    let start = bucket.partition_point(|t| t.serial < first).min(i);
                    debug_assert!(start == i || bucket[start].serial >= first);
                    step += i - start;
                }
            }
            passed += 1;
            if passed == MAX_PASSED {
                return read + step < n;
            }
        }
        read += step;
        next = if newest_first {
            next - step
        } else {
            next + step
        };
    }
    false
}

/// Chooses initiators among `bucket` (arrival order) that pass `eligible`, per `ctx`:
/// `Recent` the newest, `Chronicle` the oldest, `Continuous` and `Unrestricted` each
/// (the oldest [`MAX_FIRINGS`]), `Cumulative` all merged. Consumed tokens are removed
/// by the caller, so every token still in the bucket is unconsumed. Also returns
/// whether the choice was cut short: at [`MAX_FIRINGS`], or by [`scan`]'s limit.
///
/// `run` tells, of a token that is not eligible, whether no token of its run can be
/// (see [`scan_runs`]).
pub(crate) fn bind(
    ctx: Context,
    bucket: &Bucket,
    eligible: impl FnMut(&Token) -> bool,
    run: impl Fn(&Token) -> Option<u64>,
) -> (Binding, bool) {
    match ctx {
        Context::Recent | Context::Chronicle => {
            let mut found = None;
            let cut = scan_runs(bucket, ctx == Context::Recent, eligible, run, |i| {
                found = Some(i);
                false
            });
            (found.map_or(Binding::None, |i| Binding::One([i])), cut)
        }
        Context::Continuous | Context::Unrestricted | Context::Cumulative => {
            let most = if ctx == Context::Cumulative {
                usize::MAX
            } else {
                MAX_FIRINGS
            };
            let mut all = Vec::new();
            let mut more = false;
            let cut = scan(bucket, false, eligible, |i| {
                if all.len() == most {
                    more = true;
                    return false;
                }
                all.push(i);
                true
            });
            let binding = if all.is_empty() {
                Binding::None
            } else if ctx == Context::Cumulative {
                Binding::Merged(all)
            } else {
                Binding::Each(all)
            };
            (binding, cut || more)
        }
    }
}

impl Binding {
    /// Positions chosen, oldest first.
    pub(crate) fn positions(&self) -> &[usize] {
        match self {
            Binding::None => &[],
            Binding::One(v) => v,
            Binding::Each(v) | Binding::Merged(v) => v,
        }
    }

    /// Emits the occurrences of this binding with terminator `y` through `emit`, with
    /// the initiator of each (`None` for a merged firing).
    pub(crate) fn fire(
        &self,
        bucket: &Bucket,
        y: &Token,
        mut emit: impl FnMut(Token, Option<&Token>),
    ) {
        match self {
            Binding::None => {}
            Binding::One([i]) => emit(Token::merge(&[&bucket[*i]], y), Some(&bucket[*i])),
            Binding::Each(v) => {
                for &i in v {
                    emit(Token::merge(&[&bucket[i]], y), Some(&bucket[i]));
                }
            }
            Binding::Merged(v) => {
                let xs: Vec<&Token> = v.iter().map(|&i| &bucket[i]).collect();
                emit(Token::merge(&xs, y), None);
            }
        }
    }
}

/// Removes the positions `sorted` (ascending) from `bucket`; returns how many.
pub(crate) fn remove_positions(bucket: &mut Bucket, sorted: &[usize]) -> usize {
    for &i in sorted.iter().rev() {
        bucket.remove(i);
    }
    sorted.len()
}

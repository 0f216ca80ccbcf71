//! Binding rules: how a transition chooses initiator tokens in a place, per context.

use super::place::Bucket;
use super::token::Token;
use crate::model::Context;

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

/// Chooses initiators among `bucket` (arrival order) that pass `eligible`, per `ctx`:
/// `Recent` the newest, `Chronicle` the oldest, `Continuous` and `Unrestricted` each,
/// `Cumulative` all merged. Consumed tokens are removed by the caller, so every token
/// still in the bucket is unconsumed.
pub(crate) fn bind(
    ctx: Context,
    bucket: &Bucket,
    mut eligible: impl FnMut(&Token) -> bool,
) -> Binding {
    match ctx {
        Context::Recent => match bucket.iter().rposition(eligible) {
            Some(i) => Binding::One([i]),
            None => Binding::None,
        },
        Context::Chronicle => match bucket.iter().position(eligible) {
            Some(i) => Binding::One([i]),
            None => Binding::None,
        },
        Context::Continuous | Context::Unrestricted | Context::Cumulative => {
            let all: Vec<usize> = (0..bucket.len())
                .filter(|&i| eligible(&bucket[i]))
                .collect();
            if all.is_empty() {
                Binding::None
            } else if ctx == Context::Cumulative {
                Binding::Merged(all)
            } else {
                Binding::Each(all)
            }
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

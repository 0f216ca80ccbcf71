//! `Not(start, absent, end)`: an end pairs with a start when no `absent` occurred
//! between them. The absent arc is a reset arc on the start place.

use super::super::bind::{bind, remove_positions, Binding};
use super::super::place::Place;
use super::super::token::{KeyVal, Token};
use super::{eligible, Cx};
use crate::model::PairOpts;

/// Roles of the operands, in arc order.
const START: usize = 0;
const ABSENT: usize = 1;

/// The `Not` component: the `start` place, and resets waiting to be applied.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Not {
    opts: PairOpts,
    starts: Place,
    /// Resets (absent occurrences) not yet applied, with their step: a start of an
    /// earlier step is removed once a later step begins. Applying them lazily lets an
    /// end of the same step as the absent still see the starts (the absent is not
    /// before it).
    resets: Vec<(u64, Option<KeyVal>)>,
    /// `start` and `end` are the same event: an end that takes part in a consuming
    /// detection is also gone as a start.
    same_ends: bool,
}

impl Not {
    pub(crate) fn new(opts: PairOpts, same_ends: bool) -> Not {
        Not {
            starts: Place::new(opts.key.clone(), opts.window),
            opts,
            resets: Vec::new(),
            same_ends,
        }
    }

    pub(crate) fn places(&self) -> &Place {
        &self.starts
    }

    fn apply_resets(&mut self, cx: &mut Cx<'_>) {
        if self.resets.first().is_none_or(|(c, _)| *c >= cx.cause) {
            return;
        }
        for (cause, key) in std::mem::take(&mut self.resets) {
            self.starts
                .remove_where(key.as_ref(), cx.budget, |x| x.cause < cause);
        }
    }

    pub(crate) fn fire(&mut self, role: usize, y: &Token, cx: &mut Cx<'_>) {
        self.apply_resets(cx);
        let Some(key) = self.starts.key_of(y) else {
            return;
        };
        match role {
            START => {
                if y.fits(self.opts.window) {
                    self.starts.push(key, y.clone(), cx.now, cx.budget);
                }
            }
            ABSENT => self.resets.push((y.cause, key.cloned())),
            _ => {
                if !y.fits(self.opts.window) {
                    return;
                }
                let (opts, same_ends) = (&self.opts, self.same_ends);
                let cut = self
                    .starts
                    .with_live_bucket(key, cx.now, cx.budget, |bucket| {
                        let (binding, cut) =
                            bind(opts.context, bucket, |x| eligible(opts, x, y), |_| None);
                        binding.fire(bucket, y, |t, _| cx.out.push(t));
                        let mut removed = 0;
                        if binding != Binding::None && opts.context.consumes() {
                            removed = remove_positions(bucket, binding.positions());
                            if same_ends {
                                // y waits in the start place too (its start arc came first).
                                let before = bucket.len();
                                bucket.retain(|x| x.serial != y.serial);
                                removed += before - bucket.len();
                            }
                        }
                        (cut, removed)
                    });
                if cut == Some(true) {
                    cx.budget.truncated += 1;
                }
            }
        }
    }
}

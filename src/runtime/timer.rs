//! Timers in event time: due ticks of periodic operators, ordered by (time, component, tag).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::event::Timestamp;

/// A queue of timers; time moves only with events and `advance_to`.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Timers {
    heap: BinaryHeap<Reverse<(Timestamp, usize, u64)>>,
}

impl Timers {
    /// Asks for `tick(at, tag)` on component `component` when time passes `at`.
    pub(crate) fn set(&mut self, at: Timestamp, component: usize, tag: u64) {
        self.heap.push(Reverse((at, component, tag)));
    }

    /// The earliest timer due at or before `bound` (strictly before, if `!inclusive`).
    pub(crate) fn pop_due(
        &mut self,
        bound: Timestamp,
        inclusive: bool,
    ) -> Option<(Timestamp, usize, u64)> {
        let Reverse((at, _, _)) = *self.heap.peek()?;
        if at < bound || (inclusive && at == bound) {
            self.heap.pop().map(|Reverse(t)| t)
        } else {
            None
        }
    }

    /// Another timer due at exactly `at`, if any (after [`Timers::pop_due`] gave one
    /// at `at`: they come in order of component, then tag).
    pub(crate) fn pop_at(&mut self, at: Timestamp) -> Option<(usize, u64)> {
        let Reverse((t, _, _)) = *self.heap.peek()?;
        if t == at {
            self.heap.pop().map(|Reverse((_, c, tag))| (c, tag))
        } else {
            None
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Moves each timer to the component `to` gives for its own, dropping those it
    /// gives none.
    pub(crate) fn remap(&mut self, to: impl Fn(usize) -> Option<usize>) {
        let heap = std::mem::take(&mut self.heap);
        self.heap = heap
            .into_iter()
            .filter_map(|Reverse((at, c, tag))| to(c).map(|c| Reverse((at, c, tag))))
            .collect();
    }
}

//! Emptied batch vectors handed back to the thread that fills them, so that a batch's
//! buffer is allocated once per run rather than once per batch.
//!
//! A batch is filled on one thread and emptied on another. Allocating a new vector
//! for each batch gives the allocator a large block to find and, freed on the other
//! thread, not soon reusable: on a run writing millions of detections that was fresh
//! memory for every batch, and the kernel's zeroing of it showed in profiles.

use crossbeam_channel::{bounded, Receiver, Sender};

/// Where emptied vectors go back: [`Spares::give`].
#[derive(Clone)]
pub(crate) struct Spares<T> {
    back: Sender<Vec<T>>,
}

/// Where the filling thread takes its next vector: [`Fresh::take`].
pub(crate) struct Fresh<T> {
    spare: Receiver<Vec<T>>,
    capacity: usize,
}

/// A pool of at most `depth` spare vectors of `capacity` elements.
pub(crate) fn pool<T>(depth: usize, capacity: usize) -> (Spares<T>, Fresh<T>) {
    let (back, spare) = bounded(depth);
    (Spares { back }, Fresh { spare, capacity })
}

impl<T> Spares<T> {
    /// Empties `v` and hands it back (or drops it if the pool is full or gone).
    pub(crate) fn give(&self, mut v: Vec<T>) {
        v.clear();
        let _ = self.back.try_send(v);
    }

    /// Hands `v` back with what it holds, for the taker to drop: the detector gives
    /// back the events it kept no part of, so that they are freed on the reader's
    /// thread rather than on its own, the busiest.
    pub(crate) fn give_full(&self, v: Vec<T>) {
        let _ = self.back.try_send(v);
    }
}

impl<T> Fresh<T> {
    /// Vectors of `capacity` elements, each one new (for a filler nothing is handed
    /// back to).
    pub(crate) fn unpooled(capacity: usize) -> Fresh<T> {
        pool(0, capacity).1
    }

    /// An empty vector: a spare one if there is one (what it held dropped here), else
    /// a new one.
    pub(crate) fn take(&self) -> Vec<T> {
        match self.spare.try_recv() {
            Ok(mut v) => {
                v.clear();
                v
            }
            Err(_) => Vec::with_capacity(self.capacity),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_given_vector_comes_back_empty_with_its_buffer() {
        let (spares, fresh) = pool::<u32>(2, 8);
        let mut v = fresh.take();
        assert_eq!(v.capacity(), 8);
        v.extend(0..100);
        let (ptr, capacity) = (v.as_ptr(), v.capacity());
        spares.give(v);
        let again = fresh.take();
        assert!(again.is_empty());
        assert_eq!((again.as_ptr(), again.capacity()), (ptr, capacity));
        // None spare: a new one.
        assert_eq!(fresh.take().capacity(), 8);
    }

    #[test]
    fn a_vector_given_full_is_emptied_by_its_taker() {
        let (spares, fresh) = pool::<std::sync::Arc<u32>>(2, 8);
        let held = std::sync::Arc::new(7);
        let mut v = fresh.take();
        v.push(std::sync::Arc::clone(&held));
        spares.give_full(v);
        assert_eq!(
            std::sync::Arc::strong_count(&held),
            2,
            "not dropped by the giver"
        );
        let again = fresh.take();
        assert!(again.is_empty());
        assert_eq!(
            std::sync::Arc::strong_count(&held),
            1,
            "dropped by the taker"
        );
    }

    #[test]
    fn a_full_pool_drops_what_it_cannot_hold() {
        let (spares, fresh) = pool::<u32>(1, 4);
        spares.give(vec![1]);
        spares.give(vec![2, 3]);
        assert_eq!(fresh.take().capacity(), 1);
        assert_eq!(fresh.take().capacity(), 4);
    }
}

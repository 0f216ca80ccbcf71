//! The detections' hub: a bounded ring of the latest detections for `?since=`
//! replays, and a broadcast to the streaming clients, updated together under one
//! lock so that a client's replay and its live stream neither overlap nor leave a gap.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;

/// One detection, as the batch run writes it (its JSON line, without the newline).
#[derive(Debug)]
pub(crate) struct Item {
    pub(crate) seq: u64,
    pub(crate) json: String,
}

/// The ring and the broadcast.
pub(crate) struct Hub {
    ring: Mutex<Ring>,
    cap: usize,
}

/// What the hub's lock guards.
struct Ring {
    items: VecDeque<Arc<Item>>,
    /// `None` once closed: the streams end after what they were sent.
    tx: Option<broadcast::Sender<Arc<Item>>>,
}

/// What a client subscribing gets: the retained detections from its `since` on,
/// how many it asked for that are no longer retained, and the live stream after them.
pub(crate) struct Subscription {
    pub(crate) replay: Vec<Arc<Item>>,
    /// Detections from `since` that the ring no longer holds (0: none missed).
    pub(crate) missed: u64,
    /// The seq the live stream continues from.
    pub(crate) next: u64,
    pub(crate) live: broadcast::Receiver<Arc<Item>>,
}

impl Hub {
    /// A hub retaining `ring` detections, letting a client fall `client_buffer` behind.
    pub(crate) fn new(ring: usize, client_buffer: usize) -> Hub {
        let (tx, _) = broadcast::channel(client_buffer.max(1));
        Hub {
            ring: Mutex::new(Ring {
                items: VecDeque::with_capacity(ring.min(1 << 16)),
                tx: Some(tx),
            }),
            cap: ring.max(1),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Ring> {
        self.ring
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Retains and broadcasts `items` (in seq order).
    pub(crate) fn publish(&self, items: &[Arc<Item>]) {
        let mut ring = self.lock();
        for item in items {
            if ring.items.len() == self.cap {
                ring.items.pop_front();
            }
            ring.items.push_back(item.clone());
            // No receiver is not an error: nobody is watching.
            if let Some(tx) = &ring.tx {
                let _ = tx.send(item.clone());
            }
        }
    }

    /// Ends every stream once it has sent what it holds (at shutdown).
    pub(crate) fn close(&self) {
        self.lock().tx = None;
    }

    /// Subscribes from `since` (the first seq wanted; `None`: only what comes next).
    /// `next_seq` is the seq the detector will give its next detection.
    pub(crate) fn subscribe(&self, since: Option<u64>, next_seq: u64) -> Subscription {
        let ring = self.lock();
        let live = match &ring.tx {
            Some(tx) => tx.subscribe(),
            // Closed: a receiver whose sender is gone, so the stream ends.
            None => broadcast::channel(1).1,
        };
        let next = ring.items.back().map_or(next_seq, |i| i.seq + 1);
        let Some(since) = since else {
            return Subscription {
                replay: Vec::new(),
                missed: 0,
                next,
                live,
            };
        };
        let oldest = ring.items.front().map_or(next, |i| i.seq);
        let missed = oldest.saturating_sub(since).min(next.saturating_sub(since));
        let replay = ring
            .items
            .iter()
            .filter(|i| i.seq >= since)
            .cloned()
            .collect();
        Subscription {
            replay,
            missed,
            next,
            live,
        }
    }

    /// The detections retained now, oldest first (for a checkpoint).
    pub(crate) fn retained_items(&self) -> Vec<Arc<Item>> {
        self.lock().items.iter().cloned().collect()
    }

    /// Retains `items` (in seq order) without broadcasting them: a resumed server's.
    pub(crate) fn restore(&self, items: &[Arc<Item>]) {
        let mut ring = self.lock();
        let skip = items.len().saturating_sub(self.cap);
        ring.items.extend(items[skip..].iter().cloned());
    }

    /// Detections retained now.
    pub(crate) fn retained(&self) -> usize {
        self.lock().items.len()
    }

    /// Streaming clients connected now.
    pub(crate) fn clients(&self) -> usize {
        self.lock()
            .tx
            .as_ref()
            .map_or(0, broadcast::Sender::receiver_count)
    }
}

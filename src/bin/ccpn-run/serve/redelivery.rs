//! MQTT in's memory of the messages it consumed, for recognising those the broker
//! sends again (QoS 1, marked `dup`): after a reconnect in a persistent session (the
//! broker re-sends what it had no acknowledgement of) and after a restart from a
//! checkpoint (which keeps them). A message is known by its packet id and the
//! XXH3-64 of its topic and payload ([`MessageKey`]); it is remembered from its
//! consumption until [`ACK_GRACE`] after its acknowledgement was sent, the time
//! the connection was down not counted.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use rustc_hash::FxHashMap;

/// An MQTT message as the broker would send it again: its packet id and the
/// XXH3-64 of its topic and payload.
pub(crate) type MessageKey = (u16, u64);

/// How long after its acknowledgement was sent a message is still taken for one
/// the broker may send again: an acknowledgement written to the socket can still be
/// lost when the connection breaks or the process dies (what the broker had not
/// read of it is gone).
const ACK_GRACE: Duration = Duration::from_secs(2);

/// Acknowledged messages remembered, at most: beyond, the oldest are forgotten
/// before [`ACK_GRACE`] has passed, with a warning. As many as there are packet ids:
/// reached only past some 30,000 messages a second.
const MAX_ACKED: usize = 1 << 16;

/// MQTT messages consumed whose acknowledgement may not have reached the broker,
/// by packet id (one a packet id: the broker reuses an id once it has the
/// acknowledgement). The detector thread adds the messages it consumed, MQTT in
/// notes the acknowledgements it sends and the connection's breaks, and a
/// checkpoint keeps those not yet acknowledged or acknowledged within
/// [`ACK_GRACE`].
#[derive(Default)]
pub(crate) struct Unacked {
    by_id: FxHashMap<u16, (u64, Option<Instant>)>,
    /// The acknowledgements sent, oldest first: when, and of which packet id.
    acks: VecDeque<(Instant, u16)>,
    /// Since when the connection is down, if it is.
    down_since: Option<Instant>,
    /// Messages forgotten early, at [`MAX_ACKED`].
    forced: u64,
}

impl Unacked {
    /// Notes messages consumed.
    pub(crate) fn consumed(&mut self, keys: impl IntoIterator<Item = MessageKey>) {
        for (id, hash) in keys {
            self.by_id.insert(id, (hash, None));
        }
        self.expire();
    }

    /// Notes messages a resumed server's checkpoint held, as if just acknowledged.
    pub(crate) fn resumed(&mut self, keys: &[MessageKey]) {
        let now = Instant::now();
        for &(id, hash) in keys {
            self.by_id.insert(id, (hash, Some(now)));
            self.acks.push_back((now, id));
        }
        self.expire();
    }

    /// Notes the acknowledgement of packet `id` sent.
    pub(crate) fn acked(&mut self, id: u16) {
        if let Some((_, at @ None)) = self.by_id.get_mut(&id) {
            let now = Instant::now();
            *at = Some(now);
            self.acks.push_back((now, id));
        }
        self.expire();
    }

    /// Forgets message `key`: the broker will not send it again (it has reused its
    /// packet id for another, or forgotten the session).
    pub(crate) fn forget(&mut self, key: MessageKey) {
        if self.by_id.get(&key.0).is_some_and(|(h, _)| *h == key.1) {
            self.by_id.remove(&key.0);
        }
    }

    /// Whether message `key` was consumed and is still remembered.
    pub(crate) fn knows(&mut self, key: MessageKey) -> bool {
        self.expire();
        self.by_id.get(&key.0).is_some_and(|(h, _)| *h == key.1)
    }

    /// Notes the connection to the broker broken: until it is back, no
    /// acknowledgement's grace runs out.
    pub(crate) fn broken(&mut self) {
        self.expire();
        self.down_since.get_or_insert_with(Instant::now);
    }

    /// Notes the connection back: the acknowledgements' grace goes on from where
    /// it was when the connection broke.
    pub(crate) fn reconnected(&mut self) {
        let Some(down) = self.down_since.take() else {
            return;
        };
        let outage = down.elapsed();
        for (at, id) in &mut self.acks {
            let was = *at;
            *at += outage;
            if let Some((_, Some(t))) = self.by_id.get_mut(id) {
                if *t == was {
                    *t = *at;
                }
            }
        }
    }

    /// Those a checkpoint is to keep (and forgets the others).
    pub(crate) fn kept(&mut self) -> Vec<MessageKey> {
        self.expire();
        self.by_id.iter().map(|(id, (h, _))| (*id, *h)).collect()
    }

    /// Forgets the messages acknowledged more than [`ACK_GRACE`] ago (unless the
    /// connection is down), and the oldest beyond [`MAX_ACKED`].
    fn expire(&mut self) {
        let running = self.down_since.is_none();
        while let Some(&(at, id)) = self.acks.front() {
            let expired = running && at.elapsed() >= ACK_GRACE;
            if !expired && self.acks.len() <= MAX_ACKED {
                break;
            }
            self.acks.pop_front();
            let same = self.by_id.get(&id).is_some_and(|(_, t)| *t == Some(at));
            if same {
                self.by_id.remove(&id);
                if !expired {
                    self.forced_out();
                }
            }
        }
    }

    /// Says that a message was forgotten early (at the 1st, 2nd, 4th … time).
    fn forced_out(&mut self) {
        self.forced += 1;
        if self.forced.is_power_of_two() {
            eprintln!(
                "ccpn-run serve: warning: --mqtt-in: more than {MAX_ACKED} messages acknowledged \
                 within {} s: {} forgotten early so far, which the broker would not be \
                 recognised sending again",
                ACK_GRACE.as_secs(),
                self.forced
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembered_until_the_grace_after_the_ack_runs_out() {
        let mut u = Unacked::default();
        u.consumed([(1, 10), (2, 20)]);
        assert!(u.knows((1, 10)) && u.knows((2, 20)));
        assert!(!u.knows((1, 11)), "another message under the same id");
        u.acked(1);
        assert_eq!(u.acks.len(), 1);
        // Backdated: the grace of packet 1 has run out.
        let past = Instant::now() - ACK_GRACE;
        u.acks[0].0 = past;
        u.by_id.insert(1, (10, Some(past)));
        assert!(!u.knows((1, 10)));
        assert!(u.knows((2, 20)), "not acknowledged: kept");
        assert_eq!(u.kept(), vec![(2, 20)]);
    }

    #[test]
    fn the_grace_stops_while_the_connection_is_down() {
        let mut u = Unacked::default();
        u.consumed([(7, 70)]);
        u.acked(7);
        let past = Instant::now() - ACK_GRACE;
        u.acks[0].0 = past;
        u.by_id.insert(7, (70, Some(past)));
        u.down_since = Some(past + Duration::from_millis(500));
        assert!(u.knows((7, 70)), "down: kept");
        u.reconnected();
        // 500 ms of grace were used before the break: 1.5 s left.
        assert!(u.knows((7, 70)), "the grace goes on after the reconnect");
        let (at, _) = u.acks[0];
        assert!(at > Instant::now() - ACK_GRACE);
    }

    #[test]
    fn an_id_reused_forgets_the_message_it_held() {
        let mut u = Unacked::default();
        u.consumed([(3, 30)]);
        u.forget((3, 31));
        assert!(u.knows((3, 30)), "another message's key: kept");
        u.forget((3, 30));
        assert!(!u.knows((3, 30)));
    }
}

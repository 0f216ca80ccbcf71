//! The objects the live map shows (`/objects`): where each tracked object was
//! last seen and its trail, bounded by `--max-objects`, the least recently seen
//! forgotten first.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use ccpn::{Event, Net, Value};

/// Where each tracked object was last seen, and its trail.
pub(crate) struct Objects {
    pub(crate) key: String,
    trail: usize,
    max: usize,
    pub(crate) seen: HashMap<String, Track>,
    tick: u64,
}

/// One object on the map.
pub(crate) struct Track {
    pub(crate) kind: Arc<str>,
    pub(crate) time: f64,
    pub(crate) trail: VecDeque<[f64; 2]>,
    last_seen: u64,
}

/// The attribute naming objects on the map, when `--object` does not say.
pub(crate) fn key(net: &Net) -> String {
    let read = net.attribute_names();
    [
        "track", "mmsi", "object", "vehicle", "icao24", "ship", "key",
    ]
    .into_iter()
    .find(|k| read.contains(k))
    .unwrap_or("type")
    .to_owned()
}

impl Objects {
    /// No object yet: named by attribute `key`, with trails of `trail` positions,
    /// `max` of them at most.
    pub(crate) fn new(key: String, trail: usize, max: usize) -> Objects {
        Objects {
            key,
            trail: trail.max(1),
            max: max.max(1),
            seen: HashMap::new(),
            tick: 0,
        }
    }

    /// Notes where `ev`'s object is.
    pub(crate) fn saw(&mut self, ev: &Event) {
        let Some(at) = ev.location else { return };
        let name = if self.key == "type" {
            ev.kind.to_string()
        } else {
            match ev.attr(&self.key) {
                Some(Value::Str(s)) => s.to_string(),
                Some(Value::Num(n)) => n.to_string(),
                Some(Value::Bool(b)) => b.to_string(),
                _ => return,
            }
        };
        self.tick += 1;
        if !self.seen.contains_key(&name) && self.seen.len() >= self.max {
            if let Some(oldest) = self
                .seen
                .iter()
                .min_by_key(|(_, t)| t.last_seen)
                .map(|(k, _)| k.clone())
            {
                self.seen.remove(&oldest);
            }
        }
        let track = self.seen.entry(name).or_insert_with(|| Track {
            kind: ev.kind.clone(),
            time: 0.0,
            trail: VecDeque::new(),
            last_seen: 0,
        });
        track.kind = ev.kind.clone();
        track.time = ev.time.micros() as f64 / 1e6;
        track.last_seen = self.tick;
        if track.trail.len() == self.trail {
            track.trail.pop_front();
        }
        track.trail.push_back([at.x, at.y]);
    }
}

//! Detections as JSON Lines: `{"event":…,"time":…,"x":…,"y":…,"ids":[…],"seq":…}`.

use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};

use crate::event::Space;
use crate::runtime::{Detail, Detection};

/// Writes detections one JSON object per line, with location fields named for `space`.
///
/// ```
/// use ccpn::io::write::JsonLines;
/// use ccpn::{Detector, Event, Net, Space, Timestamp};
///
/// let net = Net::from_ron("n.ron", r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#)?;
/// let mut d = Detector::new(&net);
/// let found = d.push(Event::new(1, "A", Timestamp::from_secs_f64(2.5).unwrap()).at(1.0, 2.0))?;
/// let mut out = Vec::new();
/// JsonLines::new(Space::Planar).write(&mut out, &found[0])?;
/// assert_eq!(String::from_utf8(out)?,
///     "{\"event\":\"a\",\"time\":2.5,\"x\":1.0,\"y\":2.0,\"ids\":[1],\"seq\":0,\"start\":2.5}\n");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct JsonLines {
    space: Space,
}

impl JsonLines {
    /// A writer for detections of a net in `space`.
    pub fn new(space: Space) -> JsonLines {
        JsonLines { space }
    }

    /// Writes one detection and a newline.
    ///
    /// # Errors
    ///
    /// Any error of `w`.
    pub fn write(&self, w: &mut impl Write, d: &Detection) -> io::Result<()> {
        let mut ser = serde_json::Serializer::new(&mut *w);
        self.serialize(&mut ser, d).map_err(io::Error::other)?;
        w.write_all(b"\n")
    }

    fn serialize<S: Serializer>(&self, s: S, d: &Detection) -> Result<S::Ok, S::Error> {
        let (xn, yn) = self.space.axis_names();
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("event", &*d.event)?;
        match &d.time_text {
            Some(t) => m.serialize_entry("time", &**t)?,
            None => m.serialize_entry("time", &d.time.as_secs_f64())?,
        }
        if let Some(p) = d.location {
            m.serialize_entry(xn, &p.x)?;
            m.serialize_entry(yn, &p.y)?;
        }
        m.serialize_entry("ids", &Ids(d))?;
        m.serialize_entry("seq", &d.seq)?;
        match (&d.time_text, d.members().next()) {
            (Some(_), Some(first)) if first.time == d.start && first.time_text.is_some() => {
                m.serialize_entry("start", first.time_text.as_deref().unwrap_or_default())?
            }
            (Some(_), _) => m.serialize_entry("start", &crate::runtime::rfc3339(d.start))?,
            (None, _) => m.serialize_entry("start", &d.start.as_secs_f64())?,
        }
        match &d.detail {
            Detail::None => {}
            Detail::Zone(z) => m.serialize_entry("zone", &**z)?,
            Detail::Distance(x) => m.serialize_entry("distance", x)?,
            Detail::Ticks(n) => m.serialize_entry("ticks", n)?,
        }
        m.end()
    }
}

struct Ids<'a>(&'a Detection);

impl serde::Serialize for Ids<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.ids())
    }
}

//! Detections out: JSON Lines (`{"event":…,"time":…,"x":…,"y":…,"ids":[…],"seq":…}`),
//! or a GeoJSON FeatureCollection that opens on a map.

use std::io::{self, Write};

use crate::event::Space;
use crate::runtime::Detection;

mod format;

use format::{Object, Sink, Sorted};

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

    /// The keys of the location's fields.
    fn location(&self) -> (&'static str, &'static str) {
        match self.space {
            Space::Planar => (r#""x":"#, r#""y":"#),
            Space::Wgs84 => (r#""lon":"#, r#""lat":"#),
        }
    }

    /// Writes one detection and a newline.
    ///
    /// # Errors
    ///
    /// Any error of `w`.
    pub fn write(&self, w: &mut impl Write, d: &Detection) -> io::Result<()> {
        let mut line = Vec::with_capacity(160);
        self.append(&mut line, d);
        w.write_all(&line)
    }

    /// Appends one detection's line, newline included, to `buf`: for a writer that
    /// gathers a batch of lines and writes them at once.
    ///
    /// ```
    /// use ccpn::io::write::JsonLines;
    /// use ccpn::{Detector, Event, Net, Space, Timestamp};
    ///
    /// let net = Net::from_ron("n.ron", r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#)?;
    /// let mut d = Detector::new(&net);
    /// let t = |s| Timestamp::from_secs_f64(s).unwrap();
    /// let mut found = d.push(Event::new(1, "A", t(1.0)))?;
    /// found.extend(d.push(Event::new(2, "A", t(2.0)))?);
    /// let mut buf = Vec::new();
    /// for det in &found {
    ///     JsonLines::new(Space::Planar).append(&mut buf, det);
    /// }
    /// assert_eq!(String::from_utf8(buf)?.lines().count(), 2);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn append(&self, buf: &mut Vec<u8>, d: &Detection) {
        buf.reserve(256);
        let mut line = format::line_head(buf, d, self.location());
        format::seq(&mut line, d.seq);
        format::tail(&mut line, d);
        line.close();
        buf.push(b'\n');
    }

    /// The detection's line with its `seq` left to fill in: for a run whose
    /// detections are found on many threads and numbered where they are gathered.
    ///
    /// ```
    /// use ccpn::io::write::JsonLines;
    /// use ccpn::{Detector, Event, Net, Space, Timestamp};
    ///
    /// let net = Net::from_ron("n.ron", r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#)?;
    /// let found = Detector::new(&net).push(Event::new(1, "A", Timestamp::from_secs_f64(2.5).unwrap()))?;
    /// let line = JsonLines::new(Space::Planar).unnumbered(&found[0]);
    /// let mut out = Vec::new();
    /// line.write(&mut out, 41)?;
    /// assert_eq!(String::from_utf8(out)?,
    ///     "{\"event\":\"a\",\"time\":2.5,\"ids\":[1],\"seq\":41,\"start\":2.5}\n");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn unnumbered(&self, d: &Detection) -> Unnumbered {
        let mut text = Vec::with_capacity(160);
        let mut line = Object::new(&mut text);
        format::head(&mut line, d, self.location());
        line.field(r#""seq":"#);
        let cut = line.buf.len();
        format::tail(&mut line, d);
        line.close();
        Unnumbered {
            text: String::from_utf8(text).unwrap_or_default(),
            cut,
        }
    }
}

/// A detection's JSON line without its `seq` (see [`JsonLines::unnumbered`]).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Unnumbered {
    /// The line without its seq's value and newline.
    text: String,
    /// Where the seq's value goes: just after `"seq":`.
    cut: usize,
}

impl Unnumbered {
    /// Writes the line with `seq`, and a newline.
    ///
    /// # Errors
    ///
    /// Any error of `w`.
    pub fn write(&self, w: &mut impl Write, seq: u64) -> io::Result<()> {
        let (head, tail) = self.text.as_bytes().split_at(self.cut.min(self.text.len()));
        w.write_all(head)?;
        w.write_all(itoa::Buffer::new().format(seq).as_bytes())?;
        w.write_all(tail)?;
        w.write_all(b"\n")
    }
}

/// Writes detections as one GeoJSON FeatureCollection, a feature per detection: its
/// geometry is the occurrence's location (a Point), or, when its members were at more
/// than one place (a counting set, a pair), a MultiPoint of the members' locations in
/// the order of `ids`; its properties are the JSON Lines fields, `lon` and `lat` (the
/// occurrence's location) included. GeoJSON coordinates are longitude and latitude
/// (RFC 7946): `ccpn-run` writes it for `Wgs84` nets only, and so should a caller.
///
/// ```
/// use ccpn::io::write::GeoJson;
/// use ccpn::{Detector, Event, Net, Timestamp};
///
/// let net = Net::from_ron("n.ron", r#"Net(events: {"a": Atomic(type: "A")}, outputs: ["a"])"#)?;
/// let mut d = Detector::new(&net);
/// let found = d.push(Event::new(1, "A", Timestamp::from_secs_f64(2.5).unwrap()).at(1.0, 2.0))?;
/// let mut out = Vec::new();
/// let mut geo = GeoJson::new();
/// geo.write(&mut out, &found[0])?;
/// geo.finish(&mut out)?;
/// let v: serde_json::Value = serde_json::from_slice(&out)?;
/// assert_eq!(v["features"][0]["geometry"]["coordinates"], serde_json::json!([1.0, 2.0]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct GeoJson {
    started: bool,
}

impl GeoJson {
    /// A writer that has written nothing yet.
    pub fn new() -> GeoJson {
        GeoJson { started: false }
    }

    /// Writes one detection as a feature (opening the collection first).
    ///
    /// # Errors
    ///
    /// Any error of `w`.
    pub fn write(&mut self, w: &mut impl Write, d: &Detection) -> io::Result<()> {
        w.write_all(if self.started {
            b",\n"
        } else {
            b"{\"type\":\"FeatureCollection\",\"features\":[\n"
        })?;
        self.started = true;
        // Keys in order, as a `serde_json` map writes them.
        let mut feature = Vec::with_capacity(400);
        feature.extend_from_slice(b"{\"geometry\":");
        serde_json::to_writer(&mut feature, &geometry(d)).map_err(io::Error::from)?;
        feature.extend_from_slice(b",\"properties\":");
        let mut properties = Sorted::default();
        format::head(&mut properties, d, (r#""lon":"#, r#""lat":"#));
        format::seq(&mut properties, d.seq);
        format::tail(&mut properties, d);
        properties.write_to(&mut feature);
        feature.extend_from_slice(b",\"type\":\"Feature\"}");
        w.write_all(&feature)
    }

    /// Closes the collection (an empty one if nothing was written).
    ///
    /// # Errors
    ///
    /// Any error of `w`.
    pub fn finish(&mut self, w: &mut impl Write) -> io::Result<()> {
        if !self.started {
            w.write_all(b"{\"type\":\"FeatureCollection\",\"features\":[")?;
        }
        self.started = false;
        w.write_all(b"\n]}\n")
    }
}

/// The occurrence's point, or its members' points when they are elsewhere.
fn geometry(d: &Detection) -> serde_json::Value {
    let Some(p) = d.location else {
        return serde_json::Value::Null;
    };
    let point = serde_json::json!({"type": "Point", "coordinates": [p.x, p.y]});
    let members: Vec<[f64; 2]> = d
        .members()
        .filter_map(|e| e.location)
        .map(|q| [q.x, q.y])
        .collect();
    if members.iter().all(|q| *q == [p.x, p.y]) {
        return point;
    }
    serde_json::json!({"type": "MultiPoint", "coordinates": members})
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Detector, Event, Net, Timestamp};

    /// Every kind of detail, RFC 3339 and numeric times, strings in ids.
    #[test]
    fn unnumbered_lines_are_the_numbered_ones_without_seq() {
        let net = Net::from_ron(
            "n.ron",
            r#"Net(
                zones: { "z": Rect(min: (0.0, 0.0), max: (9.0, 9.0)) },
                events: {
                    "a": Atomic(type: "A"), "b": Atomic(type: "B"),
                    "in": Within(of: "a", zones: ["z"]),
                    "near": Dist(a: "a", b: "b", max: 5.0, within: 60.0),
                    "ticks": PStar(start: "a", period: 1.0, end: "b", within: 60.0),
                },
                outputs: ["a", "in", "near", "ticks"],
            )"#,
        )
        .unwrap();
        let mut d = Detector::new(&net);
        let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
        let mut found = d
            .push(Event::new("a\"1", "A", t(1.0)).at(1.0, 2.0))
            .unwrap();
        let mut b = Event::new(2, "B", t(3.5)).at(1.5, 2.0);
        b.time_text = Some("1970-01-01T00:00:03.5Z".into());
        found.extend(d.push(b).unwrap());
        assert_eq!(found.len(), 4);
        let lines = JsonLines::new(Space::Planar);
        for (i, det) in found.iter_mut().enumerate() {
            let seq = 1_000_000_007 * i as u64;
            let mut split = Vec::new();
            lines.unnumbered(det).write(&mut split, seq).unwrap();
            det.seq = seq;
            let mut whole = Vec::new();
            lines.write(&mut whole, det).unwrap();
            assert_eq!(
                String::from_utf8(split).unwrap(),
                String::from_utf8(whole).unwrap()
            );
        }
    }
}

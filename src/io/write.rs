//! Detections out: JSON Lines (`{"event":…,"time":…,"x":…,"y":…,"ids":[…],"seq":…}`),
//! or a GeoJSON FeatureCollection that opens on a map.

use std::io::{self, Write};

use serde::ser::{SerializeMap, Serializer};

use crate::event::Space;
use crate::event::Value;
use crate::runtime::{Detail, Detection, Phase};

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
        // `io::Error::from` keeps the kind of a write error (a closed pipe stays one).
        self.serialize(&mut ser, d).map_err(io::Error::from)?;
        w.write_all(b"\n")
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
        let location = Some(self.space.axis_names());
        let mut text = Vec::with_capacity(160);
        let part = |text: &mut Vec<u8>, part| {
            let fields = Fields { d, location, part };
            // Writing to memory fails only for maps with non-string keys.
            let _ = serde::Serialize::serialize(&fields, &mut serde_json::Serializer::new(text));
        };
        // `{head}` + `{tail}` becomes `{head,"seq":` + `,tail}`.
        part(&mut text, Part::Head);
        text.pop();
        text.extend_from_slice(b",\"seq\":");
        let cut = text.len();
        part(&mut text, Part::Tail);
        if let Some(brace) = text.get_mut(cut) {
            *brace = b',';
        }
        Unnumbered {
            text: String::from_utf8(text).unwrap_or_default(),
            cut,
        }
    }

    fn serialize<S: Serializer>(&self, s: S, d: &Detection) -> Result<S::Ok, S::Error> {
        serde::Serialize::serialize(
            &Fields {
                d,
                location: Some(self.space.axis_names()),
                part: Part::All,
            },
            s,
        )
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

/// A detection's fields as a JSON object; with `location`, its location under those
/// two names.
struct Fields<'a> {
    d: &'a Detection,
    location: Option<(&'static str, &'static str)>,
    part: Part,
}

/// Which of a detection's fields to write.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    All,
    /// Those before `seq`.
    Head,
    /// Those after `seq`.
    Tail,
}

impl serde::Serialize for Fields<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let d = self.d;
        let mut m = s.serialize_map(None)?;
        if self.part != Part::Tail {
            m.serialize_entry("event", &*d.event)?;
            match &d.time_text {
                Some(t) => m.serialize_entry("time", &**t)?,
                None => m.serialize_entry("time", &d.time.as_secs_f64())?,
            }
            if let (Some(p), Some((xn, yn))) = (d.location, self.location) {
                m.serialize_entry(xn, &p.x)?;
                m.serialize_entry(yn, &p.y)?;
            }
            m.serialize_entry("ids", &Ids(d))?;
        }
        match self.part {
            Part::All => m.serialize_entry("seq", &d.seq)?,
            Part::Head => return m.end(),
            Part::Tail => {}
        }
        match (&d.time_text, d.members().next(), &d.detail) {
            (_, _, Detail::Transition { start_text, .. }) => match start_text {
                Some(t) => m.serialize_entry("start", &**t)?,
                None => m.serialize_entry("start", &d.start.as_secs_f64())?,
            },
            (Some(_), Some(first), _) if first.time == d.start && first.time_text.is_some() => {
                m.serialize_entry("start", first.time_text.as_deref().unwrap_or_default())?
            }
            (Some(_), _, _) => m.serialize_entry("start", &d.start.to_rfc3339())?,
            (None, _, _) => m.serialize_entry("start", &d.start.as_secs_f64())?,
        }
        match &d.detail {
            Detail::None => {}
            Detail::Zone(z) => m.serialize_entry("zone", &**z)?,
            Detail::Distance(x) => m.serialize_entry("distance", x)?,
            Detail::Ticks(n) => m.serialize_entry("ticks", n)?,
            Detail::Transition { phase, key, .. } => {
                match phase {
                    Phase::Start => m.serialize_entry("phase", "start")?,
                    Phase::End => {
                        m.serialize_entry("phase", "end")?;
                        m.serialize_entry("duration", &(d.time.since(d.start) as f64 / 1e6))?;
                    }
                }
                match &key[..] {
                    [] => {}
                    [one] => m.serialize_entry("key", &Plain(one))?,
                    pair => {
                        let pair: Vec<Plain<'_>> = pair.iter().map(Plain).collect();
                        m.serialize_entry("key", &pair)?
                    }
                }
            }
        }
        m.end()
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
        let feature = serde_json::json!({
            "type": "Feature",
            "geometry": geometry(d),
            "properties": Fields { d, location: Some(("lon", "lat")), part: Part::All },
        });
        serde_json::to_writer(&mut *w, &feature).map_err(io::Error::from)
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

struct Ids<'a>(&'a Detection);

impl serde::Serialize for Ids<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.ids())
    }
}

/// An attribute value as plain JSON: a number, a string or a boolean.
struct Plain<'a>(&'a Value);

impl serde::Serialize for Plain<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            // A whole number (an MMSI, a track number) is written as one: `367000140`,
            // not `367000140.0`.
            Value::Num(n) if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 => {
                s.serialize_i64(*n as i64)
            }
            Value::Num(n) => s.serialize_f64(*n),
            Value::Str(t) => s.serialize_str(t),
            Value::Bool(b) => s.serialize_bool(*b),
        }
    }
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

//! A detection's JSON Lines object, formatted straight into a byte buffer: numbers with
//! `itoa` and `zmij` (the shortest text that reads back as the same `f64`, as
//! `serde_json` writes them), strings escaped by `serde_json`, and event times, the
//! numbers every line has, from their whole microseconds, made on the stack and
//! copied as one block. A line's opening (`{`, the output, the time, the location) is
//! copied from the line before when they are the same, as they are for the many
//! detections one event completes at once.

use std::sync::Arc;

use serde::Serializer;

use crate::event::{Id, Timestamp, Value};
use crate::runtime::{Detail, Detection, Phase};

/// A field's key as written: `"name":`.
macro_rules! key {
    ($name:literal) => {
        concat!("\"", $name, "\":")
    };
}

/// Where a detection's fields go, one at a time: [`Sink::field`] gives the buffer its
/// value is to be written to.
pub(super) trait Sink {
    /// Starts the field of `key` (`"name":`, see `key!`); its value follows in the
    /// buffer returned.
    fn field(&mut self, key: &'static str) -> &mut Vec<u8>;
}

/// Fields written in the order they come, as one JSON object: `{` before the first,
/// commas between them, and `}` at [`Object::close`].
pub(super) struct Object<'a> {
    pub(super) buf: &'a mut Vec<u8>,
    open: bool,
}

impl<'a> Object<'a> {
    pub(super) fn new(buf: &'a mut Vec<u8>) -> Object<'a> {
        Object { buf, open: false }
    }

    /// The object whose `{` and first fields `buf` ends with already.
    fn continuing(buf: &'a mut Vec<u8>) -> Object<'a> {
        Object { buf, open: true }
    }

    pub(super) fn close(self) {
        self.buf
            .extend_from_slice(if self.open { b"}" } else { b"{}" });
    }
}

impl Sink for Object<'_> {
    fn field(&mut self, key: &'static str) -> &mut Vec<u8> {
        self.buf.push(if self.open { b',' } else { b'{' });
        self.open = true;
        self.buf.extend_from_slice(key.as_bytes());
        self.buf
    }
}

/// Fields gathered, then written as one JSON object with its keys in order (as a
/// `serde_json` map writes them): GeoJSON's properties.
#[derive(Default)]
pub(super) struct Sorted {
    values: Vec<u8>,
    /// Each field's key and where its value starts in `values`. No name is the
    /// start of another, so keys sort as their names do.
    fields: Vec<(&'static str, usize)>,
}

impl Sorted {
    /// Writes the gathered fields to `buf` and forgets them.
    pub(super) fn write_to(&mut self, buf: &mut Vec<u8>) {
        let mut ranges: Vec<(&str, usize, usize)> = Vec::with_capacity(self.fields.len());
        for (i, &(name, start)) in self.fields.iter().enumerate() {
            let end = self
                .fields
                .get(i + 1)
                .map_or(self.values.len(), |&(_, s)| s);
            ranges.push((name, start, end));
        }
        ranges.sort_by_key(|&(key, _, _)| key);
        let mut out = Object::new(buf);
        for (key, start, end) in ranges {
            out.field(key).extend_from_slice(&self.values[start..end]);
        }
        out.close();
        self.values.clear();
        self.fields.clear();
    }
}

impl Sink for Sorted {
    fn field(&mut self, key: &'static str) -> &mut Vec<u8> {
        self.fields.push((key, self.values.len()));
        &mut self.values
    }
}

/// Writes `event`, `time`, the location under `location`'s two keys (`"x":`,
/// `"y":`), and `ids`: the fields before `seq`.
pub(super) fn head(out: &mut impl Sink, d: &Detection, location: (&'static str, &'static str)) {
    opening(out, d, location);
    ids(out, d);
}

/// Writes `event`, `time` and the location.
fn opening(out: &mut impl Sink, d: &Detection, location: (&'static str, &'static str)) {
    string(out.field(key!("event")), &d.event);
    let buf = out.field(key!("time"));
    match &d.time_text {
        Some(t) => string(buf, t),
        None => time(buf, d.time),
    }
    if let Some(p) = d.location {
        float(out.field(location.0), p.x);
        float(out.field(location.1), p.y);
    }
}

/// Writes `ids`.
fn ids(out: &mut impl Sink, d: &Detection) {
    let buf = out.field(key!("ids"));
    buf.push(b'[');
    for (i, id) in d.ids().enumerate() {
        if i > 0 {
            buf.push(b',');
        }
        match id {
            Id::Int(v) => integer(buf, *v),
            Id::UInt(v) => integer(buf, *v),
            Id::Str(v) => string(buf, v),
        }
    }
    buf.push(b']');
}

/// Opens a JSON Lines object on `buf` and writes its fields before `seq`, as
/// [`head`] does; `{` and the fields before `ids` are copied from the last line this
/// thread wrote when `d` has its output, time and location. A `Count` completing
/// many sets at one event, or a `Seq` many pairs, writes a run of such lines.
pub(super) fn line_head<'a>(
    buf: &'a mut Vec<u8>,
    d: &Detection,
    location: (&'static str, &'static str),
) -> Object<'a> {
    LAST_OPENING.with_borrow_mut(|last| {
        if !last.is_for(d, location) {
            last.text.clear();
            opening(&mut Object::new(&mut last.text), d, location);
            last.remember(d, location);
        }
        buf.extend_from_slice(&last.text);
    });
    let mut line = Object::continuing(buf);
    ids(&mut line, d);
    line
}

thread_local! {
    /// The opening of the last JSON Lines object this thread wrote.
    static LAST_OPENING: std::cell::RefCell<Opening> = std::cell::RefCell::default();
}

/// A line's `{` and fields before `ids`, and what they were written from.
#[derive(Default)]
struct Opening {
    /// `None` until a line is written.
    event: Option<Arc<str>>,
    time: i64,
    time_text: Option<Arc<str>>,
    /// The location's bits.
    location: Option<(u64, u64)>,
    keys: (&'static str, &'static str),
    text: Vec<u8>,
}

impl Opening {
    /// Whether `text` is `d`'s opening.
    fn is_for(&self, d: &Detection, keys: (&'static str, &'static str)) -> bool {
        let same_text = |a: &Arc<str>, b: &Arc<str>| Arc::ptr_eq(a, b) || a == b;
        self.event.as_ref().is_some_and(|e| same_text(e, &d.event))
            && self.time == d.time.micros()
            && match (&self.time_text, &d.time_text) {
                (None, None) => true,
                (Some(a), Some(b)) => same_text(a, b),
                _ => false,
            }
            && self.location == location_bits(d)
            && self.keys == keys
    }

    /// Notes that `text` is now `d`'s opening.
    fn remember(&mut self, d: &Detection, keys: (&'static str, &'static str)) {
        self.event = Some(Arc::clone(&d.event));
        self.time = d.time.micros();
        self.time_text.clone_from(&d.time_text);
        self.location = location_bits(d);
        self.keys = keys;
    }
}

/// `d`'s location as bits: the same bits write the same text.
fn location_bits(d: &Detection) -> Option<(u64, u64)> {
    d.location.map(|p| (p.x.to_bits(), p.y.to_bits()))
}

/// Writes `seq`.
pub(super) fn seq(out: &mut impl Sink, seq: u64) {
    integer(out.field(key!("seq")), seq);
}

/// Writes `start` and the operator's own fields: those after `seq`.
pub(super) fn tail(out: &mut impl Sink, d: &Detection) {
    let buf = out.field(key!("start"));
    match (&d.time_text, d.members().next(), &d.detail) {
        (_, _, Detail::Transition { start_text, .. }) => match start_text {
            Some(t) => string(buf, t),
            None => time(buf, d.start),
        },
        (Some(_), Some(first), _) if first.time == d.start && first.time_text.is_some() => {
            string(buf, first.time_text.as_deref().unwrap_or_default())
        }
        (Some(_), _, _) => string(buf, &d.start.to_rfc3339()),
        (None, _, _) => time(buf, d.start),
    }
    match &d.detail {
        Detail::None => {}
        Detail::Zone(z) => string(out.field(key!("zone")), z),
        Detail::Distance(x) => float(out.field(key!("distance")), *x),
        Detail::Ticks(n) => integer(out.field(key!("ticks")), *n),
        Detail::Transition { phase, key, .. } => {
            match phase {
                Phase::Start => string(out.field(key!("phase")), "start"),
                Phase::End => {
                    string(out.field(key!("phase")), "end");
                    float(
                        out.field(key!("duration")),
                        d.time.since(d.start) as f64 / 1e6,
                    );
                }
            }
            match &key[..] {
                [] => {}
                [one] => plain(out.field(key!("key")), one),
                pair => {
                    let buf = out.field(key!("key"));
                    buf.push(b'[');
                    for (i, v) in pair.iter().enumerate() {
                        if i > 0 {
                            buf.push(b',');
                        }
                        plain(buf, v);
                    }
                    buf.push(b']');
                }
            }
        }
    }
}

/// Writes `s` as a JSON string, escaped as `serde_json` escapes it.
fn string(buf: &mut Vec<u8>, s: &str) {
    // Writing to memory cannot fail.
    let _ = serde_json::Serializer::new(&mut *buf).serialize_str(s);
}

/// Writes `x` as `serde_json` writes an `f64`: `null` if it is not finite.
pub(super) fn float(buf: &mut Vec<u8>, x: f64) {
    if x.is_finite() {
        buf.extend_from_slice(zmij::Buffer::new().format_finite(x).as_bytes());
    } else {
        buf.extend_from_slice(b"null");
    }
}

/// Whole seconds below which an instant's `f64` seconds, written shortest, are its
/// decimal microseconds without trailing zeros. Below 2³³ s one `f64` step is under
/// a microsecond, so the decimal reads back as that `f64` and no shorter decimal does
/// (any other is a microsecond or more away); below 2³² s (the year 2106) with room
/// to spare, and well short of where `zmij` writes an exponent.
const PLAIN_BELOW_SECS: i64 = 1 << 32;

/// Writes `t` in seconds, exactly as [`float`] writes `t.as_secs_f64()`, without
/// the float: whole seconds, a point, the microseconds without trailing zeros (at
/// least one digit).
pub(super) fn time(buf: &mut Vec<u8>, t: Timestamp) {
    let micros = t.micros();
    let (secs, frac) = (micros / 1_000_000, micros % 1_000_000);
    if !(1..PLAIN_BELOW_SECS).contains(&secs) {
        return float(buf, t.as_secs_f64());
    }
    // Made on the stack: at most ten digits, ending at `DIGITS_END`, a point, six.
    let mut text = [0u8; 2 * DIGITS_END];
    let start = digits_before(&mut text, secs as u64);
    let mut n = DIGITS_END;
    text[n] = b'.';
    n += 1;
    // The six digits of the microseconds, two at a time, less their trailing zeros
    // (all but the first, for a whole second).
    let f = frac as u32;
    for (k, pair) in [f / 10_000, f / 100 % 100, f % 100].into_iter().enumerate() {
        let at = 2 * pair as usize;
        text[n + 2 * k..n + 2 * k + 2].copy_from_slice(&PAIRS[at..at + 2]);
    }
    let mut zeros = 0;
    let mut g = f;
    while g.is_multiple_of(10) && zeros < 5 {
        g /= 10;
        zeros += 1;
    }
    block(buf, &text, start, n + 6 - zeros - start);
}

/// Writes `v`.
fn integer(buf: &mut Vec<u8>, v: impl itoa::Integer) {
    buf.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
}

/// Where a time's whole seconds end in its text on the stack: room for a `u64`'s 20
/// digits before it, and for as many bytes after.
const DIGITS_END: usize = 20;

/// Writes `v` in decimal (by `itoa`), ending at [`DIGITS_END`] in `text`; where it
/// starts.
#[inline]
fn digits_before(text: &mut [u8; 2 * DIGITS_END], v: u64) -> usize {
    let mut itoa = itoa::Buffer::new();
    let digits = itoa.format(v).as_bytes();
    let start = DIGITS_END - digits.len();
    text[start..DIGITS_END].copy_from_slice(digits);
    start
}

/// Appends `text[start..start + len]` (`len` at most [`DIGITS_END`]): the
/// `DIGITS_END` bytes from `start` copied as one block of a size known here (a few
/// moves), then cut, rather than a copy of a length known only at run time.
#[inline]
fn block(buf: &mut Vec<u8>, text: &[u8; 2 * DIGITS_END], start: usize, len: usize) {
    let keep = buf.len() + len.min(DIGITS_END);
    if let Some(window) = text
        .get(start..)
        .and_then(<[u8]>::first_chunk::<DIGITS_END>)
    {
        buf.extend_from_slice(window);
    }
    buf.truncate(keep);
}

/// The decimal digits of 0 to 99, two bytes each.
const PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// An attribute value as plain JSON: a number, a string or a boolean. A whole number
/// (an MMSI, a track number) is written as one: `367000140`, not `367000140.0`.
fn plain(buf: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Num(n) if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 => {
            integer(buf, *n as i64)
        }
        Value::Num(n) => float(buf, *n),
        Value::Str(t) => string(buf, t),
        Value::Bool(b) => buf.extend_from_slice(if *b { b"true" } else { b"false" }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn via_float(micros: i64) -> String {
        let mut b = Vec::new();
        float(
            &mut b,
            Timestamp::from_micros(micros).unwrap().as_secs_f64(),
        );
        String::from_utf8(b).unwrap()
    }

    fn via_time(micros: i64) -> String {
        let mut b = Vec::new();
        time(&mut b, Timestamp::from_micros(micros).unwrap());
        String::from_utf8(b).unwrap()
    }

    #[test]
    fn times_at_the_edges_of_the_plain_range_are_written_as_their_floats() {
        let s = 1_000_000;
        for micros in [
            0,
            1,
            999_999,
            s,
            s + 1,
            s + 100_000,
            1_767_225_707_730_000,
            PLAIN_BELOW_SECS * s - 1,
            PLAIN_BELOW_SECS * s,
            PLAIN_BELOW_SECS * s + 1,
            (1 << 33) * s + 1,
            (1 << 33) * s + 3,
            (1 << 34) * s + 1,
            (1 << 34) * s + 7,
            253_402_300_799_999_999,
            -1,
            -s,
            -1_767_225_707_730_001,
        ] {
            assert_eq!(via_time(micros), via_float(micros), "{micros} µs");
        }
    }

    fn written(write: impl FnOnce(&mut Vec<u8>)) -> String {
        let mut b = Vec::new();
        write(&mut b);
        String::from_utf8(b).unwrap()
    }

    /// The line `append` writes, its opening copied from the last line when it can
    /// be, is the line written afresh, whatever changes from one detection to the
    /// next: the output, the time, its text, the location, the location's keys.
    #[test]
    fn a_line_from_the_last_opening_is_the_line_written_afresh() {
        use crate::io::write::JsonLines;
        use crate::{Detector, Event, Net, Space};

        let net = Net::from_ron(
            "n.ron",
            r#"Net(events: {"a": Atomic(type: "A"), "b": Atomic(type: "B"),
                  "ab": Seq(of: ["a", "b"], within: 2.0, context: Unrestricted)}, outputs: ["a", "ab"])"#,
        )
        .unwrap();
        let mut detector = Detector::new(&net);
        let mut seed: u64 = 11;
        let mut next = move |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            (seed >> 33) % n
        };
        let (mut lines, mut time, mut kinds) = (0, 1_700_000_000_000_000i64, [0; 2]);
        // Lines whose opening is the line before's: those copied.
        let (mut shared, mut before) = (0, None);
        for id in 0..400i64 {
            // Runs of events at one time and place, so that detections share openings.
            time += [0, 0, 1, 250_000, 1_000_000][next(5) as usize];
            let kind = if next(3) == 0 { "A" } else { "B" };
            let mut e = Event::new(id, kind, Timestamp::from_micros(time).unwrap());
            match next(4) {
                0 => {}
                n => e = e.at(n as f64 * 0.5, 2.0),
            }
            // The time as text, at times in two forms of one instant.
            let text = e.time.to_rfc3339();
            e.time_text = match next(4) {
                0 => Some(text.into()),
                1 => Some(text.replace('Z', "+00:00").into()),
                _ => None,
            };
            for d in detector.push(e).unwrap() {
                kinds[usize::from(&*d.event == "ab")] += 1;
                let space = if next(2) == 0 {
                    Space::Planar
                } else {
                    Space::Wgs84
                };
                let writer = JsonLines::new(space);
                let opening = written(|b| opening(&mut Object::new(b), &d, writer.location()));
                shared += usize::from(before.as_ref() == Some(&opening));
                before = Some(opening);
                let afresh = written(|b| {
                    let mut line = Object::new(b);
                    head(&mut line, &d, writer.location());
                    seq(&mut line, d.seq);
                    tail(&mut line, &d);
                    line.close();
                    b.push(b'\n');
                });
                assert_eq!(written(|b| writer.append(b, &d)), afresh);
                lines += 1;
            }
        }
        assert!(
            lines > 600 && kinds[0] > 100 && kinds[1] > 300,
            "{lines} {kinds:?}"
        );
        assert!(
            shared > 100,
            "{shared} of {lines} lines open as the line before"
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 20_000, ..ProptestConfig::default() })]
        #[test]
        fn a_time_is_written_as_its_float(
            micros in prop_oneof![
                0i64..10_000_000,
                1_000_000i64..PLAIN_BELOW_SECS * 1_000_000 + 10_000_000,
                1_600_000_000_000_000i64..1_900_000_000_000_000,
                (0i64..4_294_967_296).prop_map(|s| s * 1_000_000),
                (0i64..4_294_967_296).prop_map(|s| s * 1_000_000 + 500_000),
                -10_000_000_000i64..0,
            ]
        ) {
            prop_assert_eq!(via_time(micros), via_float(micros));
        }
    }
}

//! A piece of a large `zones` map read without `ron` when every entry is in its plain
//! form: a name without escapes and a `Polygon`, `Rect`, `Circle`, `Sector` or `Line`
//! of numbers written as digits, no optional field given.
//!
//! `ron` stays the definition of the syntax. It spends about 210 instructions on each
//! byte of such entries (each number is first tried as `inf` and `NaN`, each token
//! skips whitespace through a `char` iterator); this reader about 40, and it accepts
//! only text that `ron` reads to the same zones. On anything else —
//! an escape, a comment other than `//`, a number with `_`, `+`, a suffix or no digit
//! first, a field given twice, an optional field, any other shape, whitespace other
//! than ASCII's — it gives `None`, and the piece is read by `ron`. The property tests
//! beside it compare the two on generated and mutated text.

use super::{Xy, ZoneSpec, Zones};

/// The entries `"name": Zone(…)` of `text` (the inside of a `zones` map, or its last
/// piece: a trailing comma allowed) in name order, or `None` where `ron` is to read
/// it. A name given twice is `None` too: `ron` says where.
pub(super) fn zones(text: &str) -> Option<Vec<(String, ZoneSpec)>> {
    read(text, End::Text { trailing: true }).map(|(zones, _)| zones)
}

/// The entries of a piece of a `zones` map between two cuts, each cut a comma between
/// entries: as [`zones`], but without a comma of its own at the end, which beside the
/// cut's would make two.
pub(super) fn between(text: &str) -> Option<Vec<(String, ZoneSpec)>> {
    read(text, End::Text { trailing: false }).map(|(zones, _)| zones)
}

/// The entries of `text` up to the `}` that closes the map they are in, and that
/// brace's offset: for the last piece of a map whose end is not known yet.
pub(super) fn to_close(text: &str) -> Option<(Vec<(String, ZoneSpec)>, usize)> {
    read(text, End::Brace)
}

/// Where the entries end: with the text (a comma after the last entry allowed or
/// not), or at a `}`.
#[derive(Clone, Copy)]
enum End {
    Text { trailing: bool },
    Brace,
}

fn read(text: &str, end: End) -> Option<(Vec<(String, ZoneSpec)>, usize)> {
    let mut r = Reader { s: text, at: 0 };
    // Room for as many entries as the text could hold, taken at once (up to a bound):
    // memory never written costs nothing, while growing by doubling copies every entry
    // into fresh pages (each a page fault) several times over.
    let room = (text.len() / MIN_ENTRY).min(MAX_ROOM);
    let mut out: Vec<(String, ZoneSpec)> = Vec::with_capacity(room);
    // Whether an entry may end the entries here (at the start, or after a comma).
    let mut after_comma = true;
    loop {
        r.ws()?;
        let ended = match end {
            End::Text { trailing } => r.done() && (trailing || !after_comma),
            End::Brace => r.peek() == Some(b'}'),
        };
        if ended {
            return Some((Zones::sorted(out)?.0, r.at));
        }
        if !after_comma {
            r.eat(b',')?;
            after_comma = true;
            continue;
        }
        let name = r.name()?;
        r.ws()?;
        r.eat(b':')?;
        r.ws()?;
        out.push((name.to_owned(), r.zone()?));
        after_comma = false;
    }
}

/// The fewest bytes a plain entry takes with its comma: `"a":Rect(min:(0,0),max:(0,0)),`
/// (a `Polygon` of no point, `"a":Polygon([]),`, is shorter, and makes the vector grow).
const MIN_ENTRY: usize = 32;

/// The most entries a piece takes room for at once (23 MB of them): past that the
/// vector grows as it fills, so that a huge text asks no huge room it may not use.
const MAX_ROOM: usize = 1 << 18;

/// The fields a plain zone may give, one bit each.
const CENTER: u8 = 1;
const RADIUS: u8 = 2;
const FROM: u8 = 4;
const TO: u8 = 8;
const MIN: u8 = 16;
const MAX: u8 = 32;
const POINTS: u8 = 64;
const WIDTH: u8 = 128;

/// The text and where the reader is in it.
struct Reader<'s> {
    s: &'s str,
    at: usize,
}

/// The values of a zone's fields as they are read.
#[derive(Default)]
struct Fields {
    seen: u8,
    center: Xy,
    radius: f64,
    from: f64,
    to: f64,
    min: Xy,
    max: Xy,
    points: Vec<Xy>,
    width: f64,
}

impl<'s> Reader<'s> {
    fn done(&self) -> bool {
        self.at == self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.as_bytes().get(self.at).copied()
    }

    /// Skips ASCII whitespace and `//` comments (any other `/` is left to fail the next
    /// token); `None` at a comment that runs to the end of the text, which in the map
    /// would hide its `}`.
    fn ws(&mut self) -> Option<()> {
        while let Some(b) = self.peek() {
            match b {
                b' ' | b'\t' | b'\n' | b'\r' => self.at += 1,
                b'/' if self.s.as_bytes().get(self.at + 1) == Some(&b'/') => {
                    self.at += memchr::memchr(b'\n', &self.s.as_bytes()[self.at..])?;
                }
                _ => break,
            }
        }
        Some(())
    }

    fn eat(&mut self, b: u8) -> Option<()> {
        if self.peek() == Some(b) {
            self.at += 1;
            Some(())
        } else {
            None
        }
    }

    /// `"…"` without a backslash inside.
    fn name(&mut self) -> Option<&'s str> {
        self.eat(b'"')?;
        let from = self.at;
        let len = memchr::memchr2(b'"', b'\\', &self.s.as_bytes()[from..])?;
        if self.s.as_bytes()[from + len] != b'"' {
            return None;
        }
        self.at = from + len + 1;
        self.s.get(from..from + len)
    }

    /// An ASCII identifier not followed by any character an identifier may hold.
    fn ident(&mut self) -> Option<&'s [u8]> {
        let from = self.at;
        match self.peek()? {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {}
            _ => return None,
        }
        while let Some(b) = self.peek() {
            if b.is_ascii_alphanumeric() || b == b'_' {
                self.at += 1;
            } else if b.is_ascii() {
                break;
            } else {
                return None;
            }
        }
        Some(&self.s.as_bytes()[from..self.at])
    }

    /// `-?D+(.D+)?([eE][+-]?D+)?`, followed by something that cannot continue a
    /// number, an identifier or a suffix: exactly the text `ron` hands to
    /// `f64::from_str`, so the same value.
    fn number(&mut self) -> Option<f64> {
        let from = self.at;
        if self.peek() == Some(b'-') {
            self.at += 1;
        }
        self.digits()?;
        if self.peek() == Some(b'.') {
            self.at += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.at += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.at += 1;
            }
            self.digits()?;
        }
        match self.peek() {
            Some(b) if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-') => {
                return None
            }
            Some(b) if !b.is_ascii() => return None,
            _ => {}
        }
        self.s.get(from..self.at)?.parse().ok()
    }

    fn digits(&mut self) -> Option<()> {
        let from = self.at;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.at += 1;
        }
        (self.at > from).then_some(())
    }

    /// `(x, y)`.
    fn pair(&mut self) -> Option<Xy> {
        self.eat(b'(')?;
        self.ws()?;
        let x = self.number()?;
        self.ws()?;
        self.eat(b',')?;
        self.ws()?;
        let y = self.number()?;
        self.ws()?;
        self.eat(b')')?;
        Some((x, y))
    }

    /// `[(x, y), …]`, a trailing comma allowed.
    fn pairs(&mut self) -> Option<Vec<Xy>> {
        self.eat(b'[')?;
        let mut out = Vec::new();
        loop {
            self.ws()?;
            if self.eat(b']').is_some() {
                return Some(out);
            }
            out.push(self.pair()?);
            self.ws()?;
            if self.eat(b']').is_some() {
                return Some(out);
            }
            self.eat(b',')?;
        }
    }

    /// `Polygon([…])`, or a struct variant whose fields are all required ones.
    fn zone(&mut self) -> Option<ZoneSpec> {
        let kind = self.ident()?;
        self.ws()?;
        self.eat(b'(')?;
        self.ws()?;
        if kind == b"Polygon" {
            let ring = self.pairs()?;
            self.ws()?;
            self.eat(b')')?;
            return Some(ZoneSpec::Polygon(ring));
        }
        let (allowed, zone): (u8, fn(Fields) -> ZoneSpec) = match kind {
            b"Rect" => (MIN | MAX, |f| ZoneSpec::Rect {
                min: f.min,
                max: f.max,
            }),
            b"Circle" => (CENTER | RADIUS, |f| ZoneSpec::Circle {
                center: f.center,
                radius: f.radius,
                anchor: None,
            }),
            b"Sector" => (CENTER | RADIUS | FROM | TO, |f| ZoneSpec::Sector {
                center: f.center,
                radius: f.radius,
                from_deg: f.from,
                to_deg: f.to,
                anchor: None,
                heading: None,
            }),
            b"Line" => (POINTS | WIDTH, |f| ZoneSpec::Line {
                points: f.points,
                width: f.width,
            }),
            _ => return None,
        };
        let mut f = Fields::default();
        loop {
            if self.eat(b')').is_some() {
                break;
            }
            let field = self.ident()?;
            let bit = match field {
                b"center" => CENTER,
                b"radius" => RADIUS,
                b"from_deg" => FROM,
                b"to_deg" => TO,
                b"min" => MIN,
                b"max" => MAX,
                b"points" => POINTS,
                b"width" => WIDTH,
                _ => return None,
            };
            if allowed & bit == 0 || f.seen & bit != 0 {
                return None;
            }
            f.seen |= bit;
            self.ws()?;
            self.eat(b':')?;
            self.ws()?;
            match bit {
                CENTER => f.center = self.pair()?,
                RADIUS => f.radius = self.number()?,
                FROM => f.from = self.number()?,
                TO => f.to = self.number()?,
                MIN => f.min = self.pair()?,
                MAX => f.max = self.pair()?,
                POINTS => f.points = self.pairs()?,
                _ => f.width = self.number()?,
            }
            self.ws()?;
            if self.eat(b',').is_some() {
                self.ws()?;
            } else {
                self.eat(b')')?;
                break;
            }
        }
        (f.seen == allowed).then(|| zone(f))
    }
}

#[cfg(test)]
#[path = "plain_tests.rs"]
mod tests;

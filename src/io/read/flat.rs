//! A fast path for the JSON line nearly every sensor writes: one object whose values
//! are all numbers, plain strings, `true`, `false` or `null`.
//!
//! `serde_json` stays the definition of what a line means: this scanner reads only
//! text that `serde_json` reads to the same values, and gives up on anything else —
//! an escape or a control character in a string, a number of more than 19 digits or
//! with a power of ten beyond 10²², an array or an object as a value, anything after
//! the object, every syntax error, and a field the field rules refuse — for the line
//! to be read again by `serde_json` (`json.rs`), which also words every error. A
//! number is computed as `serde_json` computes it (without its `float_roundtrip`
//! feature): the digits as a `u64`, as an `f64`, multiplied or divided by an exact
//! power of ten. The property tests of `flat_tests.rs` check the agreement on
//! generated and mutated lines.
//!
//! Why: `serde_json`'s visitor costs about 375 instructions a field on these lines
//! (keys and strings scanned for escapes, numbers, the map access, an id read twice);
//! this scan about 200 (*Flat lines read without `serde_json`'s visitor* in
//! docs/performance.md).

use std::borrow::Cow;

use super::fields::Scalar;

/// 10⁰ … 10²²: the powers of ten an `f64` holds exactly, the first entries of
/// `serde_json`'s own table.
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// One value as read, and its text when it is a number (an id's number is read from
/// its text); empty for any other value.
pub(super) struct Token<'a> {
    pub(super) value: Scalar<'a>,
    pub(super) text: &'a str,
}

/// Reads the object `text`, handing `field` each key and value in order; `None` when
/// the scanner gives up, or `field` does.
pub(super) fn read<'a>(
    text: &'a str,
    mut field: impl FnMut(&'a str, Token<'a>) -> Option<()>,
) -> Option<()> {
    let b = text.as_bytes();
    let mut i = space(b, 0);
    if b.get(i) != Some(&b'{') {
        return None;
    }
    i = space(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return (space(b, i + 1) == b.len()).then_some(());
    }
    loop {
        let key;
        (key, i) = string(text, i)?;
        i = space(b, i);
        if b.get(i) != Some(&b':') {
            return None;
        }
        i = space(b, i + 1);
        let token;
        (token, i) = match *b.get(i)? {
            b'"' => {
                let (s, end) = string(text, i)?;
                (plain(Scalar::Str(Cow::Borrowed(s))), end)
            }
            b't' => (plain(Scalar::Bool(true)), word(b, i, b"true")?),
            b'f' => (plain(Scalar::Bool(false)), word(b, i, b"false")?),
            b'n' => (plain(Scalar::Null), word(b, i, b"null")?),
            _ => {
                let (value, end) = number(b, i)?;
                let text = text.get(i..end)?;
                (Token { value, text }, end)
            }
        };
        field(key, token)?;
        i = space(b, i);
        match *b.get(i)? {
            b',' => i = space(b, i + 1),
            b'}' => return (space(b, i + 1) == b.len()).then_some(()),
            _ => return None,
        }
    }
}

/// A value that is not a number.
fn plain(value: Scalar<'_>) -> Token<'_> {
    Token { value, text: "" }
}

/// The index of the first byte at or after `i` that is not JSON's whitespace.
#[inline]
fn space(b: &[u8], mut i: usize) -> usize {
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = b.get(i) {
        i += 1;
    }
    i
}

/// The string that opens at `i`, if it has no escape or control character, and the
/// index after its closing quote.
#[inline]
fn string(text: &str, i: usize) -> Option<(&str, usize)> {
    let b = text.as_bytes();
    if b.get(i) != Some(&b'"') {
        return None;
    }
    let mut end = i + 1;
    loop {
        match CLASS[usize::from(*b.get(end)?)] {
            PLAIN => end += 1,
            QUOTE => break,
            _ => return None,
        }
    }
    // Cut at two ASCII quotes, so on character boundaries.
    Some((text.get(i + 1..end)?, end + 1))
}

/// The index after `word`, if it is at `i`.
#[inline]
fn word(b: &[u8], i: usize, word: &[u8]) -> Option<usize> {
    b[i..].starts_with(word).then_some(i + word.len())
}

/// The digits from `i`, accumulated onto `significand` (wrapping: the caller bounds
/// their number), and the index after them.
#[inline]
fn digits(b: &[u8], mut i: usize, significand: &mut u64) -> usize {
    while let Some(&c) = b.get(i) {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            break;
        }
        *significand = significand.wrapping_mul(10).wrapping_add(u64::from(d));
        i += 1;
    }
    i
}

/// The number at `i`, as `serde_json` reads it, and the index after it.
#[inline]
fn number(b: &[u8], mut i: usize) -> Option<(Scalar<'static>, usize)> {
    let negative = b.get(i) == Some(&b'-');
    i += usize::from(negative);
    let whole = i;
    let mut significand = 0;
    i = digits(b, i, &mut significand);
    // One digit at least, and no leading zero before another digit.
    if i == whole || (b[whole] == b'0' && i - whole > 1) {
        return None;
    }
    let mut count = i - whole;
    let mut exponent = 0i32;
    let mut float = false;
    if b.get(i) == Some(&b'.') {
        let fraction = i + 1;
        i = digits(b, fraction, &mut significand);
        if i == fraction {
            return None;
        }
        count += i - fraction;
        exponent = -((i - fraction) as i32);
        float = true;
    }
    // Nineteen digits fit a u64 whatever they are: there is no overflow for serde_json
    // to handle otherwise.
    if count > 19 {
        return None;
    }
    if let Some(b'e' | b'E') = b.get(i) {
        i += 1;
        let negative = b.get(i) == Some(&b'-');
        i += usize::from(negative || b.get(i) == Some(&b'+'));
        let start = i;
        let mut exp = 0;
        i = digits(b, i, &mut exp);
        if i == start || i - start > 3 {
            return None;
        }
        let exp = exp as i32;
        exponent += if negative { -exp } else { exp };
        float = true;
    }
    if !float {
        let value = if !negative {
            Scalar::U64(significand)
        } else {
            // As serde_json: `-0`, and what no i64 holds, become floats.
            let value = (significand as i64).wrapping_neg();
            if value >= 0 {
                Scalar::F64(-(significand as f64))
            } else {
                Scalar::I64(value)
            }
        };
        return Some((value, i));
    }
    let pow = *POW10.get(exponent.unsigned_abs() as usize)?;
    let mut f = significand as f64;
    if exponent >= 0 {
        f *= pow;
    } else {
        f /= pow;
    }
    Some((Scalar::F64(if negative { -f } else { f }), i))
}

/// A byte inside a plain string.
const PLAIN: u8 = 0;
/// The closing quote.
const QUOTE: u8 = 1;
/// What makes a string not plain: a backslash, a control character.
const NOT_PLAIN: u8 = 2;

/// Each byte's class inside a string.
static CLASS: [u8; 256] = {
    let mut class = [PLAIN; 256];
    let mut b = 0;
    while b < 0x20 {
        class[b] = NOT_PLAIN;
        b += 1;
    }
    class[b'"' as usize] = QUOTE;
    class[b'\\' as usize] = NOT_PLAIN;
    class
};

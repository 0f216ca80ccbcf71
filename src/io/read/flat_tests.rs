//! The fast path of `flat.rs` against `serde_json`'s reading: the same event or the
//! same error whenever the fast path reads a line.

use proptest::prelude::*;

use super::{FieldMap, LineParser};
use crate::event::Space;

/// The parsers the tests read with: planar, WGS84 (coordinates checked), with a field
/// map (a renamed id and time, a field given twice, a hidden one), and reading only a
/// few names.
fn parsers() -> Vec<LineParser> {
    let map = FieldMap::new()
        .parse_field("id=mmsi")
        .and_then(|m| m.parse_field("time=ts"))
        .and_then(|m| m.parse_field("speed=sog"))
        .expect("a valid field map");
    vec![
        LineParser::json(Space::Planar),
        LineParser::json(Space::Wgs84),
        LineParser::json(Space::Wgs84).with_fields(&map),
        LineParser::json(Space::Planar).with_read_names(["speed", "iff"]),
    ]
}

/// Whenever the fast path reads `line`, `serde_json`'s reading gives the same (`Debug`
/// prints every float exactly, and the sign of zero).
fn agrees(line: &str) -> Result<bool, TestCaseError> {
    let mut read = false;
    for parser in parsers() {
        if let Some(fast) = parser.parse_flat(line) {
            read = true;
            prop_assert_eq!(
                format!("{fast:?}"),
                format!("{:?}", parser.parse_serde(line)),
                "line: {}",
                line
            );
        }
    }
    Ok(read)
}

#[test]
fn plain_lines_take_the_fast_path() {
    for line in [
        r#"{"id":1,"type":"own","time":1700000000.000,"lon":121.900000,"lat":25.300000,"course":60.0,"speed":8.0}"#,
        r#"{"id":2,"type":"track","time":1700000000.015,"lon":121.896139,"lat":25.330981,"object":108,"iff":"friend","kind":"vessel","speed":12.0,"elevation":9.5,"range":3454}"#,
        r#" { "id" : "a7" , "time" : 5 , "x" : -0 , "y" : 1e2 , "on" : true , "off" : false , "gone" : null } "#,
        r#"{"id":-4,"time":0,"big":9999999999999999999,"neg":-9223372036854775808,"tiny":1.5E-21}"#,
        "{\"id\":1,\"time\":0,\"name\":\"Ærø \u{1F6A2}\"}\t",
        r#"{}"#,
        r#"{"id":1}"#,
    ] {
        let parser = LineParser::json(Space::Wgs84);
        let fast = parser
            .parse_flat(line)
            .unwrap_or_else(|| panic!("not read by the fast path: {line}"));
        assert_eq!(
            format!("{fast:?}"),
            format!("{:?}", parser.parse_serde(line))
        );
    }
}

#[test]
fn anything_else_is_left_to_serde_json() {
    for line in [
        // Escapes and control characters in strings, keys included.
        r#"{"id":"a\"b","time":0}"#,
        r#"{"i\u0064":1,"time":0}"#,
        "{\"id\":\"a\u{1}\",\"time\":0}",
        // Numbers past 19 digits or 10^22, or that are not JSON's.
        r#"{"id":1,"time":0,"v":18446744073709551615}"#,
        r#"{"id":1,"time":0,"v":0.12345678901234567891}"#,
        r#"{"id":1,"time":0,"v":1e23}"#,
        r#"{"id":1,"time":0,"v":1e0001}"#,
        r#"{"id":1,"time":0,"v":01}"#,
        r#"{"id":1,"time":0,"v":1.}"#,
        r#"{"id":1,"time":0,"v":.5}"#,
        r#"{"id":1,"time":0,"v":+1}"#,
        r#"{"id":1,"time":0,"v":-}"#,
        r#"{"id":1,"time":0,"v":1e}"#,
        r#"{"id":1,"time":0,"v":NaN}"#,
        // Arrays, objects, words misspelt.
        r#"{"id":1,"time":0,"v":[1]}"#,
        r#"{"id":1,"time":0,"v":{"a":1}}"#,
        r#"{"id":1,"time":0,"v":tru}"#,
        // Syntax: trailing commas, missing colons, text after the object, no object.
        r#"{"id":1,"time":0,}"#,
        r#"{"id" 1,"time":0}"#,
        r#"{"id":1,"time":0} x"#,
        r#"{"id":1,"time":0"#,
        r#"[1]"#,
        r#""id""#,
        // Bad fields: serde_json's reading words the error.
        r#"{"id":1,"time":0,"id":2}"#,
        r#"{"id":true,"time":0}"#,
        r#"{"id":1,"time":0,"lon":200,"lat":0}"#,
    ] {
        let parser = LineParser::json(Space::Wgs84);
        assert!(
            parser.parse_flat(line).is_none(),
            "read by the fast path: {line}"
        );
    }
}

/// A key: the names the parsers give meaning to, others, and some that are not plain.
fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(vec![
            "id", "time", "type", "x", "y", "lon", "lat", "mmsi", "ts", "sog", "speed",
            "iff", "course",
        ])
        .prop_map(str::to_owned),
        2 => "[a-z]{1,10}",
        1 => prop::sample::select(vec!["", "é", "a\\\"b", "\\u0069d", "a\u{1}"])
            .prop_map(str::to_owned),
    ]
}

/// A number in every form JSON and its neighbours allow.
fn number() -> impl Strategy<Value = String> {
    let digits = |n| proptest::string::string_regex(&format!("[0-9]{{1,{n}}}")).expect("regex");
    prop_oneof![
        any::<u64>().prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| v.to_string()),
        any::<f64>()
            .prop_filter("finite", |v| v.is_finite())
            .prop_map(|v| format!("{v:e}")),
        (
            prop::option::of(Just("-")),
            digits(21),
            prop::option::of(digits(21)),
            prop::option::of((
                prop::sample::select(vec!["e", "E", "e+", "e-", "E-"]),
                digits(4)
            )),
        )
            .prop_map(|(sign, whole, fraction, exp)| {
                let mut s = format!("{}{whole}", sign.unwrap_or(""));
                if let Some(f) = fraction {
                    s.push('.');
                    s.push_str(&f);
                }
                if let Some((e, d)) = exp {
                    s.push_str(e);
                    s.push_str(&d);
                }
                s
            }),
        prop::sample::select(vec![
            "0",
            "-0",
            "-0.0",
            "1700000000.015",
            "121.896139",
            "1e22",
            "1e-22",
            "9.5e2",
            "18446744073709551615",
            "18446744073709551616",
            "-9223372036854775808",
            "-9223372036854775809",
            "99999999999999999999",
        ])
        .prop_map(str::to_owned),
    ]
}

/// A value: numbers, strings plain and not, words, and what is not a scalar.
fn value() -> impl Strategy<Value = String> {
    prop_oneof![
        6 => number(),
        3 => "[a-zA-Z0-9 :.-]{0,12}".prop_map(|s| format!("\"{s}\"")),
        1 => prop::sample::select(vec![
            "true", "false", "null", "\"2023-11-14T22:13:20Z\"", "\"1700000000.5\"",
            "\"a\\nb\"", "\"\u{e9}\u{1F6A2}\"", "[1, 2]", "{\"a\": 1}", "[]",
        ])
        .prop_map(str::to_owned),
    ]
}

/// JSON's whitespace, mostly none.
fn space() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["", "", "", " ", "\t", "  ", "\r\n"])
}

/// A line: an object of fields, usually with an id and a time, spaced at random.
fn line() -> impl Strategy<Value = String> {
    (
        prop::option::of(number()),
        prop::option::of(number()),
        prop::collection::vec((key(), value(), space(), space()), 0..10),
        space(),
    )
        .prop_map(|(id, time, fields, end)| {
            let mut all: Vec<(String, String, &str, &str)> = Vec::new();
            if let Some(id) = id {
                all.push(("id".to_owned(), id, "", ""));
            }
            if let Some(time) = time {
                all.push(("time".to_owned(), time, "", " "));
            }
            all.extend(fields);
            let body: Vec<String> = all
                .iter()
                .map(|(k, v, a, b)| format!("{a}\"{k}\"{b}:{a}{v}{b}"))
                .collect();
            format!("{end}{{{}}}{end}", body.join(","))
        })
}

/// The bytes a mutation puts in: JSON's own, and what it does not allow.
const BYTES: &[u8] = b"{}[]:,\"\\ .-+eE019tfn\x01x";

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2_000))]

    #[test]
    fn generated_lines_read_the_same(line in line()) {
        agrees(&line)?;
    }

    /// The same lines with one byte replaced, inserted or removed (kept when that leaves
    /// UTF-8): whatever the fast path reads, `serde_json` reads the same.
    #[test]
    fn mutated_lines_read_the_same(
        line in line(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(BYTES.to_vec()),
        how in 0..3u8,
    ) {
        let mut bytes = line.into_bytes();
        let i = at.index(bytes.len() + 1);
        match how {
            0 if i < bytes.len() => bytes[i] = byte,
            1 if i < bytes.len() => {
                bytes.remove(i);
            }
            _ => bytes.insert(i, byte),
        }
        if let Ok(line) = String::from_utf8(bytes) {
            agrees(&line)?;
        }
    }

    /// Lines of plain fields only are all read by the fast path.
    #[test]
    fn plain_lines_are_read(
        id in any::<u32>(),
        time in 0u32..2_000_000_000,
        fields in prop::collection::vec(("[a-z]{3,9}", 0u32..1_000_000, 0u32..1000), 0..8),
    ) {
        let mut line = format!("{{\"id\":{id},\"time\":{time}.5");
        for (i, (k, whole, fraction)) in fields.iter().enumerate() {
            line.push_str(&format!(",\"{k}{i}\":{whole}.{fraction}"));
        }
        line.push('}');
        prop_assert!(agrees(&line)?, "not read by the fast path: {}", line);
    }
}

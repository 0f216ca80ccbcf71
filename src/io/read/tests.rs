//! Unit tests of reading: each field rule and error message, both formats, the line
//! reader, the event reader, and properties against the `csv` crate.

use std::borrow::Cow;
use std::sync::Arc;

use super::csv::CsvCells;
use super::intern::SHARED_VALUE_LEN;
use super::*;
use crate::event::{Event, Id, Point, Space, Timestamp, Value};

fn json(line: &str) -> Result<Event, LineError> {
    LineParser::json(Space::Planar).parse(line.as_bytes())
}

fn wgs(line: &str) -> Result<Event, LineError> {
    LineParser::json(Space::Wgs84).parse(line.as_bytes())
}

#[test]
fn short_string_values_are_shared_long_ones_are_not() {
    let long = "x".repeat(SHARED_VALUE_LEN + 1);
    let line = format!(r#"{{"id":1,"time":0,"iff":"foe","note":"{long}"}}"#);
    let (a, b) = (json(&line).unwrap(), json(&line).unwrap());
    let value = |e: &Event, name: &str| match e.attr(name) {
        Some(Value::Str(s)) => s.clone(),
        other => panic!("{other:?}"),
    };
    assert!(Arc::ptr_eq(&value(&a, "iff"), &value(&b, "iff")));
    assert_eq!(&*value(&a, "note"), long);
    assert!(!Arc::ptr_eq(&value(&a, "note"), &value(&b, "note")));
}

fn err(r: Result<Event, LineError>) -> String {
    r.expect_err("expected an error").to_string()
}

fn ts(secs: f64) -> Timestamp {
    Timestamp::from_secs_f64(secs).expect("in range")
}

#[test]
fn detect_format() {
    assert_eq!(Format::detect(b"{\"id\":1}"), Format::JsonLines);
    assert_eq!(Format::detect(b"  \t{"), Format::JsonLines);
    assert_eq!(Format::detect(b"\xEF\xBB\xBF{"), Format::JsonLines);
    assert_eq!(Format::detect(b"id,time"), Format::Csv);
    assert_eq!(Format::detect(b"\xEF\xBB\xBFid,time"), Format::Csv);
    assert_eq!(Format::detect(b""), Format::JsonLines);
}

#[test]
fn blank() {
    assert!(is_blank(b""));
    assert!(is_blank(b" \t\r"));
    assert!(is_blank(b"\xEF\xBB\xBF "));
    assert!(!is_blank(b" x"));
    assert_eq!(json("  "), Err(LineError::Blank));
}

#[test]
fn json_full_event() {
    let e = json(
        r#"{"id":123,"type":"radar","time":1700000000.5,"x":12.5,"y":-3.25,"speed":12.0,"iff":false,"ship":"s17"}"#,
    )
    .unwrap();
    let want = Event::new(123, "radar", ts(1_700_000_000.5))
        .at(12.5, -3.25)
        .with("speed", 12.0)
        .with("iff", false)
        .with("ship", "s17");
    assert_eq!(e, want);
    assert_eq!(e.time.micros(), 1_700_000_000_500_000);
}

#[test]
fn json_defaults_and_ids() {
    let e = json(r#"{"id":"a7","time":5}"#).unwrap();
    assert_eq!(e.id, Id::Str("a7".into()));
    assert_eq!(&*e.kind, "event");
    assert_eq!(e.location, None);
    assert_eq!(e.time_text, None);
    assert_eq!(e.time.micros(), 5_000_000);
    assert_eq!(json(r#"{"id":-4,"time":0}"#).unwrap().id, Id::Int(-4));
    assert_eq!(
        json(r#"{"id":18446744073709551615,"time":0}"#).unwrap().id,
        Id::UInt(u64::MAX)
    );
    assert_eq!(
        json(r#"{"id":9223372036854775807,"time":0}"#).unwrap().id,
        Id::Int(i64::MAX)
    );
    assert_eq!(
        json(r#"{"id":"a\"b\u00e9","time":0}"#).unwrap().id,
        Id::Str("a\"bé".into())
    );
}

#[test]
fn json_bad_ids() {
    assert_eq!(
        err(json(r#"{"id":3.5,"time":0}"#)),
        "`id` must be an integer or a string, got 3.5"
    );
    assert_eq!(
        err(json(r#"{"id":true,"time":0}"#)),
        "`id` must be an integer or a string, got true"
    );
    assert_eq!(
        err(json(r#"{"id":null,"time":0}"#)),
        "`id` must be an integer or a string, got null"
    );
    assert_eq!(
        err(json(r#"{"id":[1],"time":0}"#)),
        "`id` must be an integer or a string, got an array"
    );
    assert_eq!(
        err(json(r#"{"id":{"a":1},"time":0}"#)),
        "`id` must be an integer or a string, got an object"
    );
    assert_eq!(err(json(r#"{"time":0}"#)), "missing field `id`");
}

#[test]
fn json_times() {
    assert_eq!(err(json(r#"{"id":1}"#)), "missing field `time`");
    let e = json(r#"{"id":1,"time":"2024-01-01T00:00:00Z"}"#).unwrap();
    assert_eq!(e.time.micros(), 1_704_067_200_000_000);
    assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00Z"));
    let e = json(r#"{"id":1,"time":"2024-01-01T00:00:00.25+02:00"}"#).unwrap();
    assert_eq!(e.time.micros(), 1_704_067_200_250_000 - 7_200_000_000);
    assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00.25+02:00"));
    assert_eq!(
        err(json(r#"{"id":1,"time":1e300}"#)),
        "time 1e300 is outside the years 0001-9999"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":-62135596801}"#)),
        "time -62135596801 is outside the years 0001-9999"
    );
    assert!(json(r#"{"id":1,"time":-62135596800}"#).is_ok());
    assert_eq!(
        err(json(r#"{"id":1,"time":18446744073709551615}"#)),
        "time 18446744073709551615 is outside the years 0001-9999"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":true}"#)),
        "`time` must be a number of seconds or an RFC 3339 string, got true"
    );
    let m = err(json(r#"{"id":1,"time":"yesterday"}"#));
    assert!(
        m.starts_with("`time` \"yesterday\" is not an RFC 3339 time ("),
        "{m}"
    );
    // A date and time without a zone (as AIS feeds write them) is read as UTC.
    let e = json(r#"{"id":1,"time":"2024-01-01T00:00:00"}"#).unwrap();
    assert_eq!(e.time.micros(), 1_704_067_200_000_000);
    let m = err(json(r#"{"id":1,"time":"2024-01-01"}"#));
    assert!(m.contains("is not an RFC 3339 time"), "{m}");
    assert_eq!(
        json(r#"{"id":1,"time":0.0000004}"#).unwrap().time.micros(),
        0
    );
    assert_eq!(
        json(r#"{"id":1,"time":-1.5}"#).unwrap().time.micros(),
        -1_500_000
    );
}

#[test]
fn json_type() {
    assert_eq!(&*json(r#"{"id":1,"time":0,"type":"A"}"#).unwrap().kind, "A");
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"type":3}"#)),
        "`type` must be a string, got 3"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"type":null}"#)),
        "`type` must be a string, got null"
    );
}

#[test]
fn json_locations() {
    assert_eq!(
        json(r#"{"id":1,"time":0,"x":1,"y":2}"#).unwrap().location,
        Some(Point { x: 1.0, y: 2.0 })
    );
    assert_eq!(
        json(r#"{"id":1,"time":0,"x":null,"y":null}"#)
            .unwrap()
            .location,
        None
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"x":1}"#)),
        "`x` is given without `y`"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"y":1}"#)),
        "`y` is given without `x`"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"x":"1","y":2}"#)),
        "`x` must be a finite number, got \"1\""
    );
    // In a planar net, lon/lat are attributes.
    let e = json(r#"{"id":1,"time":0,"lon":500,"lat":2}"#).unwrap();
    assert_eq!(e.location, None);
    assert_eq!(e.attr("lon"), Some(&Value::Num(500.0)));
    // In a WGS84 net, x/y are attributes and lon/lat are checked.
    let e = wgs(r#"{"id":1,"time":0,"lon":121.5,"lat":25.1,"x":3}"#).unwrap();
    assert_eq!(e.location, Some(Point { x: 121.5, y: 25.1 }));
    assert_eq!(e.attr("x"), Some(&Value::Num(3.0)));
    assert_eq!(
        err(wgs(r#"{"id":1,"time":0,"lon":1,"lat":91.2}"#)),
        "`lat` 91.2 is out of range [-90, 90]"
    );
    assert_eq!(
        err(wgs(r#"{"id":1,"time":0,"lon":-180.5,"lat":1}"#)),
        "`lon` -180.5 is out of range [-180, 180]"
    );
    assert!(wgs(r#"{"id":1,"time":0,"lon":-180,"lat":90}"#).is_ok());
}

#[test]
fn json_attributes() {
    let e = json(r#"{"b":"s","id":1,"a":null,"time":0,"c":true,"d":-2}"#).unwrap();
    let names: Vec<&str> = e.attrs.iter().map(|(n, _)| &**n).collect();
    assert_eq!(names, ["b", "c", "d"]);
    assert_eq!(e.attr("d"), Some(&Value::Num(-2.0)));
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"tags":["a"]}"#)),
        "field `tags` must be a number, a string or a boolean, got an array"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"o":{"a":[1,{"b":2}]}}"#)),
        "field `o` must be a number, a string or a boolean, got an object"
    );
    let m = err(json(r#"{"id":1,"time":0,"big":1e999}"#));
    assert!(
        m.starts_with("not valid JSON: number out of range at column"),
        "{m}"
    );
    assert!(m.ends_with("(in field `big`)"), "{m}");
}

#[test]
fn json_duplicates() {
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"x":1,"x":2,"y":0}"#)),
        "duplicate field `x`"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"a":1,"a":2}"#)),
        "duplicate field `a`"
    );
    assert_eq!(
        err(json(r#"{"id":1,"time":0,"a":null,"a":2}"#)),
        "duplicate field `a`"
    );
    assert_eq!(
        err(json(r#"{"id":1,"id":2,"time":0}"#)),
        "duplicate field `id`"
    );
    // Many attributes: the set-based check.
    let mut line = String::from(r#"{"id":1,"time":0"#);
    for i in 0..100 {
        line.push_str(&format!(r#","a{i}":{i}"#));
    }
    let ok = format!("{line}}}");
    assert_eq!(json(&ok).unwrap().attrs.len(), 100);
    assert_eq!(
        err(json(&format!("{line},\"a7\":1}}"))),
        "duplicate field `a7`"
    );
    assert_eq!(
        err(json(&format!("{line},\"a99\":1}}"))),
        "duplicate field `a99`"
    );
}

#[test]
fn json_malformed() {
    assert_eq!(
        err(json(r#"{"id" 1}"#)),
        "not valid JSON: expected `:` at column 7 (in field `id`)"
    );
    assert_eq!(err(json("[1,2]")), "expected a JSON object, got an array");
    assert_eq!(err(json("5")), "expected a JSON object, got 5");
    assert_eq!(err(json("null")), "expected a JSON object, got null");
    assert_eq!(
        err(json(r#""s""#)),
        "expected a JSON object, got the string \"s\""
    );
    let m = err(json(r#"{"id":1,"time":0} x"#));
    assert!(m.starts_with("not valid JSON: trailing characters"), "{m}");
    let m = err(json(r#"{"id":1,"time":0"#));
    assert!(m.starts_with("not valid JSON: EOF"), "{m}");
    assert_eq!(
        LineParser::json(Space::Planar).parse(b"{\"id\":\"\xff\",\"time\":0}"),
        Err(LineError::NotUtf8)
    );
    assert_eq!(
        err(json("nonsense")),
        "not valid JSON: expected a value at column 2"
    );
    assert_eq!(
        err(json("{\"id\":}")),
        "not valid JSON: expected a value at column 7 (in field `id`)"
    );
}

#[test]
fn json_tolerates_cr_and_bom() {
    let p = LineParser::json(Space::Planar);
    assert!(p.parse(b"{\"id\":1,\"time\":0}\r").is_ok());
    assert!(p.parse(b"\xEF\xBB\xBF{\"id\":1,\"time\":0}").is_ok());
    assert!(p.parse(b"  {\"id\":1,\"time\":0}  ").is_ok());
}

#[test]
fn json_deep_nesting_does_not_overflow() {
    let deep = "[".repeat(100_000);
    assert!(json(&deep).is_err());
    let deep = format!(r#"{{"id":1,"time":0,"a":{}"#, "[".repeat(100_000));
    assert!(json(&deep).is_err());
    let deep = format!(r#"{{"id":1,"time":0,"a":{}"#, r#"{"a":"#.repeat(100_000));
    assert!(json(&deep).is_err());
    let deep = format!(
        r#"{{"id":1,"time":0,"a":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    assert!(json(&deep).is_err());
}

fn csv(header: &str) -> LineParser {
    LineParser::csv(header.as_bytes(), Space::Planar).unwrap()
}

fn csv_err(header: &str) -> String {
    LineParser::csv(header.as_bytes(), Space::Planar)
        .expect_err("expected an error")
        .to_string()
}

#[test]
fn csv_header_checks() {
    assert_eq!(csv("id,time").format(), Format::Csv);
    assert_eq!(LineParser::json(Space::Planar).format(), Format::JsonLines);
    assert!(LineParser::csv(b"\xEF\xBB\xBFid, time ,x,y\r", Space::Planar).is_ok());
    assert_eq!(
        csv_err("id,time,id"),
        "bad CSV header: duplicate column `id`"
    );
    assert_eq!(
        csv_err("id,time,a,a"),
        "bad CSV header: duplicate column `a`"
    );
    assert_eq!(csv_err("id,,time"), "bad CSV header: column 2 has no name");
    assert_eq!(csv_err("id,x,y"), "bad CSV header: no `time` column");
    assert_eq!(csv_err("time"), "bad CSV header: no `id` column");
    assert_eq!(
        csv_err("id,time,x"),
        "bad CSV header: a `x` column but no `y` column"
    );
    assert!(csv_err("id,\"time").starts_with("bad CSV header: not valid CSV: unterminated"));
    assert_eq!(
        LineParser::csv(b"id,time\xff", Space::Planar).unwrap_err(),
        LineError::NotUtf8
    );
    assert!(LineParser::csv(b"id,time,x", Space::Wgs84).is_ok());
    assert!(LineParser::csv(b"id,time,lon", Space::Wgs84).is_err());
}

#[test]
fn csv_rows() {
    let p = csv("id,type,time,x,y,speed,iff,ship,note");
    let e = p
        .parse(b"17,radar,1700000000.5,12.5,-3.25,12.0,false,s17,\"a,b\"")
        .unwrap();
    let want = Event::new(17, "radar", ts(1_700_000_000.5))
        .at(12.5, -3.25)
        .with("speed", 12.0)
        .with("iff", false)
        .with("ship", "s17")
        .with("note", "a,b");
    assert_eq!(e, want);
    let e = p
        .parse(b"a7,,2024-01-01T00:00:00Z,,,,,,\"say \"\"hi\"\"\"\r")
        .unwrap();
    assert_eq!(e.id, Id::Str("a7".into()));
    assert_eq!(&*e.kind, "event");
    assert_eq!(e.location, None);
    assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00Z"));
    assert_eq!(
        e.attrs,
        vec![(Arc::from("note"), Value::from("say \"hi\""))]
    );
}

/// An id written as a number that no 64-bit integer holds (`-0`, more than 20
/// digits) is its text in JSON as in CSV (it was refused in JSON, kept in CSV); other
/// numbers are ids or refused alike.
#[test]
fn json_and_csv_read_ids_alike() {
    let p = csv("id,time");
    for cell in [
        "17",
        "-17",
        "0",
        "-0",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "99999999999999999999999",
        "3.5",
        "1e3",
    ] {
        let from_csv = p.parse(format!("{cell},0").as_bytes()).map(|e| e.id);
        let from_json = json(&format!(r#"{{"id": {cell}, "time": 0}}"#)).map(|e| e.id);
        // (A refusal shows the value as each format gives it: `1000.0`, `1e3`.)
        assert_eq!(from_json.ok(), from_csv.ok(), "{cell}");
    }
    assert_eq!(
        json(r#"{"id": -0, "time": 0}"#).unwrap().id,
        Id::Str("-0".into())
    );
    // Under another name, mapped to the id and kept as an attribute too.
    let map = FieldMap::new()
        .field("id", "mmsi")
        .and_then(|m| m.field("mmsi", "mmsi"))
        .unwrap();
    let mapped = LineParser::json(Space::Planar).with_fields(&map);
    let e = mapped
        .parse(br#"{"mmsi": 123456789012345678901234, "time": 0}"#)
        .unwrap();
    assert_eq!(e.id, Id::Str("123456789012345678901234".into()));
    assert!(matches!(e.attr("mmsi"), Some(Value::Num(_))));
}

#[test]
fn csv_ids() {
    let p = csv("id,time");
    let id = |cell: &str| p.parse(format!("{cell},0").as_bytes()).map(|e| e.id);
    assert_eq!(id("17"), Ok(Id::Int(17)));
    assert_eq!(id("-17"), Ok(Id::Int(-17)));
    assert_eq!(id("0"), Ok(Id::Int(0)));
    assert_eq!(id("18446744073709551615"), Ok(Id::UInt(u64::MAX)));
    assert_eq!(id("007"), Ok(Id::Str("007".into())));
    assert_eq!(id("+7"), Ok(Id::Str("+7".into())));
    assert_eq!(id("-0"), Ok(Id::Str("-0".into())));
    assert_eq!(
        id("99999999999999999999999"),
        Ok(Id::Str("99999999999999999999999".into()))
    );
    assert_eq!(id("nan"), Ok(Id::Str("nan".into())));
    assert_eq!(id("\"17\""), Ok(Id::Int(17)));
    assert_eq!(
        id("3.5").unwrap_err().to_string(),
        "`id` must be an integer or a string, got 3.5"
    );
    assert_eq!(
        id("1e3").unwrap_err().to_string(),
        "`id` must be an integer or a string, got 1e3"
    );
    assert_eq!(id(""), Err(LineError::Missing { field: "id" }));
    assert_eq!(p.parse(b"1,"), Err(LineError::Missing { field: "time" }));
}

#[test]
fn csv_cells_and_counts() {
    let p = csv("id,time,a,b,c");
    let e = p.parse(b"1,0, 12 ,TRUE, x ").unwrap();
    assert_eq!(e.attr("a"), Some(&Value::Num(12.0)));
    assert_eq!(e.attr("b"), Some(&Value::from("TRUE")));
    assert_eq!(e.attr("c"), Some(&Value::from(" x ")));
    let e = p.parse(b"1,0,inf,true,").unwrap();
    assert_eq!(e.attr("a"), Some(&Value::from("inf")));
    assert_eq!(e.attr("b"), Some(&Value::Bool(true)));
    assert_eq!(e.attr("c"), None);
    assert_eq!(
        p.parse(b"1,0,1,2").unwrap_err().to_string(),
        "row has 4 cells but the header has 5"
    );
    assert_eq!(
        p.parse(b"1,0,1,2,3,4").unwrap_err().to_string(),
        "row has 6 cells but the header has 5"
    );
    // The count is reported before a bad value.
    assert_eq!(
        p.parse(b"3.5,0,1,2,3,4").unwrap_err().to_string(),
        "row has 6 cells but the header has 5"
    );
    let m = p.parse(b"1,0,\"abc,2,3").unwrap_err().to_string();
    assert_eq!(m, "not valid CSV: unterminated quote starting at column 5");
    let m = p.parse(b"1,0,\"a\"b,2,3").unwrap_err().to_string();
    assert_eq!(
        m,
        "not valid CSV: unexpected character after the closing quote at column 8"
    );
    assert_eq!(
        p.parse(b"1,0,a\"b,2,3").unwrap().attr("a"),
        Some(&Value::from("a\"b"))
    );
    assert_eq!(p.parse(b"1,0,1,\xff,3"), Err(LineError::NotUtf8));
}

#[test]
fn csv_times_and_locations() {
    let p = LineParser::csv(b"id,time,lon,lat,x", Space::Wgs84).unwrap();
    let e = p.parse(b"1,1.25,10,20,abc").unwrap();
    assert_eq!(e.time.micros(), 1_250_000);
    assert_eq!(e.location, Some(Point { x: 10.0, y: 20.0 }));
    assert_eq!(e.attr("x"), Some(&Value::from("abc")));
    assert_eq!(
        p.parse(b"1,1e300,,,").unwrap_err().to_string(),
        "time 1e300 is outside the years 0001-9999"
    );
    assert_eq!(
        p.parse(b"1,0,10,,").unwrap_err().to_string(),
        "`lon` is given without `lat`"
    );
    assert_eq!(
        p.parse(b"1,0,10,91.2,").unwrap_err().to_string(),
        "`lat` 91.2 is out of range [-90, 90]"
    );
    assert_eq!(
        p.parse(b"1,0,east,1,").unwrap_err().to_string(),
        "`lon` must be a finite number, got \"east\""
    );
    assert_eq!(
        p.parse(b"1,0,inf,1,").unwrap_err().to_string(),
        "`lon` must be a finite number, got \"inf\""
    );
    let m = p.parse(b"1,soon,,,").unwrap_err().to_string();
    assert!(
        m.starts_with("`time` \"soon\" is not an RFC 3339 time"),
        "{m}"
    );
    let e = p.parse(b"1,\"2024-01-01T00:00:00.25+02:00\",,,").unwrap();
    assert_eq!(e.time_text.as_deref(), Some("2024-01-01T00:00:00.25+02:00"));
}

#[test]
fn known_names_are_shared() {
    let names: Vec<String> = (0..40).map(|i| format!("n{i}")).collect();
    for count in [3, 40] {
        let p = LineParser::json(Space::Planar)
            .with_known_names(["radar", "speed"])
            .with_known_names(names.iter().take(count).map(String::as_str));
        let line = r#"{"id":1,"time":0,"type":"radar","speed":1,"n2":"radar","other":2}"#;
        let a = p.parse(line.as_bytes()).unwrap();
        let b = p.parse(line.as_bytes()).unwrap();
        assert!(Arc::ptr_eq(&a.kind, &b.kind));
        assert!(Arc::ptr_eq(&a.attrs[0].0, &b.attrs[0].0));
        assert!(Arc::ptr_eq(&a.attrs[1].0, &b.attrs[1].0));
        // A name the parser was not given is shared through the thread's table.
        assert!(Arc::ptr_eq(&a.attrs[2].0, &b.attrs[2].0));
        assert_eq!(a, b);
        let pc = LineParser::csv(b"id,time,type", Space::Planar)
            .unwrap()
            .with_known_names(["radar"]);
        let a = pc.parse(b"1,0,radar").unwrap();
        let b = pc.parse(b"1,0,radar").unwrap();
        assert!(Arc::ptr_eq(&a.kind, &b.kind));
    }
}

fn lines(input: &[u8], max: usize) -> Vec<(u64, Result<Vec<u8>, LineError>)> {
    let mut r = Lines::new(input, max);
    let mut out = Vec::new();
    while let Some(item) = r.next_line() {
        let (n, line) = item.unwrap();
        out.push((n, line.map(<[u8]>::to_vec)));
    }
    out
}

#[test]
fn lines_cap_and_numbers() {
    let got = lines(b"ab\n\ncdef\r\n12345678\nxy", 4);
    assert_eq!(
        got,
        vec![
            (1, Ok(b"ab".to_vec())),
            (2, Ok(b"".to_vec())),
            (3, Err(LineError::TooLong { max: 4 })),
            (4, Err(LineError::TooLong { max: 4 })),
            (5, Ok(b"xy".to_vec())),
        ]
    );
    assert_eq!(
        lines(b"abcd\nabcde", 4),
        vec![
            (1, Ok(b"abcd".to_vec())),
            (2, Err(LineError::TooLong { max: 4 }))
        ]
    );
    assert_eq!(lines(b"", 4), vec![]);
    assert_eq!(lines(b"\n", 4), vec![(1, Ok(vec![]))]);
    assert_eq!(
        lines(b"x\n", 0),
        vec![(1, Err(LineError::TooLong { max: 0 }))]
    );
}

proptest::proptest! {
    /// An attribute named twice is reported at its second naming, whatever the
    /// attributes before it, their number (a scan, then a set past sixteen), names
    /// alike in length and ends, `null` values, and either reading of the line (the
    /// fast path, or `serde_json`'s for a line with an escape).
    #[test]
    fn an_attribute_named_twice_is_a_duplicate(
        fields in proptest::collection::vec(
            (
                proptest::sample::select(vec!["a", "b", "ab", "ba", "aab", "abb", "axb", "ayb", "speed", "sped", "kind", "knd"]),
                proptest::bool::ANY,
            ),
            0..24,
        ),
        escaped in proptest::bool::ANY,
    ) {
        let mut line = String::from(r#"{"id":1,"time":0"#);
        if escaped {
            line.push_str(r#","zz":"\u0041""#);
        }
        let mut given: Vec<&str> = Vec::new();
        let mut want = None;
        for (i, &(name, null)) in fields.iter().enumerate() {
            if null {
                line.push_str(&format!(r#","{name}":null"#));
            } else {
                line.push_str(&format!(r#","{name}":{i}"#));
            }
            if want.is_none() && given.contains(&name) {
                want = Some(format!("duplicate field `{name}`"));
            }
            given.push(name);
        }
        line.push('}');
        proptest::prop_assert_eq!(json(&line).err().map(|e| e.to_string()), want, "{}", line);
    }
}

proptest::proptest! {
    /// Lines as splitting the input at each newline gives them (the last one only when
    /// it is not empty), whatever the reader's buffer size.
    #[test]
    fn lines_as_split_at_newlines(
        input in proptest::collection::vec(proptest::sample::select(b"ab\r\n".to_vec()), 0..40),
        max in 0usize..6,
        capacity in 1usize..9,
    ) {
        let mut want: Vec<(u64, Result<Vec<u8>, LineError>)> = Vec::new();
        let mut pieces: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
        if pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
        for (i, piece) in pieces.iter().enumerate() {
            let line = if piece.len() > max {
                Err(LineError::TooLong { max })
            } else {
                Ok(piece.to_vec())
            };
            want.push((i as u64 + 1, line));
        }
        let mut r = Lines::new(std::io::BufReader::with_capacity(capacity, &input[..]), max);
        let mut got = Vec::new();
        while let Some(item) = r.next_line() {
            let (n, line) = item.expect("no I/O error");
            got.push((n, line.map(<[u8]>::to_vec)));
        }
        proptest::prop_assert_eq!(got, want);
    }
}

#[test]
fn lines_skip_long_line_without_buffering_it() {
    let mut input = vec![b'a'; 5_000_000];
    input.extend_from_slice(b"\nok\n");
    let small = std::io::BufReader::with_capacity(64, &input[..]);
    let mut r = Lines::new(small, 100);
    let (n, l) = r.next_line().unwrap().unwrap();
    assert_eq!((n, l), (1, Err(LineError::TooLong { max: 100 })));
    assert!(r.buf.capacity() < 1000);
    let (n, l) = r.next_line().unwrap().unwrap();
    assert_eq!((n, l), (2, Ok(&b"ok"[..])));
    assert!(r.next_line().is_none());
    assert_eq!(r.line_number(), 2);
}

#[test]
fn never_panics_on_garbage() {
    let pj = LineParser::json(Space::Wgs84);
    let pc = LineParser::csv(b"id,time,lon,lat,a", Space::Wgs84).unwrap();
    let samples: &[&[u8]] = &[
        b"{",
        b"}",
        b"\"",
        b",",
        b"{\"",
        b"{\"id\"",
        b"{\"id\":",
        b"\"\"\"",
        b"\",\"",
        b"{\"id\":1,\"time\":\"\\ud800\"}",
        b"\xEF\xBB",
        b"\r",
        b"a,\"",
        b"\",",
        b"1,2,3,4,\"\"",
        b"{\"id\":1,\"time\":0,\"\":1}",
    ];
    for s in samples {
        let _ = pj.parse(s);
        let _ = pc.parse(s);
        let _ = LineParser::csv(s, Space::Planar);
    }
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn encode(cells: &[String], quote_all: bool) -> String {
        cells
            .iter()
            .map(|c| {
                if quote_all || c.contains([',', '"']) || c.is_empty() {
                    format!("\"{}\"", c.replace('"', "\"\""))
                } else {
                    c.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(",")
    }

    proptest! {
        #[test]
        fn csv_cells_match_the_csv_crate(
            cells in prop::collection::vec("[a-c,\" é]{0,6}", 1..6),
            quote_all in any::<bool>(),
        ) {
            let line = encode(&cells, quote_all);
            let mine: Vec<String> = CsvCells::new(&line)
                .map(|c| c.map(Cow::into_owned))
                .collect::<Result<_, _>>()
                .unwrap();
            prop_assert_eq!(&mine, &cells);
            let mut rdr = ::csv::ReaderBuilder::new()
                .has_headers(false)
                .from_reader(line.as_bytes());
            let rec = rdr.records().next().unwrap().unwrap();
            let theirs: Vec<String> = rec.iter().map(str::to_owned).collect();
            prop_assert_eq!(&mine, &theirs);
        }

        #[test]
        fn parsers_never_panic(line in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = LineParser::json(Space::Wgs84).parse(&line);
            let p = LineParser::csv(b"id,time,lon,lat,a", Space::Wgs84).unwrap();
            let _ = p.parse(&line);
            let _ = LineParser::csv(&line, Space::Planar);
        }

        #[test]
        fn json_ish_never_panics(line in "[{}\\[\\]\":,0-9a-z.e\\\\-]{0,40}") {
            let _ = LineParser::json(Space::Planar).parse(line.as_bytes());
        }
    }
}

/// What an event reader makes of `input`: per line, its number and an event's id,
/// an error's text, `blank` or `header`.
fn records(reader: &mut EventReader<&[u8]>) -> Vec<(u64, String)> {
    let mut out = Vec::new();
    while let Some(record) = reader.next_record() {
        let record = record.unwrap();
        let what = match &record {
            Record::Event(line) => match line.parse() {
                Ok(ev) => format!("id {}", ev.id),
                Err(bad) => bad.to_string(),
            },
            Record::Bad(bad) => bad.to_string(),
            Record::Blank(_) => "blank".to_owned(),
            Record::Header(_) => "header".to_owned(),
        };
        out.push((record.number(), what));
    }
    out
}

#[test]
fn event_reader_learns_the_format_and_numbers_lines() {
    let input = b"\n id,tim\n\nid,time\n7,1\n8\n";
    let mut r = EventReader::new(&input[..], Space::Planar);
    assert_eq!(r.format(), None);
    let got = records(&mut r);
    let want: Vec<(u64, String)> = [
        (1, "blank"),
        (
            2,
            "line 2: not a JSON event nor a CSV header: bad CSV header: no `time` column",
        ),
        (3, "blank"),
        (4, "header"),
        (5, "id 7"),
        (6, "line 6: row has 1 cells but the header has 2"),
    ]
    .into_iter()
    .map(|(n, s)| (n, s.to_owned()))
    .collect();
    assert_eq!(got, want);
    assert_eq!(r.format(), Some(Format::Csv));
    assert_eq!(r.line_number(), 6);

    let mut r = EventReader::new(&b"{\"id\":1,\"time\":0}\nid,time\n"[..], Space::Planar);
    let got = records(&mut r);
    assert_eq!(got[0], (1, "id 1".to_owned()));
    assert!(got[1].1.starts_with("line 2: not valid JSON"), "{got:?}");
    assert_eq!(r.format(), Some(Format::JsonLines));
}

#[test]
fn event_reader_told_the_format() {
    let mut r = EventReader::new(&b"id,time\n"[..], Space::Planar).with_format(Format::JsonLines);
    assert_eq!(r.format(), Some(Format::JsonLines));
    assert!(records(&mut r)[0].1.starts_with("line 1: not valid JSON"));
    let mut r =
        EventReader::new(&b"{\"id\":1,\"time\":0}\n"[..], Space::Planar).with_format(Format::Csv);
    assert_eq!(r.format(), None);
    assert!(records(&mut r)[0]
        .1
        .starts_with("line 1: not a JSON event nor a CSV header: bad CSV header"));
}

#[test]
fn event_reader_caps_lines_and_shares_names() {
    let input = b"{\"id\":1,\"time\":0,\"type\":\"radar\"}\n{\"id\":2,\"time\":0,\"pad\":\"xxxxxxxxxxxxxxxxxxxxxxxx\"}\n{\"id\":3,\"time\":0,\"type\":\"radar\"}\n";
    let mut r = EventReader::new(&input[..], Space::Planar)
        .with_max_line_bytes(40)
        .with_known_names(["radar"]);
    let (mut events, mut bad) = (Vec::new(), Vec::new());
    assert_eq!(r.read_batch(&mut events, &mut bad, 2).unwrap(), 2);
    assert_eq!(r.read_batch(&mut events, &mut bad, 2).unwrap(), 1);
    assert_eq!(r.read_batch(&mut events, &mut bad, 2).unwrap(), 0);
    assert_eq!(events.len(), 2);
    assert!(Arc::ptr_eq(&events[0].kind, &events[1].kind));
    assert_eq!(
        bad,
        vec![BadLine {
            line: 2,
            error: LineError::TooLong { max: 40 }
        }]
    );
    let forced = StreamParser::new(Space::Planar)
        .with_format(Format::JsonLines)
        .with_known_names(["radar"]);
    let p = forced.parser().unwrap();
    let line = br#"{"id":1,"time":0,"type":"radar"}"#;
    assert!(Arc::ptr_eq(
        &p.parse(line).unwrap().kind,
        &p.parse(line).unwrap().kind
    ));
}

#[test]
fn event_reader_iterator_reports_failed_reads_with_the_line() {
    /// Two lines, then a failure.
    struct Failing(&'static [u8]);
    impl std::io::Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Err(std::io::Error::other("disk on fire"));
            }
            let n = buf.len().min(self.0.len());
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let input = std::io::BufReader::new(Failing(b"{\"id\":1,\"time\":0}\n{\"id\":2}\n"));
    let mut r = EventReader::new(input, Space::Planar);
    assert_eq!(r.next().unwrap().unwrap().id, Id::Int(1));
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(e.to_string(), "line 2: missing field `time`");
    let e = r.next().unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        "cannot read the input after line 2: disk on fire"
    );
}

//! Unit tests of [`FieldMap`]: other field names, case-insensitive CSV headers, time
//! units and the forms of times real feeds write, the default type.

use super::*;
use crate::event::{Id, Space, Value};

const AIS_HEADER: &str = "MMSI,BaseDateTime,LAT,LON,SOG,COG,Heading,VesselName,IMO,CallSign,VesselType,Status,Length,Width,Draft,Cargo,TransceiverClass";
const AIS_ROW: &str =
    "367000001,2020-06-30T00:00:00,29.51,-94.82,12.1,181.3,511,SEA LION,,WDA1234,70,0,98,17,4.5,70,A";

fn ais() -> FieldMap {
    ["id=MMSI", "mmsi=MMSI", "time=BaseDateTime"]
        .into_iter()
        .try_fold(FieldMap::new(), FieldMap::parse_field)
        .and_then(|m| m.default_type("ais"))
        .unwrap()
}

fn wgs_json(map: &FieldMap, line: &str) -> Result<crate::Event, LineError> {
    LineParser::json(Space::Wgs84)
        .with_fields(map)
        .parse(line.as_bytes())
}

fn ms(v: &str) -> Result<crate::Event, LineError> {
    let map = FieldMap::new().time_unit(TimeUnit::Millis);
    LineParser::json(Space::Planar)
        .with_fields(&map)
        .parse(format!(r#"{{"id":1,"time":{v}}}"#).as_bytes())
}

#[test]
fn a_marinecadastre_row_reads_with_the_mapping_and_case_insensitive_location() {
    let parser = LineParser::json(Space::Wgs84)
        .with_fields(&ais())
        .with_header(AIS_HEADER.as_bytes())
        .unwrap();
    let e = parser.parse(AIS_ROW.as_bytes()).unwrap();
    assert_eq!(e.id, Id::Int(367_000_001));
    assert_eq!(&*e.kind, "ais");
    assert_eq!(e.time.micros(), 1_593_475_200_000_000);
    assert_eq!(e.time_text.as_deref(), Some("2020-06-30T00:00:00"));
    let p = e.location.unwrap();
    assert_eq!((p.x, p.y), (-94.82, 29.51));
    assert_eq!(e.attr("mmsi"), Some(&Value::Num(367_000_001.0)));
    assert!(e.attr("MMSI").is_none() && e.attr("BaseDateTime").is_none());
    assert!(
        e.attr("IMO").is_none(),
        "an empty cell is an absent attribute"
    );
    assert_eq!(e.attr("VesselName"), Some(&Value::Str("SEA LION".into())));
}

#[test]
fn header_problems_name_the_mapped_column() {
    let map = FieldMap::new().parse_field("time=Stamp").unwrap();
    let e = LineParser::json(Space::Planar)
        .with_fields(&map)
        .with_header(b"id,x,y")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad CSV header: no `Stamp` column (mapped to `time`)"
    );
    let e = LineParser::csv(b"id,Time,TIME", Space::Planar).unwrap_err();
    assert_eq!(
        e.to_string(),
        "bad CSV header: no `time` column (`Time` and `TIME` differ from it only in case: map one to it)"
    );
    // An exact name wins over one that differs in case.
    let p = LineParser::csv(b"ID,id,Time", Space::Planar).unwrap();
    let e = p.parse(b"a,7,3").unwrap();
    assert_eq!(e.id, Id::Int(7));
    assert_eq!(e.attr("ID"), Some(&Value::Str("a".into())));
}

#[test]
fn json_keys_are_mapped_and_a_hidden_field_is_ignored() {
    let map = ais();
    let e = wgs_json(
        &map,
        r#"{"MMSI":5,"BaseDateTime":"2020-06-30 00:00:01","time":"ignored","lon":1,"lat":2}"#,
    )
    .unwrap();
    assert_eq!(e.id, Id::Int(5));
    assert_eq!(e.time.micros(), 1_593_475_201_000_000);
    assert_eq!(e.attr("mmsi"), Some(&Value::Num(5.0)));
    assert!(e.attr("time").is_none());
    let e = wgs_json(&map, r#"{"MMSI":5,"mmsi":6,"BaseDateTime":0}"#).unwrap();
    assert_eq!(e.attr("mmsi"), Some(&Value::Num(5.0)), "the mapping wins");
    let e = wgs_json(&map, r#"{"MMSI":5,"MMSI":6,"BaseDateTime":0}"#).unwrap_err();
    assert_eq!(e.to_string(), "duplicate field `MMSI`");
}

#[test]
fn time_units_and_times_written_as_text() {
    assert_eq!(
        ms("1593475200500").unwrap().time.micros(),
        1_593_475_200_500_000
    );
    assert_eq!(
        ms("\"1593475200500\"").unwrap().time.micros(),
        1_593_475_200_500_000
    );
    assert_eq!(ms("1.5").unwrap().time.micros(), 1_500);
    let ns = FieldMap::new().time_unit(TimeUnit::Nanos);
    let p = LineParser::csv(b"id,time", Space::Planar).unwrap();
    let p = LineParser {
        unit: ns.unit(),
        ..p
    };
    assert_eq!(p.parse(b"1,1500").unwrap().time.micros(), 2);
    assert_eq!(p.parse(b"1,-1500").unwrap().time.micros(), -1);
    // A number in a string is a number of seconds by default, echoed as a number.
    let e = LineParser::json(Space::Planar)
        .parse(br#"{"id":1,"time":" 12.5"}"#)
        .unwrap();
    assert_eq!((e.time.micros(), e.time_text), (12_500_000, None));
    assert_eq!("ms".parse::<TimeUnit>(), Ok(TimeUnit::Millis));
    assert!("min".parse::<TimeUnit>().is_err());
}

#[test]
fn seconds_out_of_range_that_fit_as_milliseconds_say_so() {
    let e = LineParser::json(Space::Planar)
        .parse(br#"{"id":1,"time":1593475200000}"#)
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "time 1593475200000 is outside the years 0001-9999 in seconds; in milliseconds it \
         would be 2020-06-30T00:00:00Z (time unit `ms`, ccpn-run's `--time-unit ms`)"
    );
    let p = LineParser::csv(b"id,time", Space::Planar).unwrap();
    let e = p.parse(b"1,1593475200000000000").unwrap_err();
    assert!(
        e.to_string()
            .contains("in nanoseconds it would be 2020-06-30T00:00:00Z"),
        "{e}"
    );
    assert_eq!(
        ms("1e300").unwrap_err().to_string(),
        "time 1e300 is outside the years 0001-9999"
    );
}

#[test]
fn mapping_mistakes_are_errors() {
    assert!(FieldMap::new().parse_field("time").is_err());
    assert!(FieldMap::new().parse_field("=x").is_err());
    let twice = FieldMap::new()
        .parse_field("time=a")
        .unwrap()
        .parse_field("time=b");
    assert_eq!(
        twice.unwrap_err().to_string(),
        "`time` is mapped twice: from `a` and from `b`"
    );
    assert!(FieldMap::new().default_type("").is_err());
}

#[test]
fn arrays_and_objects_the_net_does_not_read_are_ignored() {
    let p = LineParser::json(Space::Planar).with_read_names(["A", "speed"]);
    let e = p
        .parse(br#"{"id":1,"time":0,"tags":["a"],"o":{"b":[1]},"speed":2}"#)
        .unwrap();
    assert_eq!(e.attrs.len(), 1);
    assert_eq!(
        p.parse(br#"{"id":1,"time":0,"speed":{"v":2}}"#)
            .unwrap_err()
            .to_string(),
        "field `speed` must be a number, a string or a boolean, got an object"
    );
}

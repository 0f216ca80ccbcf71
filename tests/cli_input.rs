//! `ccpn-run` reading feeds as they come: other field names (`--field`), time units
//! (`--time-unit`), a default type (`--default-type`), times without a zone,
//! case-insensitive CSV headers, empty cells, attributes the net never reads, and
//! coordinates under names the net's space does not use.

mod support;

use support::tempfile_path::Temp;
use support::*;

/// A WGS84 net: AIS reports inside a box off Galveston, keyed by `mmsi`.
const AIS_NET: &str = r#"Net(
    space: Wgs84,
    zones: { "box": Rect(min: (-95.0, 29.0), max: (-94.0, 30.0)) },
    events: {
        "report": Atomic(type: "ais", when: "SOG > 1"),
        "inside": Within(of: "report", zones: ["box"]),
        "twice": Times(k: 2, of: "inside", within: "1h", key: "mmsi"),
    },
    outputs: ["inside", "twice"],
)"#;

const AIS_CSV: &str = "\
MMSI,BaseDateTime,LAT,LON,SOG,COG,Heading,VesselName,IMO,CallSign,VesselType,Status,Length,Width,Draft,Cargo,TransceiverClass
367000001,2020-06-30T00:00:00,29.51,-94.82,12.1,181.3,511,SEA LION,,WDA1234,70,0,98,17,4.5,70,A
367000002,2020-06-30T00:00:05,29.52,-94.81,0.0,0.0,511,,,,,,,,,,B
367000001,2020-06-30T00:01:00,29.50,-94.83,12.0,181.0,511,SEA LION,IMO9999999,WDA1234,70,0,98,17,4.5,70,A
";

const AIS_FIELDS: [&str; 10] = [
    "--field",
    "time=BaseDateTime",
    "--field",
    "id=MMSI",
    "--field",
    "mmsi=MMSI",
    "--default-type",
    "ais",
    "--stats",
    "--format=csv",
];

fn lines(out: &std::process::Output) -> Vec<serde_json::Value> {
    text(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

#[test]
fn a_marinecadastre_file_runs_with_field_mapping() {
    let net = Temp::with("ais.ron", AIS_NET);
    let mut args = vec![net.path()];
    args.extend(AIS_FIELDS);
    let out = run(&args, AIS_CSV);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let s = stats(&out);
    assert_eq!(
        (
            s["read"].as_u64(),
            s["processed"].as_u64(),
            s["rejected"].as_u64()
        ),
        (Some(3), Some(3), Some(0)),
        "{s}"
    );
    let found = lines(&out);
    let events: Vec<&str> = found.iter().map(|d| d["event"].as_str().unwrap()).collect();
    assert_eq!(events, ["inside", "inside", "twice"]);
    assert_eq!(found[0]["time"], "2020-06-30T00:00:00");
    assert_eq!(found[0]["lon"], -94.82);
    assert_eq!(found[2]["ids"], serde_json::json!([367000001, 367000001]));
}

#[test]
fn the_header_match_is_case_insensitive_where_unambiguous() {
    let net = Temp::with("ais.ron", AIS_NET);
    let input = "Id,Time,Type,Lon,Lat,SOG,mmsi\n1,2020-06-30T00:00:00Z,ais,-94.5,29.5,3,7\n";
    let out = run(&[net.path(), "--stats"], input);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(lines(&out).len(), 1, "{}", text(&out.stderr));
}

#[test]
fn millisecond_times_need_the_unit_and_the_error_says_so() {
    let net = Temp::with("ais.ron", AIS_NET);
    let line = r#"{"id":1,"type":"ais","time":1593475200000,"lon":-94.5,"lat":29.5,"SOG":3}"#;
    let out = run(&[net.path()], line);
    let err = text(&out.stderr);
    assert!(
        err.contains("in milliseconds it would be 2020-06-30T00:00:00Z")
            && err.contains("--time-unit ms"),
        "{err}"
    );
    let out = run(&[net.path(), "--time-unit", "ms"], line);
    let found = lines(&out);
    assert_eq!(found.len(), 1, "{}", text(&out.stderr));
    assert_eq!(found[0]["time"], 1593475200.0);
    let string_ms =
        r#"{"id":1,"type":"ais","time":"1593475200000","lon":-94.5,"lat":29.5,"SOG":3}"#;
    let out = run(&[net.path(), "--time-unit=ms"], string_ms);
    assert_eq!(lines(&out).len(), 1, "{}", text(&out.stderr));
}

#[test]
fn bad_mappings_are_argument_errors_naming_the_flag() {
    let net = Temp::with("ais.ron", AIS_NET);
    for args in [
        &["--field", "time"][..],
        &["--field", "time=a", "--field", "time=b"],
        &["--time-unit", "min"],
    ] {
        let mut all = vec![net.path()];
        all.extend(args);
        let out = run(&all, "");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("--field") || err.contains("--time-unit"),
            "{args:?}: {err}"
        );
    }
}

#[test]
fn a_missing_mapped_column_is_named() {
    let net = Temp::with("ais.ron", AIS_NET);
    let out = run(
        &[net.path(), "--field", "time=Stamp"],
        "id,time,lon,lat\n1,0,1,1\n",
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("no `Stamp` column (mapped to `time`)"),
        "{err}"
    );
}

#[test]
fn arrays_and_objects_are_ignored_unless_the_net_reads_them() {
    let net = Temp::with("ais.ron", AIS_NET);
    let input = r#"{"id":1,"type":"ais","time":0,"lon":-94.5,"lat":29.5,"SOG":3,"tags":["a"],"o":{"b":1}}
{"id":2,"type":"ais","time":1,"lon":-94.5,"lat":29.5,"SOG":[3]}
"#;
    let out = run(&[net.path(), "--stats"], input);
    let s = stats(&out);
    assert_eq!(
        (s["processed"].as_u64(), s["rejected"].as_u64()),
        (Some(1), Some(1)),
        "{s}"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains(
            "line 2: rejected: field `SOG` must be a number, a string or a boolean, got an array"
        ),
        "{err}"
    );
}

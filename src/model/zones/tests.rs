//! Tests of zone building: RON shapes, GeoJSON files, and the errors at their entries.

use crate::event::Point;
use crate::model::{Model, NetError, NetText};
use crate::spatial::Shape;

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/zones");

fn net(space: &str, zones: &str) -> String {
    format!(
        "Net(\n    space: {space},\n    zones: {{\n{zones}\n    }},\n    events: {{ \"t\": Atomic(type: \"T\") }},\n    outputs: [\"t\"],\n)"
    )
}

fn load(file: &str, src: &str) -> Result<Model, Vec<(usize, usize, String)>> {
    Model::load(file, src.into(), &[]).map_err(|e| match e {
        NetError::Invalid { problems } => problems
            .into_iter()
            .map(|p| (p.line, p.col, p.message))
            .collect(),
        other => vec![(0, 0, other.to_string())],
    })
}

fn errors(space: &str, zones: &str) -> Vec<(usize, usize, String)> {
    let file = format!("{DATA}/net.ron");
    match load(&file, &net(space, zones)) {
        Ok(_) => panic!("expected errors for {zones}"),
        Err(e) => e,
    }
}

fn pt(x: f64, y: f64) -> Point {
    Point { x, y }
}

#[test]
fn geojson_feature_collection_defines_several_zones() {
    let file = format!("{DATA}/net.ron");
    let src = net(
        "Wgs84",
        r#"        "harbour": GeoJson(path: "harbour.geojson", name: "harbour"),
    "anchorage": GeoJson(path: "harbour.geojson", name: "anchorage"),
    "h": GeoJson(path: "harbour.geojson", name: "H", property: "berth_id"),"#,
    );
    let m = load(&file, &src).unwrap_or_else(|e| panic!("{e:?}"));
    let names: Vec<&str> = m.zones.iter().map(|z| &*z.name).collect();
    assert_eq!(names, ["anchorage", "h", "harbour"]);
    let (anchorage, h, harbour) = (&m.zones[0], &m.zones[1], &m.zones[2]);
    assert!(matches!(anchorage.shape, Shape::MultiPolygon(ref mp) if mp.0.len() == 2));
    assert!(matches!(harbour.shape, Shape::Polygon(ref p) if p.interiors().len() == 1));
    assert!(matches!(h.shape, Shape::Polygon(_)));
    let s = m.space;
    assert!(harbour.contains(s, pt(121.755, 25.155)));
    assert!(!harbour.contains(s, pt(121.7475, 25.1475)), "in the hole");
    assert!(
        harbour.contains(s, pt(121.745, 25.1475)),
        "on the hole's edge"
    );
    assert!(anchorage.contains(s, pt(121.805, 25.175)));
    assert!(!anchorage.contains(s, pt(121.795, 25.175)));
}

#[test]
fn unreadable_geojson_is_an_error_at_the_zone() {
    let e = errors(
        "Wgs84",
        r#"        "harbour": GeoJson(path: "missing.geojson"),"#,
    );
    assert_eq!(e.len(), 1, "{e:?}");
    let (line, col, msg) = &e[0];
    assert_eq!((*line, *col), (4, 9));
    assert!(
        msg.starts_with("zone `harbour`: GeoJSON file `missing.geojson`"),
        "{msg}"
    );
    assert!(msg.contains("cannot read"), "{msg}");
}

#[test]
fn non_polygonal_or_unknown_features_are_errors() {
    let e = errors(
        "Wgs84",
        r#"        "a": GeoJson(path: "harbour.geojson", name: "lighthouse"),
    "b": GeoJson(path: "harbour.geojson", name: "nope"),
    "c": GeoJson(path: "harbour.geojson"),"#,
    );
    assert_eq!(e.len(), 3, "{e:?}");
    assert_eq!((e[0].0, e[1].0, e[2].0), (4, 5, 6));
    assert!(
        e[0].2
            .contains("feature 4 (\"lighthouse\"): a Point geometry"),
        "{}",
        e[0].2
    );
    assert!(
        e[1].2.contains("no feature has `name` = \"nope\" (found: \"anchorage\", \"buoys\", \"harbour\", \"lighthouse\")"),
        "{}",
        e[1].2
    );
    assert!(e[2].2.contains("a Point geometry"), "{}", e[2].2);
}

#[test]
fn bad_geojson_files() {
    let dir = std::env::temp_dir().join(format!("ccpn-zones-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let write = |name: &str, text: &str| {
        std::fs::write(dir.join(name), text).expect("write");
    };
    write(
        "broken.geojson",
        "{\"type\": \"Polygon\", \"coordinates\": [[[0, 0], [1, 0]",
    );
    write(
        "far.geojson",
        r#"{"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 95], [0, 0]]]}"#,
    );
    write(
        "flat.geojson",
        r#"{"type": "Feature", "properties": {}, "geometry": {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [0, 0]]]}}"#,
    );
    write(
        "ok.geojson",
        r#"{"type": "MultiPolygon", "coordinates": [[[[0, 0], [1, 0], [1, 1], [0, 0]]], [[[5, 5], [6, 5], [6, 6, 12.5]]]]}"#,
    );
    let file = dir.join("net.ron").display().to_string();
    let src = net(
        "Wgs84",
        r#"        "broken": GeoJson(path: "broken.geojson"),
    "far": GeoJson(path: "far.geojson"),
    "flat": GeoJson(path: "flat.geojson"),
    "named": GeoJson(path: "ok.geojson", name: "x"),
    "ok": GeoJson(path: "ok.geojson"),"#,
    );
    let e = load(&file, &src).expect_err("bad files");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(e.len(), 4, "{e:?}");
    assert!(
        e[0].2.contains("broken.geojson") && e[0].2.contains("not valid GeoJSON"),
        "{}",
        e[0].2
    );
    assert!(e[1].2.contains("(1, 95) is not a (lon, lat)"), "{}", e[1].2);
    assert!(
        e[2].2.contains("a ring needs at least 3 distinct points"),
        "{}",
        e[2].2
    );
    assert!(
        e[3].2
            .contains("picks features, but the file holds a bare geometry"),
        "{}",
        e[3].2
    );
}

#[test]
fn ron_polygons_with_holes_and_multipolygons() {
    let src = net(
        "Planar",
        r#"        "pier": PolygonWithHoles(
        exterior: [(0.0, 0.0), (10.0, 0.0), (10.0, 10.0), (0.0, 10.0), (0.0, 0.0)],
        holes: [[(4.0, 4.0), (6.0, 4.0), (6.0, 6.0), (4.0, 6.0)]],
    ),
    "islands": MultiPolygon([
        Polygon(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)]),
        (exterior: [(5.0, 5.0), (9.0, 5.0), (9.0, 9.0), (5.0, 9.0)], holes: [[(6.0, 6.0), (7.0, 6.0), (7.0, 7.0)]]),
    ]),"#,
    );
    let m = load("n.ron", &src).unwrap_or_else(|e| panic!("{e:?}"));
    let (islands, pier) = (&m.zones[0], &m.zones[1]);
    let s = m.space;
    assert!(pier.contains(s, pt(1.0, 1.0)));
    assert!(!pier.contains(s, pt(5.0, 5.0)));
    assert!(
        pier.contains(s, pt(5.0, 4.0)),
        "the hole's boundary is inside"
    );
    assert!(islands.contains(s, pt(0.9, 0.5)));
    assert!(islands.contains(s, pt(8.0, 8.0)));
    assert!(
        !islands.contains(s, pt(6.8, 6.2)),
        "in the second part's hole"
    );
    assert!(!islands.contains(s, pt(3.0, 3.0)));
}

#[test]
fn rect_across_the_antimeridian() {
    let src = net(
        "Wgs84",
        r#"        "dateline": Rect(min: (179.0, -1.0), max: (-179.0, 1.0)),"#,
    );
    let m = load("n.ron", &src).unwrap_or_else(|e| panic!("{e:?}"));
    let z = &m.zones[0];
    assert!(z.contains(m.space, pt(179.5, 0.0)));
    assert!(z.contains(m.space, pt(-179.5, 0.0)));
    assert!(z.contains(m.space, pt(180.0, 1.0)));
    assert!(!z.contains(m.space, pt(0.0, 0.0)));
    let e = errors(
        "Planar",
        r#"        "r": Rect(min: (179.0, -1.0), max: (-179.0, 1.0)),"#,
    );
    assert!(e[0].2.contains("`min` must not exceed `max`"), "{e:?}");
}

#[test]
fn bad_ron_zones_are_errors_at_their_entries() {
    let e = errors(
        "Wgs84",
        r#"        "a": Polygon([(0.0, 0.0), (1.0, 0.0)]),
    "b": Circle(center: (0.0, 91.0), radius: 1.0),
    "c": Polygon([(-170.0, 0.0), (170.0, 0.0), (170.0, 1.0)]),
    "d": Line(points: [(0.0, 0.0), (100.0, 0.0)], width: 10.0),
    "e": MultiPolygon([]),
    "f": PolygonWithHoles(exterior: [(0.0, 0.0), (1.0, 0.0), (1.0, 1.0)], holes: [[(0.1, 0.1), (0.1, 0.1), (0.2, 0.2)]]),
    "g": Sector(center: (0.0, 0.0), radius: -1.0, from_deg: 0.0, to_deg: 10.0),"#,
    );
    let msgs: Vec<String> = e.iter().map(|(l, _, m)| format!("{l}: {m}")).collect();
    let want = [
        "4: zone `a`: exterior: a ring needs at least 3 distinct points, got 2",
        "5: zone `b`: (0, 91) is not a (lon, lat) in degrees",
        "6: zone `c`: the polygon spans 340 degrees of longitude",
        "7: zone `d`: segment 1 is 11132 km long",
        "8: zone `e`: a multipolygon needs at least one polygon",
        "9: zone `f`: hole 1: a ring needs at least 3 distinct points, got 3",
        "10: zone `g`: `radius` must be a positive finite number, got -1",
    ];
    assert_eq!(msgs.len(), want.len(), "{msgs:#?}");
    for (m, w) in msgs.iter().zip(want) {
        assert!(m.starts_with(w), "{m}\n  wanted {w}");
    }
}

/// Zones picking their features from one large file by name, and by another property
/// of the same file, each get exactly the features with that value, in file order
/// (the file is indexed by each property once, not scanned for each zone).
#[test]
fn many_zones_pick_features_from_one_file() {
    let n = 3000;
    let square = |i: usize| {
        let x = i as f64;
        format!("[[[{x},0],[{x}.5,0],[{x}.5,0.5],[{x},0.5],[{x},0]]]")
    };
    let mut features: Vec<String> = (0..n)
        .map(|i| {
            format!(
                r#"{{"type":"Feature","properties":{{"name":"f{i}","id":"{}"}},"geometry":{{"type":"Polygon","coordinates":{}}}}}"#,
                n - 1 - i,
                square(i)
            )
        })
        .collect();
    // A second feature named `f7` (the zone is both), one with no name.
    features.push(format!(
        r#"{{"type":"Feature","properties":{{"name":"f7"}},"geometry":{{"type":"Polygon","coordinates":{}}}}}"#,
        square(n + 10)
    ));
    features.push(format!(
        r#"{{"type":"Feature","properties":{{}},"geometry":{{"type":"Polygon","coordinates":{}}}}}"#,
        square(n + 20)
    ));
    let text = format!(
        r#"{{"type":"FeatureCollection","features":[{}]}}"#,
        features.join(",")
    );
    let file = format!("{DATA}/net.ron");
    let supplied = [(
        std::path::PathBuf::from(format!("{DATA}/many.geojson")),
        std::sync::Arc::<str>::from(text),
    )];
    let mut zones: Vec<String> = (0..n)
        .step_by(3)
        .map(|i| format!(r#"        "z{i}": GeoJson(path: "many.geojson", name: "f{i}"),"#))
        .collect();
    zones.push(
        r#"        "byid": GeoJson(path: "many.geojson", name: "5", property: "id"),"#.into(),
    );
    let src = net("Planar", &zones.join("\n"));
    let m = Model::load(&file, NetText::Read(src), &supplied).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(m.zones.len(), n / 3 + 1);
    let s = m.space;
    for z in &m.zones {
        let Some(i) = z
            .name
            .strip_prefix('z')
            .and_then(|i| i.parse::<usize>().ok())
        else {
            // `byid`: id "5" is the feature at position n - 1 - 5.
            assert_eq!(&*z.name, "byid");
            let x = (n - 6) as f64;
            assert!(z.contains(s, pt(x + 0.25, 0.25)));
            assert!(!z.contains(s, pt(5.25, 0.25)));
            continue;
        };
        let x = i as f64;
        assert!(z.contains(s, pt(x + 0.25, 0.25)), "{}", z.name);
        assert!(!z.contains(s, pt(x + 1.25, 0.25)), "{}", z.name);
        if i == 7 {
            let far = (n + 10) as f64;
            assert!(matches!(z.shape, Shape::MultiPolygon(ref mp) if mp.0.len() == 2));
            assert!(z.contains(s, pt(far + 0.25, 0.25)));
        } else {
            assert!(matches!(z.shape, Shape::Polygon(_)), "{}", z.name);
        }
    }
    // A name no feature has is still an error naming some of those there are.
    let src = net(
        "Planar",
        r#"        "nope": GeoJson(path: "many.geojson", name: "f99999"),"#,
    );
    let e = match Model::load(&file, NetText::Read(src), &supplied) {
        Ok(_) => panic!("a missing feature name was accepted"),
        Err(e) => e.to_string(),
    };
    assert!(e.contains("no feature has `name` = \"f99999\""), "{e}");
}

//! Net files as editors write them.

use ccpn::{Net, NetError};

/// Some Windows editors start UTF-8 files with a byte-order mark: the net loads, and
/// problems are still placed at the right line and column.
#[test]
fn a_net_file_starting_with_a_byte_order_mark_loads() {
    let src = "\u{feff}Net(events: { \"a\": Atomic(type: \"A\") }, outputs: [\"a\"])";
    let net = Net::from_ron("bom.ron", src).unwrap();
    assert_eq!(net.outputs().collect::<Vec<_>>(), ["a"]);
    let bad = "\u{feff}Net(\n  events: { \"b\": Atomic(type: \"B\"), \"a\": Seq(of: [\"b\", \"zz\"]) },\n  outputs: [\"a\"])";
    match Net::from_ron("bom.ron", bad) {
        Err(NetError::Invalid { problems }) => {
            let p = &problems[0];
            assert!(p.message.contains("`zz`"), "{problems:?}");
            assert_eq!((p.line, p.col), (2, 56), "{problems:?}");
        }
        other => panic!("{other:?}"),
    }
}

/// A net generated as one long chain of references: loading, checking and running
/// it must not recurse as deep as the chain (this once overflowed the stack at about
/// 10,000 levels).
#[test]
fn a_chain_of_20000_references_loads_and_runs() {
    let mut src = String::from("Net(events: {\n\"e0\": Atomic(type: \"A\"),\n");
    for i in 1..20_000 {
        src.push_str(&format!("\"e{i}\": Or(of: [\"e{}\"]),\n", i - 1));
    }
    src.push_str("}, outputs: [\"e19999\"])");
    let net = Net::from_ron("deep.ron", &src).unwrap();
    assert!(net.to_dot().len() > 1_000_000);
    let mut d = ccpn::Detector::new(&net);
    let t = ccpn::Timestamp::from_secs_f64(0.0).unwrap();
    let found = d.push(ccpn::Event::new(1, "A", t)).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(&*found[0].event, "e19999");
}

/// A cycle through 9,000 events is one error, its text kept short.
#[test]
fn a_cycle_of_9000_events_is_one_short_error() {
    let mut src = String::from("Net(events: {\n");
    for i in 0..9_000 {
        src.push_str(&format!("\"e{i}\": Or(of: [\"e{}\"]),\n", (i + 1) % 9_000));
    }
    src.push_str("}, outputs: [\"e0\"])");
    match Net::from_ron("cycle.ron", &src) {
        Err(NetError::Invalid { problems }) => {
            assert_eq!(problems.len(), 1, "{problems:?}");
            let m = &problems[0].message;
            assert!(
                m.starts_with("cycle between composite events: e0 -> e1 -> "),
                "{m}"
            );
            assert!(m.ends_with("-> e0 (9000 events)"), "{m}");
            assert!(m.len() < 300, "{m}");
        }
        other => panic!("{:?}", other.map(|_| ())),
    }
}

/// A bow-tie polygon loads (both loops are inside, by the non-zero winding rule) with
/// a warning naming the zone, its place in the file, and the edges that cross.
#[test]
fn a_polygon_that_crosses_itself_is_warned_about() {
    let src = r#"Net(
    zones: {
        "bow": Polygon([(0.0, 0.0), (4.0, 4.0), (4.0, 0.0), (0.0, 4.0)]),
        "square": Polygon([(0.0, 0.0), (4.0, 0.0), (4.0, 4.0), (0.0, 4.0)]),
    },
    events: { "a": Atomic(type: "A"), "in": Within(of: "a", zones: ["bow", "square"]) },
    outputs: ["in"],
)"#;
    let net = Net::from_ron("bow.ron", src).unwrap();
    let w = net.warnings();
    assert_eq!(w.len(), 1, "{w:?}");
    assert_eq!((w[0].line, w[0].col), (3, 9));
    assert!(
        w[0].message
            .starts_with("zone `bow`: its outline crosses itself (its edges from points 1 and 3)"),
        "{}",
        w[0].message
    );
    // Both loops are inside: (3, 2) in the right one, (1, 2) in the left.
    let bow_only = src.replace(r#"["bow", "square"]"#, r#"["bow"]"#);
    let net = Net::from_ron("bow.ron", &bow_only).unwrap();
    let mut d = ccpn::Detector::new(&net);
    let t = ccpn::Timestamp::from_secs_f64(0.0).unwrap();
    for (id, x) in [(1, 3.0), (2, 1.0)] {
        let e = ccpn::Event::new(id, "A", t).at(x, 2.0);
        assert_eq!(d.push(e).unwrap().len(), 1, "x = {x}");
    }
}

/// A net keeps the texts it was loaded from: loaded again from them once its GeoJSON
/// file has changed or gone, it is the same net (same fingerprint, same zones).
#[test]
fn a_net_loads_again_from_its_source_when_its_geojson_file_is_gone() {
    let dir = tempfile::tempdir().unwrap();
    let zone = r#"{"type": "Polygon", "coordinates": [[[0, 0], [4, 0], [4, 4], [0, 4], [0, 0]]]}"#;
    std::fs::write(dir.path().join("z.geojson"), zone).unwrap();
    let path = dir.path().join("n.ron");
    std::fs::write(
        &path,
        r#"Net(zones: { "z": GeoJson(path: "z.geojson") },
               events: { "a": Atomic(type: "A"), "in": Within(of: "a", zones: ["z"]) },
               outputs: ["in"])"#,
    )
    .unwrap();
    let net = Net::from_file(&path).unwrap();
    let source = net.source().clone();
    assert_eq!(source.geojson().len(), 1);
    assert_eq!(source.geojson().next().unwrap().1, zone);
    std::fs::remove_file(dir.path().join("z.geojson")).unwrap();
    assert!(Net::from_file(&path).is_err());
    let again = Net::from_source(&source).unwrap();
    assert_eq!(again.fingerprint(), net.fingerprint());
    assert_eq!(again.summary(), net.summary());
    // Another text for the file is another net.
    std::fs::write(dir.path().join("z.geojson"), zone.replace('4', "5")).unwrap();
    assert_ne!(
        Net::from_file(&path).unwrap().fingerprint(),
        net.fingerprint()
    );
}

/// A net of a megabyte or more is indexed beside its parse: loaded from a file (with a
/// byte-order mark or without) or from text, it is the same net, keeps the same text,
/// and places a problem at its line and column.
#[test]
fn a_large_net_is_the_same_net_whichever_way_it_is_loaded() {
    let mut src = String::from("Net(\n  zones: {\n");
    for i in 0..20_000 {
        src.push_str(&format!(
            "    \"z{i}\": Circle(center: ({}.5, {}.25), radius: 0.125),\n",
            i % 200,
            i / 200
        ));
    }
    src.push_str("  },\n  events: { \"a\": Atomic(type: \"A\"), \"in\": Within(of: \"a\", zones: [\"z7\"]) },\n  outputs: [\"in\"],\n)\n");
    assert!(src.len() >= 1 << 20, "{} bytes", src.len());
    let dir = tempfile::tempdir().unwrap();
    let (plain, marked) = (dir.path().join("plain.ron"), dir.path().join("marked.ron"));
    std::fs::write(&plain, &src).unwrap();
    std::fs::write(&marked, format!("\u{feff}{src}")).unwrap();
    let nets = [
        Net::from_file(&plain).unwrap(),
        Net::from_file(&marked).unwrap(),
        Net::from_ron("n.ron", &src).unwrap(),
        Net::from_ron("n.ron", &format!("\u{feff}{src}")).unwrap(),
    ];
    for net in &nets {
        assert_eq!(net.fingerprint(), nets[0].fingerprint());
        assert_eq!(net.source().text(), src);
        let again = Net::from_source(net.source()).unwrap();
        assert_eq!(again.fingerprint(), net.fingerprint());
    }
    // A bad radius on the last zone's line, past a byte-order mark.
    let bad = src.replace(
        "\"z19999\": Circle(center: (199.5, 99.25), radius: 0.125)",
        "\"z19999\": Circle(center: (199.5, 99.25), radius: -1.0)",
    );
    assert_ne!(bad, src);
    std::fs::write(&marked, format!("\u{feff}{bad}")).unwrap();
    match Net::from_file(&marked) {
        Err(NetError::Invalid { problems }) => {
            let p = &problems[0];
            assert!(p.message.contains("radius"), "{problems:?}");
            assert_eq!((p.line, p.col), (20_002, 5), "{problems:?}");
        }
        other => panic!("{other:?}"),
    }
}

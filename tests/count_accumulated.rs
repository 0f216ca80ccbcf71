//! The counting rule over accumulated data (the note's first objective): running
//! `ccpn-run` over a CSV of `id,time,lon,lat` returns every matching set of the data,
//! the same sets a brute-force enumeration finds from the definition.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use geo::{Distance, Geodesic, Point};

struct Incident {
    id: i64,
    time: f64,
    at: Point<f64>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn incidents() -> Vec<Incident> {
    let text = std::fs::read_to_string(root().join("examples/incidents.csv")).expect("csv");
    text.lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            Incident {
                id: c[0].parse().expect("id"),
                time: c[1].parse().expect("time"),
                at: Point::new(c[2].parse().expect("lon"), c[3].parse().expect("lat")),
            }
        })
        .collect()
}

/// Every set of `n` incidents pairwise strictly closer than `d` metres whose times
/// span at most `w` seconds: cliques of the "close" graph, grown in input order.
fn brute_force(all: &[Incident], n: usize, d: f64, w: f64) -> BTreeSet<Vec<i64>> {
    let close = |a: &Incident, b: &Incident| {
        (a.time - b.time).abs() <= w && Geodesic.distance(a.at, b.at) < d
    };
    let mut found = BTreeSet::new();
    fn grow(
        all: &[Incident],
        set: &mut Vec<usize>,
        from: usize,
        n: usize,
        w: f64,
        close: &dyn Fn(&Incident, &Incident) -> bool,
        found: &mut BTreeSet<Vec<i64>>,
    ) {
        if set.len() == n {
            let span = set.iter().map(|&i| all[i].time).fold(f64::MIN, f64::max)
                - set.iter().map(|&i| all[i].time).fold(f64::MAX, f64::min);
            if span <= w {
                found.insert(set.iter().map(|&i| all[i].id).collect());
            }
            return;
        }
        for j in from..all.len() {
            if set.iter().all(|&i| close(&all[i], &all[j])) {
                set.push(j);
                grow(all, set, j + 1, n, w, close, found);
                set.pop();
            }
        }
    }
    grow(all, &mut Vec::new(), 0, n, w, &close, &mut found);
    found
}

#[test]
fn accumulated_csv_run_finds_exactly_the_brute_force_sets() {
    let out = Command::new(env!("CARGO_BIN_EXE_ccpn-run"))
        .args([
            root().join("nets/hotspots.ron"),
            root().join("examples/incidents.csv"),
        ])
        .output()
        .expect("run ccpn-run");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got: [BTreeSet<Vec<i64>>; 2] = Default::default();
    for line in String::from_utf8(out.stdout).expect("utf-8").lines() {
        let v: serde_json::Value = serde_json::from_str(line).expect("json");
        let ids: Vec<i64> = v["ids"]
            .as_array()
            .expect("ids")
            .iter()
            .map(|x| x.as_i64().expect("int"))
            .collect();
        let slot = if v["event"] == "hotspot" { 0 } else { 1 };
        assert!(got[slot].insert(ids), "a set reported twice: {line}");
    }
    let all = incidents();
    let hotspots = brute_force(&all, 3, 500.0, 3600.0);
    let clusters = brute_force(&all, 5, 800.0, 7200.0);
    assert!(!hotspots.is_empty() && !clusters.is_empty());
    assert_eq!(got[0], hotspots, "hotspot sets");
    assert_eq!(got[1], clusters, "cluster sets");
}

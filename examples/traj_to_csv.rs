//! Converts Tracktable trajectory files (`.traj`, as shipped by the `tracktable-data`
//! package: the December 2020 week of New York Harbor, the US coastal day) into one
//! CSV of position reports in the MarineCadastre layout that `nets/maritime.ron` reads,
//! sorted by time:
//!
//! ```text
//! cargo run --release --example traj_to_csv -- NYHarbor_2020_12_first_week.traj > week.csv
//! ```
//!
//! A `.traj` line is one trajectory: `*T*`, its uuid, its domain, the number of
//! points, the number of trajectory properties (then the properties: a name, a type
//! code and a value each), `*P*`, the points' domain, their coordinate count, and
//! three numbers describing the point properties, followed by the points as
//! `object id, time, lon, lat` (plus point properties, none in these files). The
//! output has the columns `BaseDateTime,LON,LAT,MMSI`: the files carry positions only,
//! no speed or course, so only the net's position-based situations (going dark,
//! areas) can fire on them.

use std::error::Error;
use std::io::{self, BufRead, BufWriter, Write};

/// One position report.
struct Report {
    /// `YYYY-MM-DDTHH:MM:SS`, which sorts as the time does.
    time: String,
    lon: String,
    lat: String,
    mmsi: String,
}

fn main() -> Result<(), Box<dyn Error>> {
    let paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        return Err("usage: traj_to_csv FILE.traj... > reports.csv".into());
    }
    let mut reports = Vec::new();
    for path in &paths {
        let file = std::fs::File::open(path).map_err(|e| format!("{path}: {e}"))?;
        for (n, line) in io::BufReader::new(file).lines().enumerate() {
            let line = line.map_err(|e| format!("{path}: {e}"))?;
            if line.trim().is_empty() {
                continue;
            }
            trajectory(&line, &mut reports).map_err(|e| format!("{path}:{}: {e}", n + 1))?;
        }
    }
    // Stable: reports of one second keep their file order.
    reports.sort_by(|a, b| a.time.cmp(&b.time));
    let mut out = BufWriter::new(io::stdout().lock());
    writeln!(out, "BaseDateTime,LON,LAT,MMSI")?;
    for r in &reports {
        writeln!(out, "{},{},{},{}", r.time, r.lon, r.lat, r.mmsi)?;
    }
    out.flush()?;
    eprintln!("{} reports from {} file(s)", reports.len(), paths.len());
    Ok(())
}

/// Appends the points of one trajectory line to `out`.
fn trajectory(line: &str, out: &mut Vec<Report>) -> Result<(), String> {
    let f: Vec<&str> = line.split(',').map(str::trim).collect();
    let field = |i: usize| f.get(i).copied().ok_or("line ends early");
    if field(0)? != "*T*" {
        return Err(format!("expected `*T*`, found `{}`", field(0)?));
    }
    let points: usize = field(3)?.parse().map_err(|_| "bad point count")?;
    let props: usize = field(4)?.parse().map_err(|_| "bad property count")?;
    // Trajectory properties are name, type, value triples.
    let p = 5 + 3 * props;
    if field(p)? != "*P*" {
        return Err(format!(
            "expected `*P*` after the properties, found `{}`",
            field(p)?
        ));
    }
    let first = p + 6;
    let per_point = 4;
    // Files with point properties would have more fields per point: refuse them
    // rather than misread them.
    if f.len() != first + points * per_point {
        return Err(format!(
            "{points} points of {per_point} fields announced, but the line has {} fields after the header",
            f.len() - first.min(f.len())
        ));
    }
    for k in 0..points {
        let at = first + k * per_point;
        out.push(Report {
            mmsi: f[at].to_owned(),
            time: f[at + 1].replacen(' ', "T", 1),
            lon: f[at + 2].to_owned(),
            lat: f[at + 3].to_owned(),
        });
    }
    Ok(())
}

//! Reloading the net while the run goes on: a small thread polls, every 500 ms,
//! the net file and the GeoJSON files it names (`--watch`) and whether SIGHUP came;
//! it loads the net anew and sends it through the reader's channel, so that the
//! detector changes nets between two events. A net that does not load is refused
//! with its errors, and the running net goes on.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use ccpn::{Detector, Net};

use super::detect::Tally;
use super::reader::ToDetector;

/// How often the files and the signal are looked at.
const POLL: Duration = Duration::from_millis(500);

/// Starts the thread that reloads `net` on SIGHUP and, with `watch`, when it or a
/// GeoJSON file it names changes. It ends when `done` is closed (the reader is
/// done) or the detector has gone.
pub(super) fn spawn(
    net: &Path,
    watch: bool,
    tx: Sender<ToDetector>,
    done: Receiver<()>,
) -> io::Result<JoinHandle<()>> {
    let hup = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, Arc::clone(&hup))?;
    let net = net.to_owned();
    thread::Builder::new().name("reload".into()).spawn(move || {
        // (Without `--watch` only SIGHUP reloads: the files are not read.)
        let mut seen = if watch { stamps(&net) } else { Vec::new() };
        loop {
            match done.recv_timeout(POLL) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            let asked = hup.swap(false, Ordering::Relaxed);
            let now = if watch { stamps(&net) } else { Vec::new() };
            let edited = watch && now != seen;
            if !asked && !edited {
                continue;
            }
            seen = if watch { now } else { seen };
            match Net::from_file(&net) {
                Ok(new) => {
                    for w in new.warnings() {
                        crate::say::warning(w);
                    }
                    if tx.send(ToDetector::Reload(Box::new(new))).is_err() {
                        return;
                    }
                }
                Err(e) => crate::say::error(format_args!(
                    "{}: reload refused, the running net goes on:\n  {}",
                    net.display(),
                    e.to_string().replace('\n', "\n  ")
                )),
            }
        }
    })
}

/// The detector goes on with `net`; the tally follows the outputs by name. `false`
/// if the detector refused it (said on stderr): the running net goes on.
pub(super) fn apply(
    detector: &mut Detector,
    tally: &mut Tally,
    outputs: &mut Vec<String>,
    net: &Net,
) -> bool {
    match detector.reload(net) {
        Ok(report) => {
            let new: Vec<String> = net.outputs().map(str::to_owned).collect();
            tally.per_output = new
                .iter()
                .map(|o| {
                    outputs
                        .iter()
                        .position(|old| old == o)
                        .map_or(0, |i| tally.per_output[i])
                })
                .collect();
            tally.index.clear();
            tally.reloads += 1;
            tally.source = net.source().clone();
            *outputs = new;
            crate::say::note(format_args!("net reloaded: {report}"));
            true
        }
        Err(e) => {
            crate::say::error(format_args!("reload refused, the running net goes on: {e}"));
            false
        }
    }
}

/// The modification time and length of the net file and of each GeoJSON file it
/// names (`None` for a file that cannot be read now).
fn stamps(net: &Path) -> Vec<(PathBuf, Option<(SystemTime, u64)>)> {
    let mut files = vec![net.to_owned()];
    if let Ok(text) = std::fs::read_to_string(net) {
        let base = net.parent().unwrap_or(Path::new(""));
        files.extend(geojson_paths(&text).into_iter().map(|p| base.join(p)));
    }
    files
        .into_iter()
        .map(|f| {
            let stamp = std::fs::metadata(&f)
                .and_then(|m| Ok((m.modified()?, m.len())))
                .ok();
            (f, stamp)
        })
        .collect()
}

/// The `path:` of every `GeoJson(…)` zone in a net's text (a plain scan: a path
/// the scan misses is only not watched).
fn geojson_paths(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("GeoJson(") {
        rest = &rest[at + "GeoJson(".len()..];
        let entry = &rest[..rest.find(')').unwrap_or(rest.len())];
        let Some(p) = entry.find("path") else {
            continue;
        };
        let after = &entry[p + 4..];
        let Some(open) = after.find('"') else {
            continue;
        };
        let lit = &after[open + 1..];
        if let Some(close) = lit.find('"') {
            out.push(lit[..close].to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn finds_geojson_paths() {
        let text = r#"zones: { "a": GeoJson(path: "zones/a.geojson", name: "x"),
            "b": Rect(min: (0.0, 0.0), max: (1.0, 1.0)), "c": GeoJson( path : "c.json") }"#;
        assert_eq!(super::geojson_paths(text), ["zones/a.geojson", "c.json"]);
    }
}

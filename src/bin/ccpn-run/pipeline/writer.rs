//! The writer thread: detections on stdout, as JSON Lines or one GeoJSON
//! FeatureCollection, and each checkpoint once the detections before it are out.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::Receiver;

use ccpn::io::write::{GeoJson, JsonLines};
use ccpn::Detection;

use crate::args::OutputArg;
use crate::checkpoint::write_atomically;

/// What the detector sends the writer.
pub(super) enum ToWriter {
    Detections(Vec<Detection>),
    /// A checkpoint to write once every detection before it is written.
    Checkpoint(Vec<u8>),
}

/// Writes detections on stdout, as JSON Lines or as a GeoJSON FeatureCollection, and
/// each checkpoint once the detections before it are out.
pub(super) fn write_detections(
    rx: Receiver<ToWriter>,
    space: ccpn::Space,
    output: OutputArg,
    checkpoint: Option<PathBuf>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let lines = JsonLines::new(space);
    let mut geo = GeoJson::new();
    let result = (|| {
        for msg in rx.iter() {
            match msg {
                ToWriter::Detections(batch) => {
                    for d in &batch {
                        match output {
                            OutputArg::Jsonl => lines.write(&mut out, d)?,
                            OutputArg::Geojson => geo.write(&mut out, d)?,
                        }
                    }
                    // Nothing more to write for now: a live consumer sees the
                    // detections when they are made.
                    if rx.is_empty() {
                        out.flush()?;
                    }
                }
                ToWriter::Checkpoint(bytes) => {
                    out.flush()?;
                    let path = checkpoint.as_deref().expect("checkpoints only with a path");
                    if let Err(e) = write_atomically(path, &bytes) {
                        let failed = crate::checkpoint::FAILED.fetch_add(1, Ordering::Relaxed);
                        if failed == 0 {
                            crate::say::error(format_args!(
                                "cannot write checkpoint {}: {e}; the run goes on without \
                                 checkpoints (the last one written, if any, stays) and will \
                                 end with exit status 5",
                                path.display()
                            ));
                        }
                    }
                }
            }
        }
        if output == OutputArg::Geojson {
            geo.finish(&mut out)?;
        }
        out.flush()
    })();
    if result.is_err() {
        stop.store(true, Ordering::Relaxed);
        // Keep draining so the detector never blocks on a dead writer.
        for _ in rx.iter() {}
    }
    result
}

//! The writer thread: detections on stdout, as JSON Lines or one GeoJSON
//! FeatureCollection, and each checkpoint once the detections before it are out.

use std::io::{self, BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};

use crossbeam_channel::Receiver;

use ccpn::io::write::{GeoJson, JsonLines};
use ccpn::Detection;

use super::spare::Spares;
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
    spares: &Spares<Detection>,
    space: ccpn::Space,
    output: OutputArg,
    checkpoint: Option<PathBuf>,
    stop: &AtomicBool,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let lines = JsonLines::new(space);
    let mut geo = GeoJson::new();
    // A batch's lines, formatted here and written at once.
    let mut text = Vec::with_capacity(1 << 16);
    let result = (|| {
        for msg in rx.iter() {
            match msg {
                ToWriter::Detections(batch) => {
                    match output {
                        OutputArg::Jsonl => {
                            text.clear();
                            for d in &batch {
                                lines.append(&mut text, d);
                            }
                            out.write_all(&text)?;
                        }
                        OutputArg::Geojson => {
                            for d in &batch {
                                geo.write(&mut out, d)?;
                            }
                        }
                    }
                    spares.give(batch);
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

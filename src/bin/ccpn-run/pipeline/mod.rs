//! The run: a reader thread (parse, reorder, report bad and late lines), the detector
//! on the main thread, and a writer thread, joined by bounded crossbeam channels that
//! carry batches.
//!
//! `reader.rs` holds the reader thread, `report.rs` what is said on stderr (bad and
//! late lines, the limits' warnings, `--stats`), `detect.rs` the detector's loop,
//! `writer.rs` the writer thread; this file starts and joins them, and resumes from a
//! checkpoint.

mod chunks;
mod detect;
mod progress;
mod reader;
mod reload;
mod report;
mod spare;
mod writer;

use std::io;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Instant;

use crossbeam_channel::bounded;

use ccpn::{Detector, DetectorOptions, Net};

use crate::args::Args;
use crate::checkpoint::{Checkpoint, Position};
use detect::{detect, Tally};
use writer::{write_detections, ToWriter};

pub(crate) use reader::{open_input, read_events, ReadCounts, ReaderConfig, ToDetector};
pub(crate) use report::{exit_status, say_unusable, warn_limits, LateFile};

/// Events (or detections) per channel message.
const BATCH: usize = 1024;
/// Messages in flight per channel. Few: the reader parses faster than the detector
/// detects, so the queue stays full, and an event waits `DEPTH` batches before it is
/// pushed. With 4 (about 1 MB of events) it is still in cache when it is; with 64 it
/// was not, and end to end ran 10-20 % slower (docs/performance.md).
const DEPTH: usize = 4;

/// Runs the net over the input; returns the exit status.
pub(crate) fn run(args: &Args, net: Net) -> io::Result<ExitCode> {
    let started = Instant::now();
    crate::interrupt::install()?;
    let mut outputs: Vec<String> = net.outputs().map(str::to_owned).collect();
    let options = DetectorOptions {
        max_tokens: args.max_tokens,
        max_sets: args.max_sets,
        zone_index: !args.no_zone_index,
    };
    let (mut detector, mut tally, resume) = match start_or_resume(args, &net, &outputs, options) {
        Ok(start) => start,
        Err(refused) => return Ok(refused),
    };
    let processed_before = detector.stats().processed;
    if detector.options() != options {
        report::resumed_limits(detector.options());
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (ev_tx, ev_rx) = bounded::<ToDetector>(DEPTH);
    let (ev_spares, ev_fresh) = spare::pool(DEPTH + 2, BATCH);
    let (det_tx, det_rx) = bounded::<ToWriter>(DEPTH);
    // Room for every vector in flight: the channel's, the writer's and the detector's.
    let (det_spares, det_fresh) = spare::pool(DEPTH + 2, detect::FLUSH_DETECTIONS);
    let live = Arc::new(progress::Live::default());
    // The reload thread ends when the reader does (it closes `done`).
    let (done, reader_done) = bounded::<()>(0);
    let reloader = reload::spawn(&args.net, args.watch, ev_tx.clone(), reader_done)?;
    let reader = {
        let input = open_input(args)?;
        let late_file = open_late_file(args, resume.is_some())?;
        let mut cfg = ReaderConfig::new(args, &net);
        cfg.live = Arc::clone(&live);
        cfg.batches = ev_fresh;
        let stop = stop.clone();
        thread::Builder::new()
            .name("reader".into())
            .spawn(move || {
                let read = read_events(input, cfg, late_file, ev_tx, &stop, resume);
                drop(done);
                read
            })?
    };
    let writer = {
        let stop = stop.clone();
        let (space, output, checkpoint) = (net.space(), args.output, args.checkpoint.clone());
        thread::Builder::new()
            .name("writer".into())
            .spawn(move || {
                write_detections(det_rx, &det_spares, space, output, checkpoint, &stop)
            })?
    };
    let mut feedback = progress::Feedback::new(&live, args.stats_every, !args.quiet);
    detect(
        &mut detector,
        &mut tally,
        &mut outputs,
        (ev_rx, &ev_spares),
        (det_tx, &det_fresh),
        &stop,
        &mut feedback,
    );
    let counts = join(reader, "reader")??;
    join(reloader, "reload")?;
    if let Err(e) = join(writer, "writer")? {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(cannot_write(e));
        }
    }
    let stats = detector.stats();
    let limits = detector.options();
    warn_limits(
        stats.truncated_firings,
        stats.refused_sets,
        stats.evicted,
        &format!("--max-sets {}", limits.max_sets),
        &format!("--max-tokens {}", limits.max_tokens),
    );
    report::say_unusable(&counts);
    if let Some((sig, line)) = counts.interrupted {
        report::interrupted(sig, line, &counts, args.checkpoint.as_deref());
    }
    if args.stats {
        report::print_stats(&report::Summary {
            counts: &counts,
            stats: &stats,
            outputs: &outputs,
            tally: &tally,
            processed_before,
            elapsed: started.elapsed().as_secs_f64(),
        });
    }
    Ok(report::exit_status(&counts))
}

/// The detector, its tally and the input position to resume from: restored from
/// `--resume`'s checkpoint, or new. `Err` is the exit status of a checkpoint that
/// cannot be resumed from, already reported.
fn start_or_resume(
    args: &Args,
    net: &Net,
    outputs: &[String],
    options: DetectorOptions,
) -> Result<(Detector, Tally, Option<Position>), ExitCode> {
    let resumed = match &args.resume {
        Some(path) => match Checkpoint::read(path) {
            Ok(Some(c)) => Some(c),
            Ok(None) => {
                crate::say::note(format_args!(
                    "no checkpoint at {}: starting from the first line",
                    path.display()
                ));
                None
            }
            Err(e) => return Err(report::refuse(&e)),
        },
        None => None,
    };
    let Some(c) = resumed else {
        return Ok((
            Detector::with_options(net, options),
            Tally {
                per_output: vec![0; outputs.len()],
                late: 0,
                index: detect::OutputIndex::default(),
                reloads: 0,
                source: net.source().clone(),
            },
            None,
        ));
    };
    // The checkpoint's detector is of the net in force when it was written, which it
    // keeps: a net reloaded since the run started, or one whose files have changed
    // since. (A reload that laid a net out like the one before it leaves snapshots
    // of that layout, which only the net file itself may restore.)
    let recorded = match Net::from_source(&c.net) {
        Ok(n) => n,
        Err(e) => return Err(report::refuse(&format!("checkpoint: its net: {e}"))),
    };
    let (mut d, restored_with) = match Detector::restore(&recorded, &c.detector) {
        Ok(d) => (d, recorded),
        Err(e) => match Detector::restore(net, &c.detector) {
            Ok(d) => (d, net.clone()),
            Err(_) => return Err(report::refuse(&format!("checkpoint: {e}"))),
        },
    };
    let restored_outputs: Vec<String> = restored_with.outputs().map(str::to_owned).collect();
    if c.per_output.len() != restored_outputs.len() {
        return Err(report::refuse("checkpoint: its outputs are not its net's"));
    }
    crate::say::note(format_args!(
        "resuming from checkpoint {}: lines 1 to {} were consumed; the next detection is seq {}",
        args.resume
            .as_deref()
            .unwrap_or(std::path::Path::new(""))
            .display(),
        c.position.line,
        d.stats().detections
    ));
    let mut tally = Tally {
        per_output: c.per_output,
        late: c.late_in_detector,
        index: detect::OutputIndex::default(),
        reloads: 0,
        source: restored_with.source().clone(),
    };
    if restored_with.fingerprint() != net.fingerprint() {
        crate::say::note(format_args!(
            "the checkpoint's net is not {} as it is now: going on with {0}, \
             as if it had been reloaded",
            args.net.display()
        ));
        let mut now_outputs = restored_outputs;
        if !reload::apply(&mut d, &mut tally, &mut now_outputs, net) {
            // The run cannot go on with the net asked for.
            return Err(report::refuse(&format!(
                "checkpoint: its net cannot be changed to {}",
                args.net.display()
            )));
        }
    }
    Ok((d, tally, Some(c.position)))
}

/// The `--late` file, if asked for: a resumed run adds to the late lines of the run
/// it continues.
pub(crate) fn open_late_file(args: &Args, resumed: bool) -> io::Result<Option<LateFile>> {
    args.late
        .as_deref()
        .map(|p| LateFile::open(p, resumed))
        .transpose()
}

/// A failure to write the detections, `e`, saying so (a checkpoint's own failure
/// names its file already).
pub(crate) fn cannot_write(e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("cannot write the detections to standard output: {e}"),
    )
}

/// What thread `name` returned.
fn join<T>(handle: JoinHandle<T>, name: &str) -> io::Result<T> {
    handle
        .join()
        .map_err(|_| io::Error::other(format!("{name} thread panicked")))
}

//! The run: a reader thread (parse, reorder, report bad and late lines), the detector
//! on the main thread, and a writer thread, joined by bounded crossbeam channels that
//! carry batches.

use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Instant;

use crossbeam_channel::{bounded, Receiver, Sender};

use ccpn::io::read::{is_blank, Format, LineParser, Lines};
use ccpn::io::reorder::Reorder;
use ccpn::io::write::{GeoJson, JsonLines};
use ccpn::{Detection, Detector, DetectorOptions, Event, Net};

use crate::args::{Args, FormatArg, OutputArg};

/// Events (or detections) per channel message.
const BATCH: usize = 1024;
/// Messages in flight per channel.
const DEPTH: usize = 64;

/// What the reader counted.
#[derive(Default)]
struct ReadCounts {
    read: u64,
    rejected: u64,
    late: u64,
    /// Set when `--strict` stopped the run.
    stopped: bool,
}

/// Runs the net over the input; returns the exit status.
pub(crate) fn run(args: &Args, net: Net) -> io::Result<ExitCode> {
    let started = Instant::now();
    let input: Box<dyn BufRead + Send> = match &args.events {
        Some(p) if p.as_os_str() != "-" => {
            Box::new(BufReader::with_capacity(1 << 16, File::open(p)?))
        }
        _ => Box::new(BufReader::with_capacity(1 << 16, io::stdin())),
    };
    let late_file = match &args.late {
        Some(p) => Some(BufWriter::new(File::create(p)?)),
        None => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    let (ev_tx, ev_rx) = bounded::<Vec<Event>>(DEPTH);
    let (det_tx, det_rx) = bounded::<Vec<Detection>>(DEPTH);

    let space = net.space();
    let reader = {
        let stop = stop.clone();
        let names: Vec<String> = net.names_read().into_iter().map(str::to_owned).collect();
        let cfg = ReaderConfig {
            names,
            format: args.format,
            space,
            max_delay: args.max_delay,
            strict: args.strict,
            max_line_bytes: args.max_line_bytes,
        };
        thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_events(input, cfg, late_file, ev_tx, &stop))?
    };
    let writer = {
        let stop = stop.clone();
        let output = args.output;
        thread::Builder::new()
            .name("writer".into())
            .spawn(move || write_detections(det_rx, space, output, &stop))?
    };

    let mut detector = Detector::with_options(
        &net,
        DetectorOptions {
            max_tokens: args.max_tokens,
            max_sets: args.max_sets,
            zone_index: !args.no_zone_index,
        },
    );
    let outputs: Vec<String> = net.outputs().map(str::to_owned).collect();
    let mut per_output = vec![0u64; outputs.len()];
    let mut late_in_detector = 0u64;
    let mut warned_evictions = false;
    let count = |per_output: &mut [u64], batch: &[Detection]| {
        for d in batch {
            if let Some(i) = outputs.iter().position(|o| **o == *d.event) {
                per_output[i] += 1;
            }
        }
    };
    for batch in ev_rx.iter() {
        let mut found = Vec::new();
        for ev in batch {
            if detector.push_into(ev, &mut found).is_err() {
                late_in_detector += 1;
            }
        }
        if !warned_evictions && detector.stats().evicted > 0 {
            warned_evictions = true;
            eprintln!("ccpn-run: warning: --max-tokens {} reached: the oldest waiting tokens are being evicted", args.max_tokens);
        }
        if !found.is_empty() {
            count(&mut per_output, &found);
            if det_tx.send(found).is_err() {
                stop.store(true, Ordering::Relaxed);
                break;
            }
        }
    }
    drop(ev_rx);
    let last = detector.finish();
    count(&mut per_output, &last);
    if !last.is_empty() {
        let _ = det_tx.send(last);
    }
    drop(det_tx);
    let counts = reader
        .join()
        .map_err(|_| io::Error::other("reader thread panicked"))??;
    let written = writer
        .join()
        .map_err(|_| io::Error::other("writer thread panicked"))?;
    if let Err(e) = written {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(e);
        }
    }
    let stats = detector.stats();
    if stats.truncated_firings > 0 {
        eprintln!(
            "ccpn-run: warning: {} firings of Any (Unrestricted or Continuous) not made: more than 100,000 sets for one occurrence",
            stats.truncated_firings
        );
    }
    if stats.refused_sets > 0 {
        eprintln!(
            "ccpn-run: warning: {} partial counting sets refused by --max-sets {}: matches growing from them were missed",
            stats.refused_sets, args.max_sets
        );
    }
    if stats.evicted > 0 {
        eprintln!(
            "ccpn-run: warning: {} tokens evicted by --max-tokens {}",
            stats.evicted, args.max_tokens
        );
    }
    if args.stats {
        let elapsed = started.elapsed().as_secs_f64();
        let by_output: serde_json::Map<String, serde_json::Value> = outputs
            .iter()
            .zip(&per_output)
            .map(|(o, n)| (o.clone(), (*n).into()))
            .collect();
        let summary = serde_json::json!({
            "read": counts.read,
            "processed": stats.processed,
            "rejected": counts.rejected,
            "late": counts.late + late_in_detector,
            "detections": stats.detections,
            "by_output": by_output,
            "events_per_s": if elapsed > 0.0 { (stats.processed as f64 / elapsed).round() } else { 0.0 },
            "elapsed_s": elapsed,
            "live_tokens": stats.live_tokens,
            "peak_live_tokens": stats.peak_live_tokens,
            "evicted": stats.evicted,
            "live_sets": stats.live_sets,
            "refused_sets": stats.refused_sets,
            "truncated_firings": stats.truncated_firings,
        });
        eprintln!("{summary}");
    }
    Ok(if counts.stopped {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

struct ReaderConfig {
    /// Attribute names and types the net reads: events share one copy of each.
    names: Vec<String>,
    format: FormatArg,
    space: ccpn::Space,
    max_delay: i64,
    strict: bool,
    max_line_bytes: usize,
}

/// Reads, parses and reorders lines; reports bad and late ones on stderr.
fn read_events(
    input: Box<dyn BufRead + Send>,
    cfg: ReaderConfig,
    mut late_file: Option<BufWriter<File>>,
    tx: Sender<Vec<Event>>,
    stop: &AtomicBool,
) -> io::Result<ReadCounts> {
    let mut lines = Lines::new(input, cfg.max_line_bytes);
    let mut counts = ReadCounts::default();
    let mut parser: Option<LineParser> = match cfg.format {
        FormatArg::Jsonl => {
            Some(LineParser::json(cfg.space).with_known_names(cfg.names.iter().map(String::as_str)))
        }
        _ => None,
    };
    let mut reorder: Reorder<Event> = Reorder::new(cfg.max_delay);
    let mut batch = Vec::with_capacity(BATCH);
    // Not a held lock: the detector thread writes warnings to stderr too, and must
    // never wait on this thread while this thread waits on it.
    let mut err = BufWriter::new(io::stderr());
    let flush = |batch: &mut Vec<Event>| -> bool {
        if batch.is_empty() {
            return true;
        }
        tx.send(std::mem::replace(batch, Vec::with_capacity(BATCH)))
            .is_ok()
    };
    while let Some(next) = lines.next_line() {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let (no, line) = next?;
        let line = match line {
            Ok(l) if is_blank(l) => continue,
            Ok(l) => l,
            Err(e) => {
                counts.read += 1;
                counts.rejected += 1;
                writeln!(err, "ccpn-run: line {no}: rejected: {e}")?;
                if cfg.strict {
                    counts.stopped = true;
                    break;
                }
                continue;
            }
        };
        let p = match &parser {
            Some(p) => p,
            None => {
                let format = match cfg.format {
                    FormatArg::Csv => Format::Csv,
                    FormatArg::Jsonl => Format::JsonLines,
                    FormatArg::Auto => Format::detect(line),
                };
                if format == Format::Csv {
                    match LineParser::csv(line, cfg.space) {
                        Ok(p) => {
                            parser = Some(p.with_known_names(cfg.names.iter().map(String::as_str)))
                        }
                        Err(e) => {
                            // Neither an event nor a usable header: the line is rejected
                            // and the next one is tried as the start of the input.
                            counts.read += 1;
                            counts.rejected += 1;
                            writeln!(err, "ccpn-run: line {no}: rejected: not a JSON event nor a CSV header: {e}")?;
                            if cfg.strict {
                                counts.stopped = true;
                                break;
                            }
                        }
                    }
                    continue;
                }
                parser.insert(
                    LineParser::json(cfg.space)
                        .with_known_names(cfg.names.iter().map(String::as_str)),
                )
            }
        };
        counts.read += 1;
        match p.parse(line) {
            Ok(ev) => match reorder.offer(ev.time, no, ev) {
                Ok(now) => {
                    match now {
                        Some((_, _, ev)) => batch.push(ev),
                        None => {
                            while let Some((_, _, ev)) = reorder.pop_ready() {
                                batch.push(ev);
                            }
                        }
                    }
                    if batch.len() >= BATCH && !flush(&mut batch) {
                        break;
                    }
                }
                Err(late) => {
                    counts.late += 1;
                    writeln!(err, "ccpn-run: line {no}: {late}")?;
                    if let Some(f) = late_file.as_mut() {
                        f.write_all(line)?;
                        f.write_all(b"\n")?;
                    }
                    if cfg.strict {
                        counts.stopped = true;
                        break;
                    }
                }
            },
            Err(e) => {
                counts.rejected += 1;
                writeln!(err, "ccpn-run: line {no}: rejected: {e}")?;
                if cfg.strict {
                    counts.stopped = true;
                    break;
                }
            }
        }
    }
    if !counts.stopped {
        while let Some((_, _, ev)) = reorder.pop_any() {
            batch.push(ev);
        }
    } else {
        // Lines held for reordering were read but not processed: count them as rejected.
        counts.rejected += reorder.len() as u64;
    }
    flush(&mut batch);
    err.flush()?;
    if let Some(mut f) = late_file {
        f.flush()?;
    }
    Ok(counts)
}

/// Writes detections on stdout, as JSON Lines or as a GeoJSON FeatureCollection.
fn write_detections(
    rx: Receiver<Vec<Detection>>,
    space: ccpn::Space,
    output: OutputArg,
    stop: &AtomicBool,
) -> io::Result<()> {
    let stdout = io::stdout();
    let mut out = BufWriter::with_capacity(1 << 16, stdout.lock());
    let lines = JsonLines::new(space);
    let mut geo = GeoJson::new();
    let result = (|| {
        for batch in rx.iter() {
            for d in &batch {
                match output {
                    OutputArg::Jsonl => lines.write(&mut out, d)?,
                    OutputArg::Geojson => geo.write(&mut out, d)?,
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

//! The run on Timely Dataflow: many workers, in one process or many.
//!
//! Process 0 reads, parses and reorders the input on a reader thread (so lateness
//! is decided in one place, whatever the number of workers), and its worker 0
//! routes each event to the partitions that must see it ([`Partitioner`]). The
//! events are exchanged to the workers that hold those partitions; each worker
//! keeps one [`ccpn::Detector`] per partition, pushes events into it in input order
//! and advances its time with the dataflow's frontier; each partition keeps only
//! the detections whose terminator it owns. The detections are exchanged to worker
//! 0, which writes them in time order and numbers them (or each worker writes its
//! own with `--output-dir`).
//!
//! Timely time is event time (microseconds): the reader's input advances with the
//! events it releases, after each batch, so the frontier is the reorder buffer's
//! watermark.

mod cluster;
mod detect;
mod wire;
mod write;

use std::collections::VecDeque;
use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, TryRecvError};
use timely::communication::allocator::AllocatorBuilder;
use timely::communication::Config as CommunicationConfig;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::{Exchange, Pipeline};
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::Probe;
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::WorkerConfig;

use ccpn::partition::Partitioner;
use ccpn::{DetectorOptions, Net};

use crate::args::Args;
use crate::pipeline::{open_input, read_events, warn_limits, ReadCounts, ReaderConfig, ToDetector};
use detect::{Detect, Tally};
use wire::{time_of, Found, Routed, Time};
use write::Writer;

/// Reader batches in flight in the dataflow before the feeder waits for them.
const IN_FLIGHT: usize = 16;

/// What every worker shares.
struct Shared {
    net: Arc<Net>,
    partitioner: Partitioner,
    options: DetectorOptions,
    outputs: Vec<String>,
    /// The event types the net reads; others are not sent to any partition.
    types: std::collections::HashSet<String>,
    output_dir: Option<std::path::PathBuf>,
    /// The reader's events, taken by the worker that feeds the dataflow.
    events: Mutex<Option<Receiver<ToDetector>>>,
    /// Set when the output is gone: the run winds down.
    stop: Arc<AtomicBool>,
}

/// What a worker did.
struct WorkerReport {
    tally: Tally,
    written: u64,
    per_output: Vec<u64>,
    fed: Fed,
    error: Option<io::Error>,
}

/// Runs the net on timely workers; returns the exit status.
pub(crate) fn run(args: &Args, net: Net) -> io::Result<ExitCode> {
    let started = Instant::now();
    fail_loudly();
    let partitioner = Partitioner::new(&net, args.partitions);
    let terms = cluster::Terms {
        net: &net,
        partitions: partitioner.partitions(),
        timeout: Duration::from_secs(args.connect_timeout),
        secret_file: args.cluster_secret_file.as_deref(),
    };
    let communication = match communication(args, &terms) {
        Ok(c) => c,
        Err(e) => {
            crate::say::error(&e);
            return Ok(e.status());
        }
    };
    let options = partitioner.partition_options(DetectorOptions {
        max_tokens: args.max_tokens,
        max_sets: args.max_sets,
        zone_index: !args.no_zone_index,
    });
    let stop = Arc::new(AtomicBool::new(false));
    let reads = args.process_index() == 0;
    if !reads && args.events.is_some() {
        crate::say::warning(format_args!(
            "process {} does not read events (process 0 does): the events file is not read",
            args.process_index()
        ));
    }
    let (reader, events) = if reads {
        let (tx, rx) = bounded::<ToDetector>(64);
        let cfg = ReaderConfig {
            checkpoint_every: 0,
            ..ReaderConfig::new(args, &net)
        };
        let input = open_input(args)?;
        let late_file = crate::pipeline::open_late_file(args, false)?;
        let stop = stop.clone();
        let handle = thread::Builder::new()
            .name("reader".into())
            .spawn(move || read_events(input, cfg, late_file, tx, &stop, None))?;
        (Some(handle), Some(rx))
    } else {
        (None, None)
    };
    let shared = Arc::new(Shared {
        outputs: net.outputs().map(str::to_owned).collect(),
        types: net.event_types().map(str::to_owned).collect(),
        net: Arc::new(net),
        partitioner,
        options,
        output_dir: args.output_dir.clone(),
        events: Mutex::new(events),
        stop: stop.clone(),
    });
    let (builders, others) = communication;
    let guards = {
        let shared = shared.clone();
        timely::execute::execute_from(builders, others, WorkerConfig::default(), move |worker| {
            work(worker, &shared)
        })
        .map_err(|e| io::Error::other(format!("cannot start the workers: {e}")))?
    };
    let mut tally = Tally::default();
    let mut written = 0;
    let mut fed = 0;
    let mut routed = 0;
    let mut per_output = vec![0u64; shared.outputs.len()];
    let mut error = None;
    for r in guards.join() {
        let r = r.map_err(|e| io::Error::other(format!("a worker failed: {e}")))?;
        tally.merge(&r.tally);
        written += r.written;
        fed += r.fed.events;
        routed += r.fed.routed;
        for (total, n) in per_output.iter_mut().zip(&r.per_output) {
            *total += n;
        }
        error = error.or(r.error);
    }
    let counts = match reader {
        Some(h) => h
            .join()
            .map_err(|_| io::Error::other("reader thread panicked"))??,
        None => ReadCounts::default(),
    };
    if let Some(e) = error {
        if e.kind() != io::ErrorKind::BrokenPipe {
            return Err(if args.output_dir.is_some() {
                e
            } else {
                crate::pipeline::cannot_write(e)
            });
        }
    }
    warn_limits(
        tally.truncated_firings,
        tally.refused_sets,
        tally.evicted,
        &format!("the partitions' shares of --max-sets {}", args.max_sets),
        &format!("the partitions' shares of --max-tokens {}", args.max_tokens),
    );
    crate::pipeline::say_unusable(&counts);
    if args.stats && reads {
        let elapsed = started.elapsed().as_secs_f64();
        let by_output: serde_json::Map<String, serde_json::Value> = shared
            .outputs
            .iter()
            .zip(&per_output)
            .map(|(o, n)| (o.clone(), (*n).into()))
            .collect();
        let processed = fed - tally.late;
        let summary = serde_json::json!({
            "read": counts.read,
            "processed": processed,
            "rejected": counts.rejected,
            "late": counts.late + tally.late,
            "unlocated": counts.unlocated,
            "detections": written,
            "by_output": by_output,
            "events_per_s": if elapsed > 0.0 { (processed as f64 / elapsed).round() } else { 0.0 },
            "elapsed_s": elapsed,
            "processes": args.processes,
            "workers": args.workers.unwrap_or(1) * args.processes,
            "plan": shared.partitioner.plan().to_string(),
            "partitions": tally.partitions,
            "copies_per_event": if fed > 0 { routed as f64 / fed as f64 } else { 0.0 },
            "live_tokens": tally.live_tokens,
            "peak_live_tokens": tally.peak_live_tokens,
            "evicted": tally.evicted,
            "refused_sets": tally.refused_sets,
            "truncated_firings": tally.truncated_firings,
        });
        eprintln!("{summary}");
    }
    Ok(crate::pipeline::exit_status(&counts))
}

/// Makes a failing worker or connection end the whole process at once, with one
/// line on stderr: a cluster that lost a process cannot finish its run (timely's
/// threads panic when a connection drops).
fn fail_loudly() {
    std::panic::set_hook(Box::new(|info| {
        let (thread, what) = crate::panic_report(info);
        eprintln!(
            "{}the run failed in thread {thread}: {what}. In a cluster, a process has probably died: \
             restart every process (the lines already written stand; a last line without a newline is incomplete)",
            crate::say::ERROR
        );
        std::process::exit(1);
    }));
}

/// Timely's allocators from `--workers`, `--processes`, `--process` and
/// `--hostfile` (connecting to the other processes of a cluster).
fn communication(
    args: &Args,
    terms: &cluster::Terms<'_>,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), cluster::StartError> {
    let threads = args.workers.unwrap_or(1) as usize;
    if args.processes <= 1 {
        let config = if threads > 1 {
            CommunicationConfig::Process(threads)
        } else {
            CommunicationConfig::Thread
        };
        return config
            .try_build()
            .map_err(|e| io::Error::other(format!("cannot start the workers: {e}")).into());
    }
    let processes = args.processes as usize;
    let Some(path) = &args.hostfile else {
        return Err(io::Error::other(
            "--processes needs --hostfile (-H): the processes' addresses",
        )
        .into());
    };
    let addresses = read_hostfile(path)?;
    if addresses.len() < processes {
        return Err(io::Error::other(format!(
            "{} names {} processes, not the {processes} of --processes",
            path.display(),
            addresses.len()
        ))
        .into());
    }
    cluster::allocators(
        &addresses[..processes],
        args.process_index() as usize,
        threads,
        terms,
    )
}

/// The `host:port` lines of a host file.
fn read_hostfile(path: &Path) -> io::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect())
}

/// One worker: builds the dataflow and runs it; the worker holding the reader's
/// events feeds them in.
fn work(worker: &mut timely::worker::Worker, sh: &Shared) -> WorkerReport {
    let index = worker.index();
    let peers = worker.peers();
    let feeds = if index == 0 {
        sh.events.lock().ok().and_then(|mut e| e.take())
    } else {
        None
    };
    let outputs = sh.outputs.len();
    let gather = sh.output_dir.is_none();
    let opened = match (&sh.output_dir, index) {
        (Some(dir), _) => Writer::file(dir, index, outputs),
        (None, 0) => Ok(Writer::stdout(outputs)),
        (None, _) => Ok(Writer::none(outputs)),
    };
    // A worker that cannot write stops the run (worker 0 then feeds no more).
    let (writer, writer_error) = match opened {
        Ok(w) => (w, None),
        Err(e) => {
            sh.stop.store(true, Ordering::Relaxed);
            (Writer::none(outputs), Some(e))
        }
    };
    let writer = std::rc::Rc::new(std::cell::RefCell::new(writer));
    let detect = std::rc::Rc::new(std::cell::RefCell::new(Detect::new(
        sh.net.clone(),
        sh.partitioner.clone(),
        sh.options,
    )));
    let mut input = InputHandle::<Time, CapacityContainerBuilder<Vec<Routed>>>::new();
    let probe = ProbeHandle::<Time>::new();
    {
        let detect = detect.clone();
        let writer = writer.clone();
        let stop = sh.stop.clone();
        worker.dataflow::<Time, _, _>(|scope| {
            // The input hands its buffers on to exchanges only when its time
            // moves; an operator's output does at the end of each activation, so
            // a quiet live input's last events still reach their partitions.
            let events = input.to_stream(scope).unary(Pipeline, "Hand on", |_, _| {
                |input, output| {
                    input.for_each(|cap, data| {
                        output.session(&cap).give_container(data);
                    });
                }
            });
            let found = events.unary_frontier(
                Exchange::new(move |r: &Routed| holder(r.partition, peers)),
                "Detect",
                |cap, _info| {
                    let mut cap = Some(cap);
                    let mut events: Vec<Routed> = Vec::new();
                    let mut out: Vec<(Time, Found)> = Vec::new();
                    move |(input, frontier), output| {
                        input.for_each(|_, data| events.append(data));
                        let mut d = detect.borrow_mut();
                        if !events.is_empty() {
                            d.push(&mut events, &mut out);
                        }
                        let now = frontier.frontier().iter().min().copied();
                        if let (Some(c), Some(f)) = (cap.as_ref(), now) {
                            if f > *c.time() {
                                d.advance(f, &mut out);
                            }
                        }
                        if let Some(c) = cap.as_mut() {
                            // One message at the earliest detection's time: each
                            // carries its own, which the writer orders by.
                            if let Some(t) = out.iter().map(|(t, _)| *t).min() {
                                let at = c.delayed(&t.max(*c.time()));
                                output
                                    .session(&at)
                                    .give_iterator(out.drain(..).map(|(_, f)| f));
                            }
                            match now {
                                Some(f) if f > *c.time() => c.downgrade(&f),
                                Some(_) => {}
                                None => cap = None,
                            }
                        }
                    }
                },
            );
            let pact_to_writer = move |_: &Found| 0u64;
            let found = if gather {
                found.unary(Exchange::new(pact_to_writer), "Gather", |_, _| {
                    |input, output| {
                        input.for_each(|cap, data| {
                            output.session(&cap).give_container(data);
                        });
                    }
                })
            } else {
                found
            };
            found
                .probe_with(&probe)
                .sink(Pipeline, "Write", move |(input, frontier)| {
                    let mut w = writer.borrow_mut();
                    input.for_each(|_, data| w.take(data.drain(..)));
                    w.write_ready(frontier.frontier().iter().min().copied());
                    if w.error.is_some() {
                        stop.store(true, Ordering::Relaxed);
                    }
                });
        });
    }
    let mut fed = Fed::default();
    if let (Some(rx), None) = (feeds, &writer_error) {
        fed = feed(worker, &mut input, &probe, &rx, sh);
    }
    drop(input);
    while worker.step_or_park(None) {}
    let tally = detect.borrow().tally();
    let mut w = writer.borrow_mut();
    WorkerReport {
        tally,
        written: w.written(),
        per_output: std::mem::take(&mut w.per_output),
        fed,
        error: writer_error.or_else(|| w.error.take()),
    }
}

/// The worker that holds partition `p` of a run on `peers` workers: partitions go
/// round the workers from worker 1, so that a net that is not split runs beside
/// worker 0, which feeds the input and gathers the output.
fn holder(p: u32, peers: usize) -> u64 {
    (u64::from(p) + 1) % (peers.max(1) as u64)
}

/// What the feeder sent.
#[derive(Clone, Copy, Default)]
struct Fed {
    /// Events taken from the reader.
    events: u64,
    /// Copies sent to partitions (events of types the net does not read go nowhere).
    routed: u64,
}

/// Feeds the reader's events into the dataflow, routed to their partitions, and
/// advances the input's time after each batch. Closes the
/// input at the end, once every partition has moved past the last event's time
/// (so ticks at that time fire, as at the end of a single-threaded run).
fn feed(
    worker: &mut timely::worker::Worker,
    input: &mut InputHandle<Time, CapacityContainerBuilder<Vec<Routed>>>,
    probe: &ProbeHandle<Time>,
    rx: &Receiver<ToDetector>,
    sh: &Shared,
) -> Fed {
    let mut order = 0u64;
    let mut routed = 0u64;
    let mut last: Option<Time> = None;
    let mut targets = Vec::new();
    let mut in_flight: VecDeque<Time> = VecDeque::new();
    let mut idle = 0u32;
    loop {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let batch = match rx.try_recv() {
            Ok(ToDetector::Events(batch)) => {
                idle = 0;
                batch
            }
            // No checkpoints on workers, nor reloads (the cluster runs one net).
            Ok(
                ToDetector::Mark(_)
                | ToDetector::Final(_)
                | ToDetector::Stopped
                | ToDetector::Reload(_),
            ) => continue,
            Ok(ToDetector::Advance(to)) => {
                let to = time_of(to);
                if to > *input.time() {
                    input.advance_to(to);
                }
                continue;
            }
            Err(TryRecvError::Empty) => {
                // A quiet input: wait for it in short naps, longer ones once it
                // stays quiet (10 ms at most before an event is fed).
                idle = idle.saturating_add(1);
                let nap = if idle < 100 { 1 } else { 10 };
                worker.step_or_park(Some(Duration::from_millis(nap)));
                continue;
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let Some(first) = batch.first() else { continue };
        let t0 = time_of(first.time);
        if t0 > *input.time() {
            input.advance_to(t0);
        }
        for ev in batch {
            let t = time_of(ev.time);
            order += 1;
            last = Some(t);
            if !sh.types.contains(&*ev.kind) {
                // Processed, and nothing in the net reads it.
                continue;
            }
            sh.partitioner.targets(&ev, &mut targets);
            routed += targets.len() as u64;
            let (&last_target, copies) = targets.split_last().unwrap_or((&0, &[]));
            for &p in copies {
                input.send(Routed {
                    partition: p,
                    order,
                    event: ev.clone(),
                });
            }
            input.send(Routed {
                partition: last_target,
                order,
                event: ev,
            });
        }
        if let Some(t) = last {
            if t > *input.time() {
                input.advance_to(t);
            }
            in_flight.push_back(t);
        }
        // Send what is buffered now: the input may stay quiet for a while.
        input.flush();
        // Keep the dataflow's backlog bounded.
        while in_flight.len() > IN_FLIGHT {
            let oldest = in_flight[0];
            while probe.less_than(&oldest) && !sh.stop.load(Ordering::Relaxed) {
                // Parks until the others report progress, rather than spinning on
                // a core they need.
                worker.step_or_park(Some(Duration::from_millis(1)));
            }
            in_flight.pop_front();
        }
        worker.step();
    }
    // Events at the last time are done once time moves past it (or past where a
    // heartbeat took it).
    if last.is_some() || *input.time() > 0 {
        let end = last.unwrap_or(0).max(*input.time()).saturating_add(1);
        input.advance_to(end);
        while probe.less_than(&end) && !sh.stop.load(Ordering::Relaxed) {
            worker.step_or_park(Some(Duration::from_millis(1)));
        }
    }
    Fed {
        events: order,
        routed,
    }
}

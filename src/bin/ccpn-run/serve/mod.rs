//! `ccpn-run serve NET.ron`: the detector on the network (docs/serve.md).
//!
//! One detector thread (`engine.rs`) owns the [`Detector`](ccpn::Detector) and the
//! reordering of events by time, fed through a bounded channel by the HTTP ingest
//! (`ingest.rs`), MQTT in (`mqtt.rs`) and `--events` (`replay.rs`). It numbers
//! detections as the batch run does and hands them to a bounded ring and a broadcast
//! (`hub.rs`) read by the SSE and WebSocket clients (`stream.rs`), and to the sinks'
//! bounded queues (`webhook.rs`, `mqtt.rs`). `http.rs` holds the router, the bearer token, `/stats`, `/zones` and
//! the live map (`assets/`), `metrics.rs` `/metrics`, `objects.rs` the map's objects, `client.rs` the webhooks' HTTP
//! client, `checkpoint.rs` `--checkpoint` and `--resume`, `redelivery.rs` MQTT in's memory of
//! the messages it consumed (for recognising those the broker sends again), `args.rs` the flags and
//! `error.rs` the errors.

mod args;
mod checkpoint;
mod client;
mod engine;
mod error;
mod http;
mod hub;
mod ingest;
mod metrics;
mod mqtt;
mod objects;
mod redelivery;
mod replay;
mod stream;
mod webhook;

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;

use ccpn::Net;

pub(crate) use args::ServeArgs;
use engine::ToEngine;
use error::ServeError;

/// Runs `ccpn-run serve` (the process's arguments start with `serve`); returns the
/// exit status: 0 after a clean shutdown, 2 for bad arguments, a net that does not
/// load or a checkpoint that cannot be resumed from, 5 after a shutdown when
/// checkpoints could not be written, 1 when the server cannot start.
pub(crate) fn main() -> ExitCode {
    let args = ServeArgs::parse_from(std::env::args_os().skip(1));
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ccpn-run serve: {e}");
            ExitCode::from(e.exit_status())
        }
    }
}

/// Loads the net, starts the detector thread, the sinks and the server, and serves
/// until SIGINT or SIGTERM; then stops taking events, lets the detector finish and
/// gives the sinks a few seconds to deliver what they hold.
fn run(mut args: ServeArgs) -> Result<(), ServeError> {
    args.check_security()?;
    let net = Net::from_file(&args.net).map_err(|e| ServeError::Net(e.to_string()))?;
    for w in net.warnings() {
        eprintln!("ccpn-run serve: warning: {w}");
    }
    if args.mqtt_in.is_some() && args.checkpoint.is_some() && args.mqtt_client_id.is_none() {
        eprintln!(
            "ccpn-run serve: warning: --mqtt-in with --checkpoint but no --mqtt-client-id: a clean \
             session, so the broker drops the messages not acknowledged yet when the server goes"
        );
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(args.threads.max(1))
        .enable_all()
        .thread_name("serve")
        .build()
        .map_err(ServeError::Runtime)?;
    runtime.block_on(serve(args, net))
}

/// The server's life, on the runtime.
async fn serve(args: ServeArgs, net: Net) -> Result<(), ServeError> {
    let args = Arc::new(args);
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| ServeError::Bind(args.listen, e))?;
    let bound = listener
        .local_addr()
        .map_err(|e| ServeError::Bind(args.listen, e))?;
    let mut sinks = Vec::new();
    let mut sink_tasks = Vec::new();
    for url in &args.post {
        let (sink, task) = webhook::start(url, &args)?;
        sinks.push(sink);
        sink_tasks.push(task);
    }
    if let Some(url) = &args.mqtt_out {
        let (sink, task) = mqtt::start_out(url, &args)?;
        sinks.push(sink);
        sink_tasks.push(task);
    }
    let restored = checkpoint::resume(&args, &net)?;
    let engine = engine::start(&net, &args, sinks, restored)?;
    if let Some(url) = &args.mqtt_in {
        mqtt::start_in(url, &args, &net, engine.shared.clone())?;
    }
    if let Some(beat) = args.heartbeat() {
        engine::start_clock(engine.shared.clone(), beat, || ToEngine::Heartbeat);
    }
    if args.checkpoint.is_some() {
        engine::start_clock(
            engine.shared.clone(),
            args.checkpoint_interval() / 4,
            || ToEngine::Tick,
        );
    }
    let app = http::router(engine.shared.clone(), &args, &net);
    if let Some(path) = &args.events {
        // A resumed server goes on after the lines of the file it had consumed.
        let done = engine.shared.consumed().get(replay::SOURCE).copied();
        let ingest = ingest::Ingest::new(
            net.space(),
            &ingest::names(&net),
            None,
            replay::SOURCE,
            engine.shared.clone(),
            args.max_errors_listed,
        )
        .map_err(|e| ServeError::Args(e.to_string()))?
        .skipping(done.unwrap_or(0));
        let (shared, max_line) = (engine.shared.clone(), args.max_line_bytes);
        replay::start(path.clone(), args.pace, ingest, shared, max_line)
            .map_err(|e| ServeError::Args(format!("--events {}: {e}", path.display())))?;
    }
    eprintln!(
        "ccpn-run serve: {} on http://{bound}/ (the live map; events: POST http://{bound}/events)",
        args.net.display()
    );
    // At the signal: no more events; the detector finishes (releasing what it holds
    // for reordering); its last detections go out; then the streams end, so that the
    // server can close their connections.
    let shared = engine.shared;
    let thread = engine.thread;
    let finished = shared.clone();
    let (last_tx, last) = tokio::sync::oneshot::channel();
    let stopping = async move {
        shutdown_signal().await;
        eprintln!("ccpn-run serve: shutting down");
        finished.close_input();
        if let Ok(Ok(state)) = tokio::task::spawn_blocking(move || thread.join()).await {
            let _ = last_tx.send(state);
        }
        finished.hub.close();
    };
    // No Nagle delay: a detection is written as one small frame, and must not wait
    // for the previous one's acknowledgement.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(stopping)
        .await
        .map_err(ServeError::Serve)?;
    drop(shared);
    let grace = std::time::Duration::from_secs(args.shutdown_grace);
    for task in sink_tasks {
        let _ = tokio::time::timeout(grace, task).await;
    }
    // The last checkpoint, with what the sinks delivered in their grace.
    if let Ok(mut state) = last.await {
        let _ = tokio::task::spawn_blocking(move || state.checkpoint()).await;
    }
    match crate::checkpoint::FAILED.load(std::sync::atomic::Ordering::Relaxed) {
        0 => Ok(()),
        n => Err(ServeError::CheckpointsFailed(n)),
    }
}

/// Resolves at SIGINT (Ctrl-C) or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

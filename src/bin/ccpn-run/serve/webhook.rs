//! `--post URL`: detections POSTed in batches of JSON Lines, in seq order, each batch
//! retried with exponential backoff (100 ms doubling up to `--max-backoff`) until it
//! is delivered. The queue before it is bounded (`--sink-queue`): what the detector
//! thread cannot queue is dropped, counted and warned about, so a receiver that is
//! down or slow never holds up detection.

use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::args::ServeArgs;
use super::client::Target;
use super::engine::{Sink, SinkCounters};
use super::error::ServeError;
use super::hub::Item;

/// The first wait after a failed POST.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);

/// Starts the webhook to `url`: its sink for the detector thread, and its task.
pub(crate) fn start(url: &str, args: &ServeArgs) -> Result<(Sink, JoinHandle<()>), ServeError> {
    let target = Target::parse(url).map_err(|why| ServeError::Url {
        flag: "--post",
        url: url.to_owned(),
        why,
    })?;
    let (tx, rx) = mpsc::channel(usize::try_from(args.sink_queue).unwrap_or(usize::MAX));
    let counters = Arc::new(SinkCounters::default());
    let batch = usize::try_from(args.post_batch).unwrap_or(500);
    let max_backoff = Duration::from_secs(args.max_backoff.max(1));
    let task = tokio::spawn(deliver(
        target.clone(),
        rx,
        counters.clone(),
        batch,
        max_backoff,
    ));
    Ok((
        Sink {
            name: target.name(),
            tx,
            counters,
        },
        task,
    ))
}

/// Takes batches from the queue and POSTs each until it is delivered; ends when the
/// queue is closed and empty.
async fn deliver(
    target: Target,
    mut rx: mpsc::Receiver<Arc<Item>>,
    counters: Arc<SinkCounters>,
    batch: usize,
    max_backoff: Duration,
) {
    let mut items = Vec::with_capacity(batch);
    let mut body = Vec::new();
    loop {
        items.clear();
        if rx.recv_many(&mut items, batch).await == 0 {
            return;
        }
        body.clear();
        for item in &items {
            body.extend_from_slice(item.json.as_bytes());
            body.push(b'\n');
        }
        let mut backoff = FIRST_BACKOFF;
        let mut failing = false;
        loop {
            match target.post(&body).await {
                Ok(()) => {
                    counters.delivered.fetch_add(items.len() as u64, Relaxed);
                    if let Some(last) = items.last() {
                        counters.next.store(last.seq + 1, Relaxed);
                    }
                    if failing {
                        eprintln!("ccpn-run serve: {}: delivering again", target.name());
                    }
                    break;
                }
                Err(e) => {
                    let n = counters.failures.fetch_add(1, Relaxed);
                    if !failing || n.is_power_of_two() {
                        eprintln!(
                            "ccpn-run serve: warning: webhook {e}; retrying {} detection(s) in {backoff:?}",
                            items.len()
                        );
                    }
                    failing = true;
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(max_backoff);
                }
            }
        }
    }
}

//! `--events FILE`: a recorded stream taken at start as if it were posted, as fast as
//! possible or paced by its event times (`--pace`), for a demonstration on the map.
//! A server resumed from a checkpoint skips the lines of the file it had consumed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ccpn::io::read::Lines;
use ccpn::Timestamp;

use super::engine::Shared;
use super::ingest::Ingest;

/// The source `--events` consumes from (a resumed server skips what it consumed).
pub(crate) const SOURCE: &str = "events";
/// Lines read from the file per hand-over to the async side.
const CHUNK: usize = 4096;
/// The longest a paced replay waits for one event (a gap in the recording).
const MAX_WAIT: Duration = Duration::from_secs(3600);

/// Reads `path` on a thread of its own and feeds its lines to an ingest; reports on
/// stderr what it took.
pub(crate) fn start(
    path: std::path::PathBuf,
    pace: f64,
    ingest: Ingest,
    shared: Arc<Shared>,
    max_line: usize,
) -> std::io::Result<()> {
    let file = std::fs::File::open(&path)?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<(u64, Result<Vec<u8>, usize>)>>(4);
    std::thread::Builder::new()
        .name("replay".into())
        .spawn(move || {
            let mut lines = Lines::new(std::io::BufReader::new(file), max_line);
            let mut chunk = Vec::with_capacity(CHUNK);
            while let Some(Ok((no, line))) = lines.next_line() {
                chunk.push((no, line.map(<[u8]>::to_vec).map_err(|_| max_line)));
                if (chunk.len() >= CHUNK || lines.get_ref().buffer().is_empty())
                    && tx.blocking_send(std::mem::take(&mut chunk)).is_err()
                {
                    return;
                }
            }
            let _ = tx.blocking_send(chunk);
        })?;
    let name = path.display().to_string();
    tokio::spawn(async move {
        let mut ingest = ingest;
        let started = Instant::now();
        let mut first: Option<Timestamp> = None;
        'file: while let Some(chunk) = rx.recv().await {
            // Shutting down: the detector is not to wait for the rest.
            if shared.sender().is_none() {
                break;
            }
            for (no, line) in chunk {
                let time = match line {
                    Ok(line) => match ingest.line(no, &line).await {
                        Ok(t) => t,
                        Err(_) => break 'file,
                    },
                    Err(max) => {
                        ingest.too_long(no, max);
                        None
                    }
                };
                if let (Some(t), true) = (time, pace > 0.0) {
                    let t0 = *first.get_or_insert(t);
                    let due = Duration::try_from_secs_f64(t.since(t0) as f64 / 1e6 / pace)
                        .unwrap_or(Duration::ZERO)
                        .min(MAX_WAIT);
                    if let Some(wait) = due.checked_sub(started.elapsed()) {
                        if ingest.flush().await.is_err() {
                            break 'file;
                        }
                        tokio::time::sleep(wait).await;
                        if shared.sender().is_none() {
                            break 'file;
                        }
                    }
                }
            }
            if ingest.flush().await.is_err() {
                break;
            }
        }
        let a = ingest.finish().await;
        eprintln!(
            "ccpn-run serve: {name}: {} lines read, {} processed, {} rejected, {} late",
            a.read, a.processed, a.rejected, a.late
        );
    });
    Ok(())
}

//! Writing found detections in time order, numbered as they are written.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::wire::{time_of_micros, Found, Time};

/// Where a worker's writer puts lines.
pub(crate) struct Writer {
    out: Option<BufWriter<Box<dyn Write>>>,
    pending: Vec<Found>,
    seq: u64,
    /// Detections written, per output.
    pub(crate) per_output: Vec<u64>,
    /// The first error met; writing stops there.
    pub(crate) error: Option<io::Error>,
}

impl Writer {
    /// A writer to standard output.
    pub(crate) fn stdout(outputs: usize) -> Writer {
        Writer::to(Some(Box::new(io::stdout())), outputs)
    }

    /// A writer to `dir/worker-I.jsonl`.
    pub(crate) fn file(dir: &Path, worker: usize, outputs: usize) -> io::Result<Writer> {
        let path = dir.join(format!("worker-{worker}.jsonl"));
        let named = |e: io::Error| {
            io::Error::new(e.kind(), format!("cannot write {}: {e}", path.display()))
        };
        std::fs::create_dir_all(dir).map_err(named)?;
        let f = File::create(&path).map_err(named)?;
        Ok(Writer::to(Some(Box::new(f)), outputs))
    }

    /// A writer that receives nothing (on workers that do not gather).
    pub(crate) fn none(outputs: usize) -> Writer {
        Writer::to(None, outputs)
    }

    fn to(out: Option<Box<dyn Write>>, outputs: usize) -> Writer {
        Writer {
            out: out.map(|o| BufWriter::with_capacity(1 << 16, o)),
            pending: Vec::new(),
            seq: 0,
            per_output: vec![0; outputs],
            error: None,
        }
    }

    /// Takes detections (each travelled at a timely time no later than its own).
    pub(crate) fn take(&mut self, found: impl IntoIterator<Item = Found>) {
        self.pending.extend(found);
    }

    /// Writes, in time order, every pending detection no later than `frontier` (all
    /// of them when it is `None`: the input is done): detections still to come
    /// travel at the frontier or later, so their own times are no earlier.
    pub(crate) fn write_ready(&mut self, frontier: Option<Time>) {
        let f = frontier.unwrap_or(Time::MAX);
        let due = |found: &Found| time_of_micros(found.time) <= f;
        if !self.pending.iter().any(due) {
            return;
        }
        // Ready ones first, in the order they are written; the rest stay pending.
        self.pending
            .sort_unstable_by_key(|found| (!due(found), found.time, found.partition, found.order));
        let ready = self.pending.partition_point(due);
        let result = match self.out.as_mut() {
            Some(out) if self.error.is_none() => (|| {
                for found in &self.pending[..ready] {
                    found.line.write(out, self.seq)?;
                    self.seq += 1;
                    if let Some(n) = self.per_output.get_mut(found.output as usize) {
                        *n += 1;
                    }
                }
                out.flush()
            })(),
            _ => Ok(()),
        };
        self.pending.drain(..ready);
        if let Err(e) = result {
            self.error = Some(e);
        }
    }

    /// Detections written.
    pub(crate) fn written(&self) -> u64 {
        self.seq
    }
}

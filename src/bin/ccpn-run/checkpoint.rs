//! `--checkpoint` files: the detector's snapshot, and where the run was in its input.
//!
//! Layout: the magic `CCPNCKPT`, the format version (`u32`, little-endian), the
//! XXH3-128 of the rest (16 bytes, little-endian), then a postcard-encoded [`Checkpoint`]. The detector's own
//! snapshot inside names the net it belongs to, and the net itself is kept (its text
//! and its GeoJSON files' texts), so a run resumes with the net it was running when
//! it was reloaded since it started, or when the files have changed since.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_128;

use ccpn::{NetSource, Timestamp};

const MAGIC: &[u8; 8] = b"CCPNCKPT";
/// Bumped whenever the layout changes (2: the checksum is an XXH3-128 of 16 bytes,
/// not a SHA-256; 3: the net in force is kept).
const VERSION: u32 = 3;

/// Where the reader was: every line up to `line` is accounted for, either in the
/// counts and the detector's state or held for reordering.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct Position {
    /// The number of the last line consumed.
    pub(crate) line: u64,
    pub(crate) read: u64,
    pub(crate) rejected: u64,
    pub(crate) late: u64,
    /// The reorder buffer: the newest time seen, the last time released, and the
    /// lines it held (read again on resume).
    pub(crate) newest: Option<Timestamp>,
    pub(crate) released: Option<Timestamp>,
    pub(crate) held: Vec<u64>,
}

/// A run's state between two input lines.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Checkpoint {
    pub(crate) position: Position,
    /// Detections so far per output, in the net's order of outputs.
    pub(crate) per_output: Vec<u64>,
    /// Events the detector refused as late.
    pub(crate) late_in_detector: u64,
    /// [`ccpn::Detector::snapshot`].
    pub(crate) detector: Vec<u8>,
    /// The net in force (the last one reloaded, if any), which the snapshot is of.
    pub(crate) net: NetSource,
}

impl Checkpoint {
    pub(crate) fn encode(&self) -> Vec<u8> {
        let body = postcard::to_stdvec(self).expect("a checkpoint serialises");
        let mut bytes = Vec::with_capacity(MAGIC.len() + 4 + 16 + body.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        bytes.extend_from_slice(&xxh3_128(&body).to_le_bytes());
        bytes.extend_from_slice(&body);
        bytes
    }

    /// Reads the checkpoint at `path`: `Ok(None)` if there is no such file.
    pub(crate) fn read(path: &Path) -> Result<Option<Checkpoint>, String> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read checkpoint {}: {e}", path.display())),
        };
        Checkpoint::decode(&bytes)
            .map(Some)
            .map_err(|e| format!("checkpoint {}: {e}", path.display()))
    }

    fn decode(bytes: &[u8]) -> Result<Checkpoint, String> {
        let rest = bytes
            .strip_prefix(MAGIC)
            .ok_or("not a ccpn-run checkpoint")?;
        let (version, rest) = rest
            .split_first_chunk::<4>()
            .ok_or("not a ccpn-run checkpoint")?;
        let version = u32::from_le_bytes(*version);
        if version != VERSION {
            return Err(format!(
                "checkpoint format version {version}; this ccpn-run reads version {VERSION}"
            ));
        }
        let (sum, body) = rest
            .split_first_chunk::<16>()
            .ok_or("not a ccpn-run checkpoint")?;
        if xxh3_128(body).to_le_bytes() != *sum {
            return Err("damaged: its checksum does not match (truncated or altered)".into());
        }
        postcard::from_bytes(body).map_err(|e| format!("damaged: {e}"))
    }
}

/// Checkpoints that could not be written in this run: the run goes on (its
/// detections are still wanted) but ends with exit status 5.
pub(crate) static FAILED: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Writes `bytes` to `path` so that a crash leaves either the old file or the new one:
/// to a temporary file beside it, synced, renamed over `path`, and the directory synced.
pub(crate) fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    let written = File::create(&tmp).and_then(|mut f| {
        f.write_all(bytes)?;
        f.sync_all()
    });
    if let Err(e) = written.and_then(|()| fs::rename(&tmp, path)) {
        // Leave the last good checkpoint, and no half-written file beside it.
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)?.sync_all()
}

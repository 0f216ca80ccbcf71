//! `--checkpoint` files: the detector's snapshot, and where the run was in its input.
//!
//! Layout: the magic `CCPNCKPT`, the format version (`u32`, little-endian), the
//! XXH3-128 of the rest (16 bytes, little-endian), then a postcard-encoded [`Checkpoint`]. The detector's own
//! snapshot inside names the net it belongs to, and the net itself is kept (its text
//! and its GeoJSON files' texts), so a run resumes with the net it was running when
//! it was reloaded since it started, or when the files have changed since.
//! `ccpn-run serve`'s checkpoints (`serve/checkpoint.rs`) share the layout under a
//! magic of their own, `CCPNSERV`, and the atomic writing.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
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
        seal(MAGIC, VERSION, self)
    }

    /// Reads the checkpoint at `path`: `Ok(None)` if there is no such file.
    pub(crate) fn read(path: &Path) -> Result<Option<Checkpoint>, String> {
        read_sealed(path, MAGIC, VERSION).map_err(|e| e.to_string())
    }
}

/// Why a checkpoint file cannot be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum CheckpointError {
    #[error("cannot read checkpoint {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("checkpoint {}: {why}", path.display())]
    Bad { path: PathBuf, why: String },
}

/// `value` in a checkpoint's layout: `magic`, `version`, the body's XXH3-128, the
/// postcard body.
pub(crate) fn seal<T: Serialize>(magic: &[u8; 8], version: u32, value: &T) -> Vec<u8> {
    let body = postcard::to_stdvec(value).expect("a checkpoint serialises");
    let mut bytes = Vec::with_capacity(magic.len() + 4 + 16 + body.len());
    bytes.extend_from_slice(magic);
    bytes.extend_from_slice(&version.to_le_bytes());
    bytes.extend_from_slice(&xxh3_128(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    bytes
}

/// Reads what [`seal`] wrote at `path`: `Ok(None)` if there is no such file.
pub(crate) fn read_sealed<T: DeserializeOwned>(
    path: &Path,
    magic: &[u8; 8],
    version: u32,
) -> Result<Option<T>, CheckpointError> {
    let bytes = match fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => {
            return Err(CheckpointError::Read {
                path: path.to_owned(),
                source,
            })
        }
    };
    unseal(&bytes, magic, version)
        .map(Some)
        .map_err(|why| CheckpointError::Bad {
            path: path.to_owned(),
            why,
        })
}

/// The value in `bytes`, checked against `magic`, `version` and the checksum.
fn unseal<T: DeserializeOwned>(bytes: &[u8], magic: &[u8; 8], version: u32) -> Result<T, String> {
    let Some(rest) = bytes.strip_prefix(magic) else {
        return Err(
            match OTHER_KINDS.iter().find(|(m, _)| bytes.starts_with(*m)) {
                Some((_, kind)) => format!("{kind}, not {}", kind_of(magic)),
                None => "not a ccpn-run checkpoint".into(),
            },
        );
    };
    let (found, rest) = rest
        .split_first_chunk::<4>()
        .ok_or("not a ccpn-run checkpoint")?;
    let found = u32::from_le_bytes(*found);
    if found != version {
        return Err(format!(
            "checkpoint format version {found}; this ccpn-run reads version {version}"
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

/// The magic of `ccpn-run serve`'s checkpoints (`serve/checkpoint.rs`).
pub(crate) const SERVE_MAGIC: &[u8; 8] = b"CCPNSERV";

/// Each kind of checkpoint's magic, and what to call it.
const OTHER_KINDS: &[(&[u8; 8], &str)] = &[
    (
        MAGIC,
        "the checkpoint of a run over a file (ccpn-run NET EVENTS --checkpoint)",
    ),
    (
        SERVE_MAGIC,
        "the checkpoint of a server (ccpn-run serve --checkpoint)",
    ),
];

fn kind_of(magic: &[u8; 8]) -> &'static str {
    OTHER_KINDS
        .iter()
        .find(|(m, _)| *m == magic)
        .map_or("a ccpn-run checkpoint", |(_, k)| *k)
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

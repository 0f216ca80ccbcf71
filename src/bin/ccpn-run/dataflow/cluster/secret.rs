//! The cluster's shared secret and the proofs made with it.
//!
//! The secret comes from `--cluster-secret-file FILE` or, without that flag, from
//! the environment variable `CCPN_CLUSTER_SECRET` (the flag wins: it is the one
//! written on the command line). Trailing whitespace — the newline an editor or
//! `echo` adds — is not part of it, and it must be at least 16 bytes. A cluster
//! whose addresses are not all on this machine (loopback) needs one; a cluster on
//! 127.0.0.1 runs without, with a warning, and its proofs then use an empty key:
//! they still refuse a replayed handshake, but anyone on the machine can make one.
//!
//! A proof is HMAC-SHA256 under the secret over a handshake's transcript (see
//! `handshake.rs`), checked in constant time (`hmac`'s `verify_slice`).

use std::fmt;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use hmac::{Hmac, Mac};
use sha2::Sha256;

use super::handshake::{MAC_LEN, NONCE_LEN};

/// The environment variable holding the secret when no file is named.
pub(crate) const ENV: &str = "CCPN_CLUSTER_SECRET";
/// The shortest secret accepted.
const MIN_LEN: usize = 16;

/// The secret every process of a cluster shares (never printed).
pub(crate) struct Secret {
    key: Vec<u8>,
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(..)")
    }
}

/// Why there is no usable secret.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SecretError {
    /// The file cannot be read.
    #[error("cannot read the cluster secret file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Shorter than [`MIN_LEN`].
    #[error(
        "the cluster secret from {from} is {len} bytes: it needs at least {MIN_LEN} \
         (for example `head -c 32 /dev/urandom | base64 > cluster.secret`)"
    )]
    Short { from: String, len: usize },
    /// None given, for a cluster across machines.
    #[error(
        "a cluster across machines needs a cluster secret ({address} is not this machine): \
         the same one for every process, in a file named by --cluster-secret-file or in \
         {ENV} (docs/scale-out.md)"
    )]
    Missing { address: String },
    /// Randomness for a nonce could not be had.
    #[error("cannot draw a random nonce for the cluster handshake: {0}")]
    Random(getrandom::Error),
}

impl Secret {
    /// The secret for a cluster of `addresses`: from `file`, else from the
    /// environment, else none (an empty key, with a warning) when every address is
    /// on this machine.
    pub(crate) fn for_cluster(
        file: Option<&Path>,
        addresses: &[String],
    ) -> Result<Secret, SecretError> {
        let (from, bytes) = match file {
            Some(path) => {
                let bytes = std::fs::read(path).map_err(|source| SecretError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                warn_if_others_can_read(path);
                (path.display().to_string(), bytes)
            }
            None => match std::env::var_os(ENV) {
                Some(v) => (ENV.to_owned(), v.into_encoded_bytes()),
                None => {
                    if let Some(address) = addresses.iter().find(|a| !on_this_machine(a)) {
                        return Err(SecretError::Missing {
                            address: address.clone(),
                        });
                    }
                    crate::say::warning(format_args!(
                        "no cluster secret (--cluster-secret-file or {ENV}): any program on this \
                         machine can join this cluster; give every process the same secret"
                    ));
                    return Ok(Secret { key: Vec::new() });
                }
            },
        };
        let key = bytes.trim_ascii_end().to_vec();
        if key.len() < MIN_LEN {
            return Err(SecretError::Short {
                from,
                len: key.len(),
            });
        }
        Ok(Secret { key })
    }

    fn mac(&self) -> Hmac<Sha256> {
        // HMAC takes a key of any length.
        Hmac::<Sha256>::new_from_slice(&self.key).expect("HMAC takes any key length")
    }

    /// The proof over `transcript`.
    pub(crate) fn prove(&self, transcript: &[u8]) -> [u8; MAC_LEN] {
        let mut mac = self.mac();
        mac.update(transcript);
        mac.finalize().into_bytes().into()
    }

    /// Whether `proof` is the proof over `transcript`, compared in constant time.
    pub(crate) fn verify(&self, transcript: &[u8], proof: &[u8]) -> bool {
        let mut mac = self.mac();
        mac.update(transcript);
        mac.verify_slice(proof).is_ok()
    }
}

/// A fresh random nonce.
pub(crate) fn nonce() -> Result<[u8; NONCE_LEN], SecretError> {
    let mut n = [0u8; NONCE_LEN];
    getrandom::fill(&mut n).map_err(SecretError::Random)?;
    Ok(n)
}

/// Whether `address` (`host:port`) is a loopback address or `localhost`; a name is
/// not looked up, so any other name counts as another machine.
fn on_this_machine(address: &str) -> bool {
    if let Ok(a) = address.parse::<SocketAddr>() {
        return a.ip().is_loopback();
    }
    address
        .rsplit_once(':')
        .is_some_and(|(host, _)| host.eq_ignore_ascii_case("localhost"))
}

/// Warns when users other than the file's owner may read the secret.
fn warn_if_others_can_read(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                crate::say::warning(format_args!(
                    "the cluster secret file {} can be read by other users (mode {mode:o}): \
                     `chmod 600` it",
                    path.display()
                ));
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_addresses_are_this_machine() {
        for here in [
            "127.0.0.1:7000",
            "127.3.0.1:1",
            "[::1]:7000",
            "localhost:2101",
        ] {
            assert!(on_this_machine(here), "{here}");
        }
        for there in [
            "10.0.0.1:7000",
            "host.example:7000",
            "[2001:db8::1]:1",
            "0.0.0.0:1",
        ] {
            assert!(!on_this_machine(there), "{there}");
        }
    }

    #[test]
    fn a_proof_is_checked_against_the_transcript_and_the_key() {
        let s = Secret {
            key: b"sixteen bytes or more".to_vec(),
        };
        let p = s.prove(b"transcript");
        assert!(s.verify(b"transcript", &p));
        assert!(!s.verify(b"transcripT", &p));
        assert!(!s.verify(b"transcript", &p[..31]));
        let other = Secret {
            key: b"another sixteen bytes".to_vec(),
        };
        assert!(!other.verify(b"transcript", &p));
    }
}

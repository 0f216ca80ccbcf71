//! The cluster handshake's messages as bytes, and their decoding: a pure function
//! of the bytes, with nothing from the rest of `ccpn-run`, so that the fuzz target
//! `cluster_handshake` (`fuzz/harness.rs` includes this file) runs it on any input.
//!
//! A connection opens with the connecting process's [`Hello`], the accepting one
//! answers with its own, the connecting one sends its proof (a MAC over both
//! hellos), and the accepting one answers with its [`Verdict`] and, when it has
//! checked the proof, its own proof over both hellos and the verdict. Every message
//! has a fixed length, so each read knows how much to wait for. See
//! docs/scale-out.md for the protocol and what it protects against.

use std::fmt;

/// What a handshake opens with.
pub(crate) const MAGIC: [u8; 4] = *b"CCPN";
/// The handshake's version: a process speaking another refuses to go on.
pub(crate) const VERSION: u8 = 1;
/// The magic and the version: what is read first, before a hello's length is known.
pub(crate) const PREFIX_LEN: usize = 5;
/// This version's prefix.
pub(crate) const PREFIX: [u8; PREFIX_LEN] = [MAGIC[0], MAGIC[1], MAGIC[2], MAGIC[3], VERSION];
/// A fresh random nonce in each hello.
pub(crate) const NONCE_LEN: usize = 32;
/// A proof: HMAC-SHA256.
pub(crate) const MAC_LEN: usize = 32;
/// A whole hello: the prefix, three process numbers, the net's fingerprint, the
/// partitions and the nonce.
pub(crate) const HELLO_LEN: usize = PREFIX_LEN + 4 + 4 + 4 + 16 + 4 + NONCE_LEN;

/// A process's greeting: who it is, whom it means, the cluster it belongs to, and a
/// fresh nonce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Hello {
    /// The sender's process number.
    pub(crate) from: u32,
    /// The process number it means to reach.
    pub(crate) to: u32,
    /// The number of processes in its cluster.
    pub(crate) processes: u32,
    /// Its net's fingerprint.
    pub(crate) fingerprint: [u8; 16],
    /// The partitions it splits the net into.
    pub(crate) partitions: u32,
    /// Random, new for each connection.
    pub(crate) nonce: [u8; NONCE_LEN],
}

/// Why bytes are not a handshake message.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(crate) enum Malformed {
    /// Too few or too many bytes for the message.
    #[error("{got} bytes, not the {want} of a handshake message")]
    Length { got: usize, want: usize },
    /// The bytes do not open with the magic.
    #[error("it is not a ccpn process: it sent {0}, which does not open a cluster handshake")]
    NotCcpn(Opening),
    /// Another version of the handshake.
    #[error(
        "it speaks cluster handshake version {0}, this process version {VERSION}: \
         every process needs the same ccpn-run"
    )]
    Version(u8),
    /// Process numbers that cannot be in the cluster it names.
    #[error("it says it is process {from} of {processes} meaning process {to}, which cannot be")]
    Numbers { from: u32, to: u32, processes: u32 },
    /// A verdict byte of no known verdict.
    #[error("it answered with verdict {0}, which this version does not know")]
    Verdict(u8),
}

/// The first bytes of what a stranger sent, as hexadecimal (for the warning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Opening([u8; PREFIX_LEN]);

impl fmt::Display for Opening {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("0x")?;
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// Checks the magic and the version, the first [`PREFIX_LEN`] bytes of a hello.
pub(crate) fn check_prefix(bytes: &[u8]) -> Result<(), Malformed> {
    let prefix: [u8; PREFIX_LEN] = bytes.try_into().map_err(|_| Malformed::Length {
        got: bytes.len(),
        want: PREFIX_LEN,
    })?;
    if prefix[..4] != MAGIC {
        return Err(Malformed::NotCcpn(Opening(prefix)));
    }
    if prefix[4] != VERSION {
        return Err(Malformed::Version(prefix[4]));
    }
    Ok(())
}

impl Hello {
    /// The message's bytes.
    pub(crate) fn encode(&self) -> [u8; HELLO_LEN] {
        let mut out = [0u8; HELLO_LEN];
        out[..PREFIX_LEN].copy_from_slice(&PREFIX);
        let mut at = PREFIX_LEN;
        let mut put = |bytes: &[u8]| {
            out[at..at + bytes.len()].copy_from_slice(bytes);
            at += bytes.len();
        };
        put(&self.from.to_be_bytes());
        put(&self.to.to_be_bytes());
        put(&self.processes.to_be_bytes());
        put(&self.fingerprint);
        put(&self.partitions.to_be_bytes());
        put(&self.nonce);
        out
    }

    /// The hello in `bytes` (exactly [`HELLO_LEN`] of them); the only encoding of a
    /// hello is [`Hello::encode`]'s.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Hello, Malformed> {
        if bytes.len() != HELLO_LEN {
            return Err(Malformed::Length {
                got: bytes.len(),
                want: HELLO_LEN,
            });
        }
        check_prefix(&bytes[..PREFIX_LEN])?;
        let mut rest = &bytes[PREFIX_LEN..];
        let mut take = |n: usize| {
            let (head, tail) = rest.split_at(n);
            rest = tail;
            head
        };
        let mut u32_at = || u32::from_be_bytes(take(4).try_into().unwrap_or_default());
        let (from, to, processes) = (u32_at(), u32_at(), u32_at());
        let mut fingerprint = [0u8; 16];
        fingerprint.copy_from_slice(take(16));
        let partitions = u32::from_be_bytes(take(4).try_into().unwrap_or_default());
        let mut nonce = [0u8; NONCE_LEN];
        nonce.copy_from_slice(take(NONCE_LEN));
        // `to` is whom the sender means, which may be no process of its cluster:
        // an accepting process answers a stranger's claims as they were made.
        if from >= processes || from == to {
            return Err(Malformed::Numbers {
                from,
                to,
                processes,
            });
        }
        Ok(Hello {
            from,
            to,
            processes,
            fingerprint,
            partitions,
            nonce,
        })
    }
}

/// What the accepting process answers once it has the connecting one's proof.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Accepted: the connection goes on to timely.
    Accepted,
    /// The proof is not one made with this process's secret (sent without a proof:
    /// nothing is proved to a peer that proved nothing).
    WrongSecret,
    /// This process does not expect a process of that number, or of that cluster.
    NotExpected,
    /// A process of that number is already connected.
    AlreadyConnected,
    /// The peer runs another net.
    OtherNet,
    /// The peer splits the net into another number of partitions.
    OtherPartitions,
}

impl Verdict {
    const ALL: [Verdict; 6] = [
        Verdict::Accepted,
        Verdict::WrongSecret,
        Verdict::NotExpected,
        Verdict::AlreadyConnected,
        Verdict::OtherNet,
        Verdict::OtherPartitions,
    ];

    /// Its byte on the wire.
    pub(crate) fn byte(self) -> u8 {
        self as u8
    }

    /// The verdict of byte `b`.
    pub(crate) fn decode(b: u8) -> Result<Verdict, Malformed> {
        Verdict::ALL
            .get(usize::from(b))
            .copied()
            .ok_or(Malformed::Verdict(b))
    }

    /// Whether the accepting process's proof follows it.
    pub(crate) fn proved(self) -> bool {
        self != Verdict::WrongSecret
    }
}

/// What a proof is computed over: the role's label, both hellos as sent, and the
/// verdict for the accepting side's proof.
pub(crate) fn transcript(
    label: &[u8],
    connecting: &[u8; HELLO_LEN],
    accepting: &[u8; HELLO_LEN],
    verdict: Option<Verdict>,
) -> Vec<u8> {
    let mut t = Vec::with_capacity(label.len() + 2 * HELLO_LEN + 1);
    t.extend_from_slice(label);
    t.extend_from_slice(connecting);
    t.extend_from_slice(accepting);
    t.extend(verdict.map(Verdict::byte));
    t
}

/// The label of the connecting process's proof.
pub(crate) const CONNECTING: &[u8] = b"ccpn cluster handshake v1: connecting process\0";
/// The label of the accepting process's proof.
pub(crate) const ACCEPTING: &[u8] = b"ccpn cluster handshake v1: accepting process\0";

#[cfg(test)]
mod tests {
    use super::*;

    fn hello() -> Hello {
        Hello {
            from: 1,
            to: 0,
            processes: 3,
            fingerprint: [7; 16],
            partitions: 64,
            nonce: [9; NONCE_LEN],
        }
    }

    #[test]
    fn a_hello_decodes_to_itself() {
        let h = hello();
        assert_eq!(Hello::decode(&h.encode()), Ok(h));
        assert_eq!(HELLO_LEN, 69);
    }

    #[test]
    fn strangers_bytes_are_named() {
        let mut bytes = hello().encode();
        bytes[..5].copy_from_slice(b"GET /");
        let e = Hello::decode(&bytes).unwrap_err();
        assert_eq!(
            e.to_string(),
            "it is not a ccpn process: it sent 0x474554202f, which does not open a cluster handshake"
        );
        bytes[..5].copy_from_slice(b"CCPN\x02");
        assert_eq!(Hello::decode(&bytes), Err(Malformed::Version(2)));
        let mut h = hello();
        h.from = 3;
        assert!(matches!(
            Hello::decode(&h.encode()),
            Err(Malformed::Numbers { .. })
        ));
        assert!(matches!(
            Hello::decode(&bytes[..10]),
            Err(Malformed::Length { got: 10, .. })
        ));
    }

    #[test]
    fn verdicts_round_trip() {
        for v in Verdict::ALL {
            assert_eq!(Verdict::decode(v.byte()), Ok(v));
        }
        assert_eq!(Verdict::decode(6), Err(Malformed::Verdict(6)));
    }
}

//! Snapshots: a detector's whole state as bytes, and a detector rebuilt from them.
//!
//! Layout: the magic `CCPNSNAP`, the format version (`u32`, little-endian), the
//! fingerprint of the net (16 bytes, see `Model::fingerprint`), the XXH3-128 of the
//! rest (16 bytes, little-endian), then a postcard-encoded [`Body`]. The checksum catches truncation and
//! damage; a snapshot crafted to pass it is trusted like the detector's own memory. The state proper is encoded with every input event and every constituent
//! list written once and referred to by number, however many tokens share it; the
//! tables come first so that decoding can rebuild the shared values before the state
//! that refers to them.
//!
//! Tokens hold their terminator (`Arc<Term>`) and constituents (`Arc<[Member]>`, or
//! the terminator alone) by shared pointer. Their serde implementations ([`term`],
//! [`members`], [`constituents`]) look the value
//! up in the table of the snapshot being written or read, which lives in a
//! thread-local for the length of one [`encode`] or [`decode`] call.

use std::cell::RefCell;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::{Deserialize, Serialize};
use xxhash_rust::xxh3::xxh3_128;

use super::token::{Member, Members, Term};
use crate::event::Event;

/// The first bytes of every snapshot.
const MAGIC: &[u8; 8] = b"CCPNSNAP";
/// The layout of the state: bumped whenever it changes (2: a token of one constituent
/// refers to its terminator rather than to a constituent list; 3: the counting index
/// keeps no marks on its points, and files its grid cells under one word; 4: the
/// fingerprint and the checksum are XXH3-128 hashes of 16 bytes, not SHA-256; 5:
/// states keep one timer per key value, and `Inside` its zone index; 6: states keep
/// their key values' entries in a slab, and timed states their armed transitions in a
/// queue of their own).
pub(crate) const VERSION: u32 = 6;

/// A snapshot could not be restored.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RestoreError {
    /// The bytes do not start like a snapshot.
    #[error("not a ccpn detector snapshot")]
    NotASnapshot,
    /// The snapshot was written by a ccpn with another state layout.
    #[error("snapshot format version {found}; this ccpn reads version {expected}")]
    Version {
        /// The snapshot's version.
        found: u32,
        /// The version this ccpn writes and reads.
        expected: u32,
    },
    /// The snapshot was taken of another net (or the net's text or GeoJSON files
    /// changed since).
    #[error("the snapshot belongs to another net (or the net or its GeoJSON files changed since it was taken)")]
    OtherNet,
    /// The snapshot is truncated or damaged.
    #[error("the snapshot is damaged: {0}")]
    Corrupt(String),
}

/// What follows the header.
#[derive(Serialize, Deserialize)]
struct Body {
    /// The input events tokens refer to (in their serde form, tagged).
    events: Vec<Event>,
    /// The constituent lists tokens refer to: (processing number, event) each.
    members: Vec<Vec<(u64, u32)>>,
    /// The state, postcard-encoded, referring to the two tables by position.
    state: Vec<u8>,
}

/// Encodes `state` as a snapshot of the net with `fingerprint`.
pub(crate) fn encode<S: Serialize>(fingerprint: &[u8; 16], state: &S) -> Vec<u8> {
    OUT.with_borrow_mut(|out| *out = Some(Tables::default()));
    let encoded = postcard::to_stdvec(state);
    let mut tables = OUT.with_borrow_mut(Option::take).unwrap_or_default();
    // Serialising runtime state cannot fail: every value has a plain representation.
    let state = encoded.expect("runtime state serialises");
    let members = std::mem::take(&mut tables.member_list)
        .iter()
        .map(|ms| {
            ms.iter()
                .map(|m| (m.seq, tables.term_number(&m.event)))
                .collect()
        })
        .collect();
    let events = tables.term_list.iter().map(|t| (***t).clone()).collect();
    let body = Body {
        events,
        members,
        state,
    };
    let body = postcard::to_stdvec(&body).expect("runtime state serialises");
    let mut bytes = Vec::with_capacity(MAGIC.len() + 4 + 16 + 16 + body.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&VERSION.to_le_bytes());
    bytes.extend_from_slice(fingerprint);
    bytes.extend_from_slice(&xxh3_128(&body).to_le_bytes());
    bytes.extend_from_slice(&body);
    bytes
}

/// Decodes a snapshot of the net with `fingerprint`; events are rewrapped with the
/// net's `key_attrs`.
pub(crate) fn decode<S: for<'de> Deserialize<'de>>(
    fingerprint: &[u8; 16],
    key_attrs: &[Arc<str>],
    bytes: &[u8],
) -> Result<S, RestoreError> {
    let rest = bytes
        .strip_prefix(MAGIC)
        .ok_or(RestoreError::NotASnapshot)?;
    let (version, rest) = rest
        .split_first_chunk::<4>()
        .ok_or(RestoreError::NotASnapshot)?;
    let found = u32::from_le_bytes(*version);
    if found != VERSION {
        return Err(RestoreError::Version {
            found,
            expected: VERSION,
        });
    }
    let (theirs, rest) = rest
        .split_first_chunk::<16>()
        .ok_or(RestoreError::NotASnapshot)?;
    if theirs != fingerprint {
        return Err(RestoreError::OtherNet);
    }
    let (sum, rest) = rest
        .split_first_chunk::<16>()
        .ok_or(RestoreError::NotASnapshot)?;
    if xxh3_128(rest).to_le_bytes() != *sum {
        return Err(RestoreError::Corrupt(
            "its checksum does not match (truncated or altered)".into(),
        ));
    }
    let corrupt = |e: postcard::Error| RestoreError::Corrupt(e.to_string());
    let body: Body = postcard::from_bytes(rest).map_err(corrupt)?;
    let terms: Vec<Arc<Term>> = body
        .events
        .into_iter()
        .map(|e| Arc::new(Term::new(e, key_attrs)))
        .collect();
    let members = body
        .members
        .into_iter()
        .map(|ms| {
            ms.into_iter()
                .map(|(seq, t)| {
                    let event = terms
                        .get(t as usize)
                        .cloned()
                        .ok_or_else(|| RestoreError::Corrupt(format!("no event number {t}")))?;
                    Ok(Member { seq, event })
                })
                .collect::<Result<Arc<[Member]>, RestoreError>>()
        })
        .collect::<Result<Vec<_>, _>>()?;
    IN.with_borrow_mut(|tables| *tables = Some(Lookup { terms, members }));
    let state = postcard::from_bytes(&body.state);
    IN.with_borrow_mut(Option::take);
    state.map_err(corrupt)
}

/// The tables of the snapshot being written.
#[derive(Default)]
struct Tables {
    terms: FxHashMap<*const Term, u32>,
    term_list: Vec<Arc<Term>>,
    members: FxHashMap<(*const Member, usize), u32>,
    member_list: Vec<Arc<[Member]>>,
}

impl Tables {
    fn term_number(&mut self, t: &Arc<Term>) -> u32 {
        let next = self.term_list.len() as u32;
        *self.terms.entry(Arc::as_ptr(t)).or_insert_with(|| {
            self.term_list.push(t.clone());
            next
        })
    }

    fn members_number(&mut self, ms: &Arc<[Member]>) -> u32 {
        let next = self.member_list.len() as u32;
        *self
            .members
            .entry((ms.as_ptr(), ms.len()))
            .or_insert_with(|| {
                self.member_list.push(ms.clone());
                next
            })
    }
}

/// The tables of the snapshot being read.
struct Lookup {
    terms: Vec<Arc<Term>>,
    members: Vec<Arc<[Member]>>,
}

thread_local! {
    static OUT: RefCell<Option<Tables>> = const { RefCell::new(None) };
    static IN: RefCell<Option<Lookup>> = const { RefCell::new(None) };
}

/// Serde for a token's terminator: its number in the snapshot's event table.
pub(crate) mod term {
    use super::*;
    use serde::{de, ser, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(t: &Arc<Term>, s: S) -> Result<S::Ok, S::Error> {
        let n = OUT
            .with_borrow_mut(|out| out.as_mut().map(|o| o.term_number(t)))
            .ok_or_else(|| ser::Error::custom("a token is serialised outside a snapshot"))?;
        s.serialize_u32(n)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<Term>, D::Error> {
        let n = u32::deserialize(d)?;
        IN.with_borrow(|tables| {
            tables
                .as_ref()
                .and_then(|t| t.terms.get(n as usize).cloned())
                .ok_or_else(|| de::Error::custom(format!("no event number {n}")))
        })
    }
}

/// Serde for a token's constituents: their number in the snapshot's table.
pub(crate) mod members {
    use super::*;
    use serde::{de, ser, Deserializer, Serializer};

    pub(crate) fn serialize<S: Serializer>(ms: &Arc<[Member]>, s: S) -> Result<S::Ok, S::Error> {
        let n = OUT
            .with_borrow_mut(|out| out.as_mut().map(|o| o.members_number(ms)))
            .ok_or_else(|| ser::Error::custom("a token is serialised outside a snapshot"))?;
        s.serialize_u32(n)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Arc<[Member]>, D::Error> {
        let n = u32::deserialize(d)?;
        IN.with_borrow(|tables| {
            tables
                .as_ref()
                .and_then(|t| t.members.get(n as usize).cloned())
                .ok_or_else(|| de::Error::custom(format!("no constituent list number {n}")))
        })
    }
}

/// Serde for a token's [`Members`]: the processing number of a sole terminator, or
/// the number of a constituent list in the snapshot's table.
pub(crate) mod constituents {
    use super::*;
    use serde::{Deserializer, Serializer};

    #[derive(Serialize, Deserialize)]
    enum Form {
        One(u64),
        Many(#[serde(with = "super::members")] Arc<[Member]>),
    }

    pub(crate) fn serialize<S: Serializer>(ms: &Members, s: S) -> Result<S::Ok, S::Error> {
        match ms {
            Members::One(seq) => Form::One(*seq),
            Members::Many(list) => Form::Many(list.clone()),
        }
        .serialize(s)
    }

    pub(crate) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Members, D::Error> {
        Ok(match Form::deserialize(d)? {
            Form::One(seq) => Members::One(seq),
            Form::Many(list) => Members::Many(list),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: [u8; 16] = [7; 16];

    fn decoded(bytes: &[u8]) -> Result<Vec<u32>, RestoreError> {
        decode(&NET, &[], bytes)
    }

    #[test]
    fn a_snapshot_decodes_to_its_state() {
        let bytes = encode(&NET, &vec![1u32, 2, 3]);
        assert_eq!(decoded(&bytes), Ok(vec![1, 2, 3]));
    }

    #[test]
    fn older_formats_other_nets_and_damage_are_refused() {
        let good = encode(&NET, &vec![1u32, 2, 3]);
        let mut older = good.clone();
        older[8..12].copy_from_slice(&3u32.to_le_bytes());
        assert_eq!(
            decoded(&older),
            Err(RestoreError::Version {
                found: 3,
                expected: VERSION
            })
        );
        assert_eq!(
            decode::<Vec<u32>>(&[8; 16], &[], &good),
            Err(RestoreError::OtherNet)
        );
        for at in 12 + 16..good.len() {
            let mut damaged = good.clone();
            damaged[at] ^= 0x10;
            assert!(
                matches!(decoded(&damaged), Err(RestoreError::Corrupt(_))),
                "byte {at}"
            );
        }
        for len in 0..good.len() {
            assert!(decoded(&good[..len]).is_err(), "cut at {len}");
        }
        assert_eq!(decoded(b"{\"not\": 1}"), Err(RestoreError::NotASnapshot));
    }
}

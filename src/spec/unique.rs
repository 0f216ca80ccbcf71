//! `zones` and `events` read as maps that refuse a name given twice (serde's maps keep
//! the last), and the message that names both lines.

use std::collections::btree_map::Entry;
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, Error, MapAccess, Visitor};
use serde::Deserialize;

use super::{ZoneSpec, Zones};

/// How the error of a name given twice starts, for [`both_lines`] to recognise it.
const DUPLICATE: &str = "duplicate name ";

/// `zones: { … }`, each name once.
pub(super) fn zones<'de, D: Deserializer<'de>>(d: D) -> Result<Zones, D::Error> {
    let zones: BTreeMap<String, ZoneSpec> = d.deserialize_map(Unique("zones", PhantomData))?;
    Ok(Zones(zones.into_iter().collect()))
}

/// `events: { … }`, each name once.
pub(super) fn events<'de, D, V>(d: D) -> Result<BTreeMap<String, V>, D::Error>
where
    D: Deserializer<'de>,
    V: Deserialize<'de>,
{
    d.deserialize_map(Unique("events", PhantomData))
}

/// A map of the section named, refusing a key seen before.
struct Unique<V>(&'static str, PhantomData<V>);

impl<'de, V: Deserialize<'de>> Visitor<'de> for Unique<V> {
    type Value = BTreeMap<String, V>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "a map of {} by name", self.0)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            // One lookup a name (a net may name a hundred thousand zones), and the
            // error raised before the value is read, on the second entry's line.
            match out.entry(name) {
                Entry::Occupied(seen) => {
                    return Err(A::Error::custom(format!(
                        "{DUPLICATE}{:?} in {}",
                        seen.key(),
                        self.0
                    )));
                }
                Entry::Vacant(slot) => {
                    slot.insert(map.next_value()?);
                }
            }
        }
        Ok(out)
    }
}

/// The message of a name given twice, `message`, raised at byte offset `again` of
/// `src` (on the second entry's line), with the line of its first entry: `None` for any other message.
pub(super) fn both_lines(message: &str, src: &str, again: usize) -> Option<String> {
    let rest = message.strip_prefix(DUPLICATE)?;
    let (quoted, section) = rest.rsplit_once(" in ")?;
    let again = again.min(src.len());
    let eol = src[again..].find('\n').map_or(src.len(), |i| again + i);
    let before = &src[..eol];
    // The second entry: the last `"name":` up to the parser's line.
    let second = entry_keys(before, quoted).last()?;
    let from = before[..second].rfind(section).unwrap_or(0);
    let first = entry_keys(&before[from..second], quoted).next()? + from;
    let line = |at: usize| src[..at].matches('\n').count() + 1;
    Some(format!(
        "{quoted} is given twice in `{section}`, at lines {} and {}: a name stands for one entry",
        line(first),
        line(second)
    ))
}

/// The offsets in `src` of `quoted` followed by `:` (an entry key).
fn entry_keys<'a>(src: &'a str, quoted: &'a str) -> impl Iterator<Item = usize> + 'a {
    src.match_indices(quoted)
        .map(|(at, _)| at)
        .filter(move |&at| src[at + quoted.len()..].trim_start().starts_with(':'))
}

//! Which atomic components an event reaches: the event types' source places, and
//! within a type a hash on one attribute's value (the entity hash of "An Indexing
//! Method of Continuous Spatiotemporal Queries for Stream Data Processing Rules of
//! Detected Target Objects", the alpha-memory hashing of a Rete network).
//!
//! Atomic events of one type often differ by an equality on one attribute:
//! `iff == "foe" && kind == "vessel"`, `iff == "friend" && kind == "aircraft"`, … An
//! event of the type can only match the components whose `when` requires the value
//! it has, so they are filed under that value and found with one lookup; the others
//! are reached by every event of the type. Each component reached still runs its
//! filter, less the comparison the hash has already made for those filed under a
//! value (`Filter::assuming`, applied when the net is compiled).

use std::sync::Arc;

use rustc_hash::FxHashMap;

use crate::event::{Event, Value};
use crate::filter::{attr, Filter};

/// The atomic components reading one event type's source place.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dispatch {
    /// Components every event of the type reaches, in topological order.
    always: Vec<usize>,
    /// The attribute whose value selects the other components, and the components
    /// filed under each value.
    by_value: Option<(Arc<str>, ByValue)>,
    /// The states kept per key value that read these components' occurrences, whose
    /// entries an event's key value names before its step: fetched ahead
    /// ([`Component::warm`](super::component::Component::warm)).
    warm: Vec<usize>,
    /// The components reached through these whose first read an event's location
    /// alone decides (zone indexes), fetched events ahead of the step
    /// ([`Component::fetch_ahead`](super::component::Component::fetch_ahead)).
    ahead: Vec<usize>,
}

/// Components by the text value they require, each list in topological order.
type ByValue = FxHashMap<Arc<str>, Vec<usize>>;

impl Dispatch {
    /// The dispatch of the atomic components `atomics` (component id and `when`, in
    /// topological order) of one type. The hashed attribute is the one most of them
    /// require a text value of (the first such, on a tie); at least two must.
    pub(crate) fn new(atomics: &[(usize, Option<&Filter>)]) -> Dispatch {
        let required: Vec<Vec<(&Arc<str>, &Arc<str>)>> = atomics
            .iter()
            .map(|(_, f)| f.map(Filter::required_texts).unwrap_or_default())
            .collect();
        let mut counts: Vec<(&Arc<str>, usize)> = Vec::new();
        for (a, _) in required.iter().flat_map(|r| dedup_attrs(r)) {
            match counts.iter_mut().find(|(b, _)| b == &a) {
                Some((_, n)) => *n += 1,
                None => counts.push((a, 1)),
            }
        }
        let best = counts.iter().fold(
            None,
            |best: Option<(&Arc<str>, usize)>, &(a, n)| match best {
                Some((_, m)) if m >= n => best,
                _ => Some((a, n)),
            },
        );
        let Some((key, n)) = best.filter(|&(_, n)| n >= 2) else {
            return Dispatch {
                always: atomics.iter().map(|&(id, _)| id).collect(),
                by_value: None,
                warm: Vec::new(),
                ahead: Vec::new(),
            };
        };
        debug_assert!(n >= 2);
        let mut always = Vec::new();
        let mut by_value = ByValue::default();
        for (&(id, _), req) in atomics.iter().zip(&required) {
            // A filter requiring two different values of the key matches nothing; it
            // is filed under the first, where its own test still refuses every event.
            match req.iter().find(|(a, _)| *a == key) {
                Some((_, text)) => by_value.entry(Arc::clone(text)).or_default().push(id),
                None => always.push(id),
            }
        }
        Dispatch {
            always,
            by_value: Some((Arc::clone(key), by_value)),
            warm: Vec::new(),
            ahead: Vec::new(),
        }
    }

    /// The same, with the states `warm` to fetch ahead of a step of the type.
    pub(crate) fn warming(self, mut warm: Vec<usize>) -> Dispatch {
        warm.sort_unstable();
        warm.dedup();
        Dispatch { warm, ..self }
    }

    /// The same, with the components `ahead` to fetch events ahead of their steps.
    pub(crate) fn fetching_ahead(self, mut ahead: Vec<usize>) -> Dispatch {
        ahead.sort_unstable();
        ahead.dedup();
        Dispatch { ahead, ..self }
    }

    /// The components to fetch events ahead of a step of the type.
    pub(crate) fn ahead(&self) -> &[usize] {
        &self.ahead
    }

    /// The components filed under a value, each with the attribute and the value:
    /// every event that reaches one has that value.
    pub(crate) fn filed(&self) -> impl Iterator<Item = (usize, &str, &str)> {
        self.by_value.iter().flat_map(|(key, by_value)| {
            by_value
                .iter()
                .flat_map(move |(value, ids)| ids.iter().map(move |&id| (id, &**key, &**value)))
        })
    }

    /// The states to fetch ahead of a step of the type, in topological order.
    pub(crate) fn warm(&self) -> &[usize] {
        &self.warm
    }

    /// Calls `f` with each component `event` may match, in topological order.
    #[inline]
    pub(crate) fn each(&self, event: &Event, mut f: impl FnMut(usize)) {
        let selected: &[usize] = match &self.by_value {
            Some((key, by_value)) => match attr(event, key) {
                Some(Value::Str(v)) => by_value.get(v).map_or(&[], Vec::as_slice),
                _ => &[],
            },
            None => &[],
        };
        // Merge the two ordered lists.
        let (mut a, mut b) = (self.always.as_slice(), selected);
        loop {
            match (a.first(), b.first()) {
                (Some(&x), Some(&y)) if x < y => {
                    f(x);
                    a = &a[1..];
                }
                (_, Some(&y)) => {
                    f(y);
                    b = &b[1..];
                }
                (Some(&x), None) => {
                    f(x);
                    a = &a[1..];
                }
                (None, None) => return,
            }
        }
    }
}

/// Each attribute of `required` once.
fn dedup_attrs<'a>(
    required: &'a [(&'a Arc<str>, &'a Arc<str>)],
) -> impl Iterator<Item = (&'a Arc<str>, &'a Arc<str>)> + 'a {
    required
        .iter()
        .enumerate()
        .filter(|(i, (a, _))| !required[..*i].iter().any(|(b, _)| b == a))
        .map(|(_, &r)| r)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{Space, Timestamp};

    fn filter(src: &str) -> Filter {
        Filter::compile(src, Space::Planar).unwrap()
    }

    fn reached(d: &Dispatch, attrs: &[(&str, &str)]) -> Vec<usize> {
        let mut e = Event::new(1, "track", Timestamp::from_micros(0).unwrap());
        for (k, v) in attrs {
            e.attrs.push(((*k).into(), Value::Str((*v).into())));
        }
        let mut out = Vec::new();
        d.each(&e, |id| out.push(id));
        out
    }

    #[test]
    fn components_are_filed_under_the_value_they_require() {
        let fs = [
            filter(r#"iff == "foe" && kind == "vessel""#),
            filter("speed > 10"),
            filter(r#"kind == "aircraft" && iff == "foe""#),
            filter(r#"(kind == "vessel") && (speed > 3 || iff == "x")"#),
            filter(r#"kind == "vessel" || kind == "aircraft""#),
        ];
        let atomics: Vec<(usize, Option<&Filter>)> = vec![
            (0, Some(&fs[0])),
            (1, Some(&fs[1])),
            (2, Some(&fs[2])),
            (3, None),
            (4, Some(&fs[3])),
            (5, Some(&fs[4])),
        ];
        let d = Dispatch::new(&atomics);
        // `iff` and `kind` are both required by two; `kind` by three.
        assert_eq!(d.by_value.as_ref().map(|(k, _)| &**k), Some("kind"));
        assert_eq!(reached(&d, &[("kind", "vessel")]), [0, 1, 3, 4, 5]);
        assert_eq!(reached(&d, &[("kind", "aircraft")]), [1, 2, 3, 5]);
        assert_eq!(reached(&d, &[("kind", "ship")]), [1, 3, 5]);
        assert_eq!(reached(&d, &[]), [1, 3, 5]);
        let mut all: Vec<usize> = d
            .always
            .iter()
            .chain(d.by_value.iter().flat_map(|(_, m)| m.values().flatten()))
            .copied()
            .collect();
        all.sort_unstable();
        assert_eq!(all, [0, 1, 2, 3, 4, 5]);
    }

    #[test]
    fn no_hash_unless_two_components_share_a_required_attribute() {
        let fs = [filter(r#"iff == "foe""#), filter(r#"kind == "vessel""#)];
        let d = Dispatch::new(&[(0, Some(&fs[0])), (1, Some(&fs[1])), (2, None)]);
        assert!(d.by_value.is_none());
        assert_eq!(reached(&d, &[]), [0, 1, 2]);
    }
}

//! A state's per-key-value place: the entries in a slab (a vector with a free list),
//! found through a hash table of their slab numbers. A look-up reads the table's
//! control bytes and four-byte numbers (small enough to stay in cache with tens of
//! thousands of key values) and then the one entry it finds, where a map of whole
//! entries would read a bucket of key and value for every probe. An entry keeps its
//! number while it lives, so a timed state's queue refers to it by number.

use std::fmt;
use std::hash::{BuildHasher, Hash};

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::runtime::token::{StateKeyRef, StateKeyVal};

/// Entries of type `V` under keys of type `K` (a state's key values, or `Close`'s
/// attribute values), each with a stable number.
#[derive(Clone)]
pub(crate) struct Keyed<V, K = StateKeyVal> {
    /// The slab number of each entry, hashed by its key.
    table: HashTable<u32>,
    /// The entries by number; `None` is a free number.
    slots: Vec<Option<(K, V)>>,
    /// The free numbers, the last reused first.
    free: Vec<u32>,
}

fn hash<K: Hash>(k: &K) -> u64 {
    FxBuildHasher.hash_one(k)
}

impl<V, K> Default for Keyed<V, K> {
    fn default() -> Keyed<V, K> {
        Keyed {
            table: HashTable::new(),
            slots: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<V, K: Hash + Eq> Keyed<V, K> {
    /// The number of key values held.
    pub(crate) fn len(&self) -> usize {
        self.table.len()
    }

    /// The number of `k`'s entry, if it has one.
    pub(crate) fn find(&self, k: &K) -> Option<u32> {
        self.find_hashed(hash(k), |key| key == k)
    }

    /// Brings the entry of the key hashed `h`, if it has one, into cache: the table
    /// names a candidate by the hash's tag alone (no entry is read) and each cache
    /// line of that entry is prefetched. A hint: nothing changes, and a wrong
    /// candidate costs nothing but the fetch.
    fn prefetch_hashed(&self, h: u64) {
        let Some(&i) = self.table.iter_hash(h).next() else {
            return;
        };
        if let Some(slot) = self.slots.get(i as usize) {
            let p = std::ptr::from_ref(slot).cast::<u8>();
            for line in (0..size_of::<Option<(K, V)>>()).step_by(64) {
                crate::hint::prefetch(p.wrapping_add(line));
            }
        }
    }

    /// The number of the entry whose key `is` says it is, among those hashed `h`.
    fn find_hashed(&self, h: u64, is: impl Fn(&K) -> bool) -> Option<u32> {
        let slots = &self.slots;
        self.table
            .find(h, |&i| {
                slots[i as usize].as_ref().is_some_and(|(key, _)| is(key))
            })
            .copied()
    }

    /// The entry numbered `i` (which must be held).
    pub(crate) fn get(&self, i: u32) -> &V {
        &self.slots[i as usize].as_ref().expect("a held entry").1
    }

    /// The entry numbered `i` (which must be held), to change.
    pub(crate) fn get_mut(&mut self, i: u32) -> &mut V {
        &mut self.slots[i as usize].as_mut().expect("a held entry").1
    }

    /// The key of the entry numbered `i` (which must be held).
    pub(crate) fn key(&self, i: u32) -> &K {
        &self.slots[i as usize].as_ref().expect("a held entry").0
    }

    /// The entry numbered `i`, if it is held, with its key value, to change.
    pub(crate) fn slot_mut(&mut self, i: u32) -> Option<(&K, &mut V)> {
        self.slots
            .get_mut(i as usize)
            .and_then(Option::as_mut)
            .map(|(k, v)| (&*k, v))
    }

    /// Files `v` under `k`, which has no entry; returns its number.
    pub(crate) fn insert(&mut self, k: K, v: V) -> u32 {
        let h = hash(&k);
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = Some((k, v));
                i
            }
            None => {
                let i = u32::try_from(self.slots.len()).expect("fewer than 2^32 key values");
                self.slots.push(Some((k, v)));
                i
            }
        };
        let slots = &self.slots;
        self.table.insert_unique(h, i, |&j| {
            hash(&slots[j as usize].as_ref().expect("a held entry").0)
        });
        i
    }

    /// Takes out the entry numbered `i` (which must be held), freeing its number.
    pub(crate) fn remove(&mut self, i: u32) -> (K, V) {
        let (k, v) = self.slots[i as usize].take().expect("a held entry");
        if let Ok(entry) = self.table.find_entry(hash(&k), |&j| j == i) {
            entry.remove();
        }
        self.free.push(i);
        (k, v)
    }

    /// Every entry with its number, in the order of their numbers.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &K, &V)> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|(k, v)| (i as u32, k, v)))
    }

    /// Rebuilds the hash table from the slab (after reading a snapshot).
    fn reindex(&mut self) {
        let mut table = HashTable::with_capacity(self.slots.len() - self.free.len());
        for (i, s) in self.slots.iter().enumerate() {
            if let Some((k, _)) = s {
                let slots = &self.slots;
                table.insert_unique(hash(k), i as u32, |&j| {
                    hash(&slots[j as usize].as_ref().expect("a held entry").0)
                });
            }
        }
        self.table = table;
    }
}

impl<V> Keyed<V, StateKeyVal> {
    /// The number of the entry of the key value `k` names, if it has one (as
    /// [`Keyed::find`] of the owned key value).
    pub(crate) fn find_ref(&self, k: StateKeyRef<'_>) -> Option<u32> {
        self.find_hashed(hash(&k), |key| k.is(key))
    }

    /// Brings the entry of the key value `k` names, if it has one, into cache
    /// (see `prefetch_hashed`).
    pub(crate) fn prefetch_ref(&self, k: StateKeyRef<'_>) {
        self.prefetch_hashed(hash(&k));
    }
}

impl<V: fmt::Debug, K: fmt::Debug + Hash + Eq> fmt::Debug for Keyed<V, K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.iter().map(|(_, k, v)| (k, v)))
            .finish()
    }
}

/// The saved form: the slab and its free numbers, so that a restored state gives its
/// entries the numbers they had (the table is rebuilt).
#[derive(Serialize, Deserialize)]
struct Saved<V, K> {
    slots: Vec<Option<(K, V)>>,
    free: Vec<u32>,
}

impl<V: Serialize, K: Serialize> Serialize for Keyed<V, K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct SavedRef<'a, V, K> {
            slots: &'a [Option<(K, V)>],
            free: &'a [u32],
        }
        SavedRef {
            slots: &self.slots,
            free: &self.free,
        }
        .serialize(s)
    }
}

impl<'de, V: Deserialize<'de>, K: Deserialize<'de> + Hash + Eq> Deserialize<'de> for Keyed<V, K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Keyed<V, K>, D::Error> {
        let saved = Saved::<V, K>::deserialize(d)?;
        let held = saved.slots.iter().filter(|s| s.is_some()).count();
        let vacant = saved
            .free
            .iter()
            .all(|&i| saved.slots.get(i as usize).is_some_and(Option::is_none));
        if !vacant || held + saved.free.len() != saved.slots.len() {
            return Err(serde::de::Error::custom(
                "a state's free entry numbers do not match its entries",
            ));
        }
        let mut keyed = Keyed {
            table: HashTable::new(),
            slots: saved.slots,
            free: saved.free,
        };
        keyed.reindex();
        Ok(keyed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::token::KeyVal;

    fn key(n: f64) -> StateKeyVal {
        StateKeyVal::One(KeyVal::from(&crate::event::Value::Num(n)))
    }

    #[test]
    fn entries_keep_their_numbers_and_numbers_are_reused() {
        let mut m: Keyed<u64> = Keyed::default();
        let a = m.insert(key(1.0), 10);
        let b = m.insert(key(2.0), 20);
        assert_eq!((m.find(&key(1.0)), m.find(&key(2.0))), (Some(a), Some(b)));
        assert_eq!(m.remove(a), (key(1.0), 10));
        assert_eq!(m.find(&key(1.0)), None);
        assert_eq!(m.len(), 1);
        let c = m.insert(key(3.0), 30);
        assert_eq!(c, a, "a freed number is reused");
        *m.get_mut(b) += 1;
        assert_eq!(*m.get(b), 21);
        let bytes = postcard::to_allocvec(&m).expect("saved");
        let back: Keyed<u64> = postcard::from_bytes(&bytes).expect("read");
        assert_eq!(back.find(&key(2.0)), Some(b));
        assert_eq!(back.find(&key(3.0)), Some(c));
        assert_eq!(back.find(&key(1.0)), None);
        assert_eq!(back.len(), 2);
    }

    #[test]
    fn a_borrowed_key_value_finds_what_the_owned_one_finds() {
        let one = |n: f64| KeyVal::from(&crate::event::Value::Num(n));
        let text = |t: &str| KeyVal::from(&crate::event::Value::Str(t.into()));
        let keys = [
            StateKeyVal::Whole,
            StateKeyVal::One(one(1.0)),
            StateKeyVal::One(text("a")),
            StateKeyVal::Pair(one(1.0), one(2.0)),
            StateKeyVal::Pair(one(2.0), text("a")),
        ];
        let mut m: Keyed<usize> = Keyed::default();
        for (i, k) in keys.iter().enumerate().skip(1) {
            m.insert(k.clone(), i);
        }
        for k in &keys {
            assert_eq!(m.find_ref(StateKeyRef::Val(k)), m.find(k), "{k:?}");
            if let StateKeyVal::One(v) = k {
                assert_eq!(m.find_ref(StateKeyRef::One(v)), m.find(k), "{k:?}");
                assert_eq!(StateKeyRef::One(v).to_owned(), *k);
            }
        }
        assert_eq!(m.find_ref(StateKeyRef::Val(&StateKeyVal::Whole)), None);
        assert_eq!(
            m.find_ref(StateKeyRef::One(&one(2.0))),
            None,
            "only in a pair"
        );
        assert_eq!(m.find_ref(StateKeyRef::One(&text("b"))), None);
        m.insert(StateKeyVal::Whole, 0);
        assert_eq!(m.find_ref(StateKeyRef::Val(&StateKeyVal::Whole)), Some(4));
    }

    #[test]
    fn many_entries_survive_growth() {
        let mut m: Keyed<usize> = Keyed::default();
        for i in 0..10_000 {
            m.insert(key(i as f64), i);
        }
        for i in (0..10_000).step_by(3) {
            let n = m.find(&key(i as f64)).expect("held");
            assert_eq!(m.remove(n).1, i);
        }
        for i in 0..10_000 {
            // A prefetch of a held or a removed key value changes nothing.
            m.prefetch_ref(StateKeyRef::Val(&key(i as f64)));
            assert_eq!(m.find(&key(i as f64)).is_some(), i % 3 != 0, "{i}");
        }
        assert_eq!(m.len(), m.iter().count());
    }
}

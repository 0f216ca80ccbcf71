//! Interning: the strings many events repeat (types, attribute names, short values
//! such as `"foe"`) kept once and shared, rather than allocated for every event:
//! the names a net reads in the parser's table, other short strings (values, and
//! the names a net does not read) in a table per reading thread.
//!
//! Events hold what they share by reference count, and each reading thread hands
//! out copies of its own ([`FreshCopy`]), renewed every few hundred events: the
//! events are freed on other threads (another reading thread, the detector's, the
//! writer's), and one copy shared by all would have its count's cache line go from
//! processor to processor at every event.

use std::collections::HashSet;
use std::sync::Arc;

use crate::hint::FreshCopy;

/// String values at most this long are shared between the events that carry them.
pub(super) const SHARED_VALUE_LEN: usize = 32;
/// At most this many distinct values are shared per reading thread; values first
/// seen after that get their own copy, as long ones always do.
const SHARED_VALUES: usize = 4096;

/// At most this many names a thread keeps copies of (a net reloaded many times gives
/// its reading threads new parsers, whose names are new); past it, they start again.
const LOCAL_NAMES: usize = 1024;

thread_local! {
    /// The short string values this thread has read (`"foe"`, `"vessel"`, ship
    /// names…), each kept once: events that carry the same value share it, which
    /// saves an allocation per value read and per event freed, and lets keys that
    /// hold it compare by address.
    static VALUES: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, FreshCopy>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
    /// This thread's copies of the names parsers share (a net's types and
    /// attribute names), by the address of the parser's own: the entry holds that
    /// too, so that the address is not another name's while the entry is here.
    static NAMES: std::cell::RefCell<rustc_hash::FxHashMap<usize, (Arc<str>, FreshCopy)>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
}

/// At most this many places of a line's attributes have their last name kept.
const PLACES: usize = 64;

thread_local! {
    /// The type and the attributes' names this thread last read at each place of a
    /// line (the type at 0, the first attribute at 1, the second…): lines of one feed
    /// name their fields alike, so that a name is usually found at its place, by one
    /// comparison.
    static LAST_NAMES: std::cell::RefCell<Vec<Option<FreshCopy>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// The thread's copy of `name`, a type or an attribute's name at place `at` of a
/// JSON line: the copy handed out for the last line's at that place when it has the
/// same text, else [`Known::get`]'s.
#[inline(always)]
pub(super) fn name_at(known: &Known, at: usize, name: &str) -> Arc<str> {
    LAST_NAMES.with_borrow_mut(|last| {
        if let Some(Some(copy)) = last.get_mut(at) {
            if same(copy.text(), name) {
                return copy.take();
            }
        }
        let text = known.get(name);
        if at < PLACES {
            if last.len() <= at {
                last.resize_with(at + 1, || None);
            }
            last[at] = Some(FreshCopy::from_arc(Arc::clone(&text)));
        }
        text
    })
}

/// `s` as a string value: the thread's copy of a short value, or a new one.
pub(super) fn shared_value(s: &str) -> Arc<str> {
    if s.len() > SHARED_VALUE_LEN {
        return Arc::from(s);
    }
    VALUES.with_borrow_mut(|values| {
        if let Some(v) = values.get_mut(s) {
            return v.take();
        }
        let mut v = FreshCopy::of(s);
        let text = v.take();
        if values.len() < SHARED_VALUES {
            values.insert(s.into(), v);
        }
        text
    })
}

/// The reading thread's copy of `name`, a name a parser shares (the same text).
pub(super) fn local(name: &Arc<str>) -> Arc<str> {
    NAMES.with_borrow_mut(|names| {
        let at = Arc::as_ptr(name).cast::<u8>() as usize;
        if let Some((_, copy)) = names.get_mut(&at) {
            return copy.take();
        }
        if names.len() >= LOCAL_NAMES {
            names.clear();
        }
        let mut copy = FreshCopy::of(name);
        let text = copy.take();
        names.insert(at, (Arc::clone(name), copy));
        text
    })
}

/// `a == b`, for the short names of events without a call to compare memory: up
/// to 16 bytes as two words that overlap (together they cover every byte), longer
/// ones as usual. Field names are compared with the net's names for every field of
/// every line.
#[inline]
pub(super) fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let n = a.len();
    if n != b.len() {
        return false;
    }
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=8 => word4(a, 0) == word4(b, 0) && word4(a, n - 4) == word4(b, n - 4),
        9..=16 => word8(a, 0) == word8(b, 0) && word8(a, n - 8) == word8(b, n - 8),
        _ => a == b,
    }
}

/// The 4 bytes of `s` from `at`.
#[inline]
fn word4(s: &[u8], at: usize) -> u32 {
    let mut w = [0; 4];
    w.copy_from_slice(&s[at..at + 4]);
    u32::from_ne_bytes(w)
}

/// The 8 bytes of `s` from `at`.
#[inline]
fn word8(s: &[u8], at: usize) -> u64 {
    let mut w = [0; 8];
    w.copy_from_slice(&s[at..at + 8]);
    u64::from_ne_bytes(w)
}

/// A table of shared names: scanned while small, hashed when large.
#[derive(Clone, Debug, Default)]
pub(super) struct Known {
    names: Vec<Arc<str>>,
    set: Option<HashSet<Arc<str>>>,
}

/// How many shared names are looked up by a linear scan.
const SCAN_KNOWN: usize = 12;

impl Known {
    /// Adds `name`, once.
    pub(super) fn add(&mut self, name: &str) {
        if self.find(name).is_some() {
            return;
        }
        let name: Arc<str> = Arc::from(name);
        match &mut self.set {
            Some(set) => {
                set.insert(name);
            }
            None if self.names.len() >= SCAN_KNOWN => {
                let mut set: HashSet<Arc<str>> = self.names.drain(..).collect();
                set.insert(name);
                self.set = Some(set);
            }
            None => self.names.push(name),
        }
    }

    fn find(&self, name: &str) -> Option<&Arc<str>> {
        match &self.set {
            Some(set) => set.get(name),
            None => self.names.iter().find(|n| same(n, name)),
        }
    }

    /// Whether `name` is one of the names.
    pub(super) fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The reading thread's copy of `name`: of one of the names ([`local`]), or else
    /// of a short string ([`shared_value`]), or a new one.
    pub(super) fn get(&self, name: &str) -> Arc<str> {
        match self.find(name) {
            Some(n) => local(n),
            None => shared_value(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{local, name_at, same, shared_value, Known, PLACES};
    use crate::hint::FreshCopy;
    use proptest::prelude::*;
    use std::sync::Arc;

    /// Hands out `take` a thousand times: every copy has the text, and a fresh copy
    /// comes every `FreshCopy::EVERY` times.
    fn copies(mut take: impl FnMut() -> Arc<str>, text: &str) -> usize {
        let mut last: Option<Arc<str>> = None;
        let mut copies = 0;
        for _ in 0..1_000 {
            let now = take();
            assert_eq!(&*now, text);
            if !last.as_ref().is_some_and(|l| Arc::ptr_eq(l, &now)) {
                copies += 1;
            }
            last = Some(now);
        }
        copies
    }

    #[test]
    fn a_reading_thread_hands_out_its_own_copies_afresh() {
        let name: Arc<str> = Arc::from("speed");
        let want = 1_000usize.div_ceil(FreshCopy::EVERY as usize);
        let got = copies(|| local(&name), "speed");
        assert_eq!(got, want);
        assert!(!Arc::ptr_eq(&local(&name), &name), "the thread's own copy");
        // Another thread has copies of its own.
        let theirs = std::thread::scope(|s| s.spawn(|| local(&name)).join().expect("thread"));
        assert!(!Arc::ptr_eq(&theirs, &local(&name)));
        assert_eq!(
            copies(
                || shared_value("a value of this test"),
                "a value of this test"
            ),
            want
        );
    }

    proptest! {
        /// `same` is string equality, at every length around its words' edges.
        #[test]
        fn same_is_equality(a in "[a-c]{0,20}", b in "[a-c]{0,20}", n in 0usize..20) {
            prop_assert_eq!(same(&a, &b), a == b);
            // Equal up to one byte, at every position: told apart.
            let a: String = a.chars().chain("abcabcabcabcabcabcab".chars()).take(n).collect();
            prop_assert!(same(&a, &a.clone()));
            for i in 0..a.len() {
                let mut c = a.clone().into_bytes();
                c[i] = b'z';
                let c = String::from_utf8(c).expect("ascii");
                prop_assert!(!same(&a, &c), "{} {}", a, c);
            }
        }
    }

    #[test]
    fn same_on_names() {
        assert!(same("lon", "lon") && !same("lon", "lat") && !same("iff", "iffy"));
        assert!(same("elevation", "elevation") && !same("elevation", "elevatiom"));
        assert!(same("", "") && !same("", "a"));
        let long = "a_name_longer_than_sixteen_bytes";
        assert!(same(long, long) && !same(long, "a_name_longer_than_sixteen_bytez"));
    }

    #[test]
    fn names_found_at_their_place_keep_their_text() {
        let known = {
            let mut k = Known::default();
            k.add("speed");
            k
        };
        // Names alternating at one place, a known one and others; and places past the
        // kept ones.
        for (i, name) in [
            "speed",
            "iff",
            "speed",
            "speed",
            "a name longer than 32 bytes!!!!!",
        ]
        .iter()
        .cycle()
        .take(600)
        .enumerate()
        {
            for at in [3, PLACES + 1] {
                assert_eq!(&*name_at(&known, at, name), *name, "{i}");
            }
        }
        // A name found at its place: the thread's copies, a fresh one every
        // `FreshCopy::EVERY` times.
        let want = 1_000usize.div_ceil(FreshCopy::EVERY as usize);
        assert_eq!(copies(|| name_at(&known, 5, "course"), "course"), want);
    }
}

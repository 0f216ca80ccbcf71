//! Interning: the strings many events repeat (types, attribute names, short values
//! such as `"foe"`) kept once and shared, rather than allocated for every event:
//! the names a net reads in the parser's table, other short strings (values, and
//! the names a net does not read) in a table per reading thread.

use std::collections::HashSet;
use std::sync::Arc;

/// String values at most this long are shared between the events that carry them.
pub(super) const SHARED_VALUE_LEN: usize = 32;
/// At most this many distinct values are shared per reading thread; values first
/// seen after that get their own copy, as long ones always do.
const SHARED_VALUES: usize = 4096;

thread_local! {
    /// The short string values this thread has read (`"foe"`, `"vessel"`, ship
    /// names…), each kept once: events that carry the same value share it, which
    /// saves an allocation per value read and per event freed, and lets keys that
    /// hold it compare by address.
    static VALUES: std::cell::RefCell<rustc_hash::FxHashMap<Box<str>, Arc<str>>> =
        std::cell::RefCell::new(rustc_hash::FxHashMap::default());
}

/// `s` as a string value: the shared copy of a short value, or a new one.
pub(super) fn shared_value(s: &str) -> Arc<str> {
    if s.len() > SHARED_VALUE_LEN {
        return Arc::from(s);
    }
    VALUES.with_borrow_mut(|values| {
        if let Some(v) = values.get(s) {
            return Arc::clone(v);
        }
        let v: Arc<str> = Arc::from(s);
        if values.len() < SHARED_VALUES {
            values.insert(s.into(), Arc::clone(&v));
        }
        v
    })
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
            None => self.names.iter().find(|n| &***n == name),
        }
    }

    /// Whether `name` is one of the names.
    pub(super) fn contains(&self, name: &str) -> bool {
        self.find(name).is_some()
    }

    /// The shared copy of `name`: one of the names, or else the reading thread's
    /// copy of a short string ([`shared_value`]), or a new one.
    pub(super) fn get(&self, name: &str) -> Arc<str> {
        match self.find(name) {
            Some(n) => Arc::clone(n),
            None => shared_value(name),
        }
    }
}

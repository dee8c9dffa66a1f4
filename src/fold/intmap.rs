//! [`IntMap`]: the folds' values by integer key.

use std::collections::HashMap;

/// Up to this many entries an [`IntMap`] is searched by a scan, with no hash index.
const SCAN_UP_TO: usize = 8;

/// Values by integer key (choice, tool-call and block indexes): a vector in arrival order,
/// searched by a scan while it is small (a stream has one choice and a few calls), with a
/// hash index once a hostile stream gives it more than [`SCAN_UP_TO`] entries, so neither
/// lookups nor memory grow worse than linearly. [`IntMap::sorted`] gives key order.
#[derive(Debug)]
pub struct IntMap<T> {
    entries: Vec<(i64, T)>,
    #[allow(clippy::box_collection)] // one word, not a map's three, while there is no index
    index: Option<Box<HashMap<i64, usize>>>,
}

impl<T> Default for IntMap<T> {
    fn default() -> Self {
        IntMap {
            entries: Vec::new(),
            index: None,
        }
    }
}

impl<T> IntMap<T> {
    fn position(&self, key: i64) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(&key).copied(),
            None => self.entries.iter().position(|(k, _)| *k == key),
        }
    }

    /// The value of `key`, if the map has it.
    pub fn get(&self, key: i64) -> Option<&T> {
        let at = self.position(key)?;
        self.entries.get(at).map(|(_, v)| v)
    }

    /// The value of `key`, to change in place, if the map has it.
    pub fn get_mut(&mut self, key: i64) -> Option<&mut T> {
        let at = self.position(key)?;
        self.entries.get_mut(at).map(|(_, v)| v)
    }

    /// The value of `key`, inserted with `make()` when there is none.
    #[allow(clippy::indexing_slicing)] // `at` is a found position or the entry just pushed
    pub fn get_or_insert_with(&mut self, key: i64, make: impl FnOnce() -> T) -> &mut T {
        let at = match self.position(key) {
            Some(at) => at,
            None => {
                let at = self.entries.len();
                if at == 0 {
                    // Most maps hold one entry (one choice, one call): no room for four.
                    self.entries.reserve_exact(1);
                }
                self.entries.push((key, make()));
                if let Some(index) = &mut self.index {
                    index.insert(key, at);
                } else if self.entries.len() > SCAN_UP_TO {
                    let index = self.entries.iter().enumerate().map(|(i, (k, _))| (*k, i));
                    self.index = Some(Box::new(index.collect()));
                }
                at
            }
        };
        &mut self.entries[at].1
    }

    /// Whether the map has no entry.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the map has `key`.
    pub fn contains(&self, key: i64) -> bool {
        self.position(key).is_some()
    }

    /// Sets `key` to `value`, replacing any value it had.
    pub fn insert(&mut self, key: i64, value: T) {
        match self.get_mut(key) {
            Some(slot) => *slot = value,
            None => {
                self.get_or_insert_with(key, || value);
            }
        }
    }

    /// Adds `key` (to a map used as a set); whether it was new.
    pub fn add(&mut self, key: i64) -> bool
    where
        T: Default,
    {
        if self.contains(key) {
            return false;
        }
        self.get_or_insert_with(key, T::default);
        true
    }

    /// Removes every entry (and the index).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = None;
    }

    /// The entries in key order.
    pub fn sorted(&self) -> Vec<(i64, &T)> {
        let mut all: Vec<(i64, &T)> = self.entries.iter().map(|(k, v)| (*k, v)).collect();
        all.sort_by_key(|(k, _)| *k);
        all
    }

    /// [`sorted`](Self::sorted), each value mutable.
    pub fn sorted_mut(&mut self) -> Vec<(i64, &mut T)> {
        let mut all: Vec<(i64, &mut T)> = self.entries.iter_mut().map(|(k, v)| (*k, v)).collect();
        all.sort_by_key(|(k, _)| *k);
        all
    }
}

//! The levels L2, L3, …: the live k-sets, each with the rules it still serves.
//!
//! Level k is a slab of fixed-width slots (k member ids in insertion order, and a rule
//! mask) with a free list, so sets come and go without allocating once the slab has
//! grown. A set is found through its owner (its oldest member, which holds a
//! [`SetRef`]); levels are never scanned.

/// A live set: its level (member count) and slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct SetRef {
    /// The number of members.
    pub(super) level: u32,
    /// The slot in that level.
    pub(super) slot: u32,
}

/// One level's sets.
#[derive(Debug, Default)]
struct Level {
    /// `k` ids per slot.
    members: Vec<u64>,
    /// One mask per slot (0 in a free slot).
    masks: Vec<u64>,
    free: Vec<u32>,
    live: usize,
}

/// Every level, indexed by member count (levels 0 and 1 stay empty).
#[derive(Debug, Default)]
pub(super) struct Levels {
    levels: Vec<Level>,
}

impl Levels {
    /// Stores a set (members in insertion order, at least two) serving the rules of `mask`.
    /// Returns `None` when the set is too large to address (more than `u32::MAX`
    /// members, or slots) — never for a set a bounded index can hold.
    pub(super) fn add(&mut self, members: &[u64], mask: u64) -> Option<SetRef> {
        let k = members.len();
        let level = u32::try_from(k).ok()?;
        if self.levels.len() <= k {
            self.levels.resize_with(k + 1, Level::default);
        }
        let l = &mut self.levels[k];
        let slot = match l.free.pop() {
            Some(slot) => {
                let at = slot as usize * k;
                l.members[at..at + k].copy_from_slice(members);
                l.masks[slot as usize] = mask;
                slot
            }
            None => {
                let slot = u32::try_from(l.masks.len()).ok()?;
                l.members.extend_from_slice(members);
                l.masks.push(mask);
                slot
            }
        };
        l.live += 1;
        Some(SetRef { level, slot })
    }

    /// Frees a set.
    pub(super) fn remove(&mut self, set: SetRef) {
        let l = &mut self.levels[set.level as usize];
        l.masks[set.slot as usize] = 0;
        l.free.push(set.slot);
        l.live -= 1;
    }

    /// A set's members, in insertion order.
    pub(super) fn members(&self, set: SetRef) -> &[u64] {
        let k = set.level as usize;
        let at = set.slot as usize * k;
        &self.levels[k].members[at..at + k]
    }

    /// The rules a set serves.
    pub(super) fn mask(&self, set: SetRef) -> u64 {
        self.levels[set.level as usize].masks[set.slot as usize]
    }

    /// The number of live sets with `k` members.
    pub(super) fn live(&self, k: usize) -> usize {
        self.levels.get(k).map_or(0, |l| l.live)
    }

    /// The largest member count any set has had (0 if none).
    pub(super) fn highest(&self) -> usize {
        self.levels.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_reused() {
        let mut l = Levels::default();
        let a = l.add(&[1, 2], 0b1).unwrap();
        let b = l.add(&[1, 2, 3], 0b10).unwrap();
        let c = l.add(&[4, 5], 0b11).unwrap();
        assert_eq!(l.members(b), &[1, 2, 3]);
        assert_eq!(l.mask(c), 0b11);
        assert_eq!((l.live(2), l.live(3), l.highest()), (2, 1, 3));
        l.remove(a);
        let d = l.add(&[7, 9], 0b100).unwrap();
        assert_eq!(d, a);
        assert_eq!(l.members(d), &[7, 9]);
        assert_eq!(l.members(c), &[4, 5]);
        assert_eq!(l.live(2), 2);
    }
}

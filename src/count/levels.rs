//! The levels L2, L3, …, stored by owner: each kept set lives with its oldest member,
//! as a header (its rules, its expiry class, its size) and its other members.
//!
//! Level k is the union of the owners' k-sets; [`Levels`] only counts them. An
//! insertion reads the sets of its neighbours one owner at a time, in one contiguous
//! run of memory each; an owner's expiry drops its sets at once. Nothing scans a level.

use smallvec::SmallVec;

/// A kept set's header.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(super) struct Head {
    /// The rules the set still serves.
    pub(super) mask: u64,
    /// Its expiry class: that of the longest window among its rules.
    pub(super) class: u32,
    /// Its members besides the owner.
    pub(super) others: u32,
}

impl Head {
    /// The set's size: its level.
    pub(super) fn level(&self) -> usize {
        self.others as usize + 1
    }
}

/// The sets one point owns.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Owned {
    heads: SmallVec<[Head; 4]>,
    /// Per set in order, its other members as offsets from the owner's id, ascending.
    others: SmallVec<[u32; 8]>,
}

impl Owned {
    /// Adds a set owned by point `owner` whose other members are `members` (ascending,
    /// all after `owner`). Returns `false`, adding nothing, if an offset does not fit in
    /// 32 bits (more than four billion points between two members).
    pub(super) fn push(&mut self, owner: u64, members: &[u64], mask: u64, class: u32) -> bool {
        let Ok(count) = u32::try_from(members.len()) else {
            return false;
        };
        let start = self.others.len();
        for &q in members {
            match q.checked_sub(owner).and_then(|d| u32::try_from(d).ok()) {
                Some(d) => self.others.push(d),
                None => {
                    self.others.truncate(start);
                    return false;
                }
            }
        }
        self.heads.push(Head {
            mask,
            class,
            others: count,
        });
        true
    }

    /// Each set: its header and its other members' offsets from the owner.
    pub(super) fn iter(&self) -> impl Iterator<Item = (Head, &[u32])> + '_ {
        let mut at = 0;
        self.heads.iter().map(move |&h| {
            let others = &self.others[at..at + h.others as usize];
            at += h.others as usize;
            (h, others)
        })
    }

    /// The headers of every set.
    pub(super) fn heads(&self) -> &[Head] {
        &self.heads
    }

    /// Drops the sets of expiry class `class`, telling `dropped` each one's header.
    pub(super) fn drop_class(&mut self, class: u32, mut dropped: impl FnMut(&Head)) {
        let (mut read, mut write) = (0, 0);
        let mut kept = 0;
        for i in 0..self.heads.len() {
            let h = self.heads[i];
            let n = h.others as usize;
            if h.class == class {
                dropped(&h);
            } else {
                self.others.copy_within(read..read + n, write);
                write += n;
                self.heads[kept] = h;
                kept += 1;
            }
            read += n;
        }
        self.heads.truncate(kept);
        self.others.truncate(write);
    }
}

/// The number of kept sets per level.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub(super) struct Levels {
    live: Vec<usize>,
}

impl Levels {
    /// One more set of `k` members.
    pub(super) fn added(&mut self, k: usize) {
        if self.live.len() <= k {
            self.live.resize(k + 1, 0);
        }
        self.live[k] += 1;
    }

    /// One set of `k` members fewer.
    pub(super) fn removed(&mut self, k: usize) {
        self.live[k] -= 1;
    }

    /// The number of kept sets with `k` members.
    pub(super) fn live(&self, k: usize) -> usize {
        self.live.get(k).copied().unwrap_or(0)
    }

    /// The largest member count any kept set has had (0 if none).
    pub(super) fn highest(&self) -> usize {
        self.live.len().saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn owned_sets_round_trip_and_drop_by_class() {
        let mut o = Owned::default();
        assert!(o.push(10, &[11], 0b1, 0));
        assert!(o.push(10, &[12, 15], 0b11, 1));
        assert!(o.push(10, &[13], 0b10, 1));
        assert!(!o.push(10, &[9], 0b1, 0));
        assert!(!o.push(10, &[10 + (1 << 33)], 0b1, 0));
        let sets: Vec<(u64, Vec<u32>)> = o.iter().map(|(h, m)| (h.mask, m.to_vec())).collect();
        assert_eq!(sets, vec![(1, vec![1]), (3, vec![2, 5]), (2, vec![3])]);
        let mut gone = Vec::new();
        o.drop_class(1, |h| gone.push(h.level()));
        assert_eq!(gone, vec![3, 2]);
        let sets: Vec<(u64, Vec<u32>)> = o.iter().map(|(h, m)| (h.mask, m.to_vec())).collect();
        assert_eq!(sets, vec![(1, vec![1])]);
        assert_eq!(o.heads().len(), 1);
    }

    #[test]
    fn levels_count() {
        let mut l = Levels::default();
        l.added(3);
        l.added(2);
        l.added(3);
        l.removed(3);
        assert_eq!((l.live(2), l.live(3), l.live(4), l.highest()), (1, 1, 0, 3));
    }
}

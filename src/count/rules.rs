//! The rules one group shares (at most 64, one bit each): the counting table (which
//! rules need each level, which complete at it), the window classes that say when a
//! set can no longer grow, and the pair test that gives each close pair its rules.

use crate::event::{Point, Space};

use super::metric::{self, Embedded, Threshold, Verdict};
use super::Rule;

/// Rules per group: one bit of a `u64` mask each.
pub(super) const GROUP: usize = 64;
/// Levels the counting table precomputes; larger levels (huge `n`) are computed.
const TABLE: usize = 130;

/// A rule as a group evaluates it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct Compiled {
    n: usize,
    window: i64,
    distinct: bool,
    threshold: Threshold,
}

/// The rules of one group.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub(super) struct Rules {
    space: Space,
    rules: Vec<Compiled>,
    /// Bits of the rules with n ≥ 2, which pairs can serve.
    paired: Vec<usize>,
    /// Bits of the rules with n == 1.
    singles: Vec<usize>,
    /// `need[k]`: rules with n > k (those for which a k-set must be kept).
    need: Vec<u64>,
    /// `complete[k]`: rules with n == k (those a new k-set matches).
    complete: Vec<u64>,
    /// The largest window of a rule with n ≥ 2 (`None` if there is none, or no window
    /// admits a pair): a point older than this is of no use.
    max_window: Option<i64>,
    /// The distinct windows of the rules with n ≥ 3, ascending: set expiry classes.
    class_windows: Vec<i64>,
    /// `class_at_least[c]`: rules whose class is c or more.
    class_at_least: Vec<u64>,
    /// The largest squared embedded distance a close pair may have.
    reach_squared: f64,
}

impl Rules {
    /// The table for `rules` (at most [`GROUP`]).
    pub(super) fn new(space: Space, rules: &[Rule]) -> Rules {
        debug_assert!(rules.len() <= GROUP);
        let compiled: Vec<Compiled> = rules
            .iter()
            .map(|r| Compiled {
                n: r.n,
                window: r.window,
                distinct: r.distinct,
                threshold: Threshold::new(space, r.distance),
            })
            .collect();
        let paired: Vec<usize> = (0..compiled.len())
            .filter(|&i| compiled[i].n >= 2)
            .collect();
        let singles = (0..compiled.len())
            .filter(|&i| compiled[i].n == 1)
            .collect();
        let max_n = compiled.iter().map(|r| r.n).max().unwrap_or(0);
        let top = max_n.min(TABLE);
        let mut need = vec![0u64; top + 1];
        let mut complete = vec![0u64; top + 1];
        for (i, r) in compiled.iter().enumerate() {
            for (k, m) in need.iter_mut().enumerate() {
                if r.n > k {
                    *m |= 1 << i;
                }
            }
            if r.n <= top {
                complete[r.n] |= 1 << i;
            }
        }
        let max_window = paired
            .iter()
            .map(|&i| compiled[i].window)
            .filter(|&w| w >= 0)
            .max();
        let mut class_windows: Vec<i64> = compiled
            .iter()
            .filter(|r| r.n >= 3 && r.window >= 0)
            .map(|r| r.window)
            .collect();
        class_windows.sort_unstable();
        class_windows.dedup();
        let class_at_least = (0..class_windows.len())
            .map(|c| {
                compiled
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.n >= 3 && r.window >= class_windows[c])
                    .fold(0u64, |m, (i, _)| m | 1 << i)
            })
            .collect();
        let reach_squared = paired
            .iter()
            .map(|&i| compiled[i].threshold.reach_squared())
            .fold(f64::NEG_INFINITY, f64::max);
        Rules {
            space,
            rules: compiled,
            paired,
            singles,
            need,
            complete,
            max_window,
            class_windows,
            class_at_least,
            reach_squared,
        }
    }

    /// The rules for which a set of `k` members must be kept to grow it.
    pub(super) fn need(&self, k: usize) -> u64 {
        match self.need.get(k) {
            Some(&m) => m,
            None => self
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.n > k)
                .fold(0, |m, (i, _)| m | 1 << i),
        }
    }

    /// The rules a new set of `k` members completes.
    pub(super) fn complete(&self, k: usize) -> u64 {
        match self.complete.get(k) {
            Some(&m) => m,
            None => self
                .rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.n == k)
                .fold(0, |m, (i, _)| m | 1 << i),
        }
    }

    /// Each rule's `n`, in rule order.
    pub(super) fn sizes(&self) -> impl Iterator<Item = usize> + '_ {
        self.rules.iter().map(|r| r.n)
    }

    /// Bits of the rules with n == 1 (every point is a match on its own).
    pub(super) fn singles(&self) -> &[usize] {
        &self.singles
    }

    /// Does a single point with this distinct value match rule `bit` (n == 1)?
    pub(super) fn single_matches(&self, bit: usize, has_distinct: bool) -> bool {
        let r = &self.rules[bit];
        r.window >= 0 && (!r.distinct || has_distinct)
    }

    /// The longest window of a rule that pairs can serve (n ≥ 2, window ≥ 0), if any:
    /// points are kept that long.
    pub(super) fn max_window(&self) -> Option<i64> {
        self.max_window
    }

    /// The largest squared embedded distance of a close pair.
    pub(super) fn reach_squared(&self) -> f64 {
        self.reach_squared
    }

    /// The windows of the set-expiry classes, ascending.
    pub(super) fn class_windows(&self) -> &[i64] {
        &self.class_windows
    }

    /// The expiry class of a set serving `mask`: that of its longest window.
    pub(super) fn class_of(&self, mask: u64) -> usize {
        (0..self.class_at_least.len())
            .rev()
            .find(|&c| mask & self.class_at_least[c] != 0)
            .unwrap_or(0)
    }

    /// The rules (n ≥ 2) the pair (`a` earlier, `b` later) satisfies: different
    /// causes, closer than the rule's distance, within its window, and for distinct
    /// rules both with a value and the values different.
    pub(super) fn pair_mask<D: Eq>(&self, a: &PairEnd<'_, D>, b: &PairEnd<'_, D>) -> u64 {
        if a.cause == b.cause {
            return 0;
        }
        let squared = metric::squared(a.embedded, b.embedded);
        if squared > self.reach_squared {
            return 0;
        }
        let dt = b.time.saturating_sub(a.time);
        let mut distance = None;
        let mut different = None;
        let mut mask = 0;
        for &i in &self.paired {
            let r = &self.rules[i];
            if dt > r.window {
                continue;
            }
            if r.distinct
                && !*different.get_or_insert_with(|| match (a.distinct, b.distinct) {
                    (Some(x), Some(y)) => x != y,
                    _ => false,
                })
            {
                continue;
            }
            let verdict = match r.threshold.verdict(squared) {
                Verdict::Measure => {
                    r.threshold
                        .settle(self.space, squared, a.embedded[2], b.embedded[2])
                }
                settled => settled,
            };
            let close = match verdict {
                Verdict::Close => true,
                Verdict::Far => false,
                Verdict::Measure => {
                    *distance.get_or_insert_with(|| metric::exact(self.space, a.at, b.at))
                        < r.threshold.d
                }
            };
            if close {
                mask |= 1 << i;
            }
        }
        mask
    }
}

/// One end of a pair, as the pair test reads it.
pub(super) struct PairEnd<'a, D> {
    /// The input event that caused the point.
    pub(super) cause: u64,
    /// Microseconds.
    pub(super) time: i64,
    /// The location.
    pub(super) at: Point,
    /// Its embedding.
    pub(super) embedded: &'a Embedded,
    /// The distinct value, if any.
    pub(super) distinct: Option<&'a D>,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(n: usize, window: i64) -> Rule {
        Rule {
            n,
            distance: 1.0,
            window,
            distinct: false,
        }
    }

    #[test]
    fn counting_table_and_classes() {
        let rules = [
            rule(3, 10),
            rule(2, 50),
            rule(5, 20),
            rule(1, 0),
            rule(3, 20),
        ];
        let t = Rules::new(Space::Planar, &rules);
        assert_eq!(t.need(2), 0b10101);
        assert_eq!(t.need(3), 0b00100);
        assert_eq!(t.need(5), 0);
        assert_eq!(t.complete(3), 0b10001);
        assert_eq!(t.complete(2), 0b00010);
        assert_eq!(t.max_window(), Some(50));
        assert_eq!(t.class_windows(), &[10, 20]);
        assert_eq!(t.class_of(0b00001), 0);
        assert_eq!(t.class_of(0b10001), 1);
        assert_eq!(t.singles(), &[3]);
        let huge = Rules::new(Space::Planar, &[rule(usize::MAX, 5)]);
        assert_eq!(huge.need(1_000_000), 1);
        assert_eq!(huge.complete(1_000_000), 0);
    }
}

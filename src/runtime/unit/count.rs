//! `Count(of, n, distance, window, distinct)`: the counting rule. Every `Count` reading
//! the same occurrences (with the same `distinct` attribute) shares one level-wise
//! index; each component is one rule of it.

use std::collections::VecDeque;
use std::fmt;

use smallvec::SmallVec;

use super::super::token::{KeyVal, Token};
use super::Cx;
use crate::count::{CountIndex, Matches, Rule};
use crate::event::Space;
use crate::model::Attr;

/// One `Count` component: its shared index and its rule in it.
#[derive(Clone, Debug)]
pub(crate) struct Count {
    pub(crate) index: usize,
    pub(crate) rule: usize,
}

impl Count {
    pub(crate) fn fire(&mut self, y: &Token, cx: &mut Cx<'_>) {
        let shared = &mut cx.counts[self.index];
        shared.insert(y, cx.cause);
        for members in shared.matches_of(y.serial, self.rule) {
            // Members in insertion order: the last is y, the terminator.
            let xs = members[..members.len() - 1]
                .iter()
                .map(|&n| shared.token(n));
            cx.out.push(Token::merge_iter(xs, y));
        }
    }
}

/// The index shared by the `Count` components of one input, and the matches of the
/// current step (each component takes its rule's share when it fires).
pub(crate) struct CountShared {
    /// The index's payloads are insertion numbers: `tokens[i]` is number `first + i`.
    index: CountIndex<u64, KeyVal>,
    distinct: Option<Attr>,
    /// The occurrences inserted that the index may still report, oldest first.
    tokens: VecDeque<Token>,
    /// The insertion number of `tokens[0]`.
    first: u64,
    /// The longest window of the rules (at least 0): an occurrence older than this is
    /// in no match to come, and leaves `tokens`.
    keep: i64,
    step: u64,
    /// Serials of the occurrences inserted in this step.
    inserted: SmallVec<[u64; 4]>,
    matches: Matches<u64>,
    /// For each match of this step, the serial of the occurrence that completed it.
    owners: Vec<u64>,
}

impl CountShared {
    pub(crate) fn new(
        space: Space,
        rules: Vec<Rule>,
        distinct: Option<Attr>,
        max_sets: usize,
    ) -> CountShared {
        let keep = rules.iter().map(|r| r.window).max().unwrap_or(0).max(0);
        CountShared {
            index: CountIndex::new(space, rules, max_sets),
            distinct,
            tokens: VecDeque::new(),
            first: 0,
            keep,
            step: u64::MAX,
            inserted: SmallVec::new(),
            matches: Matches::new(),
            owners: Vec::new(),
        }
    }

    /// Inserts `y` once per step, whichever of the sharing components fires first.
    fn insert(&mut self, y: &Token, step: u64) {
        if self.step != step {
            self.step = step;
            self.inserted.clear();
            self.matches.clear();
            self.owners.clear();
        }
        if self.inserted.contains(&y.serial) {
            return;
        }
        self.inserted.push(y.serial);
        // An occurrence without a location is close to nothing.
        let Some(at) = y.term.location else { return };
        let distinct = self.distinct.as_ref().and_then(|a| y.key(a)).cloned();
        // The index drops a point once every window has passed over it; `keep` is at
        // least the longest window, so `tokens` holds every point the index holds.
        let now = y.end.micros();
        while let Some(front) = self.tokens.front() {
            if now.saturating_sub(front.end.micros()) <= self.keep {
                break;
            }
            self.tokens.pop_front();
            self.first += 1;
        }
        let number = self.first + self.tokens.len() as u64;
        self.tokens.push_back(y.clone());
        let before = self.matches.len();
        self.index
            .insert(y.cause, y.end, at, distinct, number, &mut self.matches);
        self.owners
            .extend(std::iter::repeat_n(y.serial, self.matches.len() - before));
    }

    /// The occurrence inserted as number `number`, which the index may still report.
    fn token(&self, number: u64) -> &Token {
        &self.tokens[(number - self.first) as usize]
    }

    /// The members (insertion numbers) of the matches of `rule` completed by the
    /// occurrence `serial`.
    fn matches_of(&self, serial: u64, rule: usize) -> impl Iterator<Item = &[u64]> {
        self.matches
            .iter()
            .zip(&self.owners)
            .filter(move |((r, _), s)| *r == rule && **s == serial)
            .map(|((_, members), _)| members)
    }

    /// Live sets per level (level 2 first), and the sets refused by the cap.
    pub(crate) fn stats(&self) -> (Vec<usize>, u64) {
        (self.index.live_sets(), self.index.refused())
    }
}

impl fmt::Debug for CountShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CountShared")
            .field("live_points", &self.index.live_points())
            .field("live_sets", &self.index.live_sets())
            .finish()
    }
}

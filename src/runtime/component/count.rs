//! `Count(of, n, distance, window, distinct)`: the counting rule. Every `Count` reading
//! the same occurrences (with the same `distinct` attribute) shares one level-wise
//! index; each component is one rule of it.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use smallvec::SmallVec;

use super::super::bind::MAX_FIRINGS;
use super::super::place::TokenBudget;
use super::super::token::{Extra, KeyVal, Member, Members, Token};
use super::Cx;
use crate::count::{CountIndex, Matches, Rule};
use crate::event::{Space, Timestamp};
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
        shared.insert(y, cx.cause, cx.budget);
        if !cx.discard {
            shared.merge_matches(y, self.rule, cx.out);
        }
    }
}

/// What a match needs of an inserted occurrence besides the terminator: its interval
/// and its constituents (the one constituent of an atomic occurrence kept at hand, so
/// that a match reads no token and no constituent list).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Held {
    start: Timestamp,
    end: Timestamp,
    constituents: Constituents,
}

#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum Constituents {
    One(Member),
    Many(#[serde(with = "super::super::snapshot::members")] Arc<[Member]>),
}

impl Held {
    fn of(tok: &Token) -> Held {
        Held {
            start: tok.start,
            end: tok.end,
            constituents: match tok.sole_member() {
                Some(m) => Constituents::One(m),
                None => Constituents::Many(tok.members_list()),
            },
        }
    }
}

/// The start of the allocation behind `a`: its reference counts, two words before the
/// value (an address for a cache hint, never read through).
fn arc_start<T>(a: &Arc<T>) -> *const u8 {
    Arc::as_ptr(a)
        .cast::<u8>()
        .wrapping_sub(2 * std::mem::size_of::<usize>())
}

/// Fetches the first 128 bytes of the allocation behind `a` (its reference counts and
/// the event's fixed fields, which freeing it reads).
fn prefetch_arc<T>(a: &Arc<T>) {
    let p = arc_start(a);
    crate::hint::prefetch(p);
    crate::hint::prefetch(p.wrapping_add(64));
    crate::hint::prefetch(p.wrapping_add(127));
}

/// The index shared by the `Count` components of one input, and the matches of the
/// current step (each component takes its rule's share when it fires).
#[derive(serde::Serialize, serde::Deserialize)]
pub(crate) struct CountShared {
    /// The index's payloads are insertion numbers: `held[i]` is number `first + i`.
    index: CountIndex<u64, KeyVal>,
    distinct: Option<Attr>,
    /// The occurrences inserted that the index may still report, oldest first.
    held: VecDeque<Held>,
    /// The insertion number of `held[0]`.
    first: u64,
    /// The longest window of the rules (at least 0): an occurrence older than this is
    /// in no match to come, and leaves `held`.
    keep: i64,
    step: u64,
    /// Serials of the occurrences inserted in this step.
    inserted: SmallVec<[u64; 4]>,
    matches: Matches<u64>,
    /// For each match of this step, the serial of the occurrence that completed it.
    owners: Vec<u64>,
    /// Reused buffer for a match's constituents.
    #[serde(skip)]
    scratch: Vec<Member>,
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
            held: VecDeque::new(),
            first: 0,
            keep,
            step: u64::MAX,
            inserted: SmallVec::new(),
            matches: Matches::new(),
            owners: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Inserts `y` once per step, whichever of the sharing components fires first.
    fn insert(&mut self, y: &Token, step: u64, budget: &mut TokenBudget) {
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
        // least the longest window, so `held` holds every point the index holds.
        let now = y.end.micros();
        while let Some(front) = self.held.front() {
            if now.saturating_sub(front.end.micros()) <= self.keep {
                break;
            }
            self.held.pop_front();
            self.first += 1;
            budget.live -= 1;
        }
        // The occurrences held count against the net's cap on tokens: at the cap, the
        // oldest gives way (with every set it is in); with none held, `y` is turned away.
        if budget.live >= budget.cap {
            budget.evicted += 1;
            if self.held.pop_front().is_none() {
                return;
            }
            self.first += 1;
            budget.live -= 1;
            self.index.drop_before(self.first);
        }
        // The next occurrences to leave will be freed soon: their events are long out
        // of cache. Fetch the event of the second (its attribute list's address is
        // read next time) and the attribute list of the first.
        if let Some(Held {
            constituents: Constituents::One(m),
            ..
        }) = self.held.get(1)
        {
            prefetch_arc(&m.event);
        }
        if let Some(Held {
            constituents: Constituents::One(m),
            ..
        }) = self.held.front()
        {
            crate::hint::prefetch(m.event.attrs.as_ptr());
            crate::hint::prefetch(m.event.attrs.as_ptr().wrapping_add(1));
        }
        let number = self.first + self.held.len() as u64;
        self.held.push_back(Held::of(y));
        budget.add();
        let before = self.matches.len();
        let (held, first) = (&self.held, self.first);
        budget.truncated += self.index.insert_with(
            y.cause,
            y.end,
            at,
            distinct,
            number,
            MAX_FIRINGS,
            &mut self.matches,
            // A neighbour's entry is read for each match it is in.
            |&n| {
                if let Some(h) = held.get((n - first) as usize) {
                    crate::hint::prefetch(h);
                }
            },
        );
        self.owners
            .extend(std::iter::repeat_n(y.serial, self.matches.len() - before));
        // Each match takes a reference to its members' events, older and cold: fetch
        // them all at once rather than one miss after another.
        for (_, members) in self.matches.iter().skip(before) {
            for &n in &members[..members.len() - 1] {
                if let Some(Held {
                    constituents: Constituents::One(m),
                    ..
                }) = self.held.get((n - self.first) as usize)
                {
                    crate::hint::prefetch(arc_start(&m.event));
                }
            }
        }
    }

    /// Occurrences held (each a live point of the index).
    pub(crate) fn live(&self) -> usize {
        self.held.len()
    }

    /// Appends to `out` the occurrence of each match of `rule` completed by `y`, as
    /// [`Token::merge`] would make it of the other members and `y`.
    fn merge_matches(&mut self, y: &Token, rule: usize, out: &mut Vec<Token>) {
        let CountShared {
            held,
            first,
            matches,
            owners,
            scratch,
            ..
        } = self;
        for ((r, members), &serial) in matches.iter().zip(owners.iter()) {
            if r != rule || serial != y.serial {
                continue;
            }
            // Members in insertion order: the last is y, the terminator.
            if members.len() == 1 {
                out.push(Token::merge(&[], y));
                continue;
            }
            let xs = &members[..members.len() - 1];
            let x = |n: u64| &held[(n - *first) as usize];
            let mut start = y.start;
            // Atomic members inserted in processing order, the usual case: the
            // constituents are the members' own, in order, and go straight into place.
            let y_seq = y.sole_seq();
            let mut simple = y_seq.is_some();
            let mut last = None;
            for &n in xs {
                let x = x(n);
                start = start.min(x.start);
                match &x.constituents {
                    Constituents::One(m) if simple && last < Some(m.seq) => last = Some(m.seq),
                    _ => simple = false,
                }
            }
            let ym = match y_seq {
                Some(seq) if simple && last < Some(seq) => y.sole_member(),
                _ => None,
            };
            let constituents: Arc<[Member]> = match ym {
                Some(ym) => {
                    let one = |n: u64| match &x(n).constituents {
                        Constituents::One(m) => m.clone(),
                        Constituents::Many(_) => unreachable!("checked above"),
                    };
                    match *xs {
                        [a] => Arc::new([one(a), ym]),
                        [a, b] => Arc::new([one(a), one(b), ym]),
                        [a, b, c] => Arc::new([one(a), one(b), one(c), ym]),
                        _ => xs.iter().map(|&n| one(n)).chain([ym]).collect(),
                    }
                }
                _ => {
                    scratch.clear();
                    for &n in xs {
                        match &x(n).constituents {
                            Constituents::One(m) => scratch.push(m.clone()),
                            Constituents::Many(ms) => scratch.extend(ms.iter().cloned()),
                        }
                    }
                    y.extend_members(scratch);
                    if !scratch.is_sorted_by(|a, b| a.seq < b.seq) {
                        scratch.sort_by_key(|m| m.seq);
                        scratch.dedup_by_key(|m| m.seq);
                    }
                    scratch.drain(..).collect()
                }
            };
            out.push(Token {
                start,
                end: y.end,
                cause: y.cause,
                serial: 0,
                run: 0,
                term: y.term.clone(),
                members: Members::Many(constituents),
                extra: Extra::None,
            });
        }
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

//! Bounded reordering of input events by time, and the detection of late events.
//!
//! Events are processed in non-decreasing time. With `--max-delay D`, the runner holds
//! each event until it has seen one at least `D` newer, so events up to `D` out of order
//! are put back in order; an event older than one already released is *late*.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use crate::event::Timestamp;

/// An item offered after a later one was already released: it is not kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("late: time {time} is before {processed_up_to} already processed")]
pub struct Late {
    /// The item's time.
    pub time: Timestamp,
    /// The time of the last item released.
    pub processed_up_to: Timestamp,
}

/// Releases items in (time, line number) order, holding each until the newest time
/// seen is at least `max_delay` past it.
///
/// With a delay of 0 every item that is not late can be released as soon as it is
/// pushed. Items with equal times are never late to one another. Line numbers break
/// ties and are expected to grow with each push, as input lines do.
///
/// ```
/// use ccpn::io::reorder::Reorder;
/// use ccpn::Timestamp;
/// let t = |s: i64| Timestamp::from_micros(s * 1_000_000).unwrap();
/// let mut r = Reorder::new(5_000_000);
/// r.push(t(10), 1, "a").unwrap();
/// r.push(t(8), 2, "b").unwrap();
/// assert!(r.pop_ready().is_none()); // nothing is 5 s older than the newest (10)
/// r.push(t(14), 3, "c").unwrap();
/// assert_eq!(r.pop_ready(), Some((t(8), 2, "b")));
/// assert!(r.pop_ready().is_none());
/// assert!(r.push(t(7), 4, "d").is_err()); // 8 was already released
/// assert_eq!(r.pop_any(), Some((t(10), 1, "a")));
/// assert_eq!(r.pop_any(), Some((t(14), 3, "c")));
/// assert!(r.is_empty());
/// ```
#[derive(Debug)]
pub struct Reorder<T> {
    heap: BinaryHeap<Held<T>>,
    max_delay: i64,
    newest: Option<Timestamp>,
    released: Option<Timestamp>,
    /// The most items held; beyond it the oldest is released before its delay.
    cap: usize,
    /// Items released before their delay because the cap was reached.
    early: u64,
}

/// An item in the heap, ordered so that the smallest (time, line) is on top.
#[derive(Debug)]
struct Held<T> {
    time: Timestamp,
    line: u64,
    item: T,
}

impl<T> PartialEq for Held<T> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl<T> Eq for Held<T> {}

impl<T> PartialOrd for Held<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Held<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap.
        (other.time, other.line).cmp(&(self.time, self.line))
    }
}

impl<T> Reorder<T> {
    /// A reorder buffer holding items up to `max_delay_micros` (a negative delay counts as 0).
    pub fn new(max_delay_micros: i64) -> Self {
        Reorder {
            heap: BinaryHeap::new(),
            max_delay: max_delay_micros.max(0),
            newest: None,
            released: None,
            cap: usize::MAX,
            early: 0,
        }
    }

    /// This buffer holding at most `cap` items (at least one): when one more comes,
    /// [`Reorder::pop_ready`] releases the oldest before its delay, so that memory
    /// stays bounded whatever the input's disorder; [`Reorder::released_early`] counts
    /// them. Items older than one released early are then late, as always.
    ///
    /// ```
    /// use ccpn::io::reorder::Reorder;
    /// use ccpn::Timestamp;
    /// let t = |s: i64| Timestamp::from_micros(s * 1_000_000).unwrap();
    /// let mut r = Reorder::new(60_000_000).with_cap(2);
    /// for (line, s) in [(1, 10), (2, 12), (3, 11)] {
    ///     r.push(t(s), line, ()).unwrap();
    /// }
    /// assert_eq!(r.pop_ready(), Some((t(10), 1, ()))); // three held, cap two
    /// assert_eq!(r.pop_ready(), None);
    /// assert_eq!(r.released_early(), 1);
    /// ```
    pub fn with_cap(mut self, cap: usize) -> Self {
        self.cap = cap.max(1);
        self
    }

    /// How many items were released before their delay because the cap was reached.
    pub fn released_early(&self) -> u64 {
        self.early
    }

    /// A reorder buffer as another was when it had seen times up to `newest` and
    /// released up to `released`, holding nothing yet: to resume from a checkpoint,
    /// which puts the items the other held back with [`Reorder::push`].
    ///
    /// ```
    /// use ccpn::io::reorder::Reorder;
    /// use ccpn::Timestamp;
    /// let t = |s: i64| Timestamp::from_micros(s * 1_000_000).unwrap();
    /// let mut r = Reorder::new(5_000_000);
    /// for (line, s) in [(1, 10), (2, 16), (3, 12)] {
    ///     r.push(t(s), line, ()).unwrap();
    /// }
    /// assert_eq!(r.pop_ready(), Some((t(10), 1, ())));
    /// let held: Vec<u64> = r.held_lines().collect();
    ///
    /// let mut again = Reorder::resumed(5_000_000, r.newest_seen(), r.released_up_to());
    /// for line in held {
    ///     let s = [0, 10, 16, 12][line as usize];
    ///     again.push(t(s), line, ()).unwrap();
    /// }
    /// assert!(again.push(t(9), 4, ()).is_err()); // late, as it would have been
    /// assert_eq!(again.pop_any(), r.pop_any());
    /// ```
    pub fn resumed(
        max_delay_micros: i64,
        newest: Option<Timestamp>,
        released: Option<Timestamp>,
    ) -> Self {
        Reorder {
            newest,
            released,
            ..Reorder::new(max_delay_micros)
        }
    }

    /// The line numbers of the items held, in no particular order.
    pub fn held_lines(&self) -> impl Iterator<Item = u64> + '_ {
        self.heap.iter().map(|h| h.line)
    }

    /// The delay, in microseconds.
    pub fn max_delay_micros(&self) -> i64 {
        self.max_delay
    }

    /// Whether an item at `time` would be late now: what [`Reorder::push`] would say.
    pub fn check(&self, time: Timestamp) -> Result<(), Late> {
        match self.released {
            Some(up_to) if time < up_to => Err(Late {
                time,
                processed_up_to: up_to,
            }),
            _ => Ok(()),
        }
    }

    /// Offers an item. `Err(Late)` if its time is before the last released time (it is
    /// then not kept).
    pub fn push(&mut self, time: Timestamp, line: u64, item: T) -> Result<(), Late> {
        self.check(time)?;
        if self.newest.is_none_or(|n| time > n) {
            self.newest = Some(time);
        }
        self.heap.push(Held { time, line, item });
        Ok(())
    }

    /// Offers an item and, when it may be released at once (nothing is held and the
    /// delay allows it, as always with a delay of 0), hands it straight back without
    /// holding it. Otherwise as [`Reorder::push`]; follow with [`Reorder::pop_ready`].
    ///
    /// ```
    /// use ccpn::io::reorder::Reorder;
    /// use ccpn::Timestamp;
    /// let mut r = Reorder::new(0);
    /// let t = Timestamp::from_micros(5).unwrap();
    /// assert_eq!(r.offer(t, 1, "a").unwrap(), Some((t, 1, "a")));
    /// assert!(r.is_empty());
    /// ```
    ///
    /// # Errors
    ///
    /// [`Late`] if the item's time is before the last released time.
    pub fn offer(
        &mut self,
        time: Timestamp,
        line: u64,
        item: T,
    ) -> Result<Option<(Timestamp, u64, T)>, Late> {
        self.check(time)?;
        if self.newest.is_none_or(|n| time > n) {
            self.newest = Some(time);
        }
        let newest = self.newest.unwrap_or(time);
        if self.heap.is_empty() && newest.since(time) >= self.max_delay {
            if self.released.is_none_or(|r| time > r) {
                self.released = Some(time);
            }
            return Ok(Some((time, line, item)));
        }
        self.heap.push(Held { time, line, item });
        Ok(None)
    }

    /// Pops the next item that may be released now (its time is at least `max_delay`
    /// before the newest time seen), in (time, line) order.
    pub fn pop_ready(&mut self) -> Option<(Timestamp, u64, T)> {
        let newest = self.newest?;
        let top = self.heap.peek()?;
        if newest.since(top.time) < self.max_delay {
            if self.heap.len() <= self.cap {
                return None;
            }
            self.early += 1;
        }
        self.pop_any()
    }

    /// Pops the next item whatever its time, in (time, line) order (at the end of input).
    pub fn pop_any(&mut self) -> Option<(Timestamp, u64, T)> {
        let Held { time, line, item } = self.heap.pop()?;
        if self.released.is_none_or(|r| time > r) {
            self.released = Some(time);
        }
        Some((time, line, item))
    }

    /// How many items are held.
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether no item is held.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// The time of the last released item, if any.
    pub fn released_up_to(&self) -> Option<Timestamp> {
        self.released
    }

    /// The newest time pushed so far (late items aside), if any.
    pub fn newest_seen(&self) -> Option<Timestamp> {
        self.newest
    }

    /// Moves the watermark to `time` without an event (a quiet live input whose
    /// clock has moved on): what is held up to `time` becomes ready ([`Reorder::pop_ready`]),
    /// and from now on an item older than `time` is late. Earlier times change nothing.
    ///
    /// ```
    /// use ccpn::io::reorder::Reorder;
    /// use ccpn::Timestamp;
    ///
    /// let t = |s: f64| Timestamp::from_secs_f64(s).unwrap();
    /// let mut r = Reorder::new(10_000_000); // 10 s
    /// r.push(t(100.0), 1, "a")?;
    /// assert_eq!(r.pop_ready(), None); // held: something up to 10 s older may come
    /// r.advance(t(105.0));
    /// assert_eq!(r.pop_ready(), Some((t(100.0), 1, "a")));
    /// assert!(r.check(t(104.0)).is_err());
    /// # Ok::<(), ccpn::io::reorder::Late>(())
    /// ```
    pub fn advance(&mut self, time: Timestamp) {
        let seen = time.saturating_add(self.max_delay);
        if self.newest.is_none_or(|n| seen > n) {
            self.newest = Some(seen);
        }
        if self.released.is_none_or(|r| time > r) {
            self.released = Some(time);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn t(us: i64) -> Timestamp {
        Timestamp::from_micros(us).expect("in range")
    }

    #[test]
    fn zero_delay_releases_at_once() {
        let mut r = Reorder::new(0);
        r.push(t(5), 1, 'a').unwrap();
        assert_eq!(r.pop_ready(), Some((t(5), 1, 'a')));
        assert!(r.is_empty());
        r.push(t(5), 2, 'b').unwrap();
        assert_eq!(r.pop_ready(), Some((t(5), 2, 'b')));
        assert_eq!(
            r.push(t(4), 3, 'c'),
            Err(Late {
                time: t(4),
                processed_up_to: t(5)
            })
        );
        assert_eq!(r.len(), 0);
        assert_eq!(r.released_up_to(), Some(t(5)));
        assert_eq!(r.pop_any(), None);
    }

    #[test]
    fn delay_reorders() {
        let mut r = Reorder::new(10);
        for (line, time) in [(1, 100), (2, 95), (3, 100), (4, 90)] {
            r.push(t(time), line, ()).unwrap();
        }
        assert_eq!(r.len(), 4);
        assert_eq!(r.pop_ready().map(|x| x.1), Some(4));
        assert_eq!(r.pop_ready(), None);
        r.push(t(105), 5, ()).unwrap();
        assert_eq!(r.pop_ready().map(|x| x.1), Some(2));
        assert_eq!(r.pop_ready(), None);
        assert!(r.push(t(94), 6, ()).is_err());
        r.push(t(95), 7, ()).unwrap();
        assert_eq!(r.pop_ready().map(|x| x.1), Some(7));
        let rest: Vec<u64> = std::iter::from_fn(|| r.pop_any()).map(|x| x.1).collect();
        assert_eq!(rest, [1, 3, 5]);
        assert_eq!(r.released_up_to(), Some(t(105)));
    }

    #[test]
    fn late_message() {
        let late = Late {
            time: t(1_500_000),
            processed_up_to: t(2_000_000),
        };
        assert_eq!(
            late.to_string(),
            "late: time 1.5 is before 2 already processed"
        );
    }

    #[test]
    fn extreme_times_do_not_overflow() {
        let mut r = Reorder::new(i64::MAX);
        r.push(Timestamp::MIN, 1, ()).unwrap();
        r.push(Timestamp::MAX, 2, ()).unwrap();
        assert_eq!(r.pop_ready(), None);
        let mut r = Reorder::new(-5);
        r.push(Timestamp::MAX, 1, ()).unwrap();
        r.push(Timestamp::MIN, 2, ()).unwrap();
        assert_eq!(r.pop_ready().map(|x| x.1), Some(2));
    }

    #[derive(Debug, Clone)]
    enum Op {
        Push(i64),
        PopReady,
        PopAny,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0i64..50).prop_map(Op::Push),
            3 => Just(Op::PopReady),
            1 => Just(Op::PopAny),
        ]
    }

    proptest! {
        /// `offer` then `pop_ready` releases the same items, in the same order, with
        /// the same late ones, as `push` then `pop_ready`.
        #[test]
        fn offer_is_push_then_pop_ready(
            delay in 0i64..15,
            times in prop::collection::vec(0i64..60, 0..200),
        ) {
            let (mut a, mut b) = (Reorder::new(delay), Reorder::new(delay));
            let (mut out_a, mut out_b) = (Vec::new(), Vec::new());
            for (line, &time) in times.iter().enumerate() {
                let line = line as u64;
                let late_a = match a.offer(t(time), line, line) {
                    Ok(Some(x)) => { out_a.push(x); false }
                    Ok(None) => false,
                    Err(_) => true,
                };
                while let Some(x) = a.pop_ready() { out_a.push(x); }
                let late_b = b.push(t(time), line, line).is_err();
                while let Some(x) = b.pop_ready() { out_b.push(x); }
                prop_assert_eq!(late_a, late_b);
                prop_assert_eq!(&out_a, &out_b);
            }
            out_a.extend(std::iter::from_fn(|| a.pop_any()));
            out_b.extend(std::iter::from_fn(|| b.pop_any()));
            prop_assert_eq!(out_a, out_b);
        }

        #[test]
        fn released_in_order_and_nothing_lost(
            delay in 0i64..15,
            ops in prop::collection::vec(op(), 0..200),
        ) {
            let mut r = Reorder::new(delay);
            let mut line = 0u64;
            let mut pushed = 0usize;
            let mut late = 0usize;
            let mut released: Vec<(Timestamp, u64)> = Vec::new();
            let mut newest: Option<i64> = None;
            for op in ops {
                match op {
                    Op::Push(time) => {
                        line += 1;
                        pushed += 1;
                        let expect_late = released.last().is_some_and(|&(r, _)| t(time) < r);
                        let got = r.push(t(time), line, line);
                        prop_assert_eq!(got.is_err(), expect_late);
                        if let Err(l) = got {
                            late += 1;
                            prop_assert_eq!(l.time, t(time));
                            prop_assert_eq!(Some(l.processed_up_to), released.last().map(|x| x.0));
                        } else {
                            newest = Some(newest.map_or(time, |n| n.max(time)));
                        }
                    }
                    Op::PopReady => {
                        if let Some((time, l, item)) = r.pop_ready() {
                            prop_assert_eq!(l, item);
                            prop_assert!(time.micros() <= newest.unwrap() - delay);
                            released.push((time, l));
                        } else if let Some(n) = newest {
                            // Nothing held is old enough.
                            let mut copy: Vec<_> = std::iter::from_fn(|| r.pop_any()).collect();
                            prop_assert!(copy.iter().all(|x| x.0.micros() > n - delay));
                            for (time, l, item) in copy.drain(..) {
                                r.heap.push(Held { time, line: l, item });
                            }
                            r.released = released.last().map(|x| x.0);
                        }
                    }
                    Op::PopAny => {
                        if let Some((time, l, _)) = r.pop_any() {
                            released.push((time, l));
                        }
                    }
                }
                prop_assert_eq!(r.released_up_to(), released.last().map(|x| x.0));
            }
            while let Some((time, l, _)) = r.pop_any() {
                released.push((time, l));
            }
            prop_assert!(released.windows(2).all(|w| w[0] <= w[1]));
            prop_assert_eq!(released.len() + late, pushed);
        }

        #[test]
        fn zero_delay_never_buffers(times in prop::collection::vec(0i64..20, 0..100)) {
            let mut r = Reorder::new(0);
            for (i, time) in times.into_iter().enumerate() {
                if r.push(t(time), i as u64, ()).is_ok() {
                    prop_assert!(r.pop_ready().is_some());
                    prop_assert!(r.is_empty());
                }
            }
        }
    }
}

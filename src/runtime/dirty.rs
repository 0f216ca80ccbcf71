//! The set of components to fire in a step, taken lowest (topologically first) first.

/// A bit set of component indices. Within a step, tokens only flow to components of
/// higher index (the model is a DAG in topological order), so the lowest marked index
/// never goes down while the set drains, and a forward scan finds the next one.
#[derive(Clone, Debug, Default)]
pub(crate) struct Dirty {
    words: Vec<u64>,
    /// No marked index is below this word.
    from: usize,
}

impl Dirty {
    /// A set for `n` components.
    pub(crate) fn new(n: usize) -> Dirty {
        Dirty {
            words: vec![0; n.div_ceil(64)],
            from: usize::MAX,
        }
    }

    /// Marks component `i`.
    pub(crate) fn mark(&mut self, i: usize) {
        self.words[i / 64] |= 1 << (i % 64);
        self.from = self.from.min(i / 64);
    }

    /// The lowest marked component, left marked.
    pub(crate) fn peek(&mut self) -> Option<usize> {
        while self.from < self.words.len() {
            let w = self.words[self.from];
            if w != 0 {
                return Some(self.from * 64 + w.trailing_zeros() as usize);
            }
            self.from += 1;
        }
        self.from = usize::MAX;
        None
    }

    /// Unmarks and returns the lowest marked component.
    pub(crate) fn pop(&mut self) -> Option<usize> {
        while self.from < self.words.len() {
            let w = self.words[self.from];
            if w != 0 {
                let bit = w.trailing_zeros() as usize;
                self.words[self.from] &= w - 1;
                return Some(self.from * 64 + bit);
            }
            self.from += 1;
        }
        self.from = usize::MAX;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pops_in_increasing_order_and_accepts_marks_while_draining() {
        let mut d = Dirty::new(200);
        for i in [130, 3, 64, 63] {
            d.mark(i);
        }
        assert_eq!(d.pop(), Some(3));
        d.mark(70);
        assert_eq!(d.pop(), Some(63));
        assert_eq!(d.pop(), Some(64));
        assert_eq!(d.pop(), Some(70));
        d.mark(199);
        assert_eq!(d.pop(), Some(130));
        assert_eq!(d.pop(), Some(199));
        assert_eq!(d.pop(), None);
        d.mark(0);
        assert_eq!(d.pop(), Some(0));
        assert_eq!(d.pop(), None);
    }
}

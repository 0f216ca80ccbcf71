//! `Times(k, of)`: repetition by arc weight — fires on every k-th occurrence, then
//! starts counting again.

use super::super::place::Place;
use super::super::token::Token;
use super::Cx;

/// The `Times` component: one place of pending occurrences (per key), and an arc of
/// weight `k` from it to the firing transition.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct Times {
    k: usize,
    window: Option<i64>,
    pending: Place,
}

impl Times {
    pub(crate) fn new(k: usize, window: Option<i64>, key: Option<crate::model::Attr>) -> Times {
        Times {
            k,
            window,
            pending: Place::new(key, window),
        }
    }

    pub(crate) fn places(&self) -> &Place {
        &self.pending
    }

    pub(crate) fn fire(&mut self, y: &Token, cx: &mut Cx<'_>) {
        if !y.fits(self.window) {
            return;
        }
        let Some(key) = self.pending.key_of(y) else {
            return;
        };
        if self.k == 1 {
            cx.emit(Token::merge(&[], y));
            return;
        }
        // Pending occurrences that no longer fit the window with y are dropped (and,
        // now and then, those of keys that went quiet).
        if let Some(w) = self.window {
            let horizon = y.end.saturating_add(-w);
            self.pending
                .remove_where(key, cx.budget, |x| x.start < horizon);
        }
        let k = self.k;
        let full = self
            .pending
            .with_bucket(key, cx.budget, |b| {
                if b.len() + 1 < k {
                    return (false, 0);
                }
                let xs: Vec<&Token> = b.iter().collect();
                cx.out.push(Token::merge(&xs, y));
                let n = b.len();
                b.clear();
                (true, n)
            })
            .unwrap_or(false);
        if !full {
            self.pending.push(key, y.clone(), cx.now, cx.budget);
        }
    }
}

//! Cache hints: a prefetch instruction, and copies of shared strings renewed now and
//! then so that no reference count is written by two processors.
//!
//! The one `unsafe` block of the crate is the prefetch instruction, which names an
//! address and reads nothing (it cannot fault, whatever the pointer).

use std::sync::Arc;

/// Asks the processor to bring the cache line holding `p` closer, for a read or an
/// atomic update soon. A hint only: nothing is read, and no result changes.
#[inline(always)]
#[allow(unsafe_code)]
pub(crate) fn prefetch<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: `prefetcht0` does not access memory as far as the program can observe:
    // it cannot fault and has no effect on any value; SSE is part of x86_64's baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// One thread's copy of a string that many values hold by reference count (an event
/// type, an attribute name, an output name), renewed every [`FreshCopy::EVERY`] times
/// it is handed out.
///
/// Each value that takes the copy writes its count, and so does the thread that
/// frees the value, often another one: with one copy for all, the count's cache line
/// would go from processor to processor at every value. A copy stops being handed
/// out long before the values that hold it are freed, so its count leaves the
/// handing thread's cache once.
#[derive(Clone, Debug)]
pub(crate) struct FreshCopy {
    text: Arc<str>,
    uses: u32,
}

impl FreshCopy {
    /// How many times one copy is handed out before a fresh one is made.
    pub(crate) const EVERY: u32 = 256;

    /// A copy of `s`, not yet handed out.
    pub(crate) fn of(s: &str) -> FreshCopy {
        FreshCopy {
            text: Arc::from(s),
            uses: 0,
        }
    }

    /// Copies of `text`, the first of them `text` itself.
    pub(crate) fn from_arc(text: Arc<str>) -> FreshCopy {
        FreshCopy { text, uses: 0 }
    }

    /// The text.
    pub(crate) fn text(&self) -> &str {
        &self.text
    }

    /// The copy: a fresh one once this one has been handed out [`FreshCopy::EVERY`]
    /// times.
    #[inline]
    pub(crate) fn take(&mut self) -> Arc<str> {
        self.uses += 1;
        if self.uses > Self::EVERY {
            self.text = Arc::from(&*self.text);
            self.uses = 1;
        }
        Arc::clone(&self.text)
    }
}

//! Cache hints.
//!
//! The one `unsafe` block of the crate: a prefetch instruction, which names an address
//! and reads nothing (it cannot fault, whatever the pointer).

#![allow(unsafe_code)]

/// Asks the processor to bring the cache line holding `p` closer, for a read or an
/// atomic update soon. A hint only: nothing is read, and no result changes.
#[inline(always)]
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

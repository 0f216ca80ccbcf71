//! Ctrl-C (SIGINT) and SIGTERM: the first stops the run in order — reading stops, the
//! detections made are written, the final checkpoint and `--stats` too — and the
//! run exits with 128 plus the signal's number (130, 143); a second one ends the
//! process at once.
//!
//! The signal only sets a flag. So that a read waiting on a quiet pipe sees it, the
//! input is [`Interruptible`]: it waits for data with `poll` in short slices, and
//! reads as at the end of the input once the flag is set.

use std::io::{self, Read};
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rustix::event::{poll, PollFd, PollFlags, Timespec};
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;

/// The number of the signal received (0: none), once [`install`]ed.
static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();

/// How long a read waits before it looks at the flag again.
const SLICE: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 50_000_000,
};

/// Catches SIGINT and SIGTERM for the rest of the run: the first sets the flag that
/// [`received`] reads, a second exits at once with 128 plus its number.
pub(crate) fn install() -> io::Result<()> {
    let got = RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)));
    let once = Arc::new(AtomicBool::new(false));
    for sig in [SIGINT, SIGTERM] {
        // In this order: the shutdown looks at the flag before this signal sets it.
        flag::register_conditional_shutdown(sig, 128 + sig, Arc::clone(&once))?;
        flag::register(sig, Arc::clone(&once))?;
        flag::register_usize(sig, Arc::clone(got), sig as usize)?;
    }
    Ok(())
}

/// The signal that stopped the run, if one did.
pub(crate) fn received() -> Option<i32> {
    let sig = RECEIVED.get()?.load(Ordering::Relaxed);
    (sig != 0).then(|| i32::try_from(sig).unwrap_or(SIGINT))
}

/// The signal's name, for messages.
pub(crate) fn name(sig: i32) -> &'static str {
    match sig {
        SIGTERM => "SIGTERM",
        _ => "SIGINT",
    }
}

/// An input that ends when a signal has come: it waits for data in slices of
/// [`SLICE`], looking at the flag between them.
pub(crate) struct Interruptible<R> {
    inner: R,
}

impl<R> Interruptible<R> {
    pub(crate) fn new(inner: R) -> Interruptible<R> {
        Interruptible { inner }
    }
}

impl<R: Read + AsFd> Read for Interruptible<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            if received().is_some() {
                return Ok(0);
            }
            let mut fds = [PollFd::new(&self.inner, PollFlags::IN)];
            match poll(&mut fds, Some(&SLICE)) {
                Ok(0) | Err(rustix::io::Errno::INTR) => {}
                // Readable, closed, or not pollable: the read says which.
                _ => return self.inner.read(buf),
            }
        }
    }
}

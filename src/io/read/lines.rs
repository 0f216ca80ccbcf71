//! [`Lines`]: the line reader, with its cap on the line length and its line numbers.

use std::io::{self, BufRead};

use super::LineError;

/// Reads lines from a [`BufRead`] into one reused buffer, with a cap on their length.
///
/// A line longer than the cap is returned as [`LineError::TooLong`] and the rest of it
/// is skipped without being buffered. Lines are numbered from 1; a line that is too
/// long still counts as a line.
#[derive(Debug)]
pub struct Lines<R> {
    reader: R,
    /// The line being read, reused from line to line.
    pub(super) buf: Vec<u8>,
    /// The longest line accepted, in bytes.
    pub(super) max: usize,
    /// The number of the last line read.
    line: u64,
}

impl<R: BufRead> Lines<R> {
    /// Reads from `reader`, accepting lines of up to `max` bytes (not counting the newline).
    pub fn new(reader: R, max: usize) -> Self {
        Lines {
            reader,
            buf: Vec::new(),
            max,
            line: 0,
        }
    }

    /// The next line, without its `\n` (a `\r` before it is kept), and its number;
    /// `None` at the end of input.
    ///
    /// An I/O error is returned as `Some(Err(..))`; reading may go on after it.
    #[allow(clippy::type_complexity)]
    pub fn next_line(&mut self) -> Option<io::Result<(u64, Result<&[u8], LineError>)>> {
        self.buf.clear();
        // Bytes of this line taken from the reader, its newline included.
        let mut taken = 0;
        loop {
            let available = match self.reader.fill_buf() {
                Ok(available) => available,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    // As far as it was read, the line counts (when it was too long).
                    self.line += u64::from(self.buf.len() > self.max);
                    return Some(Err(e));
                }
            };
            if available.is_empty() {
                break;
            }
            let (end, newline) = match memchr::memchr(b'\n', available) {
                Some(i) => (i, true),
                None => (available.len(), false),
            };
            // At most one byte past the cap is kept: enough to know the line too long.
            let keep = end.min((self.max + 1).saturating_sub(self.buf.len()));
            self.buf.extend_from_slice(&available[..keep]);
            let used = end + usize::from(newline);
            self.reader.consume(used);
            taken += used;
            if newline {
                break;
            }
        }
        if taken == 0 {
            return None;
        }
        self.line += 1;
        if self.buf.len() > self.max {
            self.buf.clear();
            return Some(Ok((self.line, Err(LineError::TooLong { max: self.max }))));
        }
        Some(Ok((self.line, Ok(self.buf.as_slice()))))
    }

    /// How many lines have been read so far (the number of the last line returned).
    pub fn line_number(&self) -> u64 {
        self.line
    }

    /// The underlying reader, to look at (its buffer, say) between lines.
    pub fn get_ref(&self) -> &R {
        &self.reader
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.reader
    }
}

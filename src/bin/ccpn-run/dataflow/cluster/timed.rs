//! Reads and writes on a handshake's connection that give up at a deadline: the
//! socket's timeout is set again before each call to what is left, so a peer that
//! sends a byte now and then cannot stretch a read past the deadline.

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

/// Why a handshake's connection gave out.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Cut {
    /// The peer closed the connection (after `after` bytes).
    #[error("{}", closed(*after))]
    Closed { after: usize },
    /// The deadline came first.
    #[error("{}", silent(*after, *waited))]
    Silent { after: usize, waited: Duration },
    /// Any other failure of the connection.
    #[error("the connection failed: {0}")]
    Io(#[from] io::Error),
}

fn closed(after: usize) -> String {
    match after {
        0 => "it connected and closed without a word".into(),
        n => format!("it closed the connection after {n} bytes of the handshake"),
    }
}

fn silent(after: usize, waited: Duration) -> String {
    // Whole seconds for a deadline's wait, milliseconds under a second.
    let waited = if waited >= Duration::from_secs(1) {
        Duration::from_secs(waited.as_secs_f64().round() as u64)
    } else {
        Duration::from_millis(waited.as_millis() as u64)
    };
    match after {
        0 => format!("it said nothing for {waited:?}"),
        n => format!("it sent {n} bytes, then nothing for {waited:?}"),
    }
}

/// A connection during its handshake.
pub(crate) struct Timed<'a> {
    stream: &'a mut TcpStream,
    started: Instant,
    deadline: Instant,
    /// The bytes read so far.
    got: usize,
}

impl<'a> Timed<'a> {
    /// `stream`, whose reads and writes end at `deadline`.
    pub(crate) fn new(stream: &'a mut TcpStream, deadline: Instant) -> Timed<'a> {
        Timed {
            stream,
            started: Instant::now(),
            deadline,
            got: 0,
        }
    }

    fn silent(&self) -> Cut {
        Cut::Silent {
            after: self.got,
            waited: self.started.elapsed(),
        }
    }

    /// The time left (at least a millisecond: a zero timeout means none), or
    /// `Silent` when there is none.
    fn left(&self) -> Result<Duration, Cut> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(self.silent());
        }
        Ok(left.max(Duration::from_millis(1)))
    }

    /// Fills `buf`.
    pub(crate) fn read_exact(&mut self, buf: &mut [u8]) -> Result<(), Cut> {
        let mut filled = 0;
        while filled < buf.len() {
            self.stream.set_read_timeout(Some(self.left()?))?;
            let r = self.stream.read(&mut buf[filled..]);
            let n = self.outcome(r)?;
            filled += n;
            self.got += n;
        }
        Ok(())
    }

    /// Sends `buf`.
    pub(crate) fn write_all(&mut self, buf: &[u8]) -> Result<(), Cut> {
        let mut sent = 0;
        while sent < buf.len() {
            self.stream.set_write_timeout(Some(self.left()?))?;
            let r = self.stream.write(&buf[sent..]);
            sent += self.outcome(r)?;
        }
        Ok(())
    }

    /// The bytes one read or write moved (0 when interrupted), or why the
    /// connection gave out.
    fn outcome(&self, r: io::Result<usize>) -> Result<usize, Cut> {
        match r {
            Ok(0) => Err(Cut::Closed { after: self.got }),
            Ok(n) => Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(0),
            Err(e) if timed_out(&e) => Err(self.silent()),
            Err(e) if closed_by_peer(&e) => Err(Cut::Closed { after: self.got }),
            Err(e) => Err(e.into()),
        }
    }
}

/// A socket timeout (`WouldBlock` on Unix, `TimedOut` on Windows).
fn timed_out(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
    )
}

/// The peer reset or closed its end.
fn closed_by_peer(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

/// Makes `stream` blocking again and without timeouts, for timely.
pub(crate) fn hand_over(stream: &TcpStream) -> io::Result<()> {
    stream.set_read_timeout(None)?;
    stream.set_write_timeout(None)?;
    stream.set_nonblocking(false)
}

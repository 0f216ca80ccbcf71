//! Connecting the processes of a cluster and building timely's allocators over the
//! connections.
//!
//! Timely's own set-up waits forever for a missing peer and reports on standard
//! output, where the detections go; this one reports on standard error and gives
//! up after a deadline. The handshake is timely's: each process connects to those
//! before it and sends its number (a big-endian `u64`), and accepts those after it.

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::thread::sleep;
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::Hooks;

/// Builders for this process's `threads` workers in a cluster of `addresses.len()`
/// processes, this one being number `me`; and what must live as long as the run.
pub(crate) fn allocators(
    addresses: &[String],
    me: usize,
    threads: usize,
    timeout: Duration,
) -> io::Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>)> {
    let sockets = connect(addresses, me, timeout)?;
    let hooks = Hooks::default();
    let process =
        ProcessBuilder::new_typed_vector(threads, hooks.refill.clone(), hooks.spill.clone());
    let (builders, guard) =
        initialize_networking_from_sockets(process, sockets, me, threads, hooks)?;
    Ok((
        builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
        Box::new(guard),
    ))
}

/// One connection to every other process (`None` for this one).
fn connect(
    addresses: &[String],
    me: usize,
    timeout: Duration,
) -> io::Result<Vec<Option<TcpStream>>> {
    let deadline = Instant::now() + timeout;
    let here = &addresses[me];
    let listener = TcpListener::bind(here)
        .map_err(|e| io::Error::new(e.kind(), format!("cannot listen on {here}: {e}")))?;
    listener.set_nonblocking(true)?;
    let mut sockets: Vec<Option<TcpStream>> = (0..addresses.len()).map(|_| None).collect();
    for (i, address) in addresses.iter().enumerate().take(me) {
        let mut stream = loop {
            match TcpStream::connect(address) {
                Ok(s) => break s,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    sleep(Duration::from_millis(100));
                }
                Err(e) => {
                    return Err(io::Error::new(
                        e.kind(),
                        format!("cannot reach process {i} at {address} within {timeout:?}: {e}"),
                    ))
                }
            }
        };
        stream.set_nodelay(true)?;
        stream.write_all(&(me as u64).to_be_bytes())?;
        sockets[i] = Some(stream);
    }
    let mut waiting = addresses.len() - me - 1;
    while waiting > 0 {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false)?;
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(
                    deadline
                        .saturating_duration_since(Instant::now())
                        .max(Duration::from_millis(1)),
                ))?;
                let mut id = [0u8; 8];
                stream.read_exact(&mut id)?;
                stream.set_read_timeout(None)?;
                let id = u64::from_be_bytes(id) as usize;
                match sockets.get_mut(id) {
                    Some(slot @ None) if id > me => {
                        *slot = Some(stream);
                        waiting -= 1;
                    }
                    _ => {
                        return Err(io::Error::other(format!(
                            "a peer says it is process {id}, which is not expected here"
                        )))
                    }
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if Instant::now() >= deadline {
                    return Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        format!(
                            "{waiting} of the processes after {me} did not connect to {here} within {timeout:?}"
                        ),
                    ));
                }
                sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(sockets)
}

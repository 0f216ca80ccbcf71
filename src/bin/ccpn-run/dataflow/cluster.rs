//! Connecting the processes of a cluster and building timely's allocators over the
//! connections.
//!
//! Timely's own set-up waits forever for a missing peer and reports on standard
//! output, where the detections go; this one reports on standard error and gives
//! up after a deadline. The handshake is timely's — each process connects to those
//! before it and sends its number (a big-endian `u64`), and accepts those after it —
//! and then both ends exchange a greeting (the net's fingerprint and the number of
//! partitions) and refuse a peer whose greeting differs: processes running
//! different nets would route events differently.

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
    greeting: &Greeting,
) -> io::Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>)> {
    let sockets = connect(addresses, me, timeout, greeting)?;
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

/// What two processes of a cluster must agree on.
pub(crate) type Greeting = [u8; 20];

/// The greeting of a process running `net` over `partitions` partitions.
pub(crate) fn greeting(net: &ccpn::Net, partitions: u32) -> Greeting {
    let mut g = [0u8; 20];
    g[..16].copy_from_slice(&net.fingerprint());
    g[16..].copy_from_slice(&partitions.to_be_bytes());
    g
}

/// Sends ours, reads the peer's, and compares them.
fn greet(stream: &mut TcpStream, peer: usize, ours: &Greeting) -> io::Result<()> {
    stream.write_all(ours)?;
    let mut theirs = [0u8; 20];
    stream.read_exact(&mut theirs)?;
    if theirs[..16] != ours[..16] {
        return Err(io::Error::other(format!(
            "process {peer} runs another net (or reads other GeoJSON files): every process needs the same"
        )));
    }
    if theirs[16..] != ours[16..] {
        let n = u32::from_be_bytes([theirs[16], theirs[17], theirs[18], theirs[19]]);
        return Err(io::Error::other(format!(
            "process {peer} splits the net into {n} partitions: every process needs the same --partitions"
        )));
    }
    Ok(())
}

/// One connection to every other process (`None` for this one).
fn connect(
    addresses: &[String],
    me: usize,
    timeout: Duration,
    greeting: &Greeting,
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
        stream.set_read_timeout(Some(remaining(deadline)))?;
        greet(&mut stream, i, greeting)?;
        stream.set_read_timeout(None)?;
        sockets[i] = Some(stream);
    }
    let mut waiting = addresses.len() - me - 1;
    while waiting > 0 {
        match listener.accept() {
            Ok((mut stream, _)) => {
                stream.set_nonblocking(false)?;
                stream.set_nodelay(true)?;
                stream.set_read_timeout(Some(remaining(deadline)))?;
                let mut id = [0u8; 8];
                stream.read_exact(&mut id)?;
                let id = u64::from_be_bytes(id) as usize;
                match sockets.get_mut(id) {
                    Some(slot @ None) if id > me => {
                        greet(&mut stream, id, greeting)?;
                        stream.set_read_timeout(None)?;
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
                        not_connected(addresses, &sockets, me, timeout),
                    ));
                }
                sleep(Duration::from_millis(20));
            }
            Err(e) => return Err(e),
        }
    }
    Ok(sockets)
}

/// Says which processes after `me` did not connect within `timeout`, with their
/// addresses: "process 2 (10.0.0.3:7000) did not connect to 10.0.0.1:7000 within 1s".
fn not_connected(
    addresses: &[String],
    sockets: &[Option<TcpStream>],
    me: usize,
    timeout: Duration,
) -> String {
    let missing: Vec<String> = (me + 1..addresses.len())
        .filter(|&i| sockets[i].is_none())
        .map(|i| format!("{i} ({})", addresses[i]))
        .collect();
    let who = if missing.len() == 1 {
        "process"
    } else {
        "processes"
    };
    format!(
        "{who} {} did not connect to process {me} at {} within {timeout:?}: is it running, \
         with -p and the same --hostfile?",
        missing.join(", "),
        addresses[me]
    )
}

/// The time left until `deadline` (at least a millisecond: a zero timeout means none).
fn remaining(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

//! Accepting the later processes of a cluster, whoever else connects.
//!
//! Each connection's handshake runs on a thread of its own (at most
//! [`MAX_PENDING`] at once; more wait in the listener's backlog) and must finish
//! within [`HANDSHAKE_TIMEOUT`] of its accepting, so a silent stranger holds
//! neither the door nor a real peer behind it. A connection that is not a process
//! of this cluster — bytes that are no handshake, a port scan, silence, another
//! version, no proof of the secret, a replayed handshake, another cluster's process
//! — is dropped with one warning line naming its address and why, and the wait for
//! the real peers goes on until the start-up deadline. A peer that proves it knows
//! the secret but runs another net, or another number of partitions, ends the
//! start-up: the cluster is misconfigured.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use super::handshake::{
    check_prefix, transcript, Hello, Malformed, Verdict, ACCEPTING, CONNECTING, HELLO_LEN, MAC_LEN,
    PREFIX, PREFIX_LEN,
};
use super::timed::{hand_over, Cut, Timed};
use super::{Local, StartError};

/// The longest one connection's handshake may take from its accepting.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Handshakes running at once.
const MAX_PENDING: usize = 32;
/// Dropped connections reported one by one; the rest are counted.
const MAX_WARNINGS: usize = 100;

/// Why a connection was dropped.
#[derive(Debug, thiserror::Error)]
enum Dropped {
    #[error(transparent)]
    Cut(#[from] Cut),
    #[error(transparent)]
    Malformed(#[from] Malformed),
    #[error(
        "it did not prove it knows the cluster secret (another secret, or a replayed handshake)"
    )]
    WrongSecret,
    #[error(
        "it says it is process {from} of {processes} meaning process {to}, and this is process \
         {me} of {n}: a process of another cluster, or one started with another -n or --hostfile"
    )]
    NotExpected {
        from: u32,
        processes: u32,
        to: u32,
        me: usize,
        n: usize,
    },
    #[error("it says it is process {0}, which is already connected: is another process started with -p {0}?")]
    AlreadyConnected(u32),
    #[error("cannot handle it: {0}")]
    Local(String),
    /// Ends the start-up.
    #[error("{0}")]
    Fatal(StartError),
}

/// What a handshake's thread reports.
type Outcome = (SocketAddr, Result<(usize, TcpStream), Dropped>);

/// Accepts a connection from each process after `local.me`, into `sockets`, until
/// `deadline`.
pub(super) fn accept_later(
    listener: &TcpListener,
    local: &Arc<Local>,
    deadline: Instant,
    sockets: &mut [Option<TcpStream>],
) -> Result<(), StartError> {
    let claimed = Arc::new(Mutex::new(vec![false; local.processes]));
    let (tx, rx) = mpsc::channel::<Outcome>();
    let mut pending = 0;
    let mut dropped = 0;
    let mut waiting = local.processes - local.me - 1;
    while waiting > 0 {
        while pending < MAX_PENDING {
            let Ok((stream, peer)) = listener.accept() else {
                // None waiting (or a failed accept, whose peer gave up first).
                break;
            };
            let (local, claimed, tx) = (local.clone(), claimed.clone(), tx.clone());
            let own_deadline = deadline.min(Instant::now() + HANDSHAKE_TIMEOUT);
            let started = thread::Builder::new()
                .name("cluster-handshake".into())
                .spawn(move || {
                    let outcome = answer(stream, &local, &claimed, own_deadline);
                    let _ = tx.send((peer, outcome));
                });
            match started {
                Ok(_) => pending += 1,
                Err(e) => report(&mut dropped, peer, &Dropped::Local(e.to_string())),
            }
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(StartError::NotConnected(not_connected(
                local, sockets, dropped,
            )));
        }
        let nap = Duration::from_millis(20).min(deadline - now);
        let (peer, outcome) = match rx.recv_timeout(nap) {
            Ok(o) => o,
            Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => continue,
        };
        pending -= 1;
        match outcome {
            Ok((i, stream)) => {
                hand_over(&stream)?;
                sockets[i] = Some(stream);
                waiting -= 1;
            }
            Err(Dropped::Fatal(e)) => return Err(e),
            Err(why) => report(&mut dropped, peer, &why),
        }
    }
    Ok(())
}

/// One warning line for a dropped connection (the first [`MAX_WARNINGS`]).
fn report(dropped: &mut usize, peer: SocketAddr, why: &Dropped) {
    *dropped += 1;
    if *dropped <= MAX_WARNINGS {
        crate::say::warning(format_args!("dropped a connection from {peer}: {why}"));
    }
    if *dropped == MAX_WARNINGS {
        crate::say::warning(format_args!(
            "{MAX_WARNINGS} connections dropped: the next ones are only counted"
        ));
    }
}

/// The accepting side of one connection's handshake: the peer's process number
/// and the connection, once it has proved it is a process this one expects.
fn answer(
    mut stream: TcpStream,
    local: &Local,
    claimed: &Mutex<Vec<bool>>,
    deadline: Instant,
) -> Result<(usize, TcpStream), Dropped> {
    stream.set_nonblocking(false).map_err(Cut::from)?;
    stream.set_nodelay(true).map_err(Cut::from)?;
    let mut t = Timed::new(&mut stream, deadline);
    let mut theirs = [0u8; HELLO_LEN];
    t.read_exact(&mut theirs[..PREFIX_LEN])?;
    if let Err(e) = check_prefix(&theirs[..PREFIX_LEN]) {
        if let Malformed::Version(_) = e {
            // Ours, so that the other side can say why too.
            let _ = t.write_all(&PREFIX);
        }
        return Err(e.into());
    }
    t.read_exact(&mut theirs[PREFIX_LEN..])?;
    let hello = Hello::decode(&theirs)?;
    let nonce = super::secret::nonce().map_err(|e| Dropped::Local(e.to_string()))?;
    let ours = local.hello(hello.from, nonce).encode();
    t.write_all(&ours)?;
    let mut proof = [0u8; MAC_LEN];
    t.read_exact(&mut proof)?;
    if !local
        .secret
        .verify(&transcript(CONNECTING, &theirs, &ours, None), &proof)
    {
        let _ = t.write_all(&[Verdict::WrongSecret.byte()]);
        return Err(Dropped::WrongSecret);
    }
    let verdict = judge(&hello, local, claimed);
    let mut reply = vec![verdict.byte()];
    reply.extend(
        local
            .secret
            .prove(&transcript(ACCEPTING, &theirs, &ours, Some(verdict))),
    );
    let from = hello.from as usize;
    if let Err(e) = t.write_all(&reply) {
        if verdict == Verdict::Accepted {
            claimed.lock().unwrap_or_else(|p| p.into_inner())[from] = false;
        }
        return Err(e.into());
    }
    match verdict {
        Verdict::Accepted => Ok((from, stream)),
        Verdict::NotExpected | Verdict::WrongSecret => Err(Dropped::NotExpected {
            from: hello.from,
            processes: hello.processes,
            to: hello.to,
            me: local.me,
            n: local.processes,
        }),
        Verdict::AlreadyConnected => Err(Dropped::AlreadyConnected(hello.from)),
        Verdict::OtherNet => Err(Dropped::Fatal(StartError::OtherNet(from))),
        Verdict::OtherPartitions => Err(Dropped::Fatal(StartError::OtherPartitions {
            peer: from,
            partitions: hello.partitions,
        })),
    }
}

/// What to answer a peer that proved it knows the secret; claims its slot when it
/// is accepted.
fn judge(hello: &Hello, local: &Local, claimed: &Mutex<Vec<bool>>) -> Verdict {
    let from = hello.from as usize;
    if hello.to as usize != local.me
        || hello.processes as usize != local.processes
        || from <= local.me
    {
        return Verdict::NotExpected;
    }
    if hello.fingerprint != local.fingerprint {
        return Verdict::OtherNet;
    }
    if hello.partitions != local.partitions {
        return Verdict::OtherPartitions;
    }
    let mut claimed = claimed.lock().unwrap_or_else(|p| p.into_inner());
    if claimed[from] {
        return Verdict::AlreadyConnected;
    }
    claimed[from] = true;
    Verdict::Accepted
}

/// Says which processes after `local.me` did not connect, with their addresses:
/// "process 2 (10.0.0.3:7000) did not connect to process 0 at 10.0.0.1:7000 within
/// 1s".
fn not_connected(local: &Local, sockets: &[Option<TcpStream>], dropped: usize) -> String {
    let missing: Vec<String> = (local.me + 1..local.processes)
        .filter(|&i| sockets[i].is_none())
        .map(|i| format!("{i} ({})", local.addresses[i]))
        .collect();
    let who = if missing.len() == 1 {
        "process"
    } else {
        "processes"
    };
    let mut said = format!(
        "{who} {} did not connect to process {} at {} within {:?}: is it running, with -p and \
         the same --hostfile?",
        missing.join(", "),
        local.me,
        local.addresses[local.me],
        local.timeout
    );
    if dropped > 0 {
        said.push_str(&format!(
            " ({dropped} other connection{} dropped: see the warnings above)",
            if dropped == 1 { " was" } else { "s were" }
        ));
    }
    said
}

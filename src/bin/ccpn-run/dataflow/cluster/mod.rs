//! Connecting the processes of a cluster and building timely's allocators over the
//! connections.
//!
//! Timely's own set-up waits forever for a missing peer, reports on standard
//! output, where the detections go, and takes whoever connects; this one reports on
//! standard error, gives up after a deadline, and authenticates every peer. Each
//! process connects to those before it and accepts those after it (timely's
//! layout); on each connection the two run a challenge–response handshake
//! (`handshake.rs`): each sends a hello with a fresh nonce, its process number and
//! the cluster's parameters (the net's fingerprint, the partitions), and each
//! proves it knows the cluster's secret (`secret.rs`) by a MAC over both hellos, so
//! a recorded handshake cannot be replayed, and a fake listener is found out as
//! surely as a fake peer. Processes whose nets or partitions differ refuse each
//! other: they would route events differently. Every read and write of the
//! start-up has a deadline (`timed.rs`); strangers at the listening port are
//! dropped and the wait goes on (`accept.rs`). Then the connections go to timely,
//! without timeouts.

mod accept;
mod handshake;
mod secret;
mod timed;

use std::io;
use std::net::{TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::thread::sleep;
use std::time::{Duration, Instant};

use timely::communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely::communication::allocator::{AllocatorBuilder, ProcessBuilder};
use timely::communication::Hooks;

use handshake::{
    check_prefix, transcript, Hello, Malformed, Verdict, ACCEPTING, CONNECTING, HELLO_LEN, MAC_LEN,
    PREFIX_LEN,
};
use secret::{Secret, SecretError};
use timed::{hand_over, Cut, Timed};

/// What this process is in its cluster, and what its peers must agree on.
pub(crate) struct Local {
    me: usize,
    processes: usize,
    addresses: Vec<String>,
    fingerprint: [u8; 16],
    partitions: u32,
    secret: Secret,
    timeout: Duration,
}

/// What the cluster's processes must agree on, and how long they wait for each
/// other.
pub(crate) struct Terms<'a> {
    pub(crate) net: &'a ccpn::Net,
    pub(crate) partitions: u32,
    pub(crate) timeout: Duration,
    pub(crate) secret_file: Option<&'a Path>,
}

impl Local {
    /// This process's hello to process `to`, with `nonce`.
    fn hello(&self, to: u32, nonce: [u8; handshake::NONCE_LEN]) -> Hello {
        Hello {
            from: self.me as u32,
            to,
            processes: self.processes as u32,
            fingerprint: self.fingerprint,
            partitions: self.partitions,
            nonce,
        }
    }
}

/// Why the cluster did not start.
#[derive(Debug, thiserror::Error)]
pub(crate) enum StartError {
    #[error(transparent)]
    Io(#[from] io::Error),
    #[error(transparent)]
    Secret(#[from] SecretError),
    #[error("cannot listen on {address}: {source}")]
    Listen { address: String, source: io::Error },
    #[error("cannot reach process {i} at {address} within {timeout:?}: {source}")]
    Unreachable {
        i: usize,
        address: String,
        timeout: Duration,
        source: io::Error,
    },
    #[error("{0}")]
    NotConnected(String),
    #[error("the handshake with process {i} at {address} failed: {cut}")]
    Lost { i: usize, address: String, cut: Cut },
    #[error("the process at {address} is not process {i} of this cluster: {why}")]
    NotAProcess {
        i: usize,
        address: String,
        why: Malformed,
    },
    #[error(
        "the process at {address} did not prove it knows the cluster secret: it is not process {i} \
         of this cluster"
    )]
    Unproved { i: usize, address: String },
    #[error(
        "process {i} at {address} refused this process: they have another cluster secret \
         (--cluster-secret-file, or {env}, must be the same for every process)",
        env = secret::ENV
    )]
    OtherSecret { i: usize, address: String },
    #[error(
        "process {i} at {address} does not expect this process (process {me} of {n}): do all \
         processes have the same -n and --hostfile?"
    )]
    NotExpected {
        i: usize,
        address: String,
        me: usize,
        n: usize,
    },
    #[error(
        "process {i} at {address} already has a process {me}: is another process started with -p {me}?"
    )]
    Taken {
        i: usize,
        address: String,
        me: usize,
    },
    #[error(
        "process {0} runs another net (or reads other GeoJSON files): every process needs the same"
    )]
    OtherNet(usize),
    #[error(
        "process {peer} splits the net into {partitions} partitions: every process needs the same \
         --partitions"
    )]
    OtherPartitions { peer: usize, partitions: u32 },
}

impl StartError {
    /// The exit status: 2 for a missing or bad secret (an argument), 6 when a peer
    /// did not authenticate or refused this process, 1 otherwise.
    pub(crate) fn status(&self) -> ExitCode {
        ExitCode::from(match self {
            StartError::Secret(_) => 2,
            StartError::NotAProcess { .. }
            | StartError::Unproved { .. }
            | StartError::OtherSecret { .. }
            | StartError::NotExpected { .. }
            | StartError::Taken { .. } => 6,
            _ => 1,
        })
    }
}

/// Builders for this process's `threads` workers in a cluster of `addresses.len()`
/// processes, this one being number `me`; and what must live as long as the run.
pub(crate) fn allocators(
    addresses: &[String],
    me: usize,
    threads: usize,
    terms: &Terms<'_>,
) -> Result<(Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>), StartError> {
    let local = Arc::new(Local {
        me,
        processes: addresses.len(),
        addresses: addresses.to_vec(),
        fingerprint: terms.net.fingerprint(),
        partitions: terms.partitions,
        secret: Secret::for_cluster(terms.secret_file, addresses)?,
        timeout: terms.timeout,
    });
    let sockets = connect(&local)?;
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

/// One authenticated connection to every other process (`None` for this one).
fn connect(local: &Arc<Local>) -> Result<Vec<Option<TcpStream>>, StartError> {
    let deadline = Instant::now() + local.timeout;
    let here = &local.addresses[local.me];
    let listener = TcpListener::bind(here).map_err(|source| StartError::Listen {
        address: here.clone(),
        source,
    })?;
    listener.set_nonblocking(true)?;
    let mut sockets: Vec<Option<TcpStream>> = (0..local.processes).map(|_| None).collect();
    for (i, slot) in sockets.iter_mut().enumerate().take(local.me) {
        let mut stream = dial(local, i, deadline)?;
        offer(&mut stream, local, i, deadline)?;
        hand_over(&stream)?;
        *slot = Some(stream);
    }
    accept::accept_later(&listener, local, deadline, &mut sockets)?;
    Ok(sockets)
}

/// A connection to process `i`, tried again until `deadline` while nothing listens.
fn dial(local: &Local, i: usize, deadline: Instant) -> Result<TcpStream, StartError> {
    let address = &local.addresses[i];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let tried = address.to_socket_addrs().and_then(|mut all| {
            let to = all.next().ok_or_else(|| {
                io::Error::new(io::ErrorKind::NotFound, "the name has no address")
            })?;
            TcpStream::connect_timeout(
                &to,
                left.clamp(Duration::from_millis(1), Duration::from_secs(5)),
            )
        });
        match tried {
            Ok(s) => {
                s.set_nodelay(true)?;
                return Ok(s);
            }
            Err(_) if !left.is_zero() => sleep(Duration::from_millis(100).min(left)),
            Err(source) => {
                return Err(StartError::Unreachable {
                    i,
                    address: address.clone(),
                    timeout: local.timeout,
                    source,
                })
            }
        }
    }
}

/// The connecting side of the handshake with process `i`: Ok once `i` has proved
/// it knows the secret and accepted this process.
fn offer(
    stream: &mut TcpStream,
    local: &Local,
    i: usize,
    deadline: Instant,
) -> Result<(), StartError> {
    let address = local.addresses[i].clone();
    let lost = |cut: Cut| StartError::Lost {
        i,
        address: address.clone(),
        cut,
    };
    let not_a_process = |why: Malformed| StartError::NotAProcess {
        i,
        address: address.clone(),
        why,
    };
    let mut t = Timed::new(stream, deadline);
    let ours = local.hello(i as u32, secret::nonce()?).encode();
    t.write_all(&ours).map_err(lost)?;
    let mut theirs = [0u8; HELLO_LEN];
    t.read_exact(&mut theirs[..PREFIX_LEN]).map_err(lost)?;
    check_prefix(&theirs[..PREFIX_LEN]).map_err(not_a_process)?;
    t.read_exact(&mut theirs[PREFIX_LEN..]).map_err(lost)?;
    let hello = Hello::decode(&theirs).map_err(not_a_process)?;
    let proof = local
        .secret
        .prove(&transcript(CONNECTING, &ours, &theirs, None));
    t.write_all(&proof).map_err(lost)?;
    let mut verdict = [0u8; 1];
    t.read_exact(&mut verdict).map_err(lost)?;
    let verdict = Verdict::decode(verdict[0]).map_err(not_a_process)?;
    if !verdict.proved() {
        return Err(StartError::OtherSecret { i, address });
    }
    let mut proof = [0u8; MAC_LEN];
    t.read_exact(&mut proof).map_err(lost)?;
    let genuine = local.secret.verify(
        &transcript(ACCEPTING, &ours, &theirs, Some(verdict)),
        &proof,
    );
    if !genuine || hello.from as usize != i || hello.to as usize != local.me {
        return Err(StartError::Unproved { i, address });
    }
    match verdict {
        Verdict::Accepted if hello.fingerprint != local.fingerprint => Err(StartError::OtherNet(i)),
        Verdict::Accepted if hello.partitions != local.partitions => {
            Err(StartError::OtherPartitions {
                peer: i,
                partitions: hello.partitions,
            })
        }
        Verdict::Accepted => Ok(()),
        Verdict::OtherNet => Err(StartError::OtherNet(i)),
        Verdict::OtherPartitions => Err(StartError::OtherPartitions {
            peer: i,
            partitions: hello.partitions,
        }),
        Verdict::AlreadyConnected => Err(StartError::Taken {
            i,
            address,
            me: local.me,
        }),
        Verdict::NotExpected | Verdict::WrongSecret => Err(StartError::NotExpected {
            i,
            address,
            me: local.me,
            n: local.processes,
        }),
    }
}

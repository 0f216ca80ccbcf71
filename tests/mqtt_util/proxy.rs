//! A TCP proxy on a free loopback port, a thread per direction of each connection:
//! a test cuts its connections (both sides see them close, as when the network
//! between them breaks), or has it swallow what the client sends the broker (its
//! acknowledgements lost on the way).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex};

/// What the proxy's threads share with the test.
#[derive(Default)]
struct State {
    /// Both ends of every connection, for cutting them.
    open: Mutex<Vec<TcpStream>>,
    /// Bytes from the client are read and dropped, not forwarded.
    swallow: AtomicBool,
    /// Connections accepted so far.
    accepted: AtomicUsize,
    stop: AtomicBool,
}

/// A proxy to 127.0.0.1:`to`; stops accepting when dropped.
pub(crate) struct Proxy {
    pub(crate) port: u16,
    state: Arc<State>,
}

impl Proxy {
    /// Starts a proxy to the server on 127.0.0.1:`to`.
    pub(crate) fn start(to: u16) -> Proxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::new(State::default());
        let shared = state.clone();
        std::thread::spawn(move || {
            for client in listener.incoming() {
                if shared.stop.load(SeqCst) {
                    return;
                }
                let Ok(client) = client else { continue };
                let Ok(broker) = TcpStream::connect(("127.0.0.1", to)) else {
                    continue;
                };
                shared.accepted.fetch_add(1, SeqCst);
                relay(&shared, client, broker);
            }
        });
        Proxy { port, state }
    }

    /// Connections accepted so far.
    pub(crate) fn accepted(&self) -> usize {
        self.state.accepted.load(SeqCst)
    }

    /// Closes every connection open, on both sides.
    pub(crate) fn cut(&self) {
        for s in self.state.open.lock().unwrap().drain(..) {
            let _ = s.shutdown(Shutdown::Both);
        }
    }

    /// Whether to drop what clients send from now on, instead of forwarding it.
    pub(crate) fn swallow(&self, on: bool) {
        self.state.swallow.store(on, SeqCst);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.state.stop.store(true, SeqCst);
        self.cut();
        // Wakes the accepting thread, which then sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

/// Forwards between `client` and `broker`, a thread per direction.
fn relay(state: &Arc<State>, client: TcpStream, broker: TcpStream) {
    let (Ok(c), Ok(b)) = (client.try_clone(), broker.try_clone()) else {
        return;
    };
    state.open.lock().unwrap().extend([c, b]);
    let (Ok(client_in), Ok(broker_in)) = (client.try_clone(), broker.try_clone()) else {
        return;
    };
    let up = state.clone();
    std::thread::spawn(move || copy(client_in, broker, Some(&up.swallow)));
    std::thread::spawn(move || copy(broker_in, client, None));
}

/// Copies `from` to `to` until either closes (then closes both); drops what it
/// reads while `swallow` is on.
fn copy(mut from: TcpStream, mut to: TcpStream, swallow: Option<&AtomicBool>) {
    let mut buf = [0; 16 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if swallow.is_some_and(|s| s.load(SeqCst)) {
            continue;
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}

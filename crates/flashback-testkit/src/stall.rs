//! A TCP proxy in front of a Postgres server that forwards the handshake and then stops
//! forwarding — a hung server, a stalled network, a proxy that stops answering — without
//! closing anything: for the tests of Flashback's time limits, and `scripts/pg-stall-proxy`.
//!
//! ```no_run
//! # async fn example() {
//! use flashback_testkit::stall::{Stall, StallProxy};
//! let pg = flashback_testkit::pg_or_skip!();
//! let proxy = StallProxy::start_for(pg.url(), Stall::Never).unwrap();
//! let url = proxy.url(pg.url()); // 127.0.0.1:<its port>, sslmode=disable
//! // … open a store on `url`, then:
//! proxy.stall_now(); // every connection stops forwarding, in both directions
//! # }
//! ```
//!
//! Stalling never drops bytes or closes a socket: what arrives is held, so the server sees an
//! idle client and Flashback an idle server. [`StallProxy::resume`] forwards what was held.
//! The proxy runs on a thread of its own (tests may block); dropping it closes every
//! connection, which ends the server's side of them (an open transaction is rolled back).

use std::future::pending;
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use flashback_storage::pgurl::PgUrl;
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{oneshot, watch};

/// What happens to each connection, besides [`StallProxy::stall_now`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stall {
    /// Forward everything.
    Never,
    /// Accept the TCP connection and never answer (the server is not even contacted).
    Fully,
    /// Forward until the server has sent its `n`-th ReadyForQuery, then stall (`1`: right after
    /// the handshake). Counted on plaintext connections only (`sslmode=disable`).
    AfterReady(usize),
    /// Forward for this long after the connection opens, then stall.
    After(Duration),
}

impl std::str::FromStr for Stall {
    type Err = String;

    /// `never`, `fully`, `after-ready=N` or `after-ms=N`.
    fn from_str(s: &str) -> Result<Stall, String> {
        let number = |v: &str| v.parse::<u64>().map_err(|_| format!("not a number: {v:?}"));
        match s.split_once('=') {
            None if s == "never" => Ok(Stall::Never),
            None if s == "fully" => Ok(Stall::Fully),
            Some(("after-ready", n)) => Ok(Stall::AfterReady(number(n)? as usize)),
            Some(("after-ms", n)) => Ok(Stall::After(Duration::from_millis(number(n)?))),
            _ => Err(format!(
                "unknown stall {s:?}: use never, fully, after-ready=N or after-ms=N"
            )),
        }
    }
}

/// The running proxy; dropping it stops it and closes every connection.
pub struct StallProxy {
    port: u16,
    shared: Arc<Shared>,
    shutdown: Option<oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

struct Shared {
    upstream: String,
    rule: Stall,
    /// Every connection stalled (the switch of [`StallProxy::stall_now`]).
    stalled: watch::Sender<bool>,
    /// Stall every connection when a client sends these bytes.
    trigger: Mutex<Option<Vec<u8>>>,
    accepted: AtomicUsize,
}

impl StallProxy {
    /// Listen on 127.0.0.1 (a free port) and forward to `upstream` (`host:port`).
    pub fn start(upstream: &str, rule: Stall) -> io::Result<StallProxy> {
        Self::listen(0, upstream, rule)
    }

    /// [`StallProxy::start`] in front of the server of a `postgres://` URL.
    pub fn start_for(url: &str, rule: Stall) -> io::Result<StallProxy> {
        Self::start(&upstream_of(url)?, rule)
    }

    /// [`StallProxy::start`] on a given port (0: any free one).
    pub fn listen(port: u16, upstream: &str, rule: Stall) -> io::Result<StallProxy> {
        let listener = std::net::TcpListener::bind(("127.0.0.1", port))?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let shared = Arc::new(Shared {
            upstream: upstream.to_owned(),
            rule,
            stalled: watch::channel(false).0,
            trigger: Mutex::new(None),
            accepted: AtomicUsize::new(0),
        });
        let (shutdown, stop) = oneshot::channel();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()?;
        let serving = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("pg-stall-proxy".into())
            .spawn(move || runtime.block_on(accept(listener, serving, stop)))?;
        Ok(StallProxy {
            port,
            shared,
            shutdown: Some(shutdown),
            thread: Some(thread),
        })
    }

    /// The port it listens on (127.0.0.1).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `url` pointed at the proxy: host `127.0.0.1:<port>`, and `sslmode=disable` (so that
    /// [`Stall::AfterReady`] can count the server's messages).
    pub fn url(&self, url: &str) -> String {
        let mut out = PgUrl::parse(url)
            .map(|u| u.with_host(&format!("127.0.0.1:{}", self.port)))
            .unwrap_or_else(|_| format!("postgres://127.0.0.1:{}/postgres", self.port));
        out.push(if out.contains('?') { '&' } else { '?' });
        out.push_str("sslmode=disable");
        out
    }

    /// Stop forwarding on every connection, open and future, in both directions.
    pub fn stall_now(&self) {
        self.shared.stalled.send_replace(true);
    }

    /// Forward again (what was held first).
    pub fn resume(&self) {
        self.shared.stalled.send_replace(false);
    }

    /// Stall every connection (as [`StallProxy::stall_now`]) when a client next sends
    /// `bytes` — e.g. `COMMIT`: the chunk holding them is held, not forwarded.
    pub fn stall_when_client_sends(&self, bytes: &[u8]) {
        if let Ok(mut trigger) = self.shared.trigger.lock() {
            *trigger = Some(bytes.to_vec());
        }
    }

    /// Whether connections are stalled by the switch (or the trigger fired).
    pub fn stalled(&self) -> bool {
        *self.shared.stalled.borrow()
    }

    /// Connections accepted so far.
    pub fn accepted(&self) -> usize {
        self.shared.accepted.load(Ordering::SeqCst)
    }
}

impl Drop for StallProxy {
    fn drop(&mut self) {
        if let Some(shutdown) = self.shutdown.take() {
            let _ = shutdown.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `host:port` of a `postgres://` URL (port 5432 when it names none).
fn upstream_of(url: &str) -> io::Result<String> {
    let url = PgUrl::parse(url).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
    let host = url.host();
    let has_port = host
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok());
    Ok(match (host.is_empty(), has_port) {
        (true, _) => "127.0.0.1:5432".to_owned(),
        (false, true) => host.to_owned(),
        (false, false) => format!("{host}:5432"),
    })
}

async fn accept(listener: std::net::TcpListener, shared: Arc<Shared>, stop: oneshot::Receiver<()>) {
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let serving = async {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                continue;
            };
            shared.accepted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve(client, Arc::clone(&shared)));
        }
    };
    tokio::select! {
        _ = serving => {}
        _ = stop => {}
    }
}

/// One connection: forwarded both ways under the rule and the switch.
async fn serve(client: TcpStream, shared: Arc<Shared>) {
    if shared.rule == Stall::Fully {
        let _held = client;
        return pending().await;
    }
    let Ok(server) = TcpStream::connect(shared.upstream.as_str()).await else {
        return;
    };
    let _ = (client.set_nodelay(true), server.set_nodelay(true));
    let conn = Arc::new(Conn {
        stalled: watch::channel(false).0,
        frames: Mutex::new(Frames::default()),
    });
    if let Stall::After(after) = shared.rule {
        let conn = Arc::clone(&conn);
        tokio::spawn(async move {
            tokio::time::sleep(after).await;
            conn.stalled.send_replace(true);
        });
    }
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let up = pump(client_read, server_write, true, &conn, &shared);
    let down = pump(server_read, client_write, false, &conn, &shared);
    tokio::join!(up, down);
}

/// One connection's own state.
struct Conn {
    /// This connection stalled by its rule.
    stalled: watch::Sender<bool>,
    /// The server's messages, for [`Stall::AfterReady`].
    frames: Mutex<Frames>,
}

/// Forward `from` to `to` (`to_server`: the client's side), chunk by chunk; a chunk that
/// arrives while stalled is held until forwarding resumes.
async fn pump(
    mut from: OwnedReadHalf,
    mut to: OwnedWriteHalf,
    to_server: bool,
    conn: &Conn,
    shared: &Shared,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut first = true;
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return;
            }
            Ok(n) => n,
        };
        let chunk = &buf[..n];
        // Where the connection's rule stalls it inside this chunk, if it does.
        let mut cut = None;
        if to_server {
            if first && is_ssl_request(chunk) {
                if let Ok(mut frames) = conn.frames.lock() {
                    frames.ssl_reply = true;
                }
            }
            first = false;
            let fired = shared.trigger.lock().ok().is_some_and(|mut trigger| {
                let hit = trigger
                    .as_deref()
                    .is_some_and(|t| chunk.windows(t.len().max(1)).any(|w| w == t));
                if hit {
                    *trigger = None;
                }
                hit
            });
            if fired {
                shared.stalled.send_replace(true);
            }
        } else if let Stall::AfterReady(limit) = shared.rule {
            cut = conn
                .frames
                .lock()
                .ok()
                .and_then(|mut f| f.feed(chunk, limit));
        }
        open(conn, shared).await;
        if to.write_all(&chunk[..cut.unwrap_or(n)]).await.is_err() {
            return;
        }
        if let Some(cut) = cut {
            // The rule's limit was reached: the rest of the chunk, and all after, waits.
            conn.stalled.send_replace(true);
            open(conn, shared).await;
            if to.write_all(&chunk[cut..]).await.is_err() {
                return;
            }
        }
    }
}

/// Wait until neither the switch nor the connection's rule stalls it.
async fn open(conn: &Conn, shared: &Shared) {
    let mut all = shared.stalled.subscribe();
    let mut one = conn.stalled.subscribe();
    loop {
        if !*all.borrow_and_update() && !*one.borrow_and_update() {
            return;
        }
        tokio::select! {
            changed = all.changed() => if changed.is_err() { return pending().await },
            changed = one.changed() => if changed.is_err() { return pending().await },
        }
    }
}

/// An `SSLRequest` (the server answers it with one byte before any message).
fn is_ssl_request(chunk: &[u8]) -> bool {
    chunk.len() >= 8 && chunk[..8] == [0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f]
}

/// The server's message stream, read as far as needed to count ReadyForQuery (`Z`).
#[derive(Default)]
struct Frames {
    /// One byte (`S` or `N`) answers an SSLRequest first.
    ssl_reply: bool,
    /// TLS: nothing can be counted.
    opaque: bool,
    /// The header (type and length) read so far.
    header: Vec<u8>,
    /// The message's type and the bytes of its body still to come.
    kind: u8,
    rest: usize,
    ready: usize,
}

impl Frames {
    /// Read `data`; the offset just past the ReadyForQuery that makes `limit`, if it is here.
    fn feed(&mut self, data: &[u8], limit: usize) -> Option<usize> {
        let mut i = 0;
        while i < data.len() && !self.opaque {
            if self.ssl_reply {
                self.ssl_reply = false;
                self.opaque = data[i] == b'S';
                i += 1;
            } else if self.rest > 0 {
                let take = self.rest.min(data.len() - i);
                i += take;
                self.rest -= take;
                if self.rest == 0 && self.done() == Some(limit) {
                    return Some(i);
                }
            } else {
                self.header.push(data[i]);
                i += 1;
                if self.header.len() == 5 {
                    self.kind = self.header[0];
                    let len = u32::from_be_bytes([
                        self.header[1],
                        self.header[2],
                        self.header[3],
                        self.header[4],
                    ]);
                    self.rest = (len as usize).saturating_sub(4);
                    self.header.clear();
                    if self.rest == 0 && self.done() == Some(limit) {
                        return Some(i);
                    }
                }
            }
        }
        None
    }

    /// A message ended: the count of ReadyForQuery when it was one.
    fn done(&mut self) -> Option<usize> {
        if self.kind == b'Z' {
            self.ready += 1;
            Some(self.ready)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ready_for_query_is_counted_across_chunks() {
        // AuthenticationOk, ReadyForQuery, then a CommandComplete and another ReadyForQuery.
        let mut stream = vec![b'R', 0, 0, 0, 8, 0, 0, 0, 0, b'Z', 0, 0, 0, 5, b'I'];
        stream.extend([
            b'C', 0, 0, 0, 8, b'S', b'E', b'T', 0, b'Z', 0, 0, 0, 5, b'T',
        ]);
        let mut f = Frames::default();
        assert_eq!(f.feed(&stream[..12], 2), None);
        assert_eq!(f.feed(&stream[12..], 2), Some(stream.len() - 12));
        let mut f = Frames::default();
        assert_eq!(f.feed(&stream, 1), Some(15));
        // After an SSLRequest: `N` then messages; `S` (TLS) counts nothing.
        let mut f = Frames {
            ssl_reply: true,
            ..Frames::default()
        };
        let mut plain = vec![b'N'];
        plain.extend(&stream);
        assert_eq!(f.feed(&plain, 1), Some(16));
        let mut f = Frames {
            ssl_reply: true,
            ..Frames::default()
        };
        assert_eq!(f.feed(b"S\x16\x03\x01", 1), None);
        assert!(f.opaque);
    }

    /// An echo server standing in for Postgres: what it receives, it sends back.
    fn echo() -> (String, Arc<AtomicUsize>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let accepted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&accepted);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                count.fetch_add(1, Ordering::SeqCst);
                std::thread::spawn(move || {
                    let mut back = stream.try_clone().unwrap();
                    let _ = std::io::copy(&mut &stream, &mut back);
                });
            }
        });
        (addr, accepted)
    }

    /// Send `byte` through a client connection: whether it comes back within 300 ms.
    fn echoed(client: &mut std::net::TcpStream, byte: u8) -> bool {
        use std::io::{Read as _, Write as _};
        client.write_all(&[byte]).unwrap();
        let mut got = [0u8];
        matches!(client.read(&mut got), Ok(1) if got[0] == byte)
    }

    fn client(proxy: &StallProxy) -> std::net::TcpStream {
        let c = std::net::TcpStream::connect(("127.0.0.1", proxy.port())).unwrap();
        c.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        c
    }

    #[test]
    fn stalls_as_told() {
        let (upstream, accepted) = echo();
        let proxy = StallProxy::start(&upstream, Stall::Never).unwrap();
        let mut c = client(&proxy);
        assert!(echoed(&mut c, b'a'));
        proxy.stall_now();
        assert!(!echoed(&mut c, b'b'), "forwarded while stalled");
        proxy.resume();
        let mut held = [0u8];
        std::io::Read::read_exact(&mut c, &mut held).unwrap();
        assert_eq!(held, [b'b'], "what was held is forwarded on resume");
        proxy.stall_when_client_sends(b"y");
        assert!(echoed(&mut c, b'x'));
        assert!(!proxy.stalled());
        assert!(!echoed(&mut c, b'y'), "the trigger was forwarded");
        assert!(proxy.stalled());

        let proxy = StallProxy::start(&upstream, Stall::After(Duration::from_millis(400))).unwrap();
        let mut c = client(&proxy);
        assert!(echoed(&mut c, b'a'));
        std::thread::sleep(Duration::from_millis(500));
        assert!(!echoed(&mut c, b'b'), "forwarded after its time");

        let before = accepted.load(Ordering::SeqCst);
        let proxy = StallProxy::start(&upstream, Stall::Fully).unwrap();
        let mut c = client(&proxy);
        assert!(!echoed(&mut c, b'a'));
        assert_eq!(proxy.accepted(), 1);
        assert_eq!(
            accepted.load(Ordering::SeqCst),
            before,
            "the server was contacted"
        );
    }

    #[test]
    fn rules_and_upstreams_are_read() {
        assert_eq!("never".parse(), Ok(Stall::Never));
        assert_eq!("after-ready=2".parse(), Ok(Stall::AfterReady(2)));
        assert_eq!(
            "after-ms=300".parse(),
            Ok(Stall::After(Duration::from_millis(300)))
        );
        assert!("sometimes".parse::<Stall>().is_err());
        assert_eq!(
            upstream_of("postgresql://postgres@127.0.0.1:5432/postgres").unwrap(),
            "127.0.0.1:5432"
        );
        assert_eq!(upstream_of("postgres://u@db/app").unwrap(), "db:5432");
    }
}

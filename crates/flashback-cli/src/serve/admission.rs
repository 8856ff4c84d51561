//! Who is served, and what the others get: the connection cap of `flashback serve`, the lobby
//! in front of it and the answer past it. No request that arrived whole goes unanswered.
//!
//! * **The lobby.** Every accepted connection first waits there until its first request head
//!   has arrived in full (within `header_timeout`, else it is closed: there was no request).
//!   Silent or half-sent connections therefore never hold a serving place. The lobby holds at
//!   most `max_waiting` connections; when it is full, the accept loop closes the one that has
//!   waited longest without a whole head, once it has waited [`UNREADY_GRACE`] ([`FLOOD_GRACE`]
//!   when most of the lobby has none), and otherwise accepts no more until there is room (the
//!   kernel's backlog holds the rest, losing nothing).
//! * **Places.** At most `max_connections` connections are served at once. One with a whole
//!   head takes a free place at once; otherwise it waits its turn (first come, first served) for
//!   at most `queue_wait`. While any wait, answers on served connections carry
//!   `Connection: close`, so places turn over after each answer, and a served connection that
//!   has been quiet between requests for [`KEEPALIVE_QUIET`] is closed (as HTTP lets a server
//!   close an idle kept-alive connection).
//! * **Past the cap.** A request still without a place after `queue_wait` is answered
//!   `503 Service Unavailable` with `Retry-After: 1` and `Connection: close`, in the
//!   `{code, message}` shape of every error.

use super::Limits;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// How long a connection may sit in a full lobby without a whole request head before it is
/// closed to make room. A client on the loopback sends its head right after connecting.
pub const UNREADY_GRACE: Duration = Duration::from_millis(100);

/// The same when three quarters of the lobby have no whole head: a flood of silent or
/// half-sent connections, cleared faster.
pub const FLOOD_GRACE: Duration = Duration::from_millis(20);

/// How long a served connection must have been quiet between requests before it is closed
/// for a waiting request.
pub const KEEPALIVE_QUIET: Duration = Duration::from_secs(1);

/// How often a waiting request looks for a quiet connection to close.
const LOOK_AGAIN: Duration = Duration::from_millis(100);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One connection in the lobby.
struct Waiting {
    since: Instant,
    /// Its first head has arrived in full (it is never closed to make room then).
    whole: bool,
    /// Told to close (to make room).
    kick: Arc<Notify>,
    kicked: bool,
}

/// One served connection.
struct Served {
    /// Requests being answered on it.
    busy: Arc<AtomicUsize>,
    /// When it last read a byte or finished an answer (ms since [`Admission::epoch`]).
    active: Arc<AtomicU64>,
    /// Told to close.
    evict: Arc<Notify>,
    evicted: bool,
}

/// The places, the lobby and the served connections.
pub struct Admission {
    places: Arc<Semaphore>,
    max_waiting: usize,
    epoch: Instant,
    lobby: Mutex<BTreeMap<u64, Waiting>>,
    served: Mutex<BTreeMap<u64, Served>>,
    /// Requests with a whole head waiting for a place.
    waiting_ready: AtomicUsize,
    /// A connection left the lobby.
    left: Notify,
}

impl Admission {
    pub fn new(limits: &Limits) -> Arc<Admission> {
        Arc::new(Admission {
            places: Arc::new(Semaphore::new(limits.max_connections)),
            max_waiting: limits.max_waiting,
            epoch: Instant::now(),
            lobby: Mutex::default(),
            served: Mutex::default(),
            waiting_ready: AtomicUsize::new(0),
            left: Notify::new(),
        })
    }

    /// Connections in the lobby or served.
    pub fn open(&self) -> usize {
        lock(&self.lobby).len() + lock(&self.served).len()
    }

    /// Milliseconds since the server started (for [`Served::active`]).
    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Return when the lobby has room for one more connection, closing the one that has
    /// waited longest without a whole head (once past [`UNREADY_GRACE`]) if it is full.
    pub async fn lobby_room(&self) {
        loop {
            {
                let mut lobby = lock(&self.lobby);
                // Kicked connections leave at their task's next turn; until then they count,
                // up to a quarter more, so the sockets held stay bounded.
                let present = lobby.values().filter(|w| !w.kicked).count();
                if present < self.max_waiting && lobby.len() < self.max_waiting * 5 / 4 {
                    return;
                }
                let unready = lobby.values().filter(|w| !w.kicked && !w.whole).count();
                let grace = if unready * 4 >= present * 3 {
                    FLOOD_GRACE
                } else {
                    UNREADY_GRACE
                };
                let stale = lobby
                    .values_mut()
                    .find(|w| !w.kicked && !w.whole && w.since.elapsed() >= grace);
                if let Some(w) = stale {
                    w.kicked = true;
                    w.kick.notify_one();
                    continue;
                }
            }
            tokio::select! {
                _ = self.left.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(10)) => {}
            }
        }
    }

    /// Put connection `id` in the lobby; it leaves when the guard is dropped.
    pub fn enter(self: &Arc<Self>, id: u64) -> InLobby {
        let kick = Arc::new(Notify::new());
        lock(&self.lobby).insert(
            id,
            Waiting {
                since: Instant::now(),
                whole: false,
                kick: Arc::clone(&kick),
                kicked: false,
            },
        );
        InLobby {
            admission: Arc::clone(self),
            id,
            kick,
            waiting: false,
        }
    }

    /// Close the served connection that has been quiet longest, if one has been for
    /// [`KEEPALIVE_QUIET`].
    fn evict_quiet(&self) {
        let now = self.now_ms();
        let quiet = u64::try_from(KEEPALIVE_QUIET.as_millis()).unwrap_or(u64::MAX);
        let mut served = lock(&self.served);
        let idle = served
            .values_mut()
            .filter(|s| !s.evicted && s.busy.load(Ordering::SeqCst) == 0)
            .map(|s| (now.saturating_sub(s.active.load(Ordering::SeqCst)), s))
            .filter(|(idle, _)| *idle >= quiet)
            .max_by_key(|(idle, _)| *idle);
        if let Some((_, s)) = idle {
            s.evicted = true;
            s.evict.notify_one();
        }
    }

    /// Count connection `id` as served until the guard is dropped.
    pub fn serve(self: &Arc<Self>, id: u64, place: OwnedSemaphorePermit) -> Arc<Serving> {
        let serving = Serving {
            admission: Arc::clone(self),
            id,
            busy: Arc::new(AtomicUsize::new(0)),
            active: Arc::new(AtomicU64::new(self.now_ms())),
            evict: Arc::new(Notify::new()),
            _place: place,
        };
        lock(&self.served).insert(
            id,
            Served {
                busy: Arc::clone(&serving.busy),
                active: Arc::clone(&serving.active),
                evict: Arc::clone(&serving.evict),
                evicted: false,
            },
        );
        Arc::new(serving)
    }
}

/// A connection in the lobby (removed from it on drop).
pub struct InLobby {
    admission: Arc<Admission>,
    id: u64,
    kick: Arc<Notify>,
    /// Counted in [`Admission::waiting_ready`].
    waiting: bool,
}

impl InLobby {
    /// Resolves when the accept loop closes this connection to make room.
    pub async fn kicked(&self) {
        self.kick.notified().await;
    }

    /// The first head has arrived: wait for a place (at most `wait`), closing quiet served
    /// connections for it. `None`: no place in time, answer 503.
    pub async fn place(&mut self, wait: Duration) -> Option<OwnedSemaphorePermit> {
        let a = Arc::clone(&self.admission);
        if let Some(w) = lock(&a.lobby).get_mut(&self.id) {
            w.whole = true;
        }
        if let Ok(place) = Arc::clone(&a.places).try_acquire_owned() {
            return Some(place);
        }
        self.set_waiting(true);
        let acquire = Arc::clone(&a.places).acquire_owned();
        let deadline = tokio::time::sleep(wait);
        tokio::pin!(acquire, deadline);
        let mut look = tokio::time::interval(LOOK_AGAIN);
        let place = loop {
            tokio::select! {
                place = &mut acquire => break place.ok(),
                _ = &mut deadline => break None,
                _ = look.tick() => a.evict_quiet(),
            }
        };
        self.set_waiting(false);
        place
    }

    fn set_waiting(&mut self, waiting: bool) {
        if self.waiting == waiting {
            return;
        }
        self.waiting = waiting;
        if waiting {
            self.admission.waiting_ready.fetch_add(1, Ordering::SeqCst);
        } else {
            self.admission.waiting_ready.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

impl Drop for InLobby {
    fn drop(&mut self) {
        self.set_waiting(false);
        lock(&self.admission.lobby).remove(&self.id);
        self.admission.left.notify_waiters();
    }
}

/// A served connection: its place, and what eviction reads (removed on drop).
pub struct Serving {
    admission: Arc<Admission>,
    id: u64,
    /// Requests being answered on it.
    busy: Arc<AtomicUsize>,
    /// When it last read a byte or finished an answer.
    active: Arc<AtomicU64>,
    /// Told to close.
    evict: Arc<Notify>,
    _place: OwnedSemaphorePermit,
}

impl Serving {
    /// Count a request as being answered until the guard is dropped (after its answer).
    pub fn request(self: &Arc<Self>) -> Busy {
        self.busy.fetch_add(1, Ordering::SeqCst);
        Busy(Arc::clone(self))
    }

    /// The connection read bytes.
    pub fn touch(&self) {
        self.active.store(self.admission.now_ms(), Ordering::SeqCst);
    }

    /// Whether requests wait for a place (then answers close their connection).
    pub fn others_wait(&self) -> bool {
        self.admission.waiting_ready.load(Ordering::SeqCst) > 0
    }

    /// Resolves when the connection is to close for a waiting request.
    pub async fn evicted(&self) {
        self.evict.notified().await;
    }
}

impl Drop for Serving {
    fn drop(&mut self) {
        lock(&self.admission.served).remove(&self.id);
    }
}

/// A request being answered; at its end the connection was active.
pub struct Busy(Arc<Serving>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.touch();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Read the first request head (up to `max` bytes): the bytes read, or `None` if the client
/// closed or failed first.
pub async fn first_head(stream: &mut TcpStream, max: usize) -> Option<Vec<u8>> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        let from = head.len().saturating_sub(3);
        head.extend_from_slice(&chunk[..n]);
        // A head too large is handed on whole: the server answers 431.
        if head[from..].windows(4).any(|w| w == b"\r\n\r\n") || head.len() >= max {
            return Some(head);
        }
    }
}

/// The answer past the cap: 503 with `Retry-After: 1`, then the connection is closed once
/// the client has read it (what it still sends is read and dropped, for at most a second).
pub async fn refuse(mut stream: TcpStream, max_connections: usize) {
    let body = serde_json::json!({
        "code": "connection",
        "message": format!(
            "Flashback's server is answering {max_connections} connections already: try \
             again in a second"
        ),
    })
    .to_string();
    let mut headers = axum::http::HeaderMap::new();
    super::security_headers(&mut headers);
    let mut text = format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nretry-after: 1\r\nconnection: close\r\ncache-control: no-store\r\n",
        body.len()
    );
    for (name, value) in &headers {
        text.push_str(&format!(
            "{name}: {}\r\n",
            value.to_str().unwrap_or_default()
        ));
    }
    text.push_str("\r\n");
    text.push_str(&body);
    let limit = Duration::from_secs(1);
    let written = tokio::time::timeout(limit, stream.write_all(text.as_bytes())).await;
    if !matches!(written, Ok(Ok(()))) {
        return;
    }
    let _ = stream.shutdown().await;
    // Closing with unread bytes would reset the connection, and the client could lose the
    // answer: read until it closes.
    let drain = async {
        let mut sink = [0u8; 8192];
        let mut left: usize = 1 << 20;
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(limit, drain).await;
}

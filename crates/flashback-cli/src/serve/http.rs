//! The HTTP/1.1 server under `flashback serve`: hyper on a loopback listener, with the limits
//! that keep a hostile or merely careless client from taking it down.
//!
//! * **Heads on time**: each request head must arrive in full within `header_timeout`, counted
//!   from when the connection is ready for it — its start, or the end of the previous answer —
//!   so this is also the keep-alive idle limit (hyper's `header_read_timeout`). A head is at
//!   most `max_head_bytes` (hyper answers 431 beyond).
//! * **Answers on time**: a client that stops reading its answer for `write_timeout` loses
//!   the connection (the body is only read within 30 seconds too, in `api.rs`).
//! * **A cap on connections**: at most `max_connections` are served at once. A new one past
//!   that closes the oldest connection that is not inside a request — idle, or still sending
//!   its head; a request counts from its head to the last byte of its answer — so idle or
//!   half-open sockets can never lock a fresh request out. If every connection is inside a
//!   request, the new one waits up to a second for a place, then is closed.
//! * **Panics stay in their request**: a panic while answering becomes a 500
//!   `{"code": "internal", "message": …}` for that request; the server carries on.
//!
//! Self-contained (axum, hyper, tokio): `tests/hostile_serve.rs` runs it with a router of its
//! own.

use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Request, Response, StatusCode};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::any::Any;
use std::collections::BTreeMap;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{watch, Notify};
use tower::ServiceExt;

/// The server's limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Time for a whole request head, from the connection's start or the previous answer.
    pub header_timeout: Duration,
    /// The largest request head (hyper's read buffer; at least 8192).
    pub max_head_bytes: usize,
    /// How long writing an answer may stall (the client not reading) before the connection is
    /// dropped.
    pub write_timeout: Duration,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            // A browser opens at most six connections per host; tabs and scripts fit many
            // times over, and twice this stays far below the usual 1024 open files.
            max_connections: 128,
            header_timeout: Duration::from_secs(10),
            max_head_bytes: 64 * 1024,
            write_timeout: Duration::from_secs(30),
        }
    }
}

/// At stop, how long answers in progress may take to finish.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

/// The headers every answer carries (pages, files, API answers and errors alike).
pub fn security_headers(headers: &mut HeaderMap) {
    let set = |h: &mut HeaderMap, name, value| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set(headers, header::CONTENT_SECURITY_POLICY, CSP);
    set(headers, header::X_CONTENT_TYPE_OPTIONS, "nosniff");
    set(headers, header::REFERRER_POLICY, "no-referrer");
    set(headers, header::X_FRAME_OPTIONS, "DENY");
    headers.insert(
        "cross-origin-resource-policy",
        HeaderValue::from_static("same-origin"),
    );
    headers.insert(
        "cross-origin-opener-policy",
        HeaderValue::from_static("same-origin"),
    );
}

/// One connection in the registry.
struct Slot {
    /// Requests being answered on it.
    busy: Arc<AtomicUsize>,
    /// Told to close.
    evict: Arc<Notify>,
    evicted: bool,
}

/// The live connections, oldest first.
#[derive(Default)]
struct Registry {
    slots: Mutex<BTreeMap<u64, Slot>>,
}

impl Registry {
    fn slots(&self) -> MutexGuard<'_, BTreeMap<u64, Slot>> {
        self.slots.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// (connections being served, connections including those closing)
    fn counts(&self) -> (usize, usize) {
        let slots = self.slots();
        let serving = slots.values().filter(|s| !s.evicted).count();
        (serving, slots.len())
    }

    /// Tell the oldest connection that is not inside a request to close; false if there is none.
    fn evict_one(&self) -> bool {
        let mut slots = self.slots();
        let idle = slots
            .values_mut()
            .find(|s| !s.evicted && s.busy.load(Ordering::SeqCst) == 0);
        match idle {
            Some(slot) => {
                slot.evicted = true;
                slot.evict.notify_one();
                true
            }
            None => false,
        }
    }
}

/// Removes its connection from the registry however the connection's task ends.
struct Registered {
    registry: Arc<Registry>,
    id: u64,
}

impl Drop for Registered {
    fn drop(&mut self) {
        self.registry.slots().remove(&self.id);
    }
}

/// Counts a request as being answered while it lives.
struct Busy(Arc<AtomicUsize>);

impl Busy {
    fn enter(count: Arc<AtomicUsize>) -> Busy {
        count.fetch_add(1, Ordering::SeqCst);
        Busy(count)
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// An answer's body, which keeps its request counted as busy until hyper has written it all
/// (and drops it).
struct Answer {
    body: Body,
    _busy: Busy,
}

impl hyper::body::Body for Answer {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A socket whose writes fail once they have been stalled for `limit` (a client that does not
/// read its answer cannot hold the connection).
struct WriteDeadline {
    io: TcpStream,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl WriteDeadline {
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<T>> {
        let limit = self.limit;
        let timer = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(limit)));
        match timer.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client stopped reading its answer",
            ))),
            Poll::Pending => Poll::Pending,
        }
    }

    fn track<T>(
        &mut self,
        cx: &mut Context<'_>,
        polled: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match polled {
            Poll::Ready(r) => {
                self.stalled = None;
                Poll::Ready(r)
            }
            Poll::Pending => self.pending(cx),
        }
    }
}

impl AsyncRead for WriteDeadline {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().io).poll_read(cx, buf)
    }
}

impl AsyncWrite for WriteDeadline {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write(cx, buf);
        this.track(cx, polled)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_write_vectored(cx, bufs);
        this.track(cx, polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_flush(cx);
        this.track(cx, polled)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.io).poll_shutdown(cx);
        this.track(cx, polled)
    }
}

/// A future whose panic becomes an `Err` with the panic's payload.
struct CatchUnwind<F>(Pin<Box<F>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = Result<F::Output, Box<dyn Any + Send>>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.get_mut().0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(out)) => Poll::Ready(Ok(out)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

fn panic_text(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .map_or_else(|| "a panic".to_owned(), |m| format!("panic: {m}"))
}

/// The 500 for a request whose answer panicked.
fn panic_response(path: &str, payload: &(dyn Any + Send)) -> Response<Body> {
    let message = format!(
        "Flashback failed while answering {path} ({}); the server is still running",
        panic_text(payload)
    );
    let body = serde_json::json!({ "code": "internal", "message": message }).to_string();
    let mut r = Response::new(Body::from(body));
    *r.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    security_headers(h);
    r
}

/// Answer one request with `app`, counted as busy until its answer is written, a panic turned
/// into a 500.
async fn answer(
    app: Router,
    busy: Arc<AtomicUsize>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Answer>, std::convert::Infallible> {
    let busy = Busy::enter(busy);
    let path = req.uri().path().to_owned();
    let response = match CatchUnwind(Box::pin(app.oneshot(req.map(Body::new)))).await {
        Ok(Ok(response)) => response,
        Ok(Err(never)) => match never {},
        Err(payload) => panic_response(&path, payload.as_ref()),
    };
    Ok(response.map(|body| Answer { body, _busy: busy }))
}

/// Wait (at most a second) until a new connection may be served; false: refuse it.
async fn make_room(registry: &Registry, limits: &Limits) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    loop {
        // Evicted connections leave at their task's next turn; until then they count, up to
        // twice the cap, so the sockets held stay bounded.
        let (serving, total) = registry.counts();
        if serving < limits.max_connections && total < 2 * limits.max_connections {
            return true;
        }
        if serving >= limits.max_connections && registry.evict_one() {
            continue;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn spawn_connection(
    stream: TcpStream,
    app: Router,
    limits: &Limits,
    registration: Registered,
    slot: (Arc<AtomicUsize>, Arc<Notify>),
    mut stop: watch::Receiver<bool>,
) {
    let (busy, evict) = slot;
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_head_bytes.max(8192));
    let io = WriteDeadline {
        io: stream,
        limit: limits.write_timeout,
        stalled: None,
    };
    tokio::spawn(async move {
        let _registered = registration;
        let service =
            hyper::service::service_fn(move |req| answer(app.clone(), Arc::clone(&busy), req));
        let mut conn = pin!(builder.serve_connection(TokioIo::new(io), service));
        let stopping = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        tokio::select! {
            _ = conn.as_mut() => {}
            // Evicted: not inside a request, so nothing is lost by closing now.
            _ = evict.notified() => {}
            _ = stopping => {
                // Stopping: idle connections close at once, answers in progress finish.
                conn.as_mut().graceful_shutdown();
                let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn).await;
            }
        }
    });
}

/// Serve `app` on `listener` until `shutdown` resolves; then answers in progress get a few
/// seconds to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let registry = Arc::new(Registry::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    let mut next_id: u64 = 0;
    loop {
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, or a connection reset before it was accepted:
                // let connections close rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        if !make_room(&registry, &limits).await {
            drop(stream);
            continue;
        }
        let _ = stream.set_nodelay(true);
        next_id += 1;
        let busy = Arc::new(AtomicUsize::new(0));
        let evict = Arc::new(Notify::new());
        registry.slots().insert(
            next_id,
            Slot {
                busy: Arc::clone(&busy),
                evict: Arc::clone(&evict),
                evicted: false,
            },
        );
        let registration = Registered {
            registry: Arc::clone(&registry),
            id: next_id,
        };
        spawn_connection(
            stream,
            app.clone(),
            &limits,
            registration,
            (busy, evict),
            stop_rx.clone(),
        );
    }
    stop_tx.send_replace(true);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    while registry.counts().1 > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

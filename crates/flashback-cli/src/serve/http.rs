//! The HTTP/1.1 server under `flashback serve`: hyper on a loopback listener, with the limits
//! that keep a hostile or merely careless client from taking it down.
//!
//! * **Heads on time**: each request head must arrive in full within `header_timeout`, counted
//!   from when the connection is ready for it — its start, or the end of the previous answer —
//!   so this is also the keep-alive idle limit (hyper's `header_read_timeout`). A head is at
//!   most `max_head_bytes` (hyper answers 431 beyond).
//! * **Answers on time**: a client that stops reading its answer for `write_timeout` loses
//!   the connection (the body is only read within 30 seconds too, in `api.rs`).
//! * **A cap on connections, and an answer past it** (`admission.rs`): a connection waits in a
//!   bounded lobby until its first request head is whole, so idle or half-open sockets never
//!   hold one of the `max_connections` places; a whole request waits its turn for a place (up
//!   to `queue_wait`, places turning over meanwhile), else it is answered 503 with
//!   `Retry-After: 1`. Nothing is closed with a request unanswered.
//! * **Panics stay in their request**: a panic while answering becomes a 500
//!   `{"code": "internal", "message": …}` for that request; the server carries on.
//!
//! Self-contained (axum, hyper, tokio): `tests/it/serve/careless_clients.rs` runs it with a
//! router of its own.

// A path of its own, so that the tests that include this file find it too.
#[path = "admission.rs"]
mod admission;

use admission::{Admission, Busy, Serving};
use axum::body::Body;
use axum::http::{header, HeaderMap, HeaderValue, Request, Response, StatusCode};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::{pin, Pin};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tower::ServiceExt;

/// The server's limits.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Connections served at once.
    pub max_connections: usize,
    /// Connections waiting for a place (their first head, then a place) at once.
    pub max_waiting: usize,
    /// How long a whole request waits for a place before it is answered 503.
    pub queue_wait: Duration,
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
            // times over.
            max_connections: 128,
            // With the served ones, about 600 sockets at most: well below the usual 1024 open
            // files, and a flood of silent connections is cleared within half a second.
            max_waiting: 384,
            queue_wait: Duration::from_secs(1),
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
/// read its answer cannot hold the connection). Reads first return `head` (what the lobby
/// read), and each read that brings bytes marks the connection active.
struct WriteDeadline {
    io: TcpStream,
    head: Vec<u8>,
    head_at: usize,
    limit: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
    serving: Arc<Serving>,
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
        let this = self.get_mut();
        if this.head_at < this.head.len() {
            let n = buf.remaining().min(this.head.len() - this.head_at);
            buf.put_slice(&this.head[this.head_at..this.head_at + n]);
            this.head_at += n;
            return Poll::Ready(Ok(()));
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.io).poll_read(cx, buf);
        if buf.filled().len() > before {
            this.serving.touch();
        }
        polled
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
/// into a 500. While requests wait for a place, the answer closes its connection (the place
/// goes to the next in line).
async fn answer(
    app: Router,
    serving: Arc<Serving>,
    req: Request<hyper::body::Incoming>,
) -> Result<Response<Answer>, std::convert::Infallible> {
    let busy = serving.request();
    let path = req.uri().path().to_owned();
    let mut response = match CatchUnwind(Box::pin(app.oneshot(req.map(Body::new)))).await {
        Ok(Ok(response)) => response,
        Ok(Err(never)) => match never {},
        Err(payload) => panic_response(&path, payload.as_ref()),
    };
    if serving.others_wait() {
        response
            .headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    Ok(response.map(|body| Answer { body, _busy: busy }))
}

/// One accepted connection: the lobby until its first head is whole, then a place (or 503),
/// then hyper until it closes.
fn spawn_connection(
    mut stream: TcpStream,
    id: u64,
    app: Router,
    limits: &Limits,
    admission: &Arc<Admission>,
    stop: watch::Receiver<bool>,
) {
    let limits = limits.clone();
    let admission = Arc::clone(admission);
    tokio::spawn(async move {
        let mut lobby = admission.enter(id);
        let mut stopped = stop.clone();
        let stopping = async move {
            let _ = stopped.wait_for(|s| *s).await;
        };
        let mut stopping = pin!(stopping);
        let first = tokio::time::timeout(
            limits.header_timeout,
            admission::first_head(&mut stream, limits.max_head_bytes),
        );
        let head = tokio::select! {
            head = first => head.ok().flatten(),
            // Closed to make room: no whole request had arrived.
            () = lobby.kicked() => None,
            () = &mut stopping => None,
        };
        let Some(head) = head else { return };
        let place = tokio::select! {
            place = lobby.place(limits.queue_wait) => place,
            () = &mut stopping => return,
        };
        let Some(place) = place else {
            // Still in the lobby while answering, so the sockets held stay bounded.
            admission::refuse(stream, limits.max_connections).await;
            return;
        };
        drop(lobby);
        let serving = admission.serve(id, place);
        let _ = stream.set_nodelay(true);
        serve_connection(stream, head, app, &limits, serving, stop).await;
    });
}

/// Serve a connection with hyper until it closes, is evicted or the server stops.
async fn serve_connection(
    stream: TcpStream,
    head: Vec<u8>,
    app: Router,
    limits: &Limits,
    serving: Arc<Serving>,
    mut stop: watch::Receiver<bool>,
) {
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .max_buf_size(limits.max_head_bytes.max(8192));
    let io = WriteDeadline {
        io: stream,
        head,
        head_at: 0,
        limit: limits.write_timeout,
        stalled: None,
        serving: Arc::clone(&serving),
    };
    let for_answers = Arc::clone(&serving);
    let service =
        hyper::service::service_fn(move |req| answer(app.clone(), Arc::clone(&for_answers), req));
    let mut conn = pin!(builder.serve_connection(TokioIo::new(io), service));
    let stopping = async move {
        let _ = stop.wait_for(|s| *s).await;
    };
    tokio::select! {
        _ = conn.as_mut() => {}
        // Evicted: quiet between requests, so nothing is lost by closing now.
        () = serving.evicted() => {}
        _ = stopping => {
            // Stopping: idle connections close at once, answers in progress finish.
            conn.as_mut().graceful_shutdown();
            let _ = tokio::time::timeout(SHUTDOWN_GRACE, conn).await;
        }
    }
}

/// Serve `app` on `listener` until `shutdown` resolves; then answers in progress get a few
/// seconds to finish.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: Limits,
    shutdown: impl Future<Output = ()>,
) {
    let admission = Admission::new(&limits);
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut shutdown = pin!(shutdown);
    let mut next_id: u64 = 0;
    loop {
        // A connection is accepted only when the lobby has room; until then the kernel's
        // backlog holds it.
        let accept = async {
            admission.lobby_room().await;
            listener.accept().await
        };
        let stream = tokio::select! {
            _ = &mut shutdown => break,
            accepted = accept => match accepted {
                Ok((stream, _)) => stream,
                // Out of file descriptors, or a connection reset before it was accepted:
                // let connections close rather than spin.
                Err(_) => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        next_id += 1;
        spawn_connection(
            stream,
            next_id,
            app.clone(),
            &limits,
            &admission,
            stop_rx.clone(),
        );
    }
    stop_tx.send_replace(true);
    let deadline = tokio::time::Instant::now() + SHUTDOWN_GRACE;
    while admission.open() > 0 && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

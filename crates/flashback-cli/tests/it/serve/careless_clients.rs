//! `flashback serve` against hostile and careless clients, through the real binary: the
//! checks come before the body (and bound it), slow heads and idle connections are closed,
//! thousands of idle connections cannot lock a fresh request out, a panic stays in its request.
//! The Host/token/cookie checks are in `serve/auth.rs`.

use crate::common;
use common::server::*;
use serde_json::{json, Value as Json};
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

// The server loop itself, for a router with a handler that panics (the real routes have none).
#[allow(dead_code)]
#[path = "../../../src/serve/http.rs"]
mod http;

/// The server's resident memory in MB (Linux; 0 elsewhere).
fn rss_mb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb / 1024)
}

fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

/// Read a whole response (the server closes after it: `Connection: close`) within `limit`;
/// `None` if none came.
fn response_within(s: &mut TcpStream, limit: Duration) -> Option<Response> {
    s.set_read_timeout(Some(limit)).expect("timeout");
    let mut raw = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        match s.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == ErrorKind::ConnectionReset && !raw.is_empty() => break,
            Err(_) => return None,
        }
    }
    raw.windows(4)
        .any(|w| w == b"\r\n\r\n")
        .then(|| parse_response(&raw))
}

/// Send `head`, then up to `body_bytes` of body (in `chunked` encoding if asked) until the
/// server stops taking it, then read its answer.
fn upload(port: u16, head: &str, body_bytes: usize, chunked: bool) -> Option<Response> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_write_timeout(Some(Duration::from_secs(3)))
        .expect("timeout");
    s.write_all(head.as_bytes()).expect("head");
    let piece = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < body_bytes {
        let written = if chunked {
            s.write_all(format!("{:x}\r\n", piece.len()).as_bytes())
                .and_then(|()| s.write_all(&piece))
                .and_then(|()| s.write_all(b"\r\n"))
        } else {
            s.write_all(&piece)
        };
        if written.is_err() {
            break; // the server answered and stopped reading
        }
        sent += piece.len();
    }
    response_within(&mut s, Duration::from_secs(10))
}

#[test]
fn the_checks_come_before_the_body_and_bound_it() {
    let Some(server) = running(serve_fixture(None, &[])) else {
        return;
    };
    let port = server.port;
    let pid = server.child.id();
    let before = rss_mb(pid);
    // Eight unauthenticated uploads claiming 200 MB, each pushing 16 MB: refused from the
    // headers, with nothing read.
    let claims_200mb = head(port, "POST", "/api/list_threads", &[], 200 << 20);
    let uploads: Vec<_> = (0..8)
        .map(|_| {
            let h = claims_200mb.clone();
            std::thread::spawn(move || upload(port, &h, 16 << 20, false))
        })
        .collect();
    for u in uploads {
        let r = u.join().expect("thread").expect("answered before the body");
        assert_eq!(r.status, 401);
        assert_eq!(r.json()["code"], "unauthorized");
    }
    let after = rss_mb(pid);
    assert!(
        after < before + 64,
        "the server grew from {before} MB to {after} MB"
    );

    // With the token: a declared length over 8 MB is 413 before any of it is sent…
    let auth = format!("Bearer {}", server.token);
    let authed = [("Authorization", auth.as_str())];
    let big = head(port, "POST", "/api/list_threads", &authed, 200 << 20);
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.write_all(big.as_bytes()).expect("head");
    let r = response_within(&mut s, Duration::from_secs(5)).expect("413 from the headers");
    assert_eq!(r.status, 413);
    assert_eq!(r.json()["code"], "invalid_input");
    assert!(r.json()["message"].as_str().unwrap_or("").contains("8 MB"));
    // …and a body without a length (chunked) is cut at 8 MB.
    let chunked_head = head(
        port,
        "POST",
        "/api/list_threads",
        &[
            ("Authorization", auth.as_str()),
            ("Transfer-Encoding", "chunked"),
        ],
        0,
    );
    let r = upload(port, &chunked_head, 9 << 20, true).expect("413 after 8 MB");
    assert_eq!(r.status, 413);
    // verify_export carries a whole bundle: 9 MB is within its limit.
    let content = "x".repeat(9 << 20);
    let r = server.call("verify_export", json!({ "content": content }));
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["ok"], false);
    // Still serving.
    assert_eq!(server.call("app_info", Json::Null).status, 200);
}

/// Seconds until the server closed `s` (at most `limit`).
fn closed_after(mut s: TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    s.set_read_timeout(Some(limit)).expect("timeout");
    let mut buf = [0u8; 4096];
    loop {
        match s.read(&mut buf) {
            Ok(0) => return Some(start.elapsed()),
            Ok(_) => {}
            Err(e) if e.kind() == ErrorKind::ConnectionReset => return Some(start.elapsed()),
            Err(_) => return None,
        }
    }
}

#[test]
fn slow_heads_and_idle_connections_are_closed() {
    let Some(server) = running(serve_fixture(None, &[])) else {
        return;
    };
    let port = server.port;
    let connect = || TcpStream::connect(("127.0.0.1", port)).expect("connect");
    let silent = connect();
    let mut slow = connect();
    slow.write_all(format!("POST /api/app_info HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n").as_bytes())
        .expect("half a head");
    // A kept-alive connection after one answer.
    let mut kept = connect();
    kept.write_all(
        format!("GET /assets/nope.js HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes(),
    )
    .expect("request");
    kept.set_read_timeout(Some(Duration::from_secs(5)))
        .expect("timeout");
    let mut got = Vec::new();
    let mut buf = [0u8; 1024];
    while !String::from_utf8_lossy(&got).ends_with("not found") {
        let n = kept.read(&mut buf).expect("the 404");
        assert!(n > 0, "closed before answering");
        got.extend_from_slice(&buf[..n]);
    }
    let limit = Duration::from_secs(20);
    let waits: Vec<_> = [silent, slow, kept]
        .into_iter()
        .map(|s| std::thread::spawn(move || closed_after(s, limit)))
        .collect();
    for (what, w) in ["a silent connection", "half a head", "an idle keep-alive"]
        .iter()
        .zip(waits)
    {
        let after = w.join().expect("thread");
        let after = after.unwrap_or_else(|| panic!("{what} was still open after {limit:?}"));
        assert!(
            after <= Duration::from_secs(15),
            "{what}: closed after {after:?}"
        );
    }
}

#[test]
fn two_thousand_idle_connections_do_not_lock_the_ui_out() {
    // As on a desktop whose limit is 1024 open files.
    let Some(server) = running(serve_fixture(Some(1024), &[])) else {
        return;
    };
    let port = server.port;
    let pid = server.child.id();
    let start = Instant::now();
    let mut held = Vec::new();
    // Bounded: 2,000 connections to 127.0.0.1, or 30 seconds, whichever comes first.
    while held.len() < 2000 && start.elapsed() < Duration::from_secs(30) {
        let Ok(mut s) = TcpStream::connect_timeout(
            &std::net::SocketAddr::from(([127, 0, 0, 1], port)),
            Duration::from_secs(2),
        ) else {
            continue;
        };
        if held.len() % 2 == 1 {
            // Every other one sends half a head and stops.
            let _ = s.write_all(format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n").as_bytes());
        }
        held.push(s);
    }
    let opened_in = start.elapsed();
    let t = Instant::now();
    let info = server.call("app_info", Json::Null);
    let answered_in = t.elapsed();
    assert_eq!(info.status, 200, "{}", String::from_utf8_lossy(&info.body));
    let mut closed_by_server = 0;
    for s in &mut held {
        let _ = s.set_nonblocking(true);
        let still_open =
            matches!(s.read(&mut [0u8; 64]), Err(e) if e.kind() == ErrorKind::WouldBlock);
        if !still_open {
            closed_by_server += 1;
        }
    }
    eprintln!(
        "serve load: {} idle connections opened in {:.2?}; app_info answered in {:.1?}; \
         the server closed {closed_by_server} of them, holds {} open files, {} MB resident",
        held.len(),
        opened_in,
        answered_in,
        open_files(pid),
        rss_mb(pid)
    );
    assert_eq!(held.len(), 2000, "connected within 30 s");
    assert!(
        answered_in < Duration::from_secs(1),
        "answered in {answered_in:?}"
    );
    assert!(open_files(pid) < 1024, "{} open files", open_files(pid));
}

/// The server loop alone on 127.0.0.1 with `limits`; it stops when the sender is dropped.
async fn server_loop(
    app: axum::Router,
    limits: http::Limits,
) -> (
    u16,
    tokio::sync::oneshot::Sender<()>,
    tokio::task::JoinHandle<()>,
) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(http::serve(listener, app, limits, async {
        let _ = stopped.await;
    }));
    (port, stop, server)
}

async fn stop_loop(stop: tokio::sync::oneshot::Sender<()>, server: tokio::task::JoinHandle<()>) {
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(10), server)
        .await
        .expect("stops")
        .expect("task");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_panic_stays_in_its_request() {
    use axum::routing::get;
    let app = axum::Router::new()
        .route(
            "/boom",
            get(|| async {
                if std::hint::black_box(true) {
                    panic!("boom in a handler");
                }
                "unreachable"
            }),
        )
        .route("/ok", get(|| async { "fine" }));
    let (port, stop, server) = server_loop(app, http::Limits::default()).await;
    let get = |path: &'static str| {
        tokio::task::spawn_blocking(move || request(port, "GET", path, &[], b""))
    };
    let boom = get("/boom").await.expect("request");
    assert_eq!(boom.status, 500);
    assert_eq!(boom.json()["code"], "internal");
    let message = boom.json()["message"].as_str().unwrap_or("").to_owned();
    assert!(message.contains("boom in a handler"), "{message}");
    assert!(message.contains("still running"), "{message}");
    assert_eq!(boom.header("x-content-type-options"), Some("nosniff"));
    for _ in 0..3 {
        let ok = get("/ok").await.expect("request");
        assert_eq!((ok.status, ok.body.as_slice()), (200, b"fine".as_slice()));
        assert_eq!(get("/boom").await.expect("request").status, 500);
    }
    stop_loop(stop, server).await;
}

/// `/slow` answers after 1.5 s, `/ok` at once.
fn slow_and_quick() -> axum::Router {
    use axum::routing::get;
    axum::Router::new()
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                "slow"
            }),
        )
        .route("/ok", get(|| async { "fine" }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_a_request_waits_its_turn_then_is_answered_503() {
    for (queue_wait, served) in [
        (Duration::from_millis(300), false),
        (Duration::from_secs(5), true),
    ] {
        let limits = http::Limits {
            max_connections: 2,
            queue_wait,
            ..http::Limits::default()
        };
        let (port, stop, server) = server_loop(slow_and_quick(), limits).await;
        let get = move |path: &'static str| {
            tokio::task::spawn_blocking(move || request(port, "GET", path, &[], b""))
        };
        // Two slow requests hold both places.
        let slow = [get("/slow"), get("/slow")];
        tokio::time::sleep(Duration::from_millis(300)).await;
        let start = Instant::now();
        let third = get("/ok").await.expect("request");
        let waited = start.elapsed();
        if served {
            // Served as soon as a place freed.
            assert_eq!(
                third.status,
                200,
                "{}",
                String::from_utf8_lossy(&third.body)
            );
            assert!(waited >= Duration::from_millis(900), "{waited:?}");
        } else {
            assert_eq!(third.status, 503);
            assert!(waited >= queue_wait, "{waited:?}");
            assert_eq!(third.header("retry-after"), Some("1"));
            assert_eq!(third.header("connection"), Some("close"));
            assert_eq!(third.header("x-content-type-options"), Some("nosniff"));
            assert_eq!(third.json()["code"], "connection");
            assert!(third.json()["message"]
                .as_str()
                .is_some_and(|m| m.contains("try again")));
        }
        for s in slow {
            assert_eq!(s.await.expect("request").status, 200);
        }
        stop_loop(stop, server).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn quiet_kept_alive_connections_make_way_for_a_request() {
    let limits = http::Limits {
        max_connections: 2,
        queue_wait: Duration::from_secs(5),
        ..http::Limits::default()
    };
    let (port, stop, server) = server_loop(slow_and_quick(), limits).await;
    // Both places held by connections kept alive after one answer, then quiet.
    let kept = tokio::task::spawn_blocking(move || {
        (0..2)
            .map(|_| {
                let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
                s.write_all(
                    format!("GET /ok HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n").as_bytes(),
                )
                .expect("request");
                let mut r = std::io::BufReader::new(s);
                let answer = read_response(&mut r).expect("answer");
                assert_eq!(answer.status, 200);
                r
            })
            .collect::<Vec<_>>()
    })
    .await
    .expect("kept");
    let start = Instant::now();
    let fresh = tokio::task::spawn_blocking(move || request(port, "GET", "/ok", &[], b""))
        .await
        .expect("request");
    assert_eq!(fresh.status, 200);
    let waited = start.elapsed();
    assert!(waited < Duration::from_secs(3), "answered after {waited:?}");
    // The one closed for it was quiet: closed, not reset mid-answer.
    let closed = kept
        .into_iter()
        .filter(|r| {
            let mut s = r.get_ref().try_clone().expect("clone");
            let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
            matches!(s.read(&mut [0u8; 16]), Ok(0))
        })
        .count();
    assert!(closed >= 1, "a quiet connection made way");
    stop_loop(stop, server).await;
}

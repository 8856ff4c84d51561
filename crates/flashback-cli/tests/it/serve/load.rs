//! `flashback serve` under many keep-alive clients, above its connection cap: every request
//! gets an answer — 200, or 503 with `Retry-After` when the server is full — and none is
//! dropped. `scripts/serve-load --keep-alive --clients N` runs this test with N clients
//! (`FLASHBACK_LOAD_CLIENTS`, default 200) and prints the figures.

use crate::common;
use common::server::*;
use std::io::{BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// How one request ended.
enum Answer {
    /// 200 (or any status but 503), and whether the server closes the connection after it.
    Ok { close: bool },
    /// 503: try again after this long (the connection is closed).
    Busy(Duration),
}

/// What one client saw.
#[derive(Default)]
struct Tally {
    ok: u64,
    busy: u64,
    dropped: u64,
    connections: u64,
    latencies: Vec<Duration>,
    first_drop: Option<String>,
}

/// Read one answer from a kept-alive connection.
fn read_answer(r: &mut BufReader<TcpStream>) -> std::io::Result<Answer> {
    let response = read_response(r)?;
    if response.status == 503 {
        let after = response.header("retry-after").and_then(|s| s.parse().ok());
        return Ok(Answer::Busy(Duration::from_secs(after.unwrap_or(1))));
    }
    let close = response
        .header("connection")
        .is_some_and(|c| c.eq_ignore_ascii_case("close"));
    Ok(Answer::Ok { close })
}

/// One keep-alive client: `requests` requests, reconnecting when told to close.
fn client(port: u16, request: &[u8], requests: usize) -> Tally {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut t = Tally::default();
    let mut conn: Option<BufReader<TcpStream>> = None;
    for _ in 0..requests {
        let start = Instant::now();
        let attempt = (|| -> std::io::Result<Answer> {
            let mut r = match conn.take() {
                Some(r) => r,
                None => {
                    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
                    s.set_read_timeout(Some(Duration::from_secs(15)))?;
                    s.set_nodelay(true)?;
                    t.connections += 1;
                    BufReader::new(s)
                }
            };
            r.get_mut().write_all(request)?;
            let answer = read_answer(&mut r)?;
            if matches!(answer, Answer::Ok { close: false }) {
                conn = Some(r);
            }
            Ok(answer)
        })();
        match attempt {
            Ok(Answer::Ok { .. }) => {
                t.ok += 1;
                t.latencies.push(start.elapsed());
            }
            Ok(Answer::Busy(after)) => {
                t.busy += 1;
                t.latencies.push(start.elapsed());
                std::thread::sleep(after);
            }
            Err(e) => {
                t.dropped += 1;
                t.first_drop.get_or_insert_with(|| e.to_string());
            }
        }
    }
    t
}

fn clients_from_env() -> usize {
    std::env::var("FLASHBACK_LOAD_CLIENTS")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .filter(|n| *n > 0)
        .unwrap_or(200)
}

#[test]
fn keep_alive_clients_above_the_cap_all_get_an_answer() {
    let clients = clients_from_env();
    let requests = 20;
    // As on a desktop whose limit is 1024 open files.
    let Some(server) = running(serve_fixture(Some(1024), &[])) else {
        return;
    };
    let body = br#"{"req":null}"#;
    let request = format!(
        "POST /api/app_info HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer {}\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        server.port,
        server.token,
        body.len()
    );
    let mut request = request.into_bytes();
    request.extend_from_slice(body);
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|_| {
            let (port, request) = (server.port, request.clone());
            std::thread::Builder::new()
                .stack_size(256 * 1024)
                .spawn(move || client(port, &request, requests))
                .expect("spawn a client")
        })
        .collect();
    let mut all = Tally::default();
    for th in threads {
        let t = th.join().expect("client");
        all.ok += t.ok;
        all.busy += t.busy;
        all.dropped += t.dropped;
        all.connections += t.connections;
        all.latencies.extend(t.latencies);
        if all.first_drop.is_none() {
            all.first_drop = t.first_drop;
        }
    }
    let took = start.elapsed();
    all.latencies.sort();
    let at = |q: f64| {
        let i = ((all.latencies.len() as f64 - 1.0) * q).round() as usize;
        all.latencies.get(i).copied().unwrap_or_default()
    };
    let answered = all.ok + all.busy;
    eprintln!(
        "serve load: {clients} keep-alive clients × {requests} requests in {took:.2?} \
         ({:.0} answers/s, {} connections): {} answered 200, {} answered 503, {} dropped; \
         latency min {:.1?}, median {:.1?}, p99 {:.1?}, max {:.1?}",
        answered as f64 / took.as_secs_f64(),
        all.connections,
        all.ok,
        all.busy,
        all.dropped,
        at(0.0),
        at(0.5),
        at(0.99),
        at(1.0),
    );
    assert_eq!(
        all.dropped, 0,
        "requests without an answer (first: {:?})",
        all.first_drop
    );
    assert_eq!(answered, (clients * requests) as u64);
    assert!(all.ok > 0, "some requests were served");
    // Still serving.
    assert_eq!(server.call("app_info", serde_json::Value::Null).status, 200);
}

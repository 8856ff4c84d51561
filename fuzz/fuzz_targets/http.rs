//! The HTTP front of `flashback serve`: any bytes on a connection. A real server (the built
//! `flashback` binary, `FLASHBACK_BIN`) serves a copy of the fixture; each input is written to a
//! fresh loopback connection and the answer read (at most 2 s). The server must answer or close,
//! and still answer a good request afterwards; if it dies, that input is the crash.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

struct Server {
    child: Child,
    port: u16,
}

static SERVER: OnceLock<Mutex<Server>> = OnceLock::new();

fn start() -> Mutex<Server> {
    let bin = std::env::var("FLASHBACK_BIN").expect("FLASHBACK_BIN: the flashback binary");
    let db = std::env::var("FLASHBACK_FUZZ_DB").expect("FLASHBACK_FUZZ_DB: a fixture copy");
    let mut child = Command::new(bin)
        .args(["serve", &db, "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start flashback serve");
    let out = child.stdout.take().expect("stdout");
    let mut lines = BufReader::new(out).lines();
    let port = loop {
        let line = lines.next().expect("serve printed its URL").expect("utf-8");
        if let Some(rest) = line.split("http://127.0.0.1:").nth(1) {
            break rest
                .split('/')
                .next()
                .and_then(|p| p.parse().ok())
                .expect("port");
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Mutex::new(Server { child, port })
}

/// Writes `bytes` on a new connection (then, with `end`, closes the writing side so the server
/// sees the end at once) and reads the answer.
fn exchange(port: u16, bytes: &[u8], end: bool) -> std::io::Result<Vec<u8>> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(2)))?;
    s.set_write_timeout(Some(Duration::from_secs(2)))?;
    let _ = s.write_all(bytes);
    if end {
        let _ = s.shutdown(std::net::Shutdown::Write);
    }
    let mut out = Vec::new();
    let _ = s.take(1 << 20).read_to_end(&mut out);
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let server = SERVER.get_or_init(start);
    let mut server = server.lock().unwrap_or_else(|e| e.into_inner());
    let port = server.port;
    let _ = exchange(port, data, true);
    if let Ok(Some(status)) = server.child.try_wait() {
        panic!("flashback serve exited ({status}) on this input");
    }
    let good = format!("GET / HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n");
    let probe =
        exchange(port, good.as_bytes(), false).expect("the server still accepts connections");
    assert!(probe.starts_with(b"HTTP/1.1 "), "the server still answers");
});

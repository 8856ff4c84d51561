//! `flashback serve` through the real binary: starting it, raw HTTP/1.1 requests, responses.

use super::fixture;
use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `flashback serve`, killed on drop (also when an assertion fails).
pub struct Server {
    pub child: Child,
    /// The rest of the server's stdout, kept open while it runs.
    _stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
    pub port: u16,
    pub token: String,
    pub dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub enum Started {
    Running(Server),
    /// The binary was built without `ui/dist`: exit code and stderr.
    NoUi(i32, String),
}

/// `flashback serve` on a copy of the fixture, or with `args` (which then name the database).
pub fn serve(args: &[&str]) -> Started {
    start(None, args.is_empty(), args)
}

/// `flashback serve` on a copy of the fixture with `flags`, and at most `max_files` open files
/// (`ulimit -n`, as on a desktop whose limit is 1024) if given.
pub fn serve_fixture(max_files: Option<u32>, flags: &[&str]) -> Started {
    start(max_files, true, flags)
}

fn start(max_files: Option<u32>, fixture_db: bool, args: &[&str]) -> Started {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("agents.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy fixture");
    let mut cmd = match max_files {
        None => Command::new(env!("CARGO_BIN_EXE_flashback")),
        Some(n) => {
            let mut sh = Command::new("sh");
            sh.arg("-c")
                .arg(format!("ulimit -n {n} && exec \"$0\" \"$@\""))
                .arg(env!("CARGO_BIN_EXE_flashback"));
            sh
        }
    };
    cmd.arg("serve");
    if fixture_db {
        cmd.arg(&db);
    }
    cmd.args(args);
    let mut child = cmd
        .args(["--port", "0"])
        .env("FLASHBACK_DATA_DIR", dir.path().join("data"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start flashback serve");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.trim().strip_prefix("open http://127.0.0.1:") {
                    let (port, token) = url.split_once("/#token=").expect("url with token");
                    return Started::Running(Server {
                        child,
                        _stdout: lines,
                        port: port.parse().expect("port"),
                        token: token.to_owned(),
                        dir,
                    });
                }
            }
            _ => {
                let status = child.wait().expect("wait");
                let mut err = String::new();
                child
                    .stderr
                    .take()
                    .expect("stderr")
                    .read_to_string(&mut err)
                    .expect("read stderr");
                return Started::NoUi(status.code().unwrap_or(-1), err);
            }
        }
    }
}

pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Json {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

/// One HTTP/1.1 request on a fresh connection (`Host` added unless given).
pub fn request(
    port: u16,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    s.write_all(head(port, method, path, headers, body.len()).as_bytes())
        .expect("write head");
    s.write_all(body).expect("write body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    parse_response(&raw)
}

/// A request head (`Connection: close`, the `Content-Length`, `Host` unless given).
pub fn head(port: u16, method: &str, path: &str, headers: &[(&str, &str)], len: usize) -> String {
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding"))
    {
        head.push_str(&format!("Content-Length: {len}\r\n"));
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    head
}

/// A whole response as read until the server closed the connection.
pub fn parse_response(raw: &[u8]) -> Response {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("end of headers");
    let head = String::from_utf8_lossy(&raw[..split]).into_owned();
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    let chunked = headers
        .iter()
        .any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    if chunked {
        body = dechunk(&body);
    }
    Response {
        status,
        headers,
        body,
    }
}

/// Read one response — its head and its `Content-Length` body — from a connection that stays
/// open (kept alive).
pub fn read_response(r: &mut impl BufRead) -> std::io::Result<Response> {
    let mut status = None;
    let mut headers = Vec::new();
    let mut line = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line)? == 0 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                "closed before the answer was complete",
            ));
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        match status {
            None => status = l.split(' ').nth(1).and_then(|c| c.parse().ok()),
            Some(_) => {
                if let Some((k, v)) = l.split_once(':') {
                    headers.push((k.trim().to_owned(), v.trim().to_owned()));
                }
            }
        }
    }
    let mut response = Response {
        status: status.ok_or_else(|| std::io::Error::other("no status line"))?,
        headers,
        body: Vec::new(),
    };
    let length = response
        .header("content-length")
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    response.body = vec![0u8; length];
    r.read_exact(&mut response.body)?;
    Ok(response)
}

pub fn dechunk(mut data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let line_end = data
            .windows(2)
            .position(|w| w == b"\r\n")
            .expect("chunk size line");
        let size = usize::from_str_radix(
            String::from_utf8_lossy(&data[..line_end])
                .split(';')
                .next()
                .unwrap_or("0")
                .trim(),
            16,
        )
        .expect("chunk size");
        data = &data[line_end + 2..];
        if size == 0 {
            return out;
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size + 2..];
    }
}

impl Server {
    pub fn call(&self, command: &str, req: Json) -> Response {
        let auth = format!("Bearer {}", self.token);
        request(
            self.port,
            "POST",
            &format!("/api/{command}"),
            &[
                ("Authorization", auth.as_str()),
                ("Content-Type", "application/json"),
            ],
            json!({ "req": req }).to_string().as_bytes(),
        )
    }

    /// Poll a job until it ends (at most 15 s); its last snapshot.
    pub fn follow(&self, job: &str) -> Json {
        for _ in 0..300 {
            let snap = self.ok("job_poll", json!({"job": job, "cursor": 0}));
            if snap["state"] != "running" {
                return snap;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("job {job} still running after 15 s");
    }

    pub fn ok(&self, command: &str, req: Json) -> Json {
        let r = self.call(command, req);
        assert_eq!(
            r.status,
            200,
            "{command}: {}",
            String::from_utf8_lossy(&r.body)
        );
        r.json()
    }
}

/// The server, or `None` (after checking the message) when the binary has no UI built in.
pub fn running(started: Started) -> Option<Server> {
    match started {
        Started::Running(s) => Some(s),
        Started::NoUi(code, err) => {
            assert_eq!(code, 2, "{err}");
            assert!(err.contains("built without the UI"), "{err}");
            eprintln!("flashback was built without ui/dist: checked the message only ({err})");
            None
        }
    }
}

//! `flashback serve` through the real binary: the token, the Host check, errors as
//! `{code, message}`, a write over HTTP, the embedded UI with its security headers.

use serde_json::{json, Value as Json};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

/// A running `flashback serve`, killed on drop (also when an assertion fails).
struct Server {
    child: Child,
    /// The rest of the server's stdout, kept open while it runs.
    _stdout: std::io::Lines<BufReader<std::process::ChildStdout>>,
    port: u16,
    token: String,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

enum Started {
    Running(Server),
    /// The binary was built without `ui/dist`: exit code and stderr.
    NoUi(i32, String),
}

fn serve(args: &[&str]) -> Started {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("agents.sqlite");
    std::fs::copy(fixture(), &db).expect("copy fixture");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_flashback"));
    cmd.arg("serve");
    if args.is_empty() {
        cmd.arg(&db);
    } else {
        cmd.args(args);
    }
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
                        _dir: dir,
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

struct Response {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    fn json(&self) -> Json {
        serde_json::from_slice(&self.body).expect("JSON body")
    }
}

/// One HTTP/1.1 request on a fresh connection.
fn request(port: u16, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Response {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    s.set_read_timeout(Some(Duration::from_secs(30)))
        .expect("timeout");
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: 127.0.0.1:{port}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).expect("write head");
    s.write_all(body).expect("write body");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
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

fn dechunk(mut data: &[u8]) -> Vec<u8> {
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
    fn call(&self, command: &str, req: Json) -> Response {
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

    fn ok(&self, command: &str, req: Json) -> Json {
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

fn running(started: Started) -> Option<Server> {
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

#[test]
fn serves_the_api_behind_a_token() {
    let Some(server) = running(serve(&[])) else {
        return;
    };
    let info = server.ok("app_info", Json::Null);
    let db = info["initial"]["db"]
        .as_str()
        .expect("db handle")
        .to_owned();
    assert_eq!(info["initial"]["kind"], "sqlite");
    assert_eq!(info["host"], "serve");
    let threads = server.ok("list_threads", json!({ "db": db }));
    assert_eq!(threads.as_array().map(Vec::len), Some(12));

    let port = server.port;
    let no_token = request(port, "POST", "/api/list_threads", &[], b"{}");
    assert_eq!(no_token.status, 401);
    assert_eq!(no_token.json()["code"], "unauthorized");
    let wrong = request(
        port,
        "POST",
        "/api/list_threads",
        &[("Authorization", "Bearer 0123456789abcdef0123456789abcdef")],
        b"{}",
    );
    assert_eq!(wrong.status, 401);
    let auth = format!("Bearer {}", server.token);
    let evil_host = format!("evil.example:{port}");
    let rebinding = request(
        port,
        "POST",
        "/api/list_threads",
        &[("Authorization", &auth), ("Host", &evil_host)],
        b"{}",
    );
    assert_eq!(rebinding.status, 403, "DNS rebinding is refused");
    let unknown = server.call("drop_everything", json!({}));
    assert_eq!(unknown.status, 404);
    assert_eq!(unknown.json()["code"], "not_found");
    let bad_json = request(
        port,
        "POST",
        "/api/list_threads",
        &[("Authorization", &auth)],
        b"{not json",
    );
    assert_eq!(bad_json.status, 400);
    assert_eq!(bad_json.json()["code"], "invalid_input");
    let missing = server.call(
        "thread_graph",
        json!({"db": db, "thread_id": "no-such-thread"}),
    );
    assert_eq!(missing.status, 400);
    assert_eq!(missing.json()["code"], "not_found");

    // A fork over HTTP moves the head.
    let graph = server.ok("thread_graph", json!({"db": db, "thread_id": "forked"}));
    let from = graph["rows"][3]["id"].as_str().expect("row id").to_owned();
    let fork = server.ok(
        "fork_checkpoint",
        json!({"db": db, "thread_id": "forked", "checkpoint_id": from}),
    );
    let graph = server.ok("thread_graph", json!({"db": db, "thread_id": "forked"}));
    assert_eq!(graph["rows"][0]["id"], fork["checkpoint_id"]);
    assert_eq!(graph["rows"][0]["flashback_action"], "copy_fork");
}

#[test]
fn serves_the_ui_with_security_headers() {
    let Some(server) = running(serve(&[])) else {
        return;
    };
    let page = request(server.port, "GET", "/", &[], b"");
    assert_eq!(page.status, 200);
    assert!(page
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/html")));
    let csp = page.header("content-security-policy").expect("CSP");
    assert!(csp.contains("default-src 'self'"), "{csp}");
    assert!(csp.contains("connect-src 'self'"), "{csp}");
    assert_eq!(page.header("x-content-type-options"), Some("nosniff"));
    let html = String::from_utf8_lossy(&page.body).into_owned();
    let script = html
        .split("src=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a script in index.html");
    assert!(script.starts_with("/assets/"), "{script}");
    let js = request(server.port, "GET", script, &[], b"");
    assert_eq!(js.status, 200);
    assert!(js
        .header("content-type")
        .is_some_and(|t| t.starts_with("text/javascript")));
    assert!(js
        .header("cache-control")
        .is_some_and(|c| c.contains("immutable")));
    // The UI's own routes fall back to the page; missing files are 404.
    assert_eq!(
        request(server.port, "GET", "/threads/x", &[], b"").status,
        200
    );
    assert_eq!(
        request(server.port, "GET", "/assets/nope.js", &[], b"").status,
        404
    );
}

#[test]
fn serve_refuses_a_bad_database_and_serves_the_demo() {
    let dir = tempfile::tempdir().expect("tempdir");
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "not a database\n".repeat(100)).expect("write");
    let out = Command::new(env!("CARGO_BIN_EXE_flashback"))
        .args(["serve", path(&notes), "--port", "0"])
        .env("FLASHBACK_DATA_DIR", dir.path().join("data"))
        .output()
        .expect("run");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    if !stderr.contains("built without the UI") {
        assert_eq!(out.status.code(), Some(4), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(out.stdout.is_empty(), "never started");
    }

    let Some(server) = running(serve(&["--demo"])) else {
        return;
    };
    let info = server.ok("app_info", Json::Null);
    assert_eq!(info["initial"]["demo"], true);
}

fn path(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

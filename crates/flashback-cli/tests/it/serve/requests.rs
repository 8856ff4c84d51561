//! `flashback serve` through the real binary: the token, the Host check, errors as
//! `{code, message}`, a write over HTTP, the embedded UI with its security headers.

use crate::common;
use common::server::*;
use serde_json::{json, Value as Json};
use std::path::Path;
use std::process::Command;

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

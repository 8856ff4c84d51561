//! `flashback serve`'s door, through the real binary: one Host header naming the served
//! address, the bearer scheme in any case, the page's cookie (`HttpOnly; SameSite=Strict`)
//! with its CSRF header and same-origin checks, the security headers on every answer, and the
//! rights it hands out (re-run and server-side exports only when asked for).

use crate::common;
use common::server::*;
use serde_json::{json, Value as Json};

fn status(r: &Response) -> (u16, String) {
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}

#[test]
fn one_host_header_and_the_bearer_scheme_in_any_case() {
    let Some(server) = running(serve(&[])) else {
        return;
    };
    let port = server.port;
    let good_host = format!("127.0.0.1:{port}");
    let token = server.token.clone();
    let call = |headers: &[(&str, &str)]| request(port, "POST", "/api/app_info", headers, b"");
    for scheme in ["Bearer", "bearer", "BEARER", "bEaReR"] {
        let auth = format!("{scheme} {token}");
        let r = call(&[("Authorization", &auth)]);
        assert_eq!(r.status, 200, "{scheme}: {:?}", status(&r));
    }
    let auth = format!("Bearer {token}");
    // A second Host header is refused, whichever comes first.
    for hosts in [
        [good_host.as_str(), "evil.example"],
        ["evil.example", good_host.as_str()],
    ] {
        let r = call(&[
            ("Host", hosts[0]),
            ("Host", hosts[1]),
            ("Authorization", &auth),
        ]);
        assert_eq!(r.status, 400, "{hosts:?}: {:?}", status(&r));
        assert_eq!(r.json()["code"], "unauthorized");
    }
    // DNS rebinding is refused for the page too, not only the API.
    let evil = format!("evil.example:{port}");
    assert_eq!(
        request(port, "GET", "/", &[("Host", &evil)], b"").status,
        403
    );

    // Every answer carries the security headers: API success, API error, page, missing file.
    let answers = [
        call(&[("Authorization", &auth)]),
        call(&[]),
        request(port, "GET", "/", &[], b""),
        request(port, "GET", "/assets/nope.js", &[], b""),
    ];
    for r in &answers {
        assert_eq!(
            r.header("x-content-type-options"),
            Some("nosniff"),
            "{}",
            r.status
        );
        assert_eq!(r.header("x-frame-options"), Some("DENY"), "{}", r.status);
        assert_eq!(
            r.header("referrer-policy"),
            Some("no-referrer"),
            "{}",
            r.status
        );
        assert!(
            r.header("content-security-policy").is_some(),
            "{}",
            r.status
        );
    }
    assert_eq!(answers[0].header("cache-control"), Some("no-store"));
}

#[test]
fn the_page_cookie_with_its_csrf_checks() {
    let Some(server) = running(serve(&[])) else {
        return;
    };
    let port = server.port;
    let token = server.token.clone();
    let auth = format!("Bearer {token}");
    let call = |headers: &[(&str, &str)]| request(port, "POST", "/api/app_info", headers, b"");

    // A script's bearer call gets no cookie; the page's first call (X-Flashback) does.
    assert_eq!(call(&[("Authorization", &auth)]).header("set-cookie"), None);
    let first = call(&[("Authorization", &auth), ("X-Flashback", "1")]);
    assert_eq!(first.status, 200);
    let cookie = first.header("set-cookie").expect("a cookie").to_owned();
    let name = format!("flashback_{port}");
    assert!(cookie.starts_with(&format!("{name}={token};")), "{cookie}");
    for attr in ["HttpOnly", "SameSite=Strict", "Path=/"] {
        assert!(cookie.split("; ").any(|a| a == attr), "{attr} in {cookie}");
    }
    let jar = format!("{name}={token}");

    // The cookie alone authenticates the page's calls (with X-Flashback, from this origin).
    let origin = format!("http://127.0.0.1:{port}");
    let ok = call(&[
        ("Cookie", &jar),
        ("X-Flashback", "1"),
        ("Origin", &origin),
        ("Sec-Fetch-Site", "same-origin"),
    ]);
    assert_eq!(ok.status, 200, "{:?}", status(&ok));
    assert_eq!(ok.json()["host"], "serve");
    let other_cookies = format!("theme=dark; {jar}; x=y");
    assert_eq!(
        call(&[("Cookie", &other_cookies), ("X-Flashback", "1")]).status,
        200
    );

    // Without the header a cross-site form could not send: refused.
    let r = call(&[("Cookie", &jar)]);
    assert_eq!(r.status, 403, "{:?}", status(&r));
    assert!(r.json()["message"]
        .as_str()
        .unwrap_or("")
        .contains("X-Flashback"));
    // From another origin (another port counts) or site: refused, cookie or token.
    for (k, v) in [
        ("Origin", "http://evil.example".to_owned()),
        ("Origin", "http://127.0.0.1:1".to_owned()),
        ("Origin", "null".to_owned()),
        ("Sec-Fetch-Site", "same-site".to_owned()),
        ("Sec-Fetch-Site", "cross-site".to_owned()),
    ] {
        let r = call(&[("Cookie", &jar), ("X-Flashback", "1"), (k, &v)]);
        assert_eq!(r.status, 403, "{k}: {v}: {:?}", status(&r));
        let r = call(&[("Authorization", &auth), (k, &v)]);
        assert_eq!(r.status, 403, "bearer, {k}: {v}: {:?}", status(&r));
    }
    // A wrong value, or the right value under another server's name: no.
    let wrong = format!("{name}=0123456789abcdef0123456789abcdef");
    assert_eq!(
        call(&[("Cookie", &wrong), ("X-Flashback", "1")]).status,
        401
    );
    let elsewhere = format!("flashback_1={token}");
    assert_eq!(
        call(&[("Cookie", &elsewhere), ("X-Flashback", "1")]).status,
        401
    );
    assert_eq!(server.ok("app_info", Json::Null)["host"], "serve");
}

#[test]
fn running_commands_and_writing_files_are_opt_in() {
    let Some(server) = running(serve(&[])) else {
        return;
    };
    let info = server.ok("app_info", Json::Null);
    assert_eq!(info["can_run"], false);
    let db = info["initial"]["db"].as_str().expect("db").to_owned();
    let marker = server.dir.path().join("ran");
    let rerun = json!({
        "db": db, "thread_id": "forked", "checkpoint_ns": "", "checkpoint_id": "x",
        "runner": format!("touch {}", marker.display()), "timeout_secs": 5,
    });
    let r = server.call("start_rerun", rerun);
    assert_eq!(r.status, 400, "{:?}", status(&r));
    assert_eq!(r.json()["code"], "not_allowed");
    assert!(r.json()["message"]
        .as_str()
        .unwrap_or("")
        .contains("--allow-run"));
    let target = server.dir.path().join("bundle.json");
    let export = |path: &str| json!({"db": db, "thread_id": "forked", "format": "json", "redact": [], "path": path});
    let r = server.call("start_export", export(&target.to_string_lossy()));
    assert_eq!(r.status, 400, "{:?}", status(&r));
    assert_eq!(r.json()["code"], "not_allowed");
    assert!(!target.exists() && !marker.exists());
    // Without a path, the content comes back for the browser to download.
    let job = server.ok(
        "start_export",
        json!({"db": db, "thread_id": "forked", "format": "json", "redact": []}),
    );
    let done = server.follow(job.as_str().expect("job id"));
    assert_eq!(done["state"], "succeeded", "{done}");
    assert!(done["result"]["content"].is_string());

    // --allow-run and --export-dir DIR: exports land in DIR, and only there.
    let exports = tempfile::tempdir().expect("tempdir");
    let dir = exports.path().to_string_lossy().into_owned();
    let Some(server) = running(serve_fixture(None, &["--allow-run", "--export-dir", &dir])) else {
        return;
    };
    let info = server.ok("app_info", Json::Null);
    assert_eq!(info["can_run"], true);
    let db = info["initial"]["db"].as_str().expect("db").to_owned();
    let export = |path: &str| json!({"db": db, "thread_id": "forked", "format": "json", "redact": [], "path": path});
    let job = server.ok("start_export", export("bundle.json"));
    let done = server.follow(job.as_str().expect("job id"));
    assert_eq!(done["state"], "succeeded", "{done}");
    assert!(exports.path().join("bundle.json").is_file());
    for escape in ["../escaped.json", "/tmp/escaped-by-flashback.json"] {
        let r = server.call("start_export", export(escape));
        assert_eq!(r.status, 400, "{escape}: {:?}", status(&r));
        assert_eq!(r.json()["code"], "not_allowed", "{escape}");
    }
    assert!(!exports.path().join("../escaped.json").exists());
}

//! The CLI with unusual surroundings: output pipes closed by their reader, a FIFO where a
//! database or a bundle should be, the largest `--limit`, Postgres URLs that are not. Each
//! ends with its exit code and (at most) one line on stderr; never a panic (exit 101) or a hang.

use crate::common;
use common::*;
use serde_json::Value as Json;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Run flashback with stdout and stderr going into pipes whose reading ends are closed before
/// it starts (it waits half a second in `sh` first), as in `flashback … 2>&1 | true`.
fn with_closed_pipes(args: &[&str]) -> ExitStatus {
    let mut child = Command::new("sh")
        .arg("-c")
        .arg("sleep 0.5; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_flashback"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run flashback");
    drop(child.stdout.take());
    drop(child.stderr.take());
    wait_at_most(&mut child, Duration::from_secs(60))
}

fn wait_at_most(child: &mut std::process::Child, limit: Duration) -> ExitStatus {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            return status;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("flashback did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn closed_output_pipes_never_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("missing.sqlite");
    // The error line goes nowhere, the exit code stays.
    assert_eq!(
        with_closed_pipes(&["threads", &missing.to_string_lossy()]).code(),
        Some(3)
    );
    // Progress on stderr and the result on stdout go nowhere; the file is written.
    let bundle = dir.path().join("b.json");
    let bundle_s = bundle.to_string_lossy().into_owned();
    let db = sqlite();
    assert_eq!(
        with_closed_pipes(&["export", &db, "forked", "-o", &bundle_s]).code(),
        Some(0)
    );
    assert!(bundle.is_file());
    assert_eq!(with_closed_pipes(&["verify", &bundle_s]).code(), Some(0));
    // A tampered bundle: the report and the line on stderr go nowhere, exit 5 stays.
    let text = std::fs::read_to_string(&bundle).expect("read");
    let parsed: Json = serde_json::from_str(&text).expect("bundle");
    let step = &parsed["checkpoints"][1]["metadata"]["step"];
    let tampered = text.replacen(&format!("\"step\": {step}"), "\"step\": 99", 1);
    assert_ne!(tampered, text);
    std::fs::write(&bundle, tampered).expect("write");
    assert_eq!(with_closed_pipes(&["verify", &bundle_s]).code(), Some(5));
    assert_eq!(
        with_closed_pipes(&["history", &db, "long", "--json"]).code(),
        Some(0)
    );
}

#[cfg(unix)]
#[test]
fn a_fifo_is_refused_not_waited_on() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fifo = dir.path().join("pipe.sqlite");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo");
    assert!(made.success());
    let fifo = fifo.to_string_lossy().into_owned();
    for args in [
        vec!["state", fifo.as_str(), "x"],
        vec!["threads", fifo.as_str()],
        vec!["verify", fifo.as_str()],
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_flashback"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run");
        let status = wait_at_most(&mut child, Duration::from_secs(10));
        let out = child.wait_with_output().expect("output");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains("FIFO"), "{stderr}");
    }
}

#[test]
fn the_largest_limit_works_and_a_larger_one_is_usage() {
    let db = sqlite();
    let all = json_ok(&["history", &db, "long", "--limit", "4294967295", "--json"]);
    assert_eq!(all.as_array().map(Vec::len), Some(300));
    let out = flashback(&["history", &db, "long", "--limit", "4294967296"]);
    assert_eq!(out.status.code(), Some(2));
    let out = flashback(&["history", &db, "long", "--limit", "-1"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn bad_postgres_urls_are_invalid_input() {
    fails(&["threads", "postgres://u:%zz@h/db"], 2, "%-escape");
    fails(&["threads", "postgres://"], 2, "names no server");
    fails(&["threads", "postgresql:///"], 2, "names no server");
}

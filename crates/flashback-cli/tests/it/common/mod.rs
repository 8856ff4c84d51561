//! Helpers for the `flashback` binary's tests: the fixtures, running the binary, its JSON and
//! its failures.
#![allow(dead_code)]

pub mod server;

use serde_json::Value as Json;
use std::path::PathBuf;
use std::process::{Command, Output};

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

pub fn sqlite() -> String {
    fixture("langgraph.sqlite").to_string_lossy().into_owned()
}

pub fn flashback(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_flashback"))
        .args(args)
        .output()
        .expect("run flashback")
}

pub fn json_ok(args: &[&str]) -> Json {
    let out = flashback(args);
    assert!(
        out.status.success(),
        "flashback {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// Run `flashback args`, which must fail with `code`, nothing on stdout and one line on stderr
/// mentioning `needle`; that line.
pub fn fails(args: &[&str], code: i32, needle: &str) -> String {
    let out = flashback(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(code),
        "exit code of {args:?}; stderr: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout on failure");
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr}");
    assert!(
        stderr.contains(needle),
        "stderr mentions {needle:?}: {stderr}"
    );
    stderr.into_owned()
}

pub fn thread_statuses(threads: &Json) -> Vec<(String, String, u64)> {
    threads
        .as_array()
        .expect("array")
        .iter()
        .map(|t| {
            (
                t["thread_id"].as_str().expect("id").to_owned(),
                t["status"].as_str().expect("status").to_owned(),
                t["checkpoint_count"].as_u64().expect("count"),
            )
        })
        .collect()
}

pub fn check_threads(threads: &Json) {
    let rows = thread_statuses(threads);
    let status = |name: &str| rows.iter().find(|r| r.0 == name).map(|r| r.1.as_str());
    assert_eq!(status("interrupt-waiting"), Some("interrupted"), "{rows:?}");
    assert_eq!(status("parallel-failure"), Some("failed"), "{rows:?}");
    assert_eq!(status("reducers"), Some("finished"), "{rows:?}");
    let long = rows.iter().find(|r| r.0 == "long").expect("long thread");
    assert!(long.2 >= 300, "long thread has {} checkpoints", long.2);
    let sub = threads
        .as_array()
        .expect("array")
        .iter()
        .find(|t| t["thread_id"] == "subgraph")
        .expect("subgraph thread");
    assert!(
        sub["namespaces"].as_array().expect("namespaces").len() > 1,
        "{sub}"
    );
}

/// A FIFO at `path` (`mkfifo`).
#[cfg(unix)]
pub fn mkfifo(path: &std::path::Path) {
    let made = Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("run mkfifo");
    assert!(made.success(), "mkfifo {}", path.display());
}

/// A folder in which no new file can be made: `dir/locked` (mode 0555), or, when this process
/// writes there anyway (root), sysfs, which takes no new file from anyone.
#[cfg(target_os = "linux")]
pub fn read_only_folder(dir: &std::path::Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let locked = dir.join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).expect("chmod");
    if std::fs::write(locked.join("probe"), "").is_ok() {
        return PathBuf::from("/sys");
    }
    locked
}

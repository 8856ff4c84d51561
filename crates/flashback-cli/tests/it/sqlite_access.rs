//! SQLite files Flashback cannot write beside, or that another process holds: a WAL database
//! in a read-only directory is read (without creating anything), a locked database is reported
//! as locked (not as "not a SQLite database", exit 4), and a write to a read-only database says
//! so.
//!
//! A read-only directory must bind root too (the tests run as root in the project's
//! container): the directory is bind-mounted read-only in a private mount namespace
//! (`unshare -m`) around the `flashback` process. Where that is not possible, as root, the
//! binary runs as an unprivileged user (`runuser -u postgres`/`nobody`) against a directory it
//! does not own; as a normal user, the directory is `chmod 555`. With none of these, the test is
//! skipped (and fails in CI).

use crate::common;

use common::*;
use std::collections::BTreeSet;
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn works(cmd: &mut Command) -> bool {
    cmd.output().is_ok_and(|o| o.status.success())
}

/// How `flashback` is run against a directory it cannot write.
enum ReadOnly {
    /// `unshare -m`: a read-only bind mount of the directory.
    Mount,
    /// As root: as this unprivileged user, the binary copied to a directory it can read.
    User(&'static str, tempfile::TempDir),
    /// As a normal user: `chmod 555`.
    Chmod,
}

impl ReadOnly {
    fn find() -> Option<ReadOnly> {
        if !is_root() {
            return Some(ReadOnly::Chmod);
        }
        let probe = tempfile::tempdir().expect("tempdir");
        let d = probe.path().to_string_lossy().into_owned();
        let script = "mount --bind \"$1\" \"$1\" && mount -o remount,ro,bind \"$1\" \"$1\" && ! touch \"$1/x\" 2>/dev/null";
        if works(Command::new("unshare").args(["-m", "sh", "-c", script, "sh", &d])) {
            return Some(ReadOnly::Mount);
        }
        let has_runuser = works(Command::new("runuser").arg("--help"));
        for user in ["postgres", "nobody"] {
            if has_runuser && works(Command::new("id").arg(user)) {
                let bin = tempfile::tempdir().expect("tempdir");
                std::fs::set_permissions(bin.path(), std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
                let exe = bin.path().join("flashback");
                std::fs::copy(env!("CARGO_BIN_EXE_flashback"), &exe).expect("copy binary");
                return Some(ReadOnly::User(user, bin));
            }
        }
        None
    }

    /// Run `flashback args…` with `dir` read-only to it.
    fn run(&self, dir: &Path, args: &[&str]) -> Output {
        let exe = env!("CARGO_BIN_EXE_flashback");
        match self {
            ReadOnly::Mount => {
                let d = dir.to_string_lossy().into_owned();
                let script = "d=\"$1\"; shift; mount --bind \"$d\" \"$d\" && mount -o remount,ro,bind \"$d\" \"$d\" && exec \"$@\"";
                Command::new("unshare")
                    .args(["-m", "sh", "-c", script, "sh", &d, exe])
                    .args(args)
                    .output()
                    .expect("unshare")
            }
            ReadOnly::User(user, bin) => {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
                Command::new("runuser")
                    .args(["-u", user, "--"])
                    .arg(bin.path().join("flashback"))
                    .args(args)
                    .output()
                    .expect("runuser")
            }
            ReadOnly::Chmod => {
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o555))
                    .expect("chmod");
                let out = flashback(args);
                std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
                out
            }
        }
    }
}

fn read_only_or_skip() -> Option<ReadOnly> {
    let found = ReadOnly::find();
    if found.is_none() {
        let why = "no way to make a directory read-only for root here (unshare -m, runuser)";
        if in_ci() {
            panic!("{why}");
        }
        eprintln!("skipping: {why}");
    }
    found
}

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

/// A copy of the fixture in WAL mode, alone in a fresh directory readable by everyone.
fn wal_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let db = dir.path().join("agent.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let conn = rusqlite::Connection::open(&db).expect("open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    drop(conn);
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    (dir, db)
}

fn ok_json(out: &Output, what: &str) -> serde_json::Value {
    assert!(
        out.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

#[test]
fn a_wal_database_in_a_read_only_directory_is_read_without_side_files() {
    let Some(ro) = read_only_or_skip() else {
        return;
    };
    let (dir, db) = wal_copy();
    let db_s = db.to_string_lossy().into_owned();
    let before = files(dir.path());
    let threads = ok_json(
        &ro.run(dir.path(), &["threads", &db_s, "--json"]),
        "threads",
    );
    assert_eq!(threads.as_array().expect("list").len(), 12);
    let state = ok_json(
        &ro.run(dir.path(), &["state", &db_s, "chat-tools", "--json"]),
        "state",
    );
    assert!(state["values"].as_object().is_some_and(|v| !v.is_empty()));
    let graph = ro.run(dir.path(), &["graph", &db_s, "forked"]);
    assert!(
        graph.status.success(),
        "{}",
        String::from_utf8_lossy(&graph.stderr)
    );
    assert_eq!(files(dir.path()), before, "nothing created");

    // The same file in a writable directory: still nothing created beside it.
    let threads = json_ok(&["threads", &db_s, "--json"]);
    assert_eq!(threads.as_array().expect("list").len(), 12);
    assert_eq!(files(dir.path()), before, "no -wal or -shm left behind");
}

#[test]
fn a_live_writers_wal_in_a_read_only_directory_is_seen() {
    let Some(ro) = read_only_or_skip() else {
        return;
    };
    let (dir, db) = wal_copy();
    // The owner's agent: a thread committed only to the -wal, its connection kept open.
    let writer = rusqlite::Connection::open(&db).expect("open");
    writer
        .execute_batch(
            "PRAGMA wal_autocheckpoint = 0; \
             INSERT INTO checkpoints SELECT 'wal-only', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
             FROM checkpoints WHERE thread_id = 'chat-tools';",
        )
        .expect("write");
    for f in ["agent.sqlite-wal", "agent.sqlite-shm"] {
        std::fs::set_permissions(dir.path().join(f), std::fs::Permissions::from_mode(0o644))
            .expect("chmod");
    }
    let before = files(dir.path());
    assert!(before.contains("agent.sqlite-wal") && before.contains("agent.sqlite-shm"));
    let db_s = db.to_string_lossy().into_owned();
    let threads = ok_json(
        &ro.run(dir.path(), &["threads", &db_s, "--json"]),
        "threads",
    );
    let ids: Vec<&str> = threads
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|t| t["thread_id"].as_str())
        .collect();
    assert!(
        ids.contains(&"wal-only"),
        "what is only in the -wal is seen: {ids:?}"
    );
    let state = ok_json(
        &ro.run(dir.path(), &["state", &db_s, "wal-only", "--json"]),
        "state",
    );
    assert!(state["values"].as_object().is_some_and(|v| !v.is_empty()));
    assert_eq!(files(dir.path()), before, "the owner's files untouched");
    drop(writer);
}

#[test]
fn a_locked_database_is_reported_as_locked_not_as_not_a_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("busy.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    // Another process's writer in the middle of committing: an exclusive lock held.
    let holder = rusqlite::Connection::open(&db).expect("open");
    holder
        .execute_batch("BEGIN EXCLUSIVE; DELETE FROM writes WHERE thread_id = 'long';")
        .expect("lock");
    let db_s = db.to_string_lossy().into_owned();
    let out = flashback(&["threads", &db_s]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("locked by another process"), "{stderr}");
    assert!(stderr.contains("try again"), "{stderr}");
    assert!(!stderr.contains("not a SQLite database"), "{stderr}");
    holder.execute_batch("ROLLBACK").expect("release");
    // Released: it reads.
    let threads = json_ok(&["threads", &db_s, "--json"]);
    assert_eq!(threads.as_array().expect("list").len(), 12);
}

#[test]
fn a_write_to_a_read_only_database_says_read_only() {
    let Some(ro) = read_only_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let db = dir.path().join("ro.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let db_s = db.to_string_lossy().into_owned();
    let head = ok_json(
        &ro.run(dir.path(), &["state", &db_s, "chat-tools", "--json"]),
        "state",
    );
    let id = head["checkpoint_id"].as_str().expect("id").to_owned();
    let original = std::fs::read(&db).expect("read");
    let out = ro.run(
        dir.path(),
        &["fork", &db_s, "chat-tools", "--checkpoint", &id],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    assert!(stderr.contains("read-only"), "{stderr}");
    assert!(!stderr.contains("not a SQLite database"), "{stderr}");
    assert_eq!(std::fs::read(&db).expect("read"), original, "unchanged");
}

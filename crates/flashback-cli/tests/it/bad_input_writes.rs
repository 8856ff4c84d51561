//! Writes under bad conditions ("bad input" for writes): a process killed mid-copy, a Postgres
//! connection dropped mid-fork, a read-only file. Each must end with a clear error and nothing
//! half-written.

use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{CheckpointSaver, CheckpointStore, ListQuery, PutRequest};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/fixtures")
        .join(name)
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_flashback")
}

fn flashback(args: &[&str]) -> Output {
    Command::new(bin())
        .args(args)
        .output()
        .expect("run flashback")
}

fn json_ok(args: &[&str]) -> Json {
    let out = flashback(args);
    assert!(
        out.status.success(),
        "flashback {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && v != "false")
}

/// `(checkpoints, writes)` rows of a thread, read through a read-write connection (which rolls
/// back a hot journal a killed writer left, as the next writer would).
fn rows(db: &Path, thread: &str) -> (i64, i64) {
    let conn = rusqlite::Connection::open(db).expect("open");
    let count = |table: &str| -> i64 {
        conn.query_row(
            &format!("SELECT count(*) FROM {table} WHERE thread_id = ?"),
            [thread],
            |r| r.get(0),
        )
        .expect("count")
    };
    (count("checkpoints"), count("writes"))
}

fn integrity_ok(db: &Path) {
    let conn = rusqlite::Connection::open(db).expect("open");
    let ok: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .expect("integrity_check");
    assert_eq!(ok, "ok", "{} is intact", db.display());
}

/// A copy of the fixture plus a thread `big`: the `long` thread's checkpoints put `copies`
/// times under new ids (`<id>-<round>`, parents renamed alike). Returns its checkpoint count.
async fn build_big(path: &Path, copies: usize) -> i64 {
    std::fs::copy(fixture("langgraph.sqlite"), path).expect("copy fixture");
    let saver = SqliteSaver::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open saver");
    let tuples = saver
        .list_tuples(&ListQuery::thread("long"))
        .await
        .expect("long");
    assert!(!tuples.is_empty());
    let mut checkpoints = Vec::new();
    let mut parents = Vec::new();
    let mut metadata = Vec::new();
    for round in 0..copies {
        for t in &tuples {
            let mut cp = t.checkpoint.clone();
            cp.id = format!("{}-{round:03}", cp.id);
            checkpoints.push((t.header.checkpoint_ns.clone(), cp));
            parents.push(
                t.header
                    .parent_checkpoint_id
                    .as_ref()
                    .map(|p| format!("{p}-{round:03}")),
            );
            metadata.push(match &t.header.metadata {
                Json::Object(m) => m.clone(),
                _ => serde_json::Map::new(),
            });
        }
    }
    let puts: Vec<PutRequest<'_>> = checkpoints
        .iter()
        .zip(&parents)
        .zip(&metadata)
        .map(|(((ns, cp), parent), metadata)| PutRequest {
            thread_id: "big",
            checkpoint_ns: ns,
            parent_checkpoint_id: parent.as_deref(),
            checkpoint: cp,
            metadata,
            new_versions: &cp.channel_versions,
        })
        .collect();
    saver.put_batch(&puts, &[]).await.expect("put_batch");
    let n = puts.len() as i64;
    assert_eq!(rows(path, "big"), (n, 0));
    n
}

/// How a kill attempt is timed.
#[derive(Debug, Clone, Copy)]
enum KillAt {
    /// As soon as the destination's rollback journal exists (its write transaction has begun).
    Journal,
    /// After a fixed delay.
    After(Duration),
}

/// Run `flashback copy …` and SIGKILL it per `when`; returns whether it was killed (rather than
/// having finished first).
fn copy_and_kill(args: &[&str], dest: &Path, when: KillAt) -> bool {
    let mut child = Command::new(bin())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn flashback");
    let journal = PathBuf::from(format!("{}-journal", dest.display()));
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            assert!(status.success(), "the copy itself succeeds: {status}");
            return false;
        }
        let due = match when {
            KillAt::Journal => journal.exists(),
            KillAt::After(d) => start.elapsed() >= d,
        };
        if due {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "the copy hangs");
        std::thread::sleep(Duration::from_micros(200));
    }
    child.kill().expect("SIGKILL");
    let status = child.wait().expect("wait");
    // Killed, unless it exited successfully between the check and the signal.
    !status.success()
}

/// A copy killed at various points leaves 0 or all of the target thread's rows, never part.
fn killed_copies(dir: &Path, source: &Path, n: i64, to_other: bool) {
    let src = source.to_str().expect("utf-8");
    let base = fixture("langgraph.sqlite");
    let untouched = rows(source, "long");

    // A full run, to learn how long a copy takes.
    let dest = if to_other {
        let d = dir.join("full.sqlite");
        std::fs::copy(&base, &d).expect("copy");
        d
    } else {
        source.to_path_buf()
    };
    let d = dest.to_string_lossy().into_owned();
    let mut args = vec!["copy", src, "big", "full"];
    if to_other {
        args.extend(["--to", &d]);
    }
    let start = Instant::now();
    let out = flashback(&args);
    let full = start.elapsed();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rows(&dest, "full").0, n, "a full copy copies everything");

    let mut attempts = vec![KillAt::Journal, KillAt::Journal];
    for tenth in [1u32, 3, 5, 7, 9] {
        attempts.push(KillAt::After(full * tenth / 10));
    }
    let mut outcomes = Vec::new();
    for (i, when) in attempts.into_iter().enumerate() {
        let target = format!("big-{i}");
        let dest = if to_other {
            let d = dir.join(format!("dest-{i}.sqlite"));
            std::fs::copy(&base, &d).expect("copy");
            d
        } else {
            source.to_path_buf()
        };
        let d = dest.to_string_lossy().into_owned();
        let mut args = vec!["copy", src, "big", &target];
        if to_other {
            args.extend(["--to", &d]);
        }
        let killed = copy_and_kill(&args, &dest, when);
        // The read-only side either reads the file or, when the kill left a hot journal that
        // only a writer may roll back, says so in one line.
        let history = flashback(&["history", &d, "long", "--json"]);
        let stderr = String::from_utf8_lossy(&history.stderr);
        assert!(
            history.status.success()
                || (stderr.contains("hot journal") && stderr.lines().count() == 1),
            "after a kill ({when:?}): {stderr}"
        );
        let (checkpoints, writes) = rows(&dest, &target);
        // Once a writer has opened the file, it reads again.
        assert!(
            flashback(&["history", &d, "long", "--json"])
                .status
                .success(),
            "after a kill ({when:?}) and a writer's open, the file reads"
        );
        assert!(
            (checkpoints, writes) == (0, 0) || (checkpoints, writes) == (n, 0),
            "kill {when:?}: {checkpoints} of {n} checkpoints, {writes} writes copied — a partial copy"
        );
        integrity_ok(&dest);
        assert_eq!(rows(&dest, "long"), untouched, "other threads unchanged");
        outcomes.push((when, killed, checkpoints));
    }
    eprintln!(
        "copy{} of {n} checkpoints (full run {full:?}): {outcomes:?}",
        if to_other { " --to" } else { "" }
    );
    assert!(
        outcomes.iter().any(|(_, killed, c)| *killed && *c == 0),
        "at least one copy was killed before it committed: {outcomes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_copy_killed_midway_leaves_nothing_or_everything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let source = dir.path().join("source.sqlite");
    let n = build_big(&source, 10).await;
    let dir_path = dir.path().to_path_buf();
    tokio::task::spawn_blocking(move || {
        killed_copies(&dir_path, &source, n, true);
        killed_copies(&dir_path, &source, n, false);
    })
    .await
    .expect("join");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_postgres_connection_dropped_mid_fork_leaves_nothing() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixture("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let url = pg.url().to_owned();
    let mut admin = pg.connect().await.expect("connect");
    async fn counts(conn: &mut sqlx::PgConnection) -> Vec<i64> {
        let mut out = Vec::new();
        for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
            let n: i64 =
                sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT count(*) FROM {table}")))
                    .fetch_one(&mut *conn)
                    .await
                    .expect("count");
            out.push(n);
        }
        out
    }
    let before = counts(&mut admin).await;

    // An edit fork: a new blob (messages) then the checkpoint row, in one transaction.
    let u = url.clone();
    let head = tokio::task::spawn_blocking(move || json_ok(&["state", &u, "chat-tools", "--json"]))
        .await
        .expect("join");
    let id = head["checkpoint_id"].as_str().expect("id").to_owned();
    let mut messages = head["values"]["messages"].clone();
    let last = messages
        .as_array_mut()
        .expect("messages")
        .last_mut()
        .expect("a message");
    last["content"] = "Edited by Flashback".into();
    let set = format!("messages={messages}");

    // Another session holds a lock that lets reads through but blocks the INSERT into
    // checkpoints, so the fork waits inside its transaction (after the blob insert).
    let mut locker = pg.connect().await.expect("connect");
    sqlx::raw_sql("BEGIN; LOCK TABLE checkpoints IN SHARE MODE")
        .execute(&mut locker)
        .await
        .expect("lock");

    let child = Command::new(bin())
        .args([
            "fork",
            &url,
            "chat-tools",
            "--checkpoint",
            &id,
            "--set",
            &set,
            "--json",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn flashback");

    let start = Instant::now();
    let pid: i32 = loop {
        let found: Option<i32> = sqlx::query_scalar(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() \
             AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO checkpoints %'",
        )
        .fetch_optional(&mut admin)
        .await
        .expect("pg_stat_activity");
        if let Some(pid) = found {
            break pid;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the fork never blocked on its checkpoint insert"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // The fork's transaction has written its blob and waits: drop its connection.
    let terminated: bool = sqlx::query_scalar("SELECT pg_terminate_backend($1)")
        .bind(pid)
        .fetch_one(&mut admin)
        .await
        .expect("terminate");
    assert!(terminated);
    let out = tokio::task::spawn_blocking(move || child.wait_with_output())
        .await
        .expect("join")
        .expect("wait");
    sqlx::raw_sql("ROLLBACK")
        .execute(&mut locker)
        .await
        .expect("unlock");

    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("fork with a dropped connection: {stderr}");
    assert!(!out.status.success(), "the fork fails");
    assert!(out.stdout.is_empty(), "no checkpoint id is printed");
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr}");
    assert!(
        !stderr.contains("panicked"),
        "an error, not a panic: {stderr}"
    );
    assert!(
        stderr.contains("terminat") || stderr.contains("connection"),
        "the error says the connection went: {stderr}"
    );
    assert_eq!(
        counts(&mut admin).await,
        before,
        "no checkpoint, blob or write row was left behind"
    );
    let u = url.clone();
    let after =
        tokio::task::spawn_blocking(move || json_ok(&["state", &u, "chat-tools", "--json"]))
            .await
            .expect("join");
    assert_eq!(
        after["checkpoint_id"], head["checkpoint_id"],
        "head unchanged"
    );
}

#[test]
fn a_read_only_file_gives_a_clear_error_and_stays_byte_identical() {
    let uid = Command::new("id").arg("-u").output().expect("id -u");
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    let skip = |why: &str| {
        if in_ci() {
            panic!("cannot run the read-only check: {why}");
        }
        eprintln!("skipping the read-only check: {why}");
    };
    if root {
        // Permission bits do not stop root: run as an unprivileged system user.
        let has = |cmd: &mut Command| cmd.output().is_ok_and(|o| o.status.success());
        if !has(Command::new("runuser").arg("--help")) {
            return skip("running as root and `runuser` is missing");
        }
        if !has(Command::new("id").arg("postgres")) {
            return skip("running as root and there is no `postgres` user");
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("ro.sqlite");
    std::fs::copy(fixture("langgraph.sqlite"), &db).expect("copy");
    let db_s = db.to_string_lossy().into_owned();
    let head = json_ok(&["state", &db_s, "chat-tools", "--json"]);
    let id = head["checkpoint_id"].as_str().expect("id").to_owned();
    let original = std::fs::read(&db).expect("read");
    use std::os::unix::fs::PermissionsExt;
    // Readable by everyone, writable by its owner (root) only; the directory likewise.
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let mode = if root { 0o644 } else { 0o444 };
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(mode)).expect("chmod");

    let fork_args = [
        "fork",
        db_s.as_str(),
        "chat-tools",
        "--checkpoint",
        id.as_str(),
    ];
    let out = if root {
        // The build directory may sit under /root, which the other user cannot enter: run a
        // copy of the binary from the (world-readable) temporary directory.
        let exe = dir.path().join("flashback");
        std::fs::copy(bin(), &exe).expect("copy the binary");
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        Command::new("runuser")
            .args(["-u", "postgres", "--"])
            .arg(&exe)
            .args(fork_args)
            .output()
            .expect("runuser")
    } else {
        flashback(&fork_args)
    };
    let stderr = String::from_utf8_lossy(&out.stderr);
    eprintln!("fork of a read-only file: {stderr}");
    assert!(
        !stderr.contains("Permission denied") || stderr.contains("cannot be written"),
        "the flashback binary ran (not a permission problem of the test): {stderr}"
    );
    assert!(!out.status.success(), "the fork fails");
    assert!(out.stdout.is_empty(), "nothing on stdout");
    assert_eq!(stderr.lines().count(), 1, "one line on stderr: {stderr}");
    let lower = stderr.to_lowercase();
    assert!(
        lower.contains("cannot be written") || lower.contains("read-only"),
        "the error says the file cannot be written: {stderr}"
    );
    assert_eq!(
        std::fs::read(&db).expect("read"),
        original,
        "the file is byte-identical"
    );
    assert!(
        !PathBuf::from(format!("{db_s}-journal")).exists(),
        "no journal left behind"
    );
}

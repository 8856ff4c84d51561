//! Reading WAL databases (LangGraph's `SqliteSaver` sets `journal_mode=WAL`) creates nothing
//! beside them, deletes nothing of the owner's, and sees what is committed, including what is
//! still only in the `-wal`.
//!
//! The database is written by Python's real `SqliteSaver` when the project's venv has
//! langgraph (`FLASHBACK_PYTHON`, or `~/.cache/flashback/venv-test/bin/python`), else by
//! rusqlite; either way a writer keeps its connection open, so that its last checkpoint is only
//! in the `-wal`. Before, every read created `-wal` and `-shm` files (and left them behind)
//! wherever they were missing.

use flashback_storage::sqlite::SqliteStore;
use flashback_storage::{CheckpointStore, ListQuery};
use std::collections::BTreeSet;
use std::io::{BufRead as _, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

/// Python's SqliteSaver: run a one-node graph on `thread`, print `ready`, hold the connection
/// until stdin closes.
const WRITER_PY: &str = r#"
import sqlite3, sys
from typing import TypedDict
from langgraph.graph import StateGraph, START, END
from langgraph.checkpoint.sqlite import SqliteSaver

class S(TypedDict):
    n: int

g = StateGraph(S)
g.add_node("inc", lambda s: {"n": s["n"] + 1})
g.add_edge(START, "inc")
g.add_edge("inc", END)
conn = sqlite3.connect(sys.argv[1], check_same_thread=False)
app = g.compile(checkpointer=SqliteSaver(conn))
app.invoke({"n": 1}, {"configurable": {"thread_id": sys.argv[2]}})
print("ready", flush=True)
sys.stdin.read()
conn.close()
"#;

fn python() -> Option<PathBuf> {
    let p = std::env::var_os("FLASHBACK_PYTHON")
        .map(PathBuf::from)
        .or_else(|| {
            let home = std::env::var_os("HOME")?;
            Some(Path::new(&home).join(".cache/flashback/venv-test/bin/python"))
        })?;
    let ok = Command::new(&p)
        .args(["-c", "import langgraph.checkpoint.sqlite"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(p)
}

/// A writer holding its connection open; dropping it lets it close (and checkpoint).
enum Writer {
    Python(Child),
    /// Held only to keep the connection open.
    Rust {
        _conn: rusqlite::Connection,
    },
}

impl Writer {
    /// Write `thread` into `db` (a WAL database) and keep the connection open.
    fn start(db: &Path, thread: &str) -> Writer {
        match python() {
            Some(py) => {
                let mut child = Command::new(py)
                    .args(["-c", WRITER_PY])
                    .arg(db)
                    .arg(thread)
                    .stdin(Stdio::piped())
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("spawn python");
                let mut line = String::new();
                BufReader::new(child.stdout.as_mut().expect("stdout"))
                    .read_line(&mut line)
                    .expect("read");
                assert_eq!(line.trim(), "ready", "the Python writer ran");
                Writer::Python(child)
            }
            None => {
                eprintln!("no Python with langgraph: the WAL database is written by rusqlite");
                let conn = rusqlite::Connection::open(db).expect("open");
                conn.execute_batch(&format!(
                    "PRAGMA wal_autocheckpoint = 0; \
                     INSERT INTO checkpoints SELECT '{thread}', checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
                     FROM checkpoints WHERE thread_id = 'chat-tools'; \
                     INSERT INTO writes SELECT '{thread}', checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value, task_path \
                     FROM writes WHERE thread_id = 'chat-tools';"
                ))
                .expect("write");
                Writer::Rust { _conn: conn }
            }
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        if let Writer::Python(child) = self {
            drop(child.stdin.take());
            let _ = child.wait();
        }
    }
}

/// A WAL database: the fixture converted, plus (with Python) a thread the real saver wrote and
/// closed, so that its rows are checkpointed into the file.
fn wal_db(dir: &Path) -> PathBuf {
    let db = dir.join("agent.sqlite");
    std::fs::copy(FIXTURE, &db).expect("copy");
    let conn = rusqlite::Connection::open(&db).expect("open");
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .expect("wal");
    assert_eq!(mode, "wal");
    drop(conn);
    if python().is_some() {
        drop(Writer::start(&db, "closed-run"));
    }
    assert_eq!(files(dir), names(&["agent.sqlite"]), "a clean WAL file");
    db
}

fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect()
}

fn names(list: &[&str]) -> BTreeSet<String> {
    list.iter().map(|s| (*s).to_owned()).collect()
}

/// Threads, every thread's state and one thread's graph rows: what the app reads.
async fn read_everything(path: &Path) -> Vec<String> {
    let store = SqliteStore::open(path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let threads = store.list_threads().await.expect("threads");
    let keys: Vec<(&str, &str, Option<&str>)> = threads
        .iter()
        .map(|t| (t.thread_id.as_str(), "", None))
        .collect();
    let states = store.get_tuples(&keys).await.expect("states");
    assert!(states.iter().all(Option::is_some));
    for t in &threads {
        store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .expect("a thread in full");
        store
            .list_headers(&ListQuery::thread(&t.thread_id))
            .await
            .expect("a graph");
    }
    threads.into_iter().map(|t| t.thread_id).collect()
}

#[tokio::test]
async fn a_clean_wal_file_is_read_without_creating_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = wal_db(dir.path());
    let before = std::fs::read(&db).expect("read");
    let threads = read_everything(&db).await;
    assert!(threads.contains(&"long".to_string()));
    assert_eq!(
        files(dir.path()),
        names(&["agent.sqlite"]),
        "no -wal or -shm left behind"
    );
    assert_eq!(
        std::fs::read(&db).expect("read"),
        before,
        "not a byte changed"
    );
}

#[tokio::test]
async fn a_live_writers_wal_is_read_in_place_and_left_alone() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = wal_db(dir.path());
    let writer = Writer::start(&db, "wal-only");
    let owners = files(dir.path());
    assert_eq!(
        owners,
        names(&["agent.sqlite", "agent.sqlite-shm", "agent.sqlite-wal"])
    );
    // The premise: the new thread is only in the -wal.
    assert!(
        std::fs::metadata(dir.path().join("agent.sqlite-wal"))
            .expect("wal")
            .len()
            > 32
    );
    let threads = read_everything(&db).await;
    assert!(threads.contains(&"wal-only".to_string()), "{threads:?}");
    assert_eq!(files(dir.path()), owners, "nothing added or removed");
    drop(writer);
}

#[tokio::test]
async fn a_wal_without_its_shm_is_read_from_a_private_copy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = wal_db(dir.path());
    let writer = Writer::start(&db, "wal-only");
    // The file and its -wal, without the -shm (as copied by hand, or left by a writer in
    // exclusive mode).
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let copy = elsewhere.path().join("copy.sqlite");
    std::fs::copy(
        dir.path().join("agent.sqlite-wal"),
        elsewhere.path().join("copy.sqlite-wal"),
    )
    .expect("copy wal");
    std::fs::copy(&db, &copy).expect("copy db");
    drop(writer);
    let before = files(elsewhere.path());
    let threads = read_everything(&copy).await;
    assert!(threads.contains(&"wal-only".to_string()), "{threads:?}");
    assert_eq!(files(elsewhere.path()), before, "no -shm created");
}

#[tokio::test]
async fn a_writer_that_starts_later_is_seen_and_its_files_are_its_own() {
    let dir = tempfile::tempdir().expect("tempdir");
    let db = wal_db(dir.path());
    let store = SqliteStore::open(db.to_str().expect("utf-8"))
        .await
        .expect("open");
    let count = |threads: &[flashback_storage::ThreadInfo]| threads.len();
    let first = store.list_threads().await.expect("threads");
    assert_eq!(files(dir.path()), names(&["agent.sqlite"]));
    let writer = Writer::start(&db, "late");
    let second = store.list_threads().await.expect("threads");
    assert_eq!(count(&second), count(&first) + 1, "the new thread is seen");
    assert!(second.iter().any(|t| t.thread_id == "late"));
    let state = store
        .get_tuple("late", "", None)
        .await
        .expect("state")
        .expect("found");
    assert!(!state.checkpoint.channel_values.is_empty());
    drop(writer);
    // The writer closed while Flashback still reads: whatever it left is its own business,
    // and Flashback still reads the thread after the writer's checkpoint.
    let third = store.list_threads().await.expect("threads");
    assert!(third.iter().any(|t| t.thread_id == "late"));
    drop(store);
}

#[test]
fn a_wal_file_opened_while_the_directory_changes_never_panics() {
    // The -wal disappears between reads (the writer closed and checkpointed): no error.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = wal_db(dir.path());
    let store = SqliteStore::open_blocking(db.to_str().expect("utf-8")).expect("open");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    for round in 0..3 {
        let writer = Writer::start(&db, &format!("round-{round}"));
        let threads = rt.block_on(store.list_threads()).expect("threads");
        assert!(threads
            .iter()
            .any(|t| t.thread_id == format!("round-{round}")));
        drop(writer);
        let threads = rt.block_on(store.list_threads()).expect("threads");
        assert!(threads
            .iter()
            .any(|t| t.thread_id == format!("round-{round}")));
    }
}

#[tokio::test]
async fn a_write_through_flashback_is_seen_by_its_immutable_reader() {
    // The app's session reads a clean WAL file as `immutable`; a fork writes through its own
    // connection, which checkpoints and removes its -wal on close: the reader must not serve
    // its cached pages of the old file.
    let dir = tempfile::tempdir().expect("tempdir");
    let db = wal_db(dir.path());
    let path = db.to_str().expect("utf-8");
    let store = SqliteStore::open(path).await.expect("open");
    let before = store
        .list_headers(&ListQuery::thread("chat-tools"))
        .await
        .expect("headers");
    let saver = flashback_storage::sqlite::SqliteSaver::open(path)
        .await
        .expect("saver");
    let source = store
        .get_tuple("chat-tools", "", None)
        .await
        .expect("head")
        .expect("found");
    let mut cp = source.checkpoint.clone();
    cp.id = "1f1e6420-0000-6000-8000-000000000000".into();
    flashback_storage::CheckpointSaver::put(
        &saver,
        flashback_storage::PutRequest {
            thread_id: "chat-tools",
            checkpoint_ns: "",
            parent_checkpoint_id: Some(&source.header.checkpoint_id),
            checkpoint: &cp,
            metadata: &serde_json::Map::new(),
            new_versions: &cp.channel_versions,
        },
    )
    .await
    .expect("put");
    drop(saver);
    let after = store
        .list_headers(&ListQuery::thread("chat-tools"))
        .await
        .expect("headers");
    assert_eq!(after.len(), before.len() + 1);
    assert_eq!(after[0].checkpoint_id, cp.id);
}

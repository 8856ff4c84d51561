//! Flashback reads the Python-generated SQLite fixture exactly as Python's `SqliteSaver` does.

mod common;

use common::*;
use flashback_codec::{decode_typed, encode_typed};
use flashback_storage::sqlite::SqliteStore;
use flashback_storage::{CheckpointStore, Decoded, ListQuery, StoreError};
use std::path::{Path, PathBuf};

fn fixture_copy(dir: &Path) -> PathBuf {
    let dst = dir.join("langgraph.sqlite");
    std::fs::copy(fixtures_dir().join("langgraph.sqlite"), &dst).expect("copy fixture");
    dst
}

fn file_digest(path: &Path) -> Vec<u8> {
    use sha2::{Digest, Sha256};
    Sha256::digest(std::fs::read(path).expect("read file")).to_vec()
}

#[tokio::test]
async fn every_checkpoint_matches_python() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    let n = compare_with_python(&store, &expected("sqlite")).await;
    assert!(n > 300, "compared only {n} checkpoints");
}

#[tokio::test]
async fn a_thread_lists_reads_derive_what_full_reads_derive() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    let n = compare_selecting_reads(&store).await;
    assert!(n > 300, "compared only {n} checkpoints");
}

#[tokio::test]
async fn next_tasks_match_python_get_state() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    let n = compare_tasks_with_python(&store, &expected("sqlite")).await;
    assert!(n > 50, "compared tasks of only {n} checkpoints");
}

#[test]
fn every_blob_round_trips_byte_identically() {
    let conn = rusqlite::Connection::open_with_flags(
        fixtures_dir().join("langgraph.sqlite"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .expect("open fixture");
    let mut count = 0;
    for sql in [
        "SELECT type, checkpoint FROM checkpoints",
        "SELECT type, value FROM writes",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let mut rows = stmt.query([]).expect("query");
        while let Some(r) = rows.next().expect("row") {
            let tag: String = r.get(0).expect("type");
            let data: Vec<u8> = r.get(1).expect("blob");
            let decoded = decode_typed(&tag, Some(&data));
            assert!(
                !matches!(decoded, Decoded::Error { .. }),
                "{sql}: {decoded:?}"
            );
            assert_eq!(encode_typed(&decoded), (tag, data), "{sql}: round trip");
            count += 1;
        }
    }
    assert!(count > 1000, "only {count} blobs");
}

#[tokio::test]
async fn browsing_never_changes_the_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let before = file_digest(&path);
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    for t in store.list_threads().await.expect("threads") {
        store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .expect("list");
    }
    drop(store);
    assert_eq!(file_digest(&path), before, "the database file changed");
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        vec!["langgraph.sqlite".to_string()],
        "no journal files appear"
    );
}

#[tokio::test]
async fn a_wal_mode_database_is_read_without_changing_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    {
        let conn = rusqlite::Connection::open(&path).expect("open rw");
        conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
            .expect("wal");
    }
    let before = file_digest(&path);
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    assert!(!store.list_threads().await.expect("threads").is_empty());
    drop(store);
    assert_eq!(file_digest(&path), before, "the database file changed");
}

#[tokio::test]
async fn a_file_from_before_task_path_is_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    {
        let conn = rusqlite::Connection::open(&path).expect("open rw");
        conn.execute_batch("ALTER TABLE writes DROP COLUMN task_path")
            .expect("drop column");
    }
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    assert!(
        !store.schema().has_task_path,
        "schema detects the old layout"
    );
    let threads = store.list_threads().await.expect("threads");
    let mut writes = 0;
    for t in &threads {
        for tuple in store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .expect("list")
        {
            assert!(tuple.pending_writes.iter().all(|w| w.task_path.is_empty()));
            writes += tuple.pending_writes.len();
        }
    }
    assert!(writes > 100, "writes still readable: {writes}");
}

#[tokio::test]
async fn a_corrupt_value_is_reported_in_place_and_the_rest_stays_readable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let (thread, ns, cid, task, idx): (String, String, String, String, i64) = {
        let conn = rusqlite::Connection::open(&path).expect("open rw");
        let row = conn
            .query_row(
                "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, idx FROM writes WHERE type = 'msgpack' LIMIT 1",
                [],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .expect("a msgpack write");
        conn.execute(
            "UPDATE writes SET value = x'93a1' WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ? AND task_id = ? AND idx = ?",
            rusqlite::params![row.0, row.1, row.2, row.3, row.4],
        )
        .expect("corrupt it");
        row
    };
    let store = SqliteStore::open(path.to_str().expect("utf-8 path"))
        .await
        .expect("open");
    let t = store
        .get_tuple(&thread, &ns, Some(&cid))
        .await
        .expect("read")
        .expect("exists");
    let bad = t
        .pending_writes
        .iter()
        .find(|w| w.task_id == task && w.idx == idx)
        .expect("the corrupted write is still listed");
    let Decoded::Error { message, raw, .. } = &bad.value else {
        panic!("expected a decode error, got {:?}", bad.value)
    };
    assert!(message.contains("truncated"), "clear message: {message}");
    assert_eq!(raw, &vec![0x93, 0xa1], "raw bytes kept");
    let view = flashback_codec::view_decoded(&bad.value, Default::default()).expect("view");
    assert_eq!(view["raw_base64"], "k6E=");
    assert!(
        !t.checkpoint.channel_values.is_empty(),
        "values still decoded"
    );
}

#[tokio::test]
async fn bad_files_give_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let missing = dir.path().join("nope.sqlite");
    let err = SqliteStore::open(missing.to_str().expect("path"))
        .await
        .err()
        .expect("missing file fails");
    assert!(matches!(err, StoreError::NotFound(_)), "{err}");
    assert!(!missing.exists(), "opening must not create the file");

    let text = dir.path().join("notes.txt");
    std::fs::write(
        &text,
        "hello, this is not a database at all, just some text..........",
    )
    .expect("write");
    let err = SqliteStore::open(text.to_str().expect("path"))
        .await
        .err()
        .expect("text file fails");
    assert!(matches!(err, StoreError::NotADatabase { .. }), "{err}");
    assert!(err.to_string().contains("not a SQLite database"), "{err}");

    let other = dir.path().join("other.sqlite");
    rusqlite::Connection::open(&other)
        .expect("create")
        .execute_batch("CREATE TABLE users (id INTEGER)")
        .expect("table");
    let err = SqliteStore::open(other.to_str().expect("path"))
        .await
        .err()
        .expect("foreign schema fails");
    let StoreError::UnsupportedSchema { found } = &err else {
        panic!("{err}")
    };
    assert!(found.contains("users"), "names what it found: {found}");

    let half = dir.path().join("half.sqlite");
    rusqlite::Connection::open(&half)
        .expect("create")
        .execute_batch(
            "CREATE TABLE checkpoints (thread_id TEXT); CREATE TABLE writes (thread_id TEXT)",
        )
        .expect("tables");
    let err = SqliteStore::open(half.to_str().expect("path"))
        .await
        .err()
        .expect("incomplete schema fails");
    assert!(
        err.to_string().contains("checkpoints.checkpoint_id"),
        "{err}"
    );
}

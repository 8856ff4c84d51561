//! The three-table store on SQLite (`docs/three-table.md`): every fixture checkpoint and write
//! stored through the saver (method A and B) reads back equal to what LangGraph's store gives;
//! method B stores a growing list once; damage stays local; files open read-only without
//! side files; `open` with `Read` / `Write` detects the schema.

mod common;

use common::three::*;
use flashback_codec::Value;
use flashback_storage::three::sqlite::{ThreeTableSaver, ThreeTableStore};
use flashback_storage::three::Blobs;
use flashback_storage::{
    Checkpoint, CheckpointSaver, CheckpointStore, Decoded, ListQuery, PutRequest, Version,
};
use rusqlite::Connection;
use std::path::{Path, PathBuf};
use std::sync::Arc;

async fn round_trip(blobs: Blobs) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("three.sqlite");
    let p = path.to_str().expect("path");
    let source = flashback_storage::open(
        fixture().to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("fixture");
    let saver = ThreeTableSaver::create(p, opts(blobs))
        .await
        .expect("create");
    assert_eq!(copy_fixture(source.as_ref(), &saver).await, 381);
    drop(saver);

    let three = flashback_storage::open(p, flashback_storage::Read::default())
        .await
        .expect("open");
    assert!(
        three.schema().description.starts_with("three-table store"),
        "{}",
        three.schema().description
    );
    assert_reads_equal(source.as_ref(), three.as_ref(), blobs).await;
    (dir, path)
}

fn blob_bytes(path: &Path) -> i64 {
    let conn = Connection::open(path).expect("open");
    conn.query_row(
        "SELECT coalesce(sum(length(blob_data)), 0) FROM checkpoint_blobs",
        [],
        |r| r.get(0),
    )
    .expect("sum")
}

#[tokio::test]
async fn the_fixture_round_trips_with_method_a_and_b() {
    let (_a_dir, a) = round_trip(Blobs::Whole).await;
    let (_b_dir, b) = round_trip(Blobs::Incremental).await;
    let conn = Connection::open(&b).expect("open");
    let deltas: i64 = conn
        .query_row(
            "SELECT count(*) FROM checkpoint_blobs WHERE kind <> 'full'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert!(deltas > 0, "method B stored deltas");
    assert!(blob_bytes(&b) < blob_bytes(&a));
    let versions: Vec<i64> = conn
        .prepare("SELECT v FROM three_table_migrations ORDER BY v")
        .expect("prepare")
        .query_map([], |r| r.get(0))
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    assert_eq!(versions, vec![0, 1, 2, 3]);
}

fn message(i: usize) -> Value {
    let s = |x: &str| Value::Str(x.into());
    Value::Map(vec![
        (
            s("type"),
            s(if i.is_multiple_of(2) { "human" } else { "ai" }),
        ),
        (s("id"), Value::Str(format!("msg-{i:05}").into())),
        (
            s("content"),
            Value::Str(format!("message {i}: {}", "some words of a chat ".repeat(8)).into()),
        ),
    ])
}

/// A chat of `n` steps, each appending one message, put through a saver of `blobs`.
async fn chat(path: &Path, blobs: Blobs, n: usize) -> ThreeTableSaver {
    let saver = ThreeTableSaver::create(path.to_str().expect("path"), opts(blobs))
        .await
        .expect("create");
    let mut parent: Option<String> = None;
    for step in 0..n {
        let id = format!("1f000000-0000-6000-8000-{step:012}");
        let messages = Value::Array((0..=step).map(message).collect());
        let cp = Checkpoint {
            v: 4,
            id: id.clone(),
            ts: format!("2026-01-01T00:00:{:02}.000000+00:00", step % 60),
            channel_values: vec![
                ("messages".into(), Arc::new(Decoded::Msgpack(messages))),
                (
                    "step".into(),
                    Arc::new(Decoded::Msgpack(Value::Int(step as i64))),
                ),
            ],
            channel_versions: vec![
                ("messages".into(), Version::Int(step as i64 + 1)),
                ("step".into(), Version::Int(step as i64 + 1)),
                ("branch:to:agent".into(), Version::Int(step as i64 + 1)),
            ],
            versions_seen: vec![],
            updated_channels: Some(vec!["messages".into()]),
            pending_sends: None,
        };
        let mut metadata = serde_json::Map::new();
        metadata.insert("step".into(), (step as i64).into());
        saver
            .put(PutRequest {
                thread_id: "chat",
                checkpoint_ns: "",
                parent_checkpoint_id: parent.as_deref(),
                checkpoint: &cp,
                metadata: &metadata,
                new_versions: &cp.channel_versions,
            })
            .await
            .expect("put");
        parent = Some(id);
    }
    saver
}

#[tokio::test]
async fn method_b_stores_each_message_once() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (a, b) = (dir.path().join("a.sqlite"), dir.path().join("b.sqlite"));
    let n = 200;
    let sa = chat(&a, Blobs::Whole, n).await;
    let sb = chat(&b, Blobs::Incremental, n).await;
    let (ba, bb) = (blob_bytes(&a), blob_bytes(&b));
    assert!(bb * 20 < ba, "method B {bb} bytes, method A {ba} bytes");
    // Deltas stop at MAX_DEPTH: a full value every 65 versions.
    let conn = Connection::open(&b).expect("open");
    let max_depth: i64 = conn
        .query_row("SELECT max(depth) FROM checkpoint_blobs", [], |r| r.get(0))
        .expect("depth");
    assert_eq!(max_depth, 64);
    // Both read back the same values, every checkpoint.
    let q = ListQuery::thread("chat");
    let (ta, tb) = (
        sa.list_tuples(&q).await.expect("a"),
        sb.list_tuples(&q).await.expect("b"),
    );
    assert_eq!(ta.len(), n);
    assert_same(ta, tb.clone(), "chat");
    let last = tb[0].checkpoint.value("messages").expect("messages");
    assert_eq!(
        **last,
        Decoded::Msgpack(Value::Array((0..n).map(message).collect()))
    );
    // A point read in the middle of a chain.
    let mid = sb
        .get_tuple("chat", "", Some("1f000000-0000-6000-8000-000000000100"))
        .await
        .expect("get")
        .expect("found");
    assert_eq!(
        **mid.checkpoint.value("messages").expect("messages"),
        Decoded::Msgpack(Value::Array((0..=100).map(message).collect()))
    );
    // delete_thread removes every row of every table.
    sb.delete_thread("chat").await.expect("delete");
    for table in ["checkpoints", "checkpoint_blobs", "checkpoint_writes"] {
        let n: i64 = conn
            .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
            .expect("count");
        assert_eq!(n, 0, "{table}");
    }
}

#[tokio::test]
async fn damaged_rows_and_blobs_are_local_problems() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("d.sqlite");
    let saver = chat(&path, Blobs::Incremental, 30).await;
    drop(saver);
    let conn = Connection::open(&path).expect("open");
    // A delta that is not msgpack (version 20), a missing row (version 10's step), a broken
    // document (checkpoint 5).
    conn.execute(
        "UPDATE checkpoint_blobs SET blob_data = x'c1' WHERE channel = 'messages' AND version = '20'",
        [],
    )
    .expect("damage");
    conn.execute(
        "DELETE FROM checkpoint_blobs WHERE channel = 'step' AND version = '10'",
        [],
    )
    .expect("damage");
    conn.execute(
        "UPDATE checkpoints SET checkpoint = x'c1' WHERE checkpoint_id LIKE '%000000000005'",
        [],
    )
    .expect("damage");
    drop(conn);
    let store = flashback_storage::open(
        path.to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("open");
    let tuples = store
        .list_tuples(&ListQuery::thread("chat"))
        .await
        .expect("a damaged file still lists");
    assert_eq!(tuples.len(), 30);
    let problem = |step: usize| tuples[29 - step].header.problem.clone();
    // Versions 20.. of messages build on the damaged delta: each says so.
    for step in 19..30 {
        let p = problem(step).unwrap_or_default();
        assert!(p.contains("messages"), "step {step}: {p}");
        assert!(tuples[29 - step].checkpoint.value("step").is_some());
    }
    assert!(problem(9).unwrap_or_default().contains("\"step\""));
    assert!(problem(5).unwrap_or_default().contains("document"));
    for step in [0, 1, 4, 6, 8, 10, 18] {
        assert_eq!(problem(step), None, "step {step}");
    }
    let headers = store
        .list_headers(&ListQuery::thread("chat"))
        .await
        .expect("headers");
    assert!(headers[29 - 5].problem.is_some());
}

#[tokio::test]
async fn opened_read_only_without_side_files_and_writable_as_three_table() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.sqlite");
    drop(chat(&path, Blobs::Incremental, 5).await);
    {
        let conn = Connection::open(&path).expect("open");
        let mode: String = conn
            .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
            .expect("wal");
        assert_eq!(mode, "wal");
    }
    let p = path.to_str().expect("path");
    let side = |s: &str| dir.path().join(format!("w.sqlite{s}")).exists();
    assert!(!side("-wal") && !side("-shm"));
    let store = ThreeTableStore::try_open(p)
        .await
        .expect("open")
        .expect("three-table");
    assert_eq!(store.list_threads().await.expect("threads").len(), 1);
    assert!(store
        .get_tuple("chat", "", None)
        .await
        .expect("get")
        .is_some());
    assert!(
        !side("-wal") && !side("-shm"),
        "nothing created beside the file"
    );
    // A LangGraph file is not taken for one.
    assert!(ThreeTableStore::try_open(fixture().to_str().expect("path"))
        .await
        .expect("probe")
        .is_none());
    let writable = flashback_storage::open(p, flashback_storage::Write::default())
        .await
        .expect("writable");
    assert!(writable
        .schema()
        .description
        .starts_with("three-table store"));
    // copy_thread and prune through the maintenance trait.
    let copied = writable.copy_thread("chat", "copy").await.expect("copy");
    assert_eq!((copied.checkpoints, copied.blobs > 0), (5, true));
    let report = writable
        .prune(
            &["copy".to_string()],
            flashback_storage::maintenance::PruneStrategy::KeepLatest,
            false,
        )
        .await
        .expect("prune");
    assert_eq!(report.checkpoints.len(), 4);
    let kept = writable
        .get_tuple("copy", "", None)
        .await
        .expect("get")
        .expect("kept");
    let original = writable
        .get_tuple("chat", "", None)
        .await
        .expect("get")
        .expect("head");
    assert_eq!(kept.header.problem, None);
    assert!(
        split(original).0 == split(kept).0,
        "the kept head still reads whole"
    );
    writable.delete_thread("chat").await.expect("delete");
    assert_eq!(writable.list_threads().await.expect("threads").len(), 1);
}

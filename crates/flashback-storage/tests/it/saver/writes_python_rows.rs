//! The SQLite saver writes exactly the rows langgraph-checkpoint-sqlite 3.1.2 writes.

use flashback_codec::Value;
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{CheckpointSaver, CheckpointStore, Decoded, ListQuery, PutRequest};
use rusqlite::Connection;
use std::path::PathBuf;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

type CheckpointRow = (
    String,
    String,
    String,
    Option<String>,
    Option<String>,
    Vec<u8>,
    Vec<u8>,
);

fn checkpoint_rows(path: &std::path::Path) -> Vec<CheckpointRow> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open");
    let mut stmt = conn
        .prepare(
            "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
             FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        )
        .expect("prepare");
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

fn schema_sql(path: &std::path::Path) -> Vec<(String, String)> {
    let conn = Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .expect("open");
    let mut stmt = conn
        .prepare("SELECT name, sql FROM sqlite_master ORDER BY name")
        .expect("prepare");
    stmt.query_map([], |r| {
        Ok((
            r.get(0)?,
            r.get::<_, Option<String>>(1)?.unwrap_or_default(),
        ))
    })
    .expect("query")
    .collect::<Result<_, _>>()
    .expect("rows")
}

#[tokio::test]
async fn re_putting_every_fixture_checkpoint_reproduces_pythons_rows_byte_for_byte() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("copy.sqlite");
    let saver = SqliteSaver::create(out.to_str().expect("path"))
        .await
        .expect("create");
    assert_eq!(
        schema_sql(&out),
        schema_sql(&fixture()),
        "setup() creates Python's schema"
    );

    let source = flashback_storage::sqlite::SqliteStore::open(fixture().to_str().expect("path"))
        .await
        .expect("open fixture");
    let mut count = 0;
    for thread in source.list_threads().await.expect("threads") {
        let mut tuples = source
            .list_tuples(&ListQuery::thread(&thread.thread_id))
            .await
            .expect("list");
        tuples.reverse(); // oldest first, as they were written
        for t in &tuples {
            let serde_json::Value::Object(metadata) = &t.header.metadata else {
                panic!("metadata is an object")
            };
            saver
                .put(PutRequest {
                    thread_id: &t.header.thread_id,
                    checkpoint_ns: &t.header.checkpoint_ns,
                    parent_checkpoint_id: t.header.parent_checkpoint_id.as_deref(),
                    checkpoint: &t.checkpoint,
                    metadata,
                    new_versions: &t.checkpoint.channel_versions,
                })
                .await
                .expect("put");
            count += 1;
        }
    }
    assert_eq!(count, 381);
    let want = checkpoint_rows(&fixture());
    let got = checkpoint_rows(&out);
    assert_eq!(want.len(), got.len());
    for (w, g) in want.iter().zip(&got) {
        assert_eq!(w, g, "row {} / {} differs", w.0, w.2);
    }
}

#[tokio::test]
async fn put_writes_follows_idx_and_replace_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("w.sqlite");
    let saver = SqliteSaver::create(path.to_str().expect("path"))
        .await
        .expect("create");
    let s = |x: &str| Decoded::Msgpack(Value::Str(x.into()));
    let (t, ns, cid, task) = ("t", "", "1f000000-0000-6000-8000-000000000001", "task-a");
    // A regular batch: positions become idx, the special channel gets its fixed idx.
    saver
        .put_writes(
            t,
            ns,
            cid,
            task,
            "~__pregel_pull, a",
            &[
                ("x".into(), s("one")),
                ("__interrupt__".into(), s("ask")),
                ("y".into(), Decoded::Null),
            ],
        )
        .await
        .expect("batch 1");
    // Regular channels: the first writer wins (INSERT OR IGNORE).
    saver
        .put_writes(
            t,
            ns,
            cid,
            task,
            "~__pregel_pull, a",
            &[("x".into(), s("two"))],
        )
        .await
        .expect("batch 2");
    // Only special channels: replace (INSERT OR REPLACE).
    saver
        .put_writes(
            t,
            ns,
            cid,
            task,
            "~__pregel_pull, a",
            &[("__interrupt__".into(), s("again"))],
        )
        .await
        .expect("batch 3");
    let conn = Connection::open(&path).expect("open");
    let mut stmt = conn
        .prepare("SELECT idx, channel, type, value, task_path FROM writes ORDER BY idx")
        .expect("prepare");
    let rows: Vec<(i64, String, String, Vec<u8>, String)> = stmt
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .expect("query")
        .collect::<Result<_, _>>()
        .expect("rows");
    let enc = |x: &str| flashback_codec::msgpack::encode(&Value::Str(x.into()));
    assert_eq!(
        rows,
        vec![
            (
                -3,
                "__interrupt__".into(),
                "msgpack".into(),
                enc("again"),
                "~__pregel_pull, a".into()
            ),
            (
                0,
                "x".into(),
                "msgpack".into(),
                enc("one"),
                "~__pregel_pull, a".into()
            ),
            (
                2,
                "y".into(),
                "null".into(),
                vec![],
                "~__pregel_pull, a".into()
            ),
        ]
    );
}

#[tokio::test]
async fn delete_thread_removes_one_thread_only() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("d.sqlite");
    std::fs::copy(fixture(), &path).expect("copy");
    let saver = SqliteSaver::open(path.to_str().expect("path"))
        .await
        .expect("open");
    let before = saver.list_threads().await.expect("threads").len();
    saver.delete_thread("forked").await.expect("delete");
    let threads = saver.list_threads().await.expect("threads");
    assert_eq!(threads.len(), before - 1);
    assert!(threads.iter().all(|t| t.thread_id != "forked"));
    let conn = Connection::open(&path).expect("open");
    let n: i64 = conn
        .query_row(
            "SELECT count(*) FROM writes WHERE thread_id = 'forked'",
            [],
            |r| r.get(0),
        )
        .expect("count");
    assert_eq!(n, 0, "writes deleted too");
}

#[tokio::test]
async fn opening_for_write_never_creates_a_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("missing.sqlite");
    assert!(SqliteSaver::open(path.to_str().expect("path"))
        .await
        .is_err());
    assert!(!path.exists());
}

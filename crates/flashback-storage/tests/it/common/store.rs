//! Helpers of the Postgres saver's read-side tests: databases built by hand, row by row, as
//! Python's `PostgresSaver` (all 10 migrations, or fewer) and `ShallowPostgresSaver` write them,
//! and small accessors for what `PostgresStore` reads back.

use flashback_codec::{msgpack, Decoded, ObjectForm, PyObject, Value};
use flashback_testkit::TestPg;
use serde_json::json;
use sqlx::{AssertSqlSafe, PgConnection};
use std::sync::Arc;

pub const T1: &str = "thread-1";

/// Checkpoint ids that sort in creation order (uuid6-like).
pub fn cid(n: u32) -> String {
    format!("1f0c{n:04x}-0000-6000-8000-00000000{n:04x}")
}

/// A saver-style channel version string.
pub fn ver(n: u32) -> String {
    format!("{n:032}.0.{}", 1000 + n)
}

pub fn mp(v: &Value) -> Vec<u8> {
    msgpack::encode(v)
}

pub fn s(x: &str) -> Value {
    Value::Str(x.into())
}

pub fn list(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|i| s(i)).collect())
}

pub fn send(node: &str, arg: i64) -> Value {
    Value::Object(std::sync::Arc::new(PyObject {
        form: ObjectForm::PosArgs,
        module: "langgraph.types".into(),
        name: "Send".into(),
        payload: Value::Array(vec![s(node), Value::Map(vec![(s("x"), Value::Int(arg))])]),
        extra: None,
    }))
}

pub fn migrations_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/postgres")
}

pub async fn exec(conn: &mut PgConnection, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Apply the Python saver's migrations 0..=upto (from migrations/postgres/*.sql, one
/// statement per call so that CREATE INDEX CONCURRENTLY runs outside a transaction) and record
/// them in checkpoint_migrations, as `PostgresSaver.setup()` does.
pub async fn setup_full(conn: &mut PgConnection, upto: usize) {
    let mut files: Vec<_> = std::fs::read_dir(migrations_dir())
        .expect("migrations/postgres")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    assert_eq!(
        files.len(),
        10,
        "expected migrations 0..9 in {:?}",
        migrations_dir()
    );
    for (v, file) in files.iter().enumerate().take(upto + 1) {
        let sql = std::fs::read_to_string(file).unwrap();
        exec(conn, &sql).await;
        exec(
            conn,
            &format!("INSERT INTO checkpoint_migrations (v) VALUES ({v})"),
        )
        .await;
    }
}

/// `ShallowPostgresSaver.setup()` (its own 8 migrations).
pub async fn setup_shallow(conn: &mut PgConnection) {
    let migrations = [
        "CREATE TABLE IF NOT EXISTS checkpoint_migrations (v INTEGER PRIMARY KEY);",
        "CREATE TABLE IF NOT EXISTS checkpoints (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', \
         type TEXT, checkpoint JSONB NOT NULL, metadata JSONB NOT NULL DEFAULT '{}', \
         PRIMARY KEY (thread_id, checkpoint_ns));",
        "CREATE TABLE IF NOT EXISTS checkpoint_blobs (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', \
         channel TEXT NOT NULL, type TEXT NOT NULL, blob BYTEA, PRIMARY KEY (thread_id, checkpoint_ns, channel));",
        "CREATE TABLE IF NOT EXISTS checkpoint_writes (thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', \
         checkpoint_id TEXT NOT NULL, task_id TEXT NOT NULL, idx INTEGER NOT NULL, channel TEXT NOT NULL, type TEXT, \
         blob BYTEA NOT NULL, PRIMARY KEY (thread_id, checkpoint_ns, checkpoint_id, task_id, idx));",
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoints_thread_id_idx ON checkpoints(thread_id);",
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_blobs_thread_id_idx ON checkpoint_blobs(thread_id);",
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS checkpoint_writes_thread_id_idx ON checkpoint_writes(thread_id);",
        "ALTER TABLE checkpoint_writes ADD COLUMN IF NOT EXISTS task_path TEXT NOT NULL DEFAULT '';",
    ];
    for (v, sql) in migrations.iter().enumerate() {
        exec(conn, sql).await;
        exec(
            conn,
            &format!("INSERT INTO checkpoint_migrations (v) VALUES ({v})"),
        )
        .await;
    }
}

/// A checkpoint document as `PostgresSaver.put` stores it (`channel_values` = inline
/// primitives; `None` leaves the key out, as pre-July-2025 rows do).
pub fn doc(
    id: &str,
    v: i64,
    inline: Option<serde_json::Value>,
    versions: &[(&str, String)],
) -> serde_json::Value {
    let mut d = json!({
        "v": v,
        "id": id,
        "ts": format!("2026-01-01T00:00:{:02}.000000+00:00", id.len() % 60),
        "channel_versions": serde_json::Map::from_iter(
            versions.iter().map(|(c, v)| ((*c).to_owned(), json!(v)))
        ),
        "versions_seen": {"__input__": {}},
        "updated_channels": null,
    });
    if let Some(inline) = inline {
        d["channel_values"] = inline;
    }
    d
}

pub async fn put_cp(
    conn: &mut PgConnection,
    thread: &str,
    ns: &str,
    id: &str,
    parent: Option<&str>,
    checkpoint: serde_json::Value,
    metadata: serde_json::Value,
) {
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(thread)
    .bind(ns)
    .bind(id)
    .bind(parent)
    .bind(checkpoint)
    .bind(metadata)
    .execute(conn)
    .await
    .unwrap();
}

/// `UPSERT_CHECKPOINT_BLOBS_SQL`: first writer wins.
pub async fn put_blob(
    conn: &mut PgConnection,
    thread: &str,
    ns: &str,
    channel: &str,
    version: &str,
    tag: &str,
    blob: Option<Vec<u8>>,
) {
    sqlx::query(
        "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, version, type, blob) \
         VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING",
    )
    .bind(thread)
    .bind(ns)
    .bind(channel)
    .bind(version)
    .bind(tag)
    .bind(blob)
    .execute(conn)
    .await
    .unwrap();
}

pub struct W<'a> {
    pub ns: &'a str,
    pub cid: &'a str,
    pub task_id: &'a str,
    pub task_path: &'a str,
    pub idx: i32,
    pub channel: &'a str,
    pub value: Value,
}

pub async fn put_write(conn: &mut PgConnection, thread: &str, w: W<'_>, with_task_path: bool) {
    let sql = if with_task_path {
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
         VALUES ($1, $2, $3, $4, $5, $6, 'msgpack', $7, $8)"
    } else {
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
         VALUES ($1, $2, $3, $4, $5, $6, 'msgpack', $7)"
    };
    let mut q = sqlx::query(sql)
        .bind(thread)
        .bind(w.ns)
        .bind(w.cid)
        .bind(w.task_id)
        .bind(w.idx)
        .bind(w.channel)
        .bind(mp(&w.value));
    if with_task_path {
        q = q.bind(w.task_path);
    }
    q.execute(conn).await.unwrap();
}

pub fn value<'a>(
    t: &'a flashback_storage::CheckpointTuple,
    channel: &str,
) -> Option<&'a Arc<Decoded>> {
    t.checkpoint.value(channel)
}

pub fn msg(v: Value) -> Decoded {
    Decoded::Msgpack(v)
}

pub fn ids(tuples: &[flashback_storage::CheckpointTuple]) -> Vec<String> {
    tuples
        .iter()
        .map(|t| t.header.checkpoint_id.clone())
        .collect()
}

pub fn hids(headers: &[flashback_storage::CheckpointHeader]) -> Vec<String> {
    headers.iter().map(|h| h.checkpoint_id.clone()).collect()
}

/// A small root thread plus a subgraph namespace:
///
/// * c1: messages=[hi] (blob v1), count=1 inline, snapshot channel with an inline `true` marker
///   whose blob exists, flag=true inline with no blob behind it.
/// * c2: messages unchanged (reuses blob v1), count=2.
/// * c3: messages=[hi, there] (blob v2), count=3.
/// * ns "child:1": s1 with messages v1 in its own namespace holding a different value.
pub async fn build_basic(conn: &mut PgConnection) {
    let (c1, c2, c3) = (cid(1), cid(2), cid(3));
    put_blob(
        conn,
        T1,
        "",
        "messages",
        &ver(1),
        "msgpack",
        Some(mp(&list(&["hi"]))),
    )
    .await;
    // First writer wins: a later put of the same (channel, version) does not replace it.
    put_blob(
        conn,
        T1,
        "",
        "messages",
        &ver(1),
        "msgpack",
        Some(mp(&list(&["SHOULD NOT WIN"]))),
    )
    .await;
    put_blob(
        conn,
        T1,
        "",
        "messages",
        &ver(3),
        "msgpack",
        Some(mp(&list(&["hi", "there"]))),
    )
    .await;
    put_blob(
        conn,
        T1,
        "",
        "snap",
        &ver(1),
        "msgpack",
        Some(mp(&Value::DeltaSnapshot(Box::new(list(&["a", "b"]))))),
    )
    .await;
    // A blob of a version no checkpoint references.
    put_blob(
        conn,
        T1,
        "",
        "messages",
        &ver(99),
        "msgpack",
        Some(mp(&list(&["orphan"]))),
    )
    .await;

    put_cp(
        conn,
        T1,
        "",
        &c1,
        None,
        doc(
            &c1,
            4,
            Some(json!({"count": 1, "snap": true, "flag": true, "note": null})),
            &[("messages", ver(1)), ("count", ver(1)), ("snap", ver(1)), ("flag", ver(1)), ("note", ver(1))],
        ),
        json!({"source": "input", "step": -1, "parents": {}, "run": {"user": "ann", "tags": ["x"]}}),
    )
    .await;
    put_cp(
        conn,
        T1,
        "",
        &c2,
        Some(&c1),
        doc(
            &c2,
            4,
            Some(json!({"count": 2})),
            &[("messages", ver(1)), ("count", ver(2))],
        ),
        json!({"source": "loop", "step": 0, "parents": {}, "run": {"user": "bob"}}),
    )
    .await;
    put_cp(
        conn,
        T1,
        "",
        &c3,
        Some(&c2),
        doc(
            &c3,
            4,
            Some(json!({"count": 3})),
            &[("messages", ver(3)), ("count", ver(3))],
        ),
        json!({"source": "loop", "step": 1, "parents": {}, "run": {"user": "ann", "tags": ["y"]}}),
    )
    .await;

    let s1 = cid(10);
    put_blob(
        conn,
        T1,
        "child:1",
        "messages",
        &ver(1),
        "msgpack",
        Some(mp(&list(&["in child"]))),
    )
    .await;
    put_cp(
        conn,
        T1,
        "child:1",
        &s1,
        None,
        doc(&s1, 4, Some(json!({})), &[("messages", ver(1))]),
        json!({"source": "loop", "step": 0, "parents": {"": c2}}),
    )
    .await;

    // A second thread.
    let o1 = cid(20);
    put_cp(
        conn,
        "thread-0",
        "",
        &o1,
        None,
        doc(&o1, 4, Some(json!({"count": 7})), &[("count", ver(1))]),
        json!({"source": "input", "step": -1}),
    )
    .await;
}

pub async fn full_db(upto: usize) -> Option<(TestPg, PgConnection)> {
    let pg = flashback_testkit::postgres_or_skip().await?;
    let mut conn = pg.connect().await.unwrap();
    setup_full(&mut conn, upto).await;
    Some((pg, conn))
}

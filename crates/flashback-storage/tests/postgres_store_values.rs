//! PostgresStore against hand-built databases (one fresh database per test, from
//! flashback-testkit). Skipped when no PostgreSQL is available, unless CI=true or
//! FLASHBACK_REQUIRE_PG=1.

use flashback_codec::{msgpack, Decoded, ObjectForm, PyObject, Value};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery, StoreError, Version};
use flashback_testkit::TestPg;
use serde_json::json;
use sqlx::postgres::PgConnectOptions;
use sqlx::{AssertSqlSafe, PgConnection};
use std::str::FromStr as _;
use std::sync::Arc;

// ------------------------------------------------------------------------------------------
// Helpers

const T1: &str = "thread-1";

/// Checkpoint ids that sort in creation order (uuid6-like).
fn cid(n: u32) -> String {
    format!("1f0c{n:04x}-0000-6000-8000-00000000{n:04x}")
}

/// A saver-style channel version string.
fn ver(n: u32) -> String {
    format!("{n:032}.0.{}", 1000 + n)
}

fn mp(v: &Value) -> Vec<u8> {
    msgpack::encode(v)
}

fn s(x: &str) -> Value {
    Value::Str(x.into())
}

fn list(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|i| s(i)).collect())
}

fn send(node: &str, arg: i64) -> Value {
    Value::Object(std::sync::Arc::new(PyObject {
        form: ObjectForm::PosArgs,
        module: "langgraph.types".into(),
        name: "Send".into(),
        payload: Value::Array(vec![s(node), Value::Map(vec![(s("x"), Value::Int(arg))])]),
        extra: None,
    }))
}

fn migrations_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../migrations/postgres")
}

async fn exec(conn: &mut PgConnection, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// Apply the Python saver's migrations 0..=upto (from migrations/postgres/*.sql, one
/// statement per call so that CREATE INDEX CONCURRENTLY runs outside a transaction) and record
/// them in checkpoint_migrations, as `PostgresSaver.setup()` does.
async fn setup_full(conn: &mut PgConnection, upto: usize) {
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
async fn setup_shallow(conn: &mut PgConnection) {
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
fn doc(
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

async fn put_cp(
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
async fn put_blob(
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

struct W<'a> {
    ns: &'a str,
    cid: &'a str,
    task_id: &'a str,
    task_path: &'a str,
    idx: i32,
    channel: &'a str,
    value: Value,
}

async fn put_write(conn: &mut PgConnection, thread: &str, w: W<'_>, with_task_path: bool) {
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

fn value<'a>(t: &'a flashback_storage::CheckpointTuple, channel: &str) -> Option<&'a Arc<Decoded>> {
    t.checkpoint.value(channel)
}

fn msg(v: Value) -> Decoded {
    Decoded::Msgpack(v)
}

fn ids(tuples: &[flashback_storage::CheckpointTuple]) -> Vec<String> {
    tuples
        .iter()
        .map(|t| t.header.checkpoint_id.clone())
        .collect()
}

fn hids(headers: &[flashback_storage::CheckpointHeader]) -> Vec<String> {
    headers.iter().map(|h| h.checkpoint_id.clone()).collect()
}

/// A small root thread plus a subgraph namespace:
///
/// * c1: messages=[hi] (blob v1), count=1 inline, snapshot channel with an inline `true` marker
///   whose blob exists, flag=true inline with no blob behind it.
/// * c2: messages unchanged (reuses blob v1), count=2.
/// * c3: messages=[hi, there] (blob v2), count=3.
/// * ns "child:1": s1 with messages v1 in its own namespace holding a different value.
async fn build_basic(conn: &mut PgConnection) {
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

async fn full_db(upto: usize) -> Option<(TestPg, PgConnection)> {
    let pg = flashback_testkit::postgres_or_skip().await?;
    let mut conn = pg.connect().await.unwrap();
    setup_full(&mut conn, upto).await;
    Some((pg, conn))
}

// ------------------------------------------------------------------------------------------
// Schema detection

#[tokio::test]
async fn schema_full_is_detected() {
    let Some((pg, _conn)) = full_db(9).await else {
        return;
    };
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let schema = store.schema();
    assert!(!schema.shallow);
    assert!(schema.has_task_path);
    assert_eq!(schema.migration_version, Some(9));
    assert_eq!(schema.backend, flashback_storage::Backend::Postgres);
    assert!(
        schema.description.contains("migrations 0-9"),
        "{}",
        schema.description
    );
    assert!(store.target().contains(pg.database()), "{}", store.target());
    // Empty database: no threads, no tuples.
    assert!(store.list_threads().await.unwrap().is_empty());
    assert!(store
        .list_tuples(&ListQuery::thread(T1))
        .await
        .unwrap()
        .is_empty());
    assert!(store.get_tuple(T1, "", None).await.unwrap().is_none());
    // Also through the generic entry point.
    let boxed = flashback_storage::open(pg.url()).await.unwrap();
    assert!(!boxed.schema().shallow);
}

#[tokio::test]
async fn schema_without_task_path_reads_writes_with_empty_path() {
    let Some((pg, mut conn)) = full_db(8).await else {
        return;
    };
    let c1 = cid(1);
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(&c1, 4, Some(json!({})), &[]),
        json!({}),
    )
    .await;
    for (task, idx) in [("b", 0), ("a", 1), ("a", 0)] {
        let w = W {
            ns: "",
            cid: &c1,
            task_id: task,
            task_path: "",
            idx,
            channel: "x",
            value: Value::Int(idx as i64),
        };
        put_write(&mut conn, T1, w, false).await;
    }
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    assert!(!store.schema().has_task_path);
    assert_eq!(store.schema().migration_version, Some(8));
    assert!(
        store.schema().description.contains("task_path"),
        "{}",
        store.schema().description
    );
    let t = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    let order: Vec<(&str, &str, i64)> = t
        .pending_writes
        .iter()
        .map(|w| (w.task_path.as_str(), w.task_id.as_str(), w.idx))
        .collect();
    assert_eq!(order, vec![("", "a", 0), ("", "a", 1), ("", "b", 0)]);
}

#[tokio::test]
async fn schema_shallow_is_read() {
    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let mut conn = pg.connect().await.unwrap();
    setup_shallow(&mut conn).await;
    let c5 = cid(5);
    // The shallow saver pops all channel values into blobs (keyed without version) and
    // leaves channel_values out of the JSON; `empty` rows mark channels without a value.
    let d = doc(
        &c5,
        4,
        None,
        &[("messages", ver(5)), ("count", ver(5)), ("gone", ver(5))],
    );
    sqlx::query("INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint, metadata) VALUES ($1, '', $2, $3)")
        .bind(T1)
        .bind(&d)
        .bind(json!({"source": "loop", "step": 5}))
        .execute(&mut conn)
        .await
        .unwrap();
    for (channel, tag, blob) in [
        ("messages", "msgpack", Some(mp(&list(&["m"])))),
        ("count", "msgpack", Some(mp(&Value::Int(5)))),
        ("gone", "empty", None),
        ("stale", "msgpack", Some(mp(&Value::Int(1)))), // not in channel_versions
    ] {
        sqlx::query("INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns, channel, type, blob) VALUES ($1, '', $2, $3, $4)")
            .bind(T1)
            .bind(channel)
            .bind(tag)
            .bind(blob)
            .execute(&mut conn)
            .await
            .unwrap();
    }
    sqlx::query(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
         VALUES ($1, '', $2, 't1', 0, 'count', 'msgpack', $3, '~__pregel_pull, n')",
    )
    .bind(T1)
    .bind(&c5)
    .bind(mp(&Value::Int(6)))
    .execute(&mut conn)
    .await
    .unwrap();

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let schema = store.schema();
    assert!(schema.shallow);
    assert!(schema.has_task_path);
    assert_eq!(schema.migration_version, Some(7));
    assert!(
        schema.description.contains("shallow"),
        "{}",
        schema.description
    );

    let threads = store.list_threads().await.unwrap();
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].checkpoint_count, 1);
    assert_eq!(
        threads[0].latest_checkpoint_id.as_deref(),
        Some(c5.as_str())
    );

    let t = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    assert_eq!(t.header.checkpoint_id, c5);
    assert_eq!(t.header.parent_checkpoint_id, None);
    assert_eq!(t.header.metadata["step"], 5);
    assert_eq!(**value(&t, "messages").unwrap(), msg(list(&["m"])));
    assert_eq!(**value(&t, "count").unwrap(), msg(Value::Int(5)));
    assert!(value(&t, "gone").is_none());
    assert!(value(&t, "stale").is_none());
    assert_eq!(t.pending_writes.len(), 1);
    assert_eq!(t.pending_writes[0].value, msg(Value::Int(6)));
    assert_eq!(t.checkpoint.pending_sends, None); // v4: Sends live in __pregel_tasks

    assert!(store.get_tuple(T1, "", Some(&c5)).await.unwrap().is_some());
    assert!(store
        .get_tuple(T1, "", Some("nope"))
        .await
        .unwrap()
        .is_none());
    let listed = store.list_tuples(&ListQuery::thread(T1)).await.unwrap();
    assert_eq!(ids(&listed), vec![c5.clone()]);
    let headers = store.list_headers(&ListQuery::thread(T1)).await.unwrap();
    assert_eq!(headers.len(), 1);
    assert_eq!(headers[0].checkpoint_id, c5);
    assert_eq!(headers[0].ts, t.checkpoint.ts);
}

#[tokio::test]
async fn schema_missing_tables_is_unsupported() {
    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let mut conn = pg.connect().await.unwrap();
    // Nothing at all.
    match PostgresStore::connect(pg.url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(found.contains("no tables"), "{found}");
            assert!(
                found.contains("missing checkpoints, checkpoint_blobs, checkpoint_writes"),
                "{found}"
            );
        }
        other => panic!("expected UnsupportedSchema, got {other:?}"),
    }
    exec(
        &mut conn,
        "CREATE TABLE foo (x int); CREATE TABLE bar (y int); CREATE TABLE checkpoints (z int)",
    )
    .await;
    match PostgresStore::connect(pg.url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(
                found.contains("tables present: bar, checkpoints, foo"),
                "{found}"
            );
            assert!(
                found.contains("missing checkpoint_blobs, checkpoint_writes"),
                "{found}"
            );
            assert!(found.contains("search_path schemas: public"), "{found}");
        }
        other => panic!("expected UnsupportedSchema, got {other:?}"),
    }
}

#[tokio::test]
async fn schema_unknown_shape_is_unsupported() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    // Full-saver checkpoints but shallow-saver blobs: neither layout.
    exec(
        &mut conn,
        "ALTER TABLE checkpoint_blobs DROP COLUMN version",
    )
    .await;
    match PostgresStore::connect(pg.url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(found.contains("checkpoint_blobs"), "{found}");
            assert!(found.contains("lacks version"), "{found}");
        }
        other => panic!("expected UnsupportedSchema, got {other:?}"),
    }
    drop(conn);

    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    exec(&mut conn, "ALTER TABLE checkpoints DROP COLUMN metadata").await;
    exec(
        &mut conn,
        "ALTER TABLE checkpoint_writes ALTER COLUMN blob TYPE text USING encode(blob, 'hex')",
    )
    .await;
    match PostgresStore::connect(pg.url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(found.contains("checkpoints has columns"), "{found}");
            assert!(found.contains("lacks metadata"), "{found}");
            assert!(
                found.contains("checkpoint_writes.blob is text, expected bytea"),
                "{found}"
            );
        }
        other => panic!("expected UnsupportedSchema, got {other:?}"),
    }
}

// ------------------------------------------------------------------------------------------
// Values

#[tokio::test]
async fn inline_and_blob_values_share_reused_blobs() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let (c1, c2, c3) = (cid(1), cid(2), cid(3));

    let all = store
        .list_tuples(&ListQuery {
            thread_id: Some(T1.into()),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(ids(&all), vec![c3.clone(), c2.clone(), c1.clone()]);
    let (t3, t2, t1) = (&all[0], &all[1], &all[2]);

    // c1: inline primitives, blobs, first writer wins, DeltaSnapshot marker replaced by its blob.
    assert_eq!(**value(t1, "count").unwrap(), msg(Value::Int(1)));
    assert_eq!(**value(t1, "messages").unwrap(), msg(list(&["hi"])));
    assert_eq!(
        **value(t1, "snap").unwrap(),
        msg(Value::DeltaSnapshot(Box::new(list(&["a", "b"]))))
    );
    assert_eq!(**value(t1, "flag").unwrap(), msg(Value::Bool(true)));
    assert_eq!(**value(t1, "note").unwrap(), Decoded::Null);
    assert_eq!(t1.header.parent_checkpoint_id, None);
    assert_eq!(t1.header.metadata["run"]["user"], "ann");
    assert_eq!(t1.checkpoint.id, c1);
    assert_eq!(t1.checkpoint.v, 4);
    assert_eq!(
        t1.checkpoint.version("messages"),
        Some(&Version::Str(ver(1)))
    );
    assert_eq!(t1.header.ts, t1.checkpoint.ts);
    // Inline values first (JSONB key order), then blob-only channels.
    let names: Vec<&str> = t1
        .checkpoint
        .channel_values
        .iter()
        .map(|(c, _)| c.as_str())
        .collect();
    // (checked against PostgresSaver: flag, note, snap, count, messages)
    assert_eq!(names, vec!["flag", "note", "snap", "count", "messages"]);

    // c2 reuses c1's messages blob: the same decoded value, shared.
    assert_eq!(**value(t2, "count").unwrap(), msg(Value::Int(2)));
    assert!(Arc::ptr_eq(
        value(t1, "messages").unwrap(),
        value(t2, "messages").unwrap()
    ));
    assert_eq!(t2.header.parent_checkpoint_id.as_deref(), Some(c1.as_str()));
    assert!(value(t2, "snap").is_none());

    assert_eq!(
        **value(t3, "messages").unwrap(),
        msg(list(&["hi", "there"]))
    );
    assert_eq!(**value(t3, "count").unwrap(), msg(Value::Int(3)));

    // get_tuple gives the same tuples.
    assert_eq!(
        store.get_tuple(T1, "", None).await.unwrap().as_ref(),
        Some(t3)
    );
    assert_eq!(
        store.get_tuple(T1, "", Some(&c1)).await.unwrap().as_ref(),
        Some(t1)
    );
    assert!(store
        .get_tuple(T1, "", Some("missing"))
        .await
        .unwrap()
        .is_none());
    assert!(store
        .get_tuple("no-thread", "", None)
        .await
        .unwrap()
        .is_none());

    // The subgraph namespace has its own blob for the same (channel, version).
    let s1 = store.get_tuple(T1, "child:1", None).await.unwrap().unwrap();
    assert_eq!(**value(&s1, "messages").unwrap(), msg(list(&["in child"])));
}

#[tokio::test]
async fn pending_writes_are_sorted_like_python() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let (c1, c2) = (cid(1), cid(2));
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(&c1, 4, Some(json!({})), &[]),
        json!({}),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c2,
        Some(&c1),
        doc(&c2, 4, Some(json!({})), &[]),
        json!({}),
    )
    .await;
    let rows: [(&str, &str, &str, i32, &str); 7] = [
        (c1.as_str(), "task-b", "~__pregel_pull, b", 0, "out"),
        (c1.as_str(), "task-a", "~__pregel_pull, b", 2, "out"),
        (
            c1.as_str(),
            "task-a",
            "~__pregel_pull, b",
            -3,
            "__interrupt__",
        ),
        (
            c1.as_str(),
            "00000000-0000-0000-0000-000000000000",
            "",
            0,
            "__resume__",
        ),
        (c1.as_str(), "task-z", "~__pregel_pull, a", 1, "out"),
        (c1.as_str(), "task-a", "~__pregel_pull, b", 10, "out"),
        (c2.as_str(), "task-c", "", 0, "other"),
    ];
    for (n, (cp, task, path, idx, channel)) in rows.iter().enumerate() {
        let w = W {
            ns: "",
            cid: cp,
            task_id: task,
            task_path: path,
            idx: *idx,
            channel,
            value: Value::Int(n as i64),
        };
        put_write(&mut conn, T1, w, true).await;
    }
    // A null write: `null` tag with an empty blob.
    sqlx::query(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
         VALUES ($1, '', $2, 'task-z', 2, 'none', 'null', ''::bytea, '~__pregel_pull, a')",
    )
    .bind(T1)
    .bind(&c1)
    .execute(&mut conn)
    .await
    .unwrap();

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let expected = vec![
        ("", "00000000-0000-0000-0000-000000000000", 0),
        ("~__pregel_pull, a", "task-z", 1),
        ("~__pregel_pull, a", "task-z", 2),
        ("~__pregel_pull, b", "task-a", -3),
        ("~__pregel_pull, b", "task-a", 2),
        ("~__pregel_pull, b", "task-a", 10),
        ("~__pregel_pull, b", "task-b", 0),
    ];
    for t in [
        store.get_tuple(T1, "", Some(&c1)).await.unwrap().unwrap(),
        store
            .list_tuples(&ListQuery::thread(T1))
            .await
            .unwrap()
            .remove(1),
    ] {
        let got: Vec<(&str, &str, i64)> = t
            .pending_writes
            .iter()
            .map(|w| (w.task_path.as_str(), w.task_id.as_str(), w.idx))
            .collect();
        assert_eq!(got, expected);
        assert_eq!(t.pending_writes[0].channel, "__resume__");
        assert_eq!(t.pending_writes[0].value, msg(Value::Int(3)));
        assert_eq!(t.pending_writes[2].value, Decoded::Null);
        assert_eq!(t.pending_writes[2].type_tag, "null");
        assert_eq!(t.pending_writes[1].type_tag, "msgpack");
    }
    let t2 = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    assert_eq!(t2.pending_writes.len(), 1);
    assert_eq!(t2.pending_writes[0].channel, "other");
}

#[tokio::test]
async fn old_rows_without_inline_values_skip_empty_blobs() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    // Before July 2025 every value went to a blob, the JSON had no channel_values, and
    // channels without a value got ("empty", NULL) rows.
    let c1 = cid(1);
    put_blob(
        &mut conn,
        T1,
        "",
        "count",
        &ver(1),
        "msgpack",
        Some(mp(&Value::Int(41))),
    )
    .await;
    put_blob(&mut conn, T1, "", "branch:to:agent", &ver(1), "empty", None).await;
    put_blob(
        &mut conn,
        T1,
        "",
        "maybe",
        &ver(1),
        "null",
        Some(Vec::new()),
    )
    .await;
    put_blob(
        &mut conn,
        T1,
        "",
        "legacy",
        &ver(1),
        "json",
        Some(br#"{"a": [1, 2]}"#.to_vec()),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(
            &c1,
            3,
            None,
            &[
                ("count", ver(1)),
                ("branch:to:agent", ver(1)),
                ("maybe", ver(1)),
                ("legacy", ver(1)),
            ],
        ),
        json!({"source": "loop", "step": 0, "writes": null}),
    )
    .await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let t = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    assert_eq!(**value(&t, "count").unwrap(), msg(Value::Int(41)));
    assert!(value(&t, "branch:to:agent").is_none());
    assert_eq!(**value(&t, "maybe").unwrap(), Decoded::Null);
    assert!(
        matches!(&**value(&t, "legacy").unwrap(), Decoded::Json { value, .. } if value["a"][1] == 2)
    );
    assert_eq!(t.checkpoint.channel_values.len(), 3);
    // The version stays even though the value is skipped.
    assert!(t.checkpoint.version("branch:to:agent").is_some());
    // v3 without a parent: no pending sends.
    assert!(value(&t, "__pregel_tasks").is_none());
}

#[tokio::test]
async fn pre_v4_checkpoints_get_pending_sends_from_the_parent() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let (p, c, c4, lone, q) = (cid(1), cid(2), cid(3), cid(4), cid(5));
    put_cp(
        &mut conn,
        T1,
        "",
        &p,
        None,
        doc(&p, 1, Some(json!({})), &[("a", ver(1))]),
        json!({}),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c,
        Some(&p),
        doc(
            &c,
            1,
            Some(json!({"a": 1})),
            &[("a", ver(2)), ("b", ver(7)), ("c", ver(3))],
        ),
        json!({}),
    )
    .await;
    // A v4 child of the same parent: Sends live in the channel, nothing is migrated.
    put_cp(
        &mut conn,
        T1,
        "",
        &c4,
        Some(&p),
        doc(&c4, 4, Some(json!({})), &[("a", ver(2))]),
        json!({}),
    )
    .await;
    // A pre-v4 child of a parent without Sends.
    put_cp(
        &mut conn,
        T1,
        "",
        &q,
        Some(&lone),
        doc(&q, 2, Some(json!({})), &[("a", ver(2))]),
        json!({}),
    )
    .await;
    // A pre-v4 child with sends but no channel versions at all.
    let bare = cid(6);
    put_cp(
        &mut conn,
        T1,
        "",
        &bare,
        Some(&p),
        doc(&bare, 2, Some(json!({})), &[]),
        json!({}),
    )
    .await;

    let sends = [
        ("", "t2", "~__pregel_pull, x", 0, 2),
        ("", "t1", "~__pregel_pull, x", 1, 1),
        ("", "t1", "~__pregel_pull, x", 0, 0),
        // Same checkpoint id in another namespace: Python's SELECT_PENDING_SENDS_SQL has no
        // namespace filter, so it is included (sorted by task_path first).
        ("child:9", "t0", "~__pregel_pull, w", 0, 9),
    ];
    for (ns, task, path, idx, arg) in sends {
        let w = W {
            ns,
            cid: &p,
            task_id: task,
            task_path: path,
            idx,
            channel: "__pregel_tasks",
            value: send("worker", arg),
        };
        put_write(&mut conn, T1, w, true).await;
    }
    // Not a Send channel: ignored.
    let w = W {
        ns: "",
        cid: &p,
        task_id: "t1",
        task_path: "~__pregel_pull, x",
        idx: 5,
        channel: "a",
        value: Value::Int(0),
    };
    put_write(&mut conn, T1, w, true).await;

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let expected = msg(Value::Array(vec![
        send("worker", 9),
        send("worker", 0),
        send("worker", 1),
        send("worker", 2),
    ]));
    let all = store.list_tuples(&ListQuery::thread(T1)).await.unwrap();
    let by_id = |id: &str| {
        all.iter()
            .find(|t| t.header.checkpoint_id == id)
            .unwrap()
            .clone()
    };
    for t in [
        store.get_tuple(T1, "", Some(&c)).await.unwrap().unwrap(),
        by_id(&c),
    ] {
        assert_eq!(**value(&t, "__pregel_tasks").unwrap(), expected);
        // channel_versions["__pregel_tasks"] = max of the versions.
        assert_eq!(
            t.checkpoint.version("__pregel_tasks"),
            Some(&Version::Str(ver(7)))
        );
        assert_eq!(
            t.checkpoint.channel_versions.last().unwrap().0,
            "__pregel_tasks"
        );
        assert_eq!(**value(&t, "a").unwrap(), msg(Value::Int(1)));
        // The writes of c itself are unaffected.
        assert!(t.pending_writes.is_empty());
    }
    let t4 = by_id(&c4);
    assert!(value(&t4, "__pregel_tasks").is_none());
    assert!(t4.checkpoint.version("__pregel_tasks").is_none());
    let tq = by_id(&q);
    assert!(value(&tq, "__pregel_tasks").is_none());
    let tb = by_id(&bare);
    assert_eq!(**value(&tb, "__pregel_tasks").unwrap(), expected);
    assert_eq!(
        tb.checkpoint.version("__pregel_tasks"),
        Some(&Version::Str(
            "00000000000000000000000000000001.00000000000000.0".into()
        ))
    );
    // The parent (no parent itself) has its own writes, no migrated sends.
    let tp = by_id(&p);
    assert!(value(&tp, "__pregel_tasks").is_none());
    assert_eq!(tp.pending_writes.len(), 4);
}

#[tokio::test]
async fn corrupt_blob_decodes_to_error_and_the_rest_is_intact() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let c1 = cid(1);
    put_blob(
        &mut conn,
        T1,
        "",
        "bad",
        &ver(1),
        "msgpack",
        Some(vec![0xc1, 0xff, 0x00]),
    )
    .await;
    put_blob(
        &mut conn,
        T1,
        "",
        "weird",
        &ver(1),
        "no-such-tag",
        Some(vec![1, 2, 3]),
    )
    .await;
    put_blob(
        &mut conn,
        T1,
        "",
        "good",
        &ver(1),
        "msgpack",
        Some(mp(&list(&["ok"]))),
    )
    .await;
    put_cp(
        &mut conn,
        T1,
        "",
        &c1,
        None,
        doc(
            &c1,
            4,
            Some(json!({"n": 1})),
            &[
                ("bad", ver(1)),
                ("weird", ver(1)),
                ("good", ver(1)),
                ("n", ver(1)),
            ],
        ),
        json!({"step": 0}),
    )
    .await;
    sqlx::query(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob) \
         VALUES ($1, '', $2, 't', 0, 'x', 'msgpack', '\\xc1'::bytea)",
    )
    .bind(T1)
    .bind(&c1)
    .execute(&mut conn)
    .await
    .unwrap();
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    for t in [
        store.get_tuple(T1, "", None).await.unwrap().unwrap(),
        store
            .list_tuples(&ListQuery::thread(T1))
            .await
            .unwrap()
            .remove(0),
    ] {
        match &**value(&t, "bad").unwrap() {
            Decoded::Error { tag, raw, .. } => {
                assert_eq!(tag, "msgpack");
                assert_eq!(raw, &vec![0xc1, 0xff, 0x00]);
            }
            other => panic!("expected an error value, got {other:?}"),
        }
        assert!(
            matches!(&**value(&t, "weird").unwrap(), Decoded::Error { tag, .. } if tag == "no-such-tag")
        );
        assert_eq!(**value(&t, "good").unwrap(), msg(list(&["ok"])));
        assert_eq!(**value(&t, "n").unwrap(), msg(Value::Int(1)));
        assert!(matches!(t.pending_writes[0].value, Decoded::Error { .. }));
    }
}

// ------------------------------------------------------------------------------------------
// list() semantics and threads

#[tokio::test]
async fn get_tuples_matches_get_tuple_key_by_key() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let (c1, c2) = (cid(1), cid(2));
    let keys = [
        (T1, "", None),
        (T1, "", Some(c1.as_str())),
        (T1, "", Some(c2.as_str())),
        (T1, "", Some("nope")),
        ("no-such-thread", "", None),
    ];
    let many = store.get_tuples(&keys).await.unwrap();
    assert_eq!(many.len(), keys.len());
    for ((t, ns, id), got) in keys.iter().zip(&many) {
        assert_eq!(
            got,
            &store.get_tuple(t, ns, *id).await.unwrap(),
            "{t} {id:?}"
        );
    }
    assert_eq!(many.iter().filter(|t| t.is_some()).count(), 3);
}

#[tokio::test]
async fn list_semantics_match_python() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let (c1, c2, c3, s1) = (cid(1), cid(2), cid(3), cid(10));

    // No ns in the query: every namespace, newest first by id.
    let all = store.list_tuples(&ListQuery::thread(T1)).await.unwrap();
    assert_eq!(
        ids(&all),
        vec![s1.clone(), c3.clone(), c2.clone(), c1.clone()]
    );
    let headers = store.list_headers(&ListQuery::thread(T1)).await.unwrap();
    assert_eq!(
        headers,
        all.iter().map(|t| t.header.clone()).collect::<Vec<_>>()
    );
    assert_eq!(headers[0].checkpoint_ns, "child:1");

    let root = |f: fn(&mut ListQuery)| {
        let mut q = ListQuery {
            thread_id: Some(T1.into()),
            checkpoint_ns: Some(String::new()),
            ..Default::default()
        };
        f(&mut q);
        q
    };
    let q = root(|_| {});
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![c3.clone(), c2.clone(), c1.clone()]
    );
    let q = root(|q| q.before = Some(cid(3)));
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![c2.clone(), c1.clone()]
    );
    let q = root(|q| q.limit = Some(1));
    assert_eq!(ids(&store.list_tuples(&q).await.unwrap()), vec![c3.clone()]);
    let q = root(|q| {
        q.before = Some(cid(3));
        q.limit = Some(1);
    });
    assert_eq!(
        hids(&store.list_headers(&q).await.unwrap()),
        vec![c2.clone()]
    );
    let q = root(|q| q.checkpoint_id = Some(cid(2)));
    assert_eq!(ids(&store.list_tuples(&q).await.unwrap()), vec![c2.clone()]);

    // Metadata containment (`metadata @> filter`), nested objects and arrays included.
    let with_filter = |filter: serde_json::Value| ListQuery {
        thread_id: Some(T1.into()),
        filter: filter.as_object().unwrap().clone(),
        ..Default::default()
    };
    let q = with_filter(json!({"source": "loop"}));
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![s1.clone(), c3.clone(), c2.clone()]
    );
    let q = with_filter(json!({"run": {"user": "ann"}}));
    assert_eq!(
        ids(&store.list_tuples(&q).await.unwrap()),
        vec![c3.clone(), c1.clone()]
    );
    let q = with_filter(json!({"run": {"user": "ann", "tags": ["y"]}, "step": 1}));
    assert_eq!(
        hids(&store.list_headers(&q).await.unwrap()),
        vec![c3.clone()]
    );
    let q = with_filter(json!({"parents": {"": c2}}));
    assert_eq!(ids(&store.list_tuples(&q).await.unwrap()), vec![s1.clone()]);
    let q = with_filter(json!({"source": "nope"}));
    assert!(store.list_tuples(&q).await.unwrap().is_empty());

    // No thread: every thread.
    let everything = store.list_headers(&ListQuery::default()).await.unwrap();
    assert_eq!(everything.len(), 5);
    assert_eq!(everything[0].checkpoint_id, cid(20));
    let everything = store.list_tuples(&ListQuery::default()).await.unwrap();
    assert_eq!(everything.len(), 5);
    assert_eq!(
        **value(&everything[0], "count").unwrap(),
        msg(Value::Int(7))
    );

    // Threads: one row each, root namespace first, count over all namespaces.
    let threads = store.list_threads().await.unwrap();
    assert_eq!(threads.len(), 2);
    assert_eq!(threads[0].thread_id, "thread-0");
    assert_eq!(threads[0].checkpoint_count, 1);
    assert_eq!(threads[1].thread_id, T1);
    assert_eq!(
        threads[1].namespaces,
        vec!["".to_owned(), "child:1".to_owned()]
    );
    assert_eq!(threads[1].checkpoint_count, 4);
    assert_eq!(
        threads[1].latest_checkpoint_id.as_deref(),
        Some(c3.as_str())
    );
}

// ------------------------------------------------------------------------------------------
// Connection errors

fn url_for(pg: &TestPg, user: &str, password: Option<&str>, database: &str) -> String {
    let o = PgConnectOptions::from_str(pg.url()).unwrap();
    let auth = match password {
        Some(p) => format!("{user}:{p}"),
        None => user.to_owned(),
    };
    format!(
        "postgresql://{auth}@{}:{}/{database}",
        o.get_host(),
        o.get_port()
    )
}

#[tokio::test]
async fn connection_errors_are_classified_without_the_password() {
    // Nothing listens on port 1: refused, reported at once (no pool retry loop).
    let started = std::time::Instant::now();
    match PostgresStore::connect("postgresql://someone:hunter2-secret@127.0.0.1:1/db").await {
        Err(StoreError::Connection(m)) => {
            assert!(m.contains("127.0.0.1:1"), "{m}");
            assert!(!m.contains("hunter2"), "{m}");
        }
        other => panic!("expected Connection, got {other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    match PostgresStore::connect("not a url").await {
        Err(StoreError::InvalidInput(_)) => {}
        other => panic!("expected InvalidInput, got {other:?}"),
    }

    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let admin = PgConnectOptions::from_str(pg.url()).unwrap();
    let admin_user = admin.get_username().to_owned();

    match PostgresStore::connect(&url_for(
        &pg,
        &admin_user,
        Some("pw-1234"),
        "fb_no_such_database_xyz",
    ))
    .await
    {
        Err(StoreError::NotFound(m)) => {
            assert!(m.contains("fb_no_such_database_xyz"), "{m}");
            assert!(!m.contains("pw-1234"), "{m}");
        }
        other => panic!("expected NotFound, got {other:?}"),
    }

    // A role that does not exist is refused even under trust authentication (28000).
    match PostgresStore::connect(&url_for(
        &pg,
        "fb_no_such_role_xyz",
        Some("pw-5678"),
        pg.database(),
    ))
    .await
    {
        Err(StoreError::Auth(m)) => {
            assert!(m.contains("fb_no_such_role_xyz"), "{m}");
            assert!(!m.contains("pw-5678"), "{m}");
        }
        other => panic!("expected Auth, got {other:?}"),
    }

    // A wrong password (28P01): only testable when the server checks passwords; the local
    // test server may trust 127.0.0.1, in which case the connection simply succeeds.
    let role = format!("fb_pw_{}", std::process::id());
    let mut conn = pg.connect().await.unwrap();
    exec(&mut conn, &format!("DROP ROLE IF EXISTS {role}")).await;
    exec(
        &mut conn,
        &format!("CREATE ROLE {role} LOGIN PASSWORD 'right-password'"),
    )
    .await;
    let result =
        PostgresStore::connect(&url_for(&pg, &role, Some("wrong-password"), pg.database())).await;
    exec(&mut conn, &format!("DROP ROLE IF EXISTS {role}")).await;
    match result {
        Err(StoreError::Auth(m)) => assert!(!m.contains("wrong-password"), "{m}"),
        // Trust authentication: connected, then found no checkpoint tables.
        Err(StoreError::UnsupportedSchema { .. }) => {
            eprintln!(
                "note: the test server accepted a wrong password (trust auth); 28P01 not exercised"
            )
        }
        other => panic!("expected Auth (or trust), got {other:?}"),
    }
}

// ------------------------------------------------------------------------------------------
// Read-only

async fn fingerprint(conn: &mut PgConnection) -> Vec<(String, i64, String)> {
    let mut out = Vec::new();
    for table in [
        "checkpoints",
        "checkpoint_blobs",
        "checkpoint_writes",
        "checkpoint_migrations",
    ] {
        let row: (i64, Option<String>) = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM {table} AS t"
        )))
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        out.push((table.to_owned(), row.0, row.1.unwrap_or_default()));
    }
    let tables: (i64,) =
        sqlx::query_as("SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
    out.push(("relations".into(), tables.0, String::new()));
    out
}

#[tokio::test]
async fn reading_never_writes() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let before = fingerprint(&mut conn).await;

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let threads = store.list_threads().await.unwrap();
    for t in &threads {
        store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .unwrap();
        store
            .list_headers(&ListQuery::thread(&t.thread_id))
            .await
            .unwrap();
        for ns in &t.namespaces {
            store.get_tuple(&t.thread_id, ns, None).await.unwrap();
        }
    }
    store.list_tuples(&ListQuery::default()).await.unwrap();
    store.close().await;

    assert_eq!(fingerprint(&mut conn).await, before);
    // No session of ours is left idle in a transaction.
    let open: (i64,) = sqlx::query_as(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'flashback' AND state LIKE 'idle in transaction%'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(open.0, 0);
}

#[tokio::test]
async fn numeric_versions_join_blobs_by_their_exact_text() {
    // The conformance suite uses integer versions; other writers may use floats. Python joins
    // blobs on `version = jsonb_each_text(channel_versions).value`, i.e. Postgres' rendering
    // of the JSONB number ("1.50" keeps its scale, 1e-05 becomes "0.00001").
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    let c1 = cid(1);
    let text = format!(
        r#"{{"v": 4, "id": "{c1}", "ts": "2026-01-01T00:00:00+00:00", "channel_values": {{}},
            "channel_versions": {{"i": 2, "f": 1.50, "e": 1e-05, "big": 18446744073709551615, "n": null}},
            "versions_seen": {{}}, "updated_channels": null}}"#
    );
    // Inserted as text so that Postgres parses the numbers itself.
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, checkpoint, metadata) \
         VALUES ($1, '', $2, $3::jsonb, '{}')",
    )
    .bind(T1)
    .bind(&c1)
    .bind(text)
    .execute(&mut conn)
    .await
    .unwrap();
    for (channel, version) in [
        ("i", "2"),
        ("f", "1.50"),
        ("f", "1.5"),
        ("e", "0.00001"),
        ("e", "1e-05"),
        ("big", "18446744073709551615"),
        ("n", "null"),
    ] {
        let value = list(&[&format!("{channel}@{version}")]);
        put_blob(
            &mut conn,
            T1,
            "",
            channel,
            version,
            "msgpack",
            Some(mp(&value)),
        )
        .await;
    }
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    for t in [
        store.get_tuple(T1, "", None).await.unwrap().unwrap(),
        store
            .list_tuples(&ListQuery::thread(T1))
            .await
            .unwrap()
            .remove(0),
    ] {
        assert_eq!(**value(&t, "i").unwrap(), msg(list(&["i@2"])));
        assert_eq!(**value(&t, "f").unwrap(), msg(list(&["f@1.50"])));
        assert_eq!(**value(&t, "e").unwrap(), msg(list(&["e@0.00001"])));
        assert_eq!(
            **value(&t, "big").unwrap(),
            msg(list(&["big@18446744073709551615"]))
        );
        assert!(value(&t, "n").is_none());
        assert_eq!(t.checkpoint.version("i"), Some(&Version::Int(2)));
    }
}

#[tokio::test]
async fn shallow_pre_v4_checkpoint_lists_the_namespace_sends() {
    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let mut conn = pg.connect().await.unwrap();
    setup_shallow(&mut conn).await;
    let (old, cur) = (cid(1), cid(2));
    sqlx::query(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint, metadata) VALUES ($1, '', $2, '{}')",
    )
    .bind(T1)
    .bind(doc(&cur, 2, None, &[]))
    .execute(&mut conn)
    .await
    .unwrap();
    // ShallowPostgresSaver loads every __pregel_tasks write of the namespace.
    for (cp, task, idx, arg) in [(&old, "b", 0, 2), (&cur, "a", 1, 1), (&cur, "a", 0, 0)] {
        sqlx::query(
            "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob, task_path) \
             VALUES ($1, '', $2, $3, $4, '__pregel_tasks', 'msgpack', $5, '')",
        )
        .bind(T1)
        .bind(cp)
        .bind(task)
        .bind(idx)
        .bind(mp(&send("w", arg)))
        .execute(&mut conn)
        .await
        .unwrap();
    }
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let t = store.get_tuple(T1, "", None).await.unwrap().unwrap();
    let sends: Vec<Decoded> = t
        .checkpoint
        .pending_sends
        .clone()
        .unwrap()
        .iter()
        .map(|s| (**s).clone())
        .collect();
    assert_eq!(
        sends,
        vec![msg(send("w", 0)), msg(send("w", 1)), msg(send("w", 2))]
    );
    assert_eq!(t.pending_writes.len(), 2);
    assert!(value(&t, "__pregel_tasks").is_none());
}

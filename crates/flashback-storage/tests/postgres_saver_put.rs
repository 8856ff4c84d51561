//! The Postgres write side (`CheckpointSaver for PostgresStore`) against real databases (one
//! fresh database per test, from flashback-testkit). Skipped when no PostgreSQL is available,
//! unless CI=true or FLASHBACK_REQUIRE_PG=1.
//!
//! * `setup()` creates exactly the schema Python's `PostgresSaver.setup()` creates (the
//!   expected facts below were taken once from a database set up by
//!   langgraph-checkpoint-postgres 3.2.0; Python is not needed to run these tests).
//! * Re-putting every checkpoint and write of the Python-written fixture
//!   (`tests/fixtures/postgres.sql`) into a database of our own gives identical tables.

use flashback_codec::{Decoded, Value};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::saver::{write_idx, WRITES_IDX_MAP};
use flashback_storage::{
    CheckpointSaver, CheckpointStore, CheckpointTuple, ListQuery, PendingWrite, PutRequest,
    StoreError, Version, Versions,
};
use flashback_testkit::TestPg;
use serde_json::{json, Map, Value as Json};
use sqlx::{AssertSqlSafe, PgPool};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

// ------------------------------------------------------------------------------------------
// Helpers

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

async fn exec(pool: &PgPool, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// One text per row (a whole-row literal, e.g. `(t1,"",id,,…)`: NULL and `''` differ, JSONB
/// in its normalised text form, bytea in hex).
async fn texts(pool: &PgPool, sql: &str) -> Vec<String> {
    sqlx::query_scalar::<_, String>(AssertSqlSafe(sql.to_owned()))
        .fetch_all(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.to_owned()))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

fn s(x: &str) -> Decoded {
    Decoded::Msgpack(Value::Str(x.into()))
}

fn int(i: i64) -> Decoded {
    Decoded::Msgpack(Value::Int(i))
}

fn list(items: &[i64]) -> Decoded {
    Decoded::Msgpack(Value::Array(items.iter().map(|i| Value::Int(*i)).collect()))
}

fn ver(n: u32) -> Version {
    Version::Str(format!("{n:032}.0.{}", 5000 + n))
}

fn checkpoint(
    id: &str,
    values: Vec<(&str, Decoded)>,
    versions: &Versions,
) -> flashback_storage::Checkpoint {
    flashback_storage::Checkpoint {
        v: 4,
        id: id.to_owned(),
        ts: "2026-01-01T00:00:00.000000+00:00".into(),
        channel_values: values
            .into_iter()
            .map(|(c, v)| (c.to_owned(), Arc::new(v)))
            .collect(),
        channel_versions: versions.clone(),
        versions_seen: vec![
            ("__input__".into(), Vec::new()),
            ("node".into(), vec![("a".into(), ver(1))]),
        ],
        updated_channels: Some(vec!["a".into()]),
        pending_sends: None,
    }
}

fn versions(entries: &[(&str, u32)]) -> Versions {
    entries
        .iter()
        .map(|(c, n)| ((*c).to_owned(), ver(*n)))
        .collect()
}

fn md(v: Json) -> Map<String, Json> {
    v.as_object().cloned().expect("object")
}

async fn put(
    store: &PostgresStore,
    thread: &str,
    parent: Option<&str>,
    cp: &flashback_storage::Checkpoint,
    metadata: &Map<String, Json>,
    new_versions: &Versions,
) -> Result<(), StoreError> {
    store
        .put(PutRequest {
            thread_id: thread,
            checkpoint_ns: "",
            parent_checkpoint_id: parent,
            checkpoint: cp,
            metadata,
            new_versions,
        })
        .await
}

/// A fresh database set up by our `setup()`.
async fn new_store(pg: &TestPg) -> PostgresStore {
    let store = PostgresStore::connect_for_setup(pg.url())
        .await
        .expect("connect");
    store.setup().await.expect("setup");
    store
}

// ------------------------------------------------------------------------------------------
// 1. setup()

/// `information_schema.columns` of the four tables after Python's `PostgresSaver.setup()`
/// (table|position|column|type|nullable|default).
const PYTHON_COLUMNS: &[&str] = &[
    "checkpoint_blobs|1|thread_id|text|NO|",
    "checkpoint_blobs|2|checkpoint_ns|text|NO|''::text",
    "checkpoint_blobs|3|channel|text|NO|",
    "checkpoint_blobs|4|version|text|NO|",
    "checkpoint_blobs|5|type|text|NO|",
    "checkpoint_blobs|6|blob|bytea|YES|",
    "checkpoint_migrations|1|v|integer|NO|",
    "checkpoint_writes|1|thread_id|text|NO|",
    "checkpoint_writes|2|checkpoint_ns|text|NO|''::text",
    "checkpoint_writes|3|checkpoint_id|text|NO|",
    "checkpoint_writes|4|task_id|text|NO|",
    "checkpoint_writes|5|idx|integer|NO|",
    "checkpoint_writes|6|channel|text|NO|",
    "checkpoint_writes|7|type|text|YES|",
    "checkpoint_writes|8|blob|bytea|NO|",
    "checkpoint_writes|9|task_path|text|NO|''::text",
    "checkpoints|1|thread_id|text|NO|",
    "checkpoints|2|checkpoint_ns|text|NO|''::text",
    "checkpoints|3|checkpoint_id|text|NO|",
    "checkpoints|4|parent_checkpoint_id|text|YES|",
    "checkpoints|5|type|text|YES|",
    "checkpoints|6|checkpoint|jsonb|NO|",
    "checkpoints|7|metadata|jsonb|NO|'{}'::jsonb",
];

/// `pg_indexes` after Python's `setup()` (table|index|definition).
const PYTHON_INDEXES: &[&str] = &[
    "checkpoint_blobs|checkpoint_blobs_pkey|CREATE UNIQUE INDEX checkpoint_blobs_pkey ON public.checkpoint_blobs USING btree (thread_id, checkpoint_ns, channel, version)",
    "checkpoint_blobs|checkpoint_blobs_thread_id_idx|CREATE INDEX checkpoint_blobs_thread_id_idx ON public.checkpoint_blobs USING btree (thread_id)",
    "checkpoint_migrations|checkpoint_migrations_pkey|CREATE UNIQUE INDEX checkpoint_migrations_pkey ON public.checkpoint_migrations USING btree (v)",
    "checkpoint_writes|checkpoint_writes_pkey|CREATE UNIQUE INDEX checkpoint_writes_pkey ON public.checkpoint_writes USING btree (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)",
    "checkpoint_writes|checkpoint_writes_thread_id_idx|CREATE INDEX checkpoint_writes_thread_id_idx ON public.checkpoint_writes USING btree (thread_id)",
    "checkpoints|checkpoints_pkey|CREATE UNIQUE INDEX checkpoints_pkey ON public.checkpoints USING btree (thread_id, checkpoint_ns, checkpoint_id)",
    "checkpoints|checkpoints_thread_id_idx|CREATE INDEX checkpoints_thread_id_idx ON public.checkpoints USING btree (thread_id)",
];

/// The schema facts compared with Python's: columns, indexes (all valid) and migration rows.
async fn schema_facts(pool: &PgPool) -> (Vec<String>, Vec<String>, Vec<String>) {
    let columns = texts(
        pool,
        "SELECT concat_ws('|', table_name, ordinal_position, column_name, data_type, is_nullable, \
         coalesce(column_default, '')) FROM information_schema.columns \
         WHERE table_schema = 'public' AND table_name IN \
         ('checkpoints', 'checkpoint_blobs', 'checkpoint_writes', 'checkpoint_migrations') \
         ORDER BY table_name, ordinal_position",
    )
    .await;
    let indexes = texts(
        pool,
        "SELECT concat_ws('|', tablename, indexname, indexdef) FROM pg_indexes \
         WHERE schemaname = 'public' ORDER BY tablename, indexname",
    )
    .await;
    let invalid = count(
        pool,
        "SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid \
         JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE n.nspname = 'public' AND NOT (i.indisvalid AND i.indisready)",
    )
    .await;
    assert_eq!(invalid, 0, "an index was left invalid");
    let migrations = texts(pool, "SELECT v::text FROM checkpoint_migrations ORDER BY v").await;
    (columns, indexes, migrations)
}

#[tokio::test]
async fn setup_creates_pythons_schema_and_is_idempotent() {
    let pg = flashback_testkit::pg_or_skip!();
    let pool = pg.pool().await.expect("pool");

    // connect() refuses an empty database; connect_for_setup() does not.
    let err = PostgresStore::connect(pg.url()).await.unwrap_err();
    assert!(matches!(err, StoreError::UnsupportedSchema { .. }), "{err}");
    let store = PostgresStore::connect_for_setup(pg.url())
        .await
        .expect("connect_for_setup");
    assert_eq!(store.schema().migration_version, None);

    store.setup().await.expect("setup");
    let expected_migrations: Vec<String> = (0..10).map(|v| v.to_string()).collect();
    let facts = schema_facts(&pool).await;
    assert_eq!(facts.0, PYTHON_COLUMNS);
    assert_eq!(facts.1, PYTHON_INDEXES);
    assert_eq!(facts.2, expected_migrations);

    // The store's schema is detected again, and equals what a new connection detects.
    let fresh = PostgresStore::connect(pg.url()).await.expect("connect");
    assert_eq!(store.schema(), fresh.schema());
    assert_eq!(store.schema().migration_version, Some(9));
    assert!(store.schema().has_task_path && !store.schema().shallow);
    assert!(store.list_threads().await.expect("reads work").is_empty());

    // A second setup (from either store) is a no-op.
    store.setup().await.expect("second setup");
    fresh.setup().await.expect("setup on a set-up database");
    assert_eq!(schema_facts(&pool).await, facts);
    store.close().await;
    fresh.close().await;
}

/// Tables that exist with a layout we do not know are not "set up" over.
#[tokio::test]
async fn connect_for_setup_refuses_unknown_tables() {
    let pg = flashback_testkit::pg_or_skip!();
    let pool = pg.pool().await.expect("pool");
    exec(
        &pool,
        "CREATE TABLE checkpoints (thread_id text, checkpoint bytea)",
    )
    .await;
    exec(&pool, "CREATE TABLE checkpoint_blobs (x int)").await;
    exec(&pool, "CREATE TABLE checkpoint_writes (x int)").await;
    let err = PostgresStore::connect_for_setup(pg.url())
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::UnsupportedSchema { found } if found.contains("unknown checkpoint table layout")),
        "{err}"
    );
}

/// A database at migration 8 (no `task_path`): writes omit the column, and `setup()`
/// applies migration 9 only and updates the store's schema.
#[tokio::test]
async fn setup_upgrades_an_older_schema() {
    let pg = flashback_testkit::pg_or_skip!();
    let pool = pg.pool().await.expect("pool");
    let dir = repo_root().join("migrations/postgres");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("migrations/postgres")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "sql"))
        .collect();
    files.sort();
    assert_eq!(files.len(), 10);
    for (v, file) in files.iter().enumerate().take(9) {
        exec(&pool, &std::fs::read_to_string(file).expect("read")).await;
        exec(
            &pool,
            &format!("INSERT INTO checkpoint_migrations (v) VALUES ({v})"),
        )
        .await;
    }

    let store = PostgresStore::connect(pg.url()).await.expect("connect");
    assert!(!store.schema().has_task_path);
    assert_eq!(store.schema().migration_version, Some(8));
    store
        .put_writes("t", "", "c1", "task", "~ignored", &[("a".into(), int(1))])
        .await
        .expect("put_writes without task_path");

    store.setup().await.expect("setup");
    assert!(store.schema().has_task_path);
    assert_eq!(store.schema().migration_version, Some(9));
    let facts = schema_facts(&pool).await;
    assert_eq!(facts.0, PYTHON_COLUMNS);
    assert_eq!(facts.1, PYTHON_INDEXES);
    assert_eq!(facts.2.len(), 10);
    assert_eq!(
        texts(&pool, "SELECT w::text FROM checkpoint_writes w").await,
        vec![r#"(t,"",c1,task,0,a,msgpack,"\\x01","")"#]
    );
    store.close().await;
}

// ------------------------------------------------------------------------------------------
// 2. Byte-compatible re-put of the Python-written fixture

/// Every table, one whole-row text per row, in primary-key order.
async fn dump_tables(pool: &PgPool) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    for (table, sql) in [
        (
            "checkpoints",
            "SELECT t::text FROM checkpoints t ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        ),
        (
            "checkpoint_blobs",
            "SELECT t::text FROM checkpoint_blobs t ORDER BY thread_id, checkpoint_ns, channel, version",
        ),
        (
            "checkpoint_writes",
            "SELECT t::text FROM checkpoint_writes t \
             ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
        ),
        (
            "checkpoint_migrations",
            "SELECT t::text FROM checkpoint_migrations t ORDER BY v",
        ),
    ] {
        out.push((table, texts(pool, sql).await));
    }
    out
}

fn short(s: &str) -> String {
    if s.len() > 600 {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} chars)", &s[..end], s.len())
    } else {
        s.to_owned()
    }
}

fn is_special(channel: &str) -> bool {
    WRITES_IDX_MAP.iter().any(|(c, _)| *c == channel)
}

/// `(task_id, task_path, writes)` of one `put_writes` call.
type Batch = (String, String, Vec<(String, Decoded)>);

/// The `put_writes` batches that reproduce one checkpoint's stored writes.
///
/// Writes are grouped by `(task_id, task_path)`. A regular write must sit at the position
/// equal to its stored idx (`write_idx`), so gaps (left by special writes in Python's batch)
/// are filled with the task's special writes: they get their fixed negative idx wherever they
/// stand, and a duplicate of one is harmless (the batch keeps one row per idx). Returns the
/// batches and the number of gaps filled.
fn batches(writes: &[PendingWrite]) -> (Vec<Batch>, usize) {
    let mut groups: Vec<((String, String), Vec<&PendingWrite>)> = Vec::new();
    for w in writes {
        let key = (w.task_id.clone(), w.task_path.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(w),
            None => groups.push((key, vec![w])),
        }
    }
    let mut gaps = 0;
    let mut out = Vec::new();
    for ((task_id, task_path), group) in groups {
        let specials: Vec<&PendingWrite> = group
            .iter()
            .copied()
            .filter(|w| is_special(&w.channel))
            .collect();
        let mut regular: BTreeMap<i64, &PendingWrite> = BTreeMap::new();
        for w in &group {
            if is_special(&w.channel) {
                assert_eq!(w.idx, write_idx(&w.channel, 0), "special idx of {w:?}");
            } else {
                assert!(w.idx >= 0, "regular write with a negative idx: {w:?}");
                assert!(regular.insert(w.idx, w).is_none());
            }
        }
        let len = regular.keys().next_back().map_or(0, |m| *m as usize + 1);
        let mut batch: Vec<(String, Decoded)> = Vec::new();
        let mut used = vec![false; specials.len()];
        for position in 0..len {
            let w = match regular.get(&(position as i64)) {
                Some(w) => *w,
                None => {
                    let filler = specials.first().copied().unwrap_or_else(|| {
                        panic!("task {task_id}: idx gap at {position} without a special write")
                    });
                    gaps += 1;
                    used[0] = true;
                    filler
                }
            };
            batch.push((w.channel.clone(), w.value.clone()));
        }
        for (w, used) in specials.iter().zip(used) {
            if !used {
                batch.push((w.channel.clone(), w.value.clone()));
            }
        }
        // The rule the batch relies on.
        for (position, (channel, _)) in batch.iter().enumerate() {
            let idx = write_idx(channel, position);
            assert!(group.iter().any(|w| w.idx == idx && &w.channel == channel));
        }
        out.push((task_id, task_path, batch));
    }
    (out, gaps)
}

#[tokio::test]
async fn re_put_of_the_python_fixture_is_byte_identical() {
    let a = flashback_testkit::pg_or_skip!();
    let b = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(repo_root().join("tests/fixtures/postgres.sql"))
        .expect("read tests/fixtures/postgres.sql");
    flashback_testkit::load_sql_dump(a.url(), &dump)
        .await
        .expect("load dump");
    let source = PostgresStore::connect(a.url()).await.expect("connect A");
    let target = new_store(&b).await;

    let (mut checkpoints, mut writes, mut gaps) = (0, 0, 0);
    for thread in source.list_threads().await.expect("threads") {
        let tuples: Vec<CheckpointTuple> = source
            .list_tuples(&ListQuery::thread(&thread.thread_id))
            .await
            .expect("list");
        // Oldest first.
        for t in tuples.iter().rev() {
            let h = &t.header;
            let metadata = h.metadata.as_object().cloned().unwrap_or_default();
            target
                .put(PutRequest {
                    thread_id: &h.thread_id,
                    checkpoint_ns: &h.checkpoint_ns,
                    parent_checkpoint_id: h.parent_checkpoint_id.as_deref(),
                    checkpoint: &t.checkpoint,
                    metadata: &metadata,
                    new_versions: &t.checkpoint.channel_versions,
                })
                .await
                .unwrap_or_else(|e| panic!("put {}: {e}", h.checkpoint_id));
            checkpoints += 1;
        }
        for t in tuples.iter().rev() {
            let h = &t.header;
            let (list, filled) = batches(&t.pending_writes);
            gaps += filled;
            for (task_id, task_path, batch) in list {
                target
                    .put_writes(
                        &h.thread_id,
                        &h.checkpoint_ns,
                        &h.checkpoint_id,
                        &task_id,
                        &task_path,
                        &batch,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("put_writes {}: {e}", h.checkpoint_id));
            }
            writes += t.pending_writes.len();
        }
    }
    assert!(checkpoints > 300, "re-put only {checkpoints} checkpoints");
    assert!(writes > 1000, "re-put only {writes} writes");
    eprintln!("re-put {checkpoints} checkpoints and {writes} writes ({gaps} idx gaps filled)");

    let pool_a = a.pool().await.expect("pool A");
    let pool_b = b.pool().await.expect("pool B");
    let (ta, tb) = (dump_tables(&pool_a).await, dump_tables(&pool_b).await);
    for ((table, rows_a), (_, rows_b)) in ta.iter().zip(&tb) {
        if rows_a != rows_b {
            let only_a: Vec<_> = rows_a.iter().filter(|r| !rows_b.contains(r)).collect();
            let only_b: Vec<_> = rows_b.iter().filter(|r| !rows_a.contains(r)).collect();
            panic!(
                "{table} differs: {} rows in A (Python), {} in B (ours)\nfirst only in A: {}\nfirst only in B: {}",
                rows_a.len(),
                rows_b.len(),
                only_a.first().map_or("-".into(), |r| short(r)),
                only_b.first().map_or("-".into(), |r| short(r)),
            );
        }
        assert!(!rows_a.is_empty(), "{table} is empty");
    }
    source.close().await;
    target.close().await;
}

// ------------------------------------------------------------------------------------------
// 3. put / put_writes / delete_thread behaviour

#[tokio::test]
async fn put_stores_pythons_layout_and_reads_see_it() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");

    let v1 = versions(&[("a", 1), ("l", 1), ("n", 1), ("bs", 1)]);
    let c1 = checkpoint(
        "c1",
        vec![
            ("a", s("x")),
            ("l", list(&[1, 2])),
            ("n", Decoded::Null),
            ("bs", Decoded::Bytes(b"raw".to_vec())),
        ],
        &v1,
    );
    let meta = md(json!({"source": "input", "step": -1, "writes": {"x": 1}, "run": "r\u{0}1"}));
    put(&store, "t1", None, &c1, &meta, &v1)
        .await
        .expect("put c1");

    assert_eq!(
        texts(
            &pool,
            "SELECT concat_ws('|', checkpoint_id, coalesce(parent_checkpoint_id, '<null>'), \
             coalesce(type, '<null>'), checkpoint::text, metadata::text) FROM checkpoints"
        )
        .await,
        vec![concat!(
            "c1|<null>|<null>|",
            r#"{"v": 4, "id": "c1", "ts": "2026-01-01T00:00:00.000000+00:00", "versions_seen": {"node": {"a": "00000000000000000000000000000001.0.5001"}, "__input__": {}}, "#,
            r#""channel_values": {"a": "x", "n": null}, "#,
            r#""channel_versions": {"a": "00000000000000000000000000000001.0.5001", "l": "00000000000000000000000000000001.0.5001", "n": "00000000000000000000000000000001.0.5001", "bs": "00000000000000000000000000000001.0.5001"}, "#,
            r#""updated_channels": ["a"]}|{"run": "r1", "step": -1, "source": "input"}"#
        )]
    );
    assert_eq!(
        texts(
            &pool,
            "SELECT concat_ws('|', channel, version, type, encode(blob, 'hex')) \
             FROM checkpoint_blobs ORDER BY channel"
        )
        .await,
        vec![
            "bs|00000000000000000000000000000001.0.5001|bytes|726177",
            "l|00000000000000000000000000000001.0.5001|msgpack|920102",
        ]
    );

    // c2: `l` gets a new value at a version that already has a blob (first writer wins);
    // `bs` is unchanged (not in new_versions, so no new blob row).
    let v2 = versions(&[("a", 2), ("l", 1), ("n", 1), ("bs", 1)]);
    let c2 = checkpoint(
        "c2",
        vec![
            ("a", int(7)),
            ("l", list(&[9])),
            ("n", Decoded::Null),
            ("bs", Decoded::Bytes(b"raw".to_vec())),
        ],
        &v2,
    );
    let new = versions(&[("a", 2), ("l", 1)]);
    put(&store, "t1", Some("c1"), &c2, &md(json!({"step": 0})), &new)
        .await
        .expect("put c2");
    assert_eq!(
        count(&pool, "SELECT count(*) FROM checkpoint_blobs").await,
        2
    );
    let latest = store
        .get_tuple("t1", "", None)
        .await
        .expect("get")
        .expect("some");
    assert_eq!(latest.header.checkpoint_id, "c2");
    assert_eq!(latest.header.parent_checkpoint_id.as_deref(), Some("c1"));
    assert_eq!(latest.checkpoint.value("a").map(|v| &**v), Some(&int(7)));
    assert_eq!(
        latest.checkpoint.value("l").map(|v| &**v),
        Some(&list(&[1, 2]))
    );
    assert_eq!(
        latest.checkpoint.value("bs").map(|v| &**v),
        Some(&Decoded::Bytes(b"raw".to_vec()))
    );

    // Re-putting a checkpoint updates its document and metadata, not its parent.
    put(
        &store,
        "t1",
        Some("other"),
        &c2,
        &md(json!({"step": 5})),
        &new,
    )
    .await
    .expect("re-put c2");
    let latest = store
        .get_tuple("t1", "", None)
        .await
        .expect("get")
        .expect("some");
    assert_eq!(latest.header.metadata, json!({"step": 5}));
    assert_eq!(latest.header.parent_checkpoint_id.as_deref(), Some("c1"));
    assert_eq!(count(&pool, "SELECT count(*) FROM checkpoints").await, 2);

    // A DeltaChannel snapshot: a blob plus the inline marker `true`; reads give the snapshot.
    let snapshot = Decoded::Msgpack(Value::DeltaSnapshot(Box::new(Value::Array(vec![
        Value::Int(1),
    ]))));
    let v3 = versions(&[("d", 3)]);
    let c3 = checkpoint("c3", vec![("d", snapshot.clone())], &v3);
    put(&store, "t1", Some("c2"), &c3, &Map::new(), &v3)
        .await
        .expect("put c3");
    assert_eq!(
        texts(
            &pool,
            "SELECT (checkpoint->'channel_values')::text FROM checkpoints WHERE checkpoint_id = 'c3'"
        )
        .await,
        vec![r#"{"d": true}"#]
    );
    let c3_read = store
        .get_tuple("t1", "", Some("c3"))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(c3_read.checkpoint.value("d").map(|v| &**v), Some(&snapshot));
    store.close().await;
}

#[tokio::test]
async fn put_writes_replace_and_ignore_semantics() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let v = versions(&[("a", 1)]);
    put(
        &store,
        "t",
        None,
        &checkpoint("c1", vec![("a", s("x"))], &v),
        &Map::new(),
        &v,
    )
    .await
    .expect("put");
    let w = |c: &str, d: Decoded| (c.to_owned(), d);
    let rows = || {
        texts(
            &pool,
            "SELECT concat_ws('|', task_id, task_path, idx, channel, type, encode(blob, 'hex')) \
             FROM checkpoint_writes ORDER BY task_id, idx",
        )
    };

    // Mixed batch (IGNORE): idx = position, specials at their fixed idx; None is 'null', ''.
    store
        .put_writes(
            "t",
            "",
            "c1",
            "task",
            "~p",
            &[
                w("a", int(1)),
                w("__interrupt__", int(1)),
                w("b", Decoded::Null),
            ],
        )
        .await
        .expect("batch 1");
    assert_eq!(
        rows().await,
        vec![
            "task|~p|-3|__interrupt__|msgpack|01",
            "task|~p|0|a|msgpack|01",
            "task|~p|2|b|null|"
        ]
    );
    // A second mixed batch keeps every first writer.
    store
        .put_writes(
            "t",
            "",
            "c1",
            "task",
            "~p",
            &[w("a", int(2)), w("__interrupt__", int(2))],
        )
        .await
        .expect("batch 2");
    assert_eq!(
        rows().await[..2],
        [
            "task|~p|-3|__interrupt__|msgpack|01",
            "task|~p|0|a|msgpack|01"
        ]
    );
    // Only special channels (REPLACE): the newer write replaces the older.
    store
        .put_writes("t", "", "c1", "task", "~p", &[w("__interrupt__", int(3))])
        .await
        .expect("batch 3");
    // A special channel repeated in a REPLACE batch: the last one wins (as row-by-row upserts).
    store
        .put_writes(
            "t",
            "",
            "c1",
            "task",
            "~p",
            &[w("__error__", s("e1")), w("__error__", s("e2"))],
        )
        .await
        .expect("batch 4");
    // Another task's writes are separate rows.
    store
        .put_writes("t", "", "c1", "other", "", &[w("a", int(4))])
        .await
        .expect("batch 5");
    assert_eq!(
        rows().await,
        vec![
            "other||0|a|msgpack|04",
            "task|~p|-3|__interrupt__|msgpack|03",
            "task|~p|-1|__error__|msgpack|a26532",
            "task|~p|0|a|msgpack|01",
            "task|~p|2|b|null|",
        ]
    );
    // Reads see them, sorted by (task_path, task_id, idx).
    let t = store.get_tuple("t", "", Some("c1")).await.unwrap().unwrap();
    let seen: Vec<(String, i64, Decoded)> = t
        .pending_writes
        .into_iter()
        .map(|p| (p.task_id, p.idx, p.value))
        .collect();
    assert_eq!(
        seen,
        vec![
            ("other".into(), 0, int(4)),
            ("task".into(), -3, int(3)),
            ("task".into(), -1, s("e2")),
            ("task".into(), 0, int(1)),
            ("task".into(), 2, Decoded::Null),
        ]
    );
    // An empty batch writes nothing.
    store
        .put_writes("t", "", "c1", "task", "", &[])
        .await
        .expect("empty");
    assert_eq!(rows().await.len(), 5);
    store.close().await;
}

#[tokio::test]
async fn nul_characters_and_failures_write_nothing() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let v = versions(&[("text", 1), ("l", 1)]);
    let all_rows =
        "SELECT (SELECT count(*) FROM checkpoints) + (SELECT count(*) FROM checkpoint_blobs) \
                    + (SELECT count(*) FROM checkpoint_writes)";

    // A NUL in an inline string: JSONB cannot hold it (Python fails too).
    let bad = checkpoint("c1", vec![("text", s("a\u{0}b")), ("l", list(&[1]))], &v);
    let err = put(&store, "t", None, &bad, &Map::new(), &v)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidInput(m) if m.contains("\"text\"") && m.contains("NUL")),
        "{err}"
    );
    // A NUL nested in metadata (only top-level strings are stripped).
    let good = checkpoint("c1", vec![("text", s("ab")), ("l", list(&[1]))], &v);
    let err = put(
        &store,
        "t",
        None,
        &good,
        &md(json!({"x": {"y": "a\u{0}"}})),
        &v,
    )
    .await
    .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidInput(m) if m.contains("x.y")),
        "{err}"
    );
    // NaN cannot be stored inline either.
    let nan = checkpoint(
        "c1",
        vec![
            ("text", Decoded::Msgpack(Value::Float(f64::NAN))),
            ("l", list(&[1])),
        ],
        &v,
    );
    let err = put(&store, "t", None, &nan, &Map::new(), &v)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, StoreError::InvalidInput(m) if m.contains("NaN")),
        "{err}"
    );
    assert_eq!(count(&pool, all_rows).await, 0);

    // A failure after the blobs were inserted rolls the whole put back.
    exec(
        &pool,
        "ALTER TABLE checkpoints ADD CONSTRAINT no_poison CHECK (checkpoint_id <> 'poison')",
    )
    .await;
    let poison = checkpoint("poison", vec![("l", list(&[1]))], &v);
    let err = put(&store, "t", None, &poison, &Map::new(), &v)
        .await
        .unwrap_err();
    assert!(matches!(err, StoreError::Query(_)), "{err}");
    assert_eq!(count(&pool, all_rows).await, 0);

    // The valid checkpoint goes in.
    put(&store, "t", None, &good, &Map::new(), &v)
        .await
        .expect("put");
    assert_eq!(count(&pool, all_rows).await, 2);
    store.close().await;
}

#[tokio::test]
async fn delete_thread_removes_one_thread_only() {
    let pg = flashback_testkit::pg_or_skip!();
    let store = new_store(&pg).await;
    let pool = pg.pool().await.expect("pool");
    let v = versions(&[("l", 1)]);
    for thread in ["keep", "drop"] {
        for (id, parent, ns) in [
            ("c1", None, ""),
            ("c2", Some("c1"), ""),
            ("s1", None, "sub:1"),
        ] {
            let cp = checkpoint(id, vec![("l", list(&[1]))], &v);
            store
                .put(PutRequest {
                    thread_id: thread,
                    checkpoint_ns: ns,
                    parent_checkpoint_id: parent,
                    checkpoint: &cp,
                    metadata: &Map::new(),
                    new_versions: &v,
                })
                .await
                .expect("put");
            store
                .put_writes(thread, ns, id, "task", "", &[("a".into(), int(1))])
                .await
                .expect("put_writes");
        }
    }
    let per_thread = "SELECT count(*) FROM (SELECT thread_id FROM checkpoints UNION ALL \
                      SELECT thread_id FROM checkpoint_blobs UNION ALL \
                      SELECT thread_id FROM checkpoint_writes) r WHERE thread_id = ";
    let before = count(&pool, &format!("{per_thread}'keep'")).await;
    assert_eq!(before, 3 + 2 + 3);
    store.delete_thread("drop").await.expect("delete");
    assert_eq!(count(&pool, &format!("{per_thread}'drop'")).await, 0);
    assert_eq!(count(&pool, &format!("{per_thread}'keep'")).await, before);
    assert!(store.get_tuple("drop", "", None).await.unwrap().is_none());
    let threads: Vec<String> = store
        .list_threads()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.thread_id)
        .collect();
    assert_eq!(threads, vec!["keep"]);
    // Deleting an unknown thread is fine.
    store.delete_thread("nobody").await.expect("delete nothing");
    store.close().await;
}

//! The Postgres write side (`CheckpointSaver for PostgresStore`) against real databases:
//! `setup()`. It creates exactly the schema Python's `PostgresSaver.setup()` creates (the
//! expected facts below were taken once from a database set up by
//! langgraph-checkpoint-postgres 3.2.0; Python is not needed to run these tests), refuses
//! tables of an unknown layout, and upgrades an older schema.
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/saver.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::saver::*;
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointSaver, CheckpointStore, StoreError};
use sqlx::PgPool;

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
    assert!(store.schema().has_task_path && !store.schema().shallow());
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

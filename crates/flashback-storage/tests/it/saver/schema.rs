//! PostgresStore against hand-built databases: schema detection. A full schema (with and
//! without `task_path`) and the shallow saver's schema are read; missing tables or an unknown
//! layout are reported as unsupported.
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/store.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::store::*;
use flashback_codec::Value;
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery, StoreError};
use serde_json::json;

#[tokio::test]
async fn schema_full_is_detected() {
    let Some((pg, _conn)) = full_db(9).await else {
        return;
    };
    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let schema = store.schema();
    assert!(!schema.shallow());
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
    let boxed = flashback_storage::open(pg.url(), flashback_storage::Read::default())
        .await
        .unwrap();
    assert!(!boxed.schema().shallow());
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
    assert!(schema.shallow());
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

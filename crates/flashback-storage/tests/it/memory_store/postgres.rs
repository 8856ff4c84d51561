//! LangGraph's memory Store in Postgres, on databases made here with the tables
//! `PostgresStore.setup()` creates. pgvector is not needed: `store_vectors.embedding` is a
//! `real[]` here (pgvector's `vector(N)` is read with `vector_dims`, which these tests cannot
//! reach without the extension).
//!
//! One fresh database per test, from flashback-testkit. Skipped when no PostgreSQL is
//! available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_storage::memory::{self, Page};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointSaver, CheckpointStore, Holds, StoreError};
use flashback_testkit::pg_or_skip;
use serde_json::json;
use sqlx::{AssertSqlSafe, PgPool};

/// `PostgresStore.setup()`'s tables (migrations 0–3), with vectors as `real[]`.
const STORE: &str = "
CREATE TABLE store_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store (
    prefix text NOT NULL, key text NOT NULL, value jsonb NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    expires_at TIMESTAMP WITH TIME ZONE, ttl_minutes INT,
    PRIMARY KEY (prefix, key));
INSERT INTO store_migrations VALUES (0), (1), (2), (3);
CREATE TABLE vector_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store_vectors (
    prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, embedding real[],
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE);
INSERT INTO vector_migrations VALUES (0), (1);
INSERT INTO store (prefix, key, value, created_at, updated_at) VALUES
    ('users.u-1', 'prefs', '{\"theme\": \"Dark\"}', '2025-01-01 10:00:00+00', '2025-01-02 10:00:00.25+00'),
    ('users.u-1', 'notes', '{\"text\": \"likes tea\"}', '2025-01-01 10:00:00+00', '2025-01-03 10:00:00+00'),
    ('users', 'root', '{\"x\": [1, 2]}', '2025-01-01 10:00:00+00', '2025-01-04 10:00:00+00'),
    ('users2', 'other', '{\"theme\": \"dark\"}', '2025-01-01 10:00:00+00', '2025-01-05 10:00:00+00');
UPDATE store SET expires_at = '2000-01-01 00:00:00+00', ttl_minutes = 2 WHERE key = 'root';
INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES
    ('users.u-1', 'notes', '$', '{1,2,3,4,5,6,7,8}'), ('users.u-1', 'notes', 'text', '{1,2,3,4,5,6,7,8}');";

fn ns(labels: &[&str]) -> Vec<String> {
    labels.iter().map(|s| (*s).to_owned()).collect()
}

async fn exec(pool: &PgPool, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

#[tokio::test]
async fn a_store_only_database_opens_without_threads_and_reads_like_python() {
    let pg = pg_or_skip!();
    let pool = pg.pool().await.expect("pool");
    exec(&pool, STORE).await;
    let store = PostgresStore::connect(pg.url())
        .await
        .expect("store-only opens");
    assert_eq!(store.schema().holds, Holds::Store);
    assert!(store.schema().description.contains("memory store only"));
    assert!(store.list_threads().await.expect("threads").is_empty());
    let m = store.memory().expect("memory");
    assert!(m.schema().has_ttl() && m.schema().has_vectors);
    assert_eq!(m.schema().migration_version, Some(3));
    let s = m.summary().await.expect("summary");
    assert_eq!((s.items, s.namespaces), (4, 3));

    let users = m
        .list(&ns(&["users"]), Page::default())
        .await
        .expect("list");
    let keys: Vec<&str> = users.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["root", "notes", "prefs"], "newest first, not users2");
    let prefs = &users[2];
    assert_eq!(
        prefs.created_at.as_deref(),
        Some("2025-01-01T10:00:00+00:00")
    );
    assert_eq!(
        prefs.updated_at.as_deref(),
        Some("2025-01-02T10:00:00.250000+00:00")
    );
    let root = &users[0];
    assert_eq!(
        root.expires_at.as_deref(),
        Some("2000-01-01T00:00:00+00:00")
    );
    assert_eq!((root.ttl_minutes, root.expired), (Some(2.0), true));
    let notes = m
        .get(&ns(&["users", "u-1"]), "notes")
        .await
        .expect("get")
        .expect("notes");
    let dims: Vec<(&str, Option<u32>)> = notes
        .vectors
        .iter()
        .map(|v| (v.field.as_str(), v.dims))
        .collect();
    assert_eq!(dims, [("$", Some(8)), ("text", Some(8))]);
    assert!(m.get(&ns(&["users"]), "nope").await.expect("get").is_none());

    let dark = m
        .search(&[], "\"THEME\":\"DARK\"", Page::default())
        .await
        .expect("search");
    let found: Vec<&str> = dark.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(found, ["other", "prefs"]);
    let one = m
        .search(
            &ns(&["users"]),
            "e",
            Page {
                limit: Some(1),
                offset: 1,
            },
        )
        .await
        .expect("paged");
    assert_eq!(one.len(), 1);
    assert_eq!(one[0].key, "prefs");
    let page = m
        .list(
            &[],
            Page {
                limit: Some(2),
                offset: 1,
            },
        )
        .await
        .expect("page");
    assert_eq!(
        page.iter().map(|i| i.key.as_str()).collect::<Vec<_>>(),
        ["root", "notes"]
    );

    let tree = m.namespaces(&[]).await.expect("namespaces");
    let counts: Vec<(String, u64)> = tree
        .iter()
        .map(|n| (n.namespace.join("/"), n.items))
        .collect();
    assert_eq!(
        counts,
        [
            ("users".to_owned(), 1),
            ("users/u-1".to_owned(), 2),
            ("users2".to_owned(), 1)
        ]
    );
}

#[tokio::test]
async fn put_keeps_created_at_and_delete_takes_the_vectors() {
    let pg = pg_or_skip!();
    let pool = pg.pool().await.expect("pool");
    exec(&pool, STORE).await;
    let w = memory::open_writable(pg.url()).await.expect("writable");

    let done = w
        .put(
            &ns(&["users", "u-1"]),
            "notes",
            &json!({"text": "likes coffee"}),
            Some(1.5),
        )
        .await
        .expect("update");
    assert!(!done.created);
    assert_eq!(done.removed_vectors, ["$", "text"]);
    assert_eq!(
        done.item.created_at.as_deref(),
        Some("2025-01-01T10:00:00+00:00")
    );
    assert_ne!(
        done.item.updated_at.as_deref(),
        Some("2025-01-03T10:00:00+00:00")
    );
    // ttl_minutes is an INT column in Python's Postgres schema: 1.5 is stored as 2.
    assert_eq!(done.item.ttl_minutes, Some(2.0));
    let (ttl_secs, value): (f64, String) = sqlx::query_as(
        "SELECT extract(epoch FROM expires_at - updated_at)::float8, value::text FROM store \
         WHERE prefix = 'users.u-1' AND key = 'notes'",
    )
    .fetch_one(&pool)
    .await
    .expect("row");
    assert!(
        (ttl_secs - 90.0).abs() < 1.0,
        "expires 1.5 minutes later: {ttl_secs}"
    );
    assert_eq!(value, r#"{"text": "likes coffee"}"#);

    let created = w
        .put(&ns(&["new"]), "k", &json!({"a": 1}), None)
        .await
        .expect("put");
    assert!(created.created && created.item.expires_at.is_none());
    assert_eq!(created.item.created_at, created.item.updated_at);

    exec(
        &pool,
        "INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES ('users.u-1', 'prefs', '$', '{1}')",
    )
    .await;
    let gone = w
        .delete(&ns(&["users", "u-1"]), "prefs")
        .await
        .expect("delete")
        .expect("existed");
    assert_eq!(gone.removed_vectors, 1);
    let left: i64 = sqlx::query_scalar(
        "SELECT (SELECT count(*) FROM store WHERE key = 'prefs') + (SELECT count(*) FROM store_vectors WHERE key = 'prefs')",
    )
    .fetch_one(&pool)
    .await
    .expect("count");
    assert_eq!(left, 0);
    assert!(w
        .delete(&ns(&["users", "u-1"]), "prefs")
        .await
        .expect("again")
        .is_none());
    let e = w
        .put(&ns(&["a"]), "k", &json!([1]), None)
        .await
        .expect_err("not an object");
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
}

#[tokio::test]
async fn a_mixed_database_holds_both_and_one_with_neither_is_refused() {
    let pg = pg_or_skip!();
    let pool = pg.pool().await.expect("pool");
    match PostgresStore::connect(pg.url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(found.contains("memory store a table `store`"), "{found}")
        }
        Ok(_) => panic!("an empty database opened"),
        Err(e) => panic!("unexpected {e}"),
    }
    exec(&pool, STORE).await;
    let saver = PostgresStore::connect_for_setup(pg.url())
        .await
        .expect("connect");
    saver
        .setup()
        .await
        .expect("checkpoint tables beside the store");
    assert_eq!(saver.schema().holds, Holds::Mixed);
    let store = flashback_storage::open(pg.url(), flashback_storage::Read::default())
        .await
        .expect("open");
    assert_eq!(store.schema().holds, Holds::Mixed);
    assert!(store.schema().description.contains("with a memory store"));
    assert_eq!(
        store
            .memory()
            .expect("store")
            .summary()
            .await
            .expect("n")
            .items,
        4
    );
}

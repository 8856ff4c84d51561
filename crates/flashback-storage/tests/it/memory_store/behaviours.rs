//! LangGraph's memory Store, the behaviours both backends share: one database per test holding
//! `setup()`'s tables (each backend's own, from `tables.rs`) and the same four items, read and
//! written through the backend-neutral API. What only one backend does is in its file.

use flashback_storage::memory::{self, Page};
use flashback_storage::{CheckpointStore, Holds, Read, StoreError};
use flashback_testkit::backends::{Backend, Scratch};
use flashback_testkit::for_each_backend;
use serde_json::json;

use super::tables;

/// The items, in the text both backends take; the vectors are each backend's own type.
const ITEMS: &str = "
INSERT INTO store (prefix, key, value, created_at, updated_at) VALUES
    ('users.u-1', 'prefs', '{\"theme\":\"Dark\"}', '2025-01-01 10:00:00{tz}', '2025-01-02 10:00:00.25{tz}'),
    ('users.u-1', 'notes', '{\"text\":\"likes tea\"}', '2025-01-01 10:00:00{tz}', '2025-01-03 10:00:00{tz}'),
    ('users', 'root', '{\"x\":[1,2]}', '2025-01-01 10:00:00{tz}', '2025-01-04 10:00:00{tz}'),
    ('users2', 'other', '{\"theme\":\"dark\"}', '2025-01-01 10:00:00{tz}', '2025-01-05 10:00:00{tz}');
UPDATE store SET expires_at = '2000-01-01 00:00:00+00:00', ttl_minutes = 2 WHERE key = 'root';
INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES
    ('users.u-1', 'notes', '$', {v8}), ('users.u-1', 'notes', 'text', {v8})";

pub(super) fn ns(labels: &[&str]) -> Vec<String> {
    labels.iter().map(|s| (*s).to_owned()).collect()
}

/// Every namespace (labels joined by `/`) with its number of items.
pub(super) async fn namespace_counts(m: &dyn memory::MemoryRead) -> Vec<(String, u64)> {
    let tree = m.namespaces(&[]).await.expect("namespaces");
    tree.iter()
        .map(|n| (n.namespace.join("/"), n.items))
        .collect()
}

/// Runs each statement of `sql` (the scratch's `execute` takes one at a time).
pub(super) async fn run(db: &Scratch, sql: &str) {
    for statement in sql.split(';').filter(|s| !s.trim().is_empty()) {
        db.execute(statement).await;
    }
}

/// A vector literal of `n` floats in the backend's column type.
fn vector(backend: Backend, n: usize) -> String {
    match backend {
        Backend::Sqlite => {
            let hex: String = (0..n)
                .flat_map(|i| (i as f32).to_le_bytes())
                .map(|b| format!("{b:02X}"))
                .collect();
            format!("X'{hex}'")
        }
        Backend::Postgres => {
            let floats: Vec<String> = (1..=n).map(|i| i.to_string()).collect();
            format!("'{{{}}}'", floats.join(","))
        }
    }
}

/// A database with the memory store's tables and the four items (no checkpoint tables).
pub(super) async fn store_db(backend: Backend) -> Scratch {
    let db = backend.scratch().await;
    let (tables, tz) = match backend {
        Backend::Sqlite => (tables::SQLITE, ""),
        Backend::Postgres => (tables::POSTGRES, "+00"),
    };
    for sql in tables {
        run(&db, sql).await;
    }
    let items = ITEMS
        .replace("{tz}", tz)
        .replace("{v8}", &vector(backend, 8));
    run(&db, &items).await;
    db
}

/// `setup()`'s last migration: SQLite's store has one more than Postgres's.
fn migration_version(backend: Backend) -> i64 {
    match backend {
        Backend::Sqlite => 4,
        Backend::Postgres => 3,
    }
}

async fn a_store_only_database_opens_without_threads_and_reads_like_python(backend: Backend) {
    let db = store_db(backend).await;
    let store = flashback_storage::open(db.location(), Read::default())
        .await
        .expect("store-only opens");
    assert_eq!(store.schema().holds, Holds::Store);
    assert!(store.schema().description.contains("memory store only"));
    assert!(store.list_threads().await.expect("threads").is_empty());
    let m = store.memory().expect("memory");
    assert!(m.schema().has_ttl() && m.schema().has_vectors);
    assert_eq!(
        m.schema().migration_version,
        Some(migration_version(backend))
    );
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

    assert_eq!(
        namespace_counts(m).await,
        [
            ("users".to_owned(), 1),
            ("users/u-1".to_owned(), 2),
            ("users2".to_owned(), 1)
        ]
    );
}
for_each_backend!(a_store_only_database_opens_without_threads_and_reads_like_python: sqlite, postgres);

async fn put_and_delete_write_and_take_the_vectors(backend: Backend) {
    let db = store_db(backend).await;
    let w = flashback_storage::open_memory_writable(db.location())
        .await
        .expect("writable");

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
    assert!(done.item.vectors.is_empty());
    assert_eq!(
        db.query_i64("SELECT count(*) FROM store_vectors WHERE key = 'notes'")
            .await,
        0
    );
    assert_ne!(
        done.item.updated_at.as_deref(),
        Some("2025-01-03T10:00:00+00:00")
    );
    match backend {
        // Python's Postgres update keeps created_at; ttl_minutes is an INT column: 1.5 is
        // stored as 2, and the row expires 1.5 minutes after its update.
        Backend::Postgres => {
            assert_eq!(
                done.item.created_at.as_deref(),
                Some("2025-01-01T10:00:00+00:00")
            );
            assert_eq!(done.item.ttl_minutes, Some(2.0));
            let ttl_ms = db
                .query_i64(
                    "SELECT extract(epoch FROM expires_at - updated_at) * 1000 FROM store \
                     WHERE prefix = 'users.u-1' AND key = 'notes'",
                )
                .await;
            assert!(
                (ttl_ms - 90_000).abs() < 1000,
                "expires 1.5 minutes later: {ttl_ms} ms"
            );
            assert_eq!(
                db.query_i64(
                    "SELECT count(*) FROM store WHERE prefix = 'users.u-1' AND key = 'notes' \
                     AND value::text = '{\"text\": \"likes coffee\"}'"
                )
                .await,
                1
            );
        }
        // `INSERT OR REPLACE` replaces created_at too (sqlite.rs checks the row's text).
        Backend::Sqlite => {
            assert_ne!(
                done.item.created_at.as_deref(),
                Some("2025-01-01T10:00:00+00:00")
            );
            assert_eq!(done.item.ttl_minutes, Some(1.5));
        }
    }

    let created = w
        .put(&ns(&["new"]), "k", &json!({"a": 1}), None)
        .await
        .expect("put");
    assert!(created.created && created.item.expires_at.is_none());
    assert_eq!(created.item.created_at, created.item.updated_at);

    db.execute(&format!(
        "INSERT INTO store_vectors (prefix, key, field_name, embedding) \
         VALUES ('users.u-1', 'prefs', '$', {})",
        vector(backend, 1)
    ))
    .await;
    let gone = w
        .delete(&ns(&["users", "u-1"]), "prefs")
        .await
        .expect("delete")
        .expect("existed");
    assert_eq!(gone.removed_vectors, 1);
    assert_eq!(gone.item.value, json!({"theme": "Dark"}));
    let left = db
        .query_i64(
            "SELECT (SELECT count(*) FROM store WHERE key = 'prefs') \
             + (SELECT count(*) FROM store_vectors WHERE key = 'prefs')",
        )
        .await;
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
for_each_backend!(put_and_delete_write_and_take_the_vectors: sqlite, postgres);

async fn a_mixed_database_holds_both(backend: Backend) {
    let db = store_db(backend).await;
    match backend {
        Backend::Sqlite => {
            flashback_storage::sqlite::SqliteSaver::create(db.location())
                .await
                .expect("checkpoint tables beside the store");
        }
        Backend::Postgres => {
            use flashback_storage::CheckpointSaver;
            let saver =
                flashback_storage::postgres::PostgresStore::connect_for_setup(db.location())
                    .await
                    .expect("connect");
            saver
                .setup()
                .await
                .expect("checkpoint tables beside the store");
            assert_eq!(saver.schema().holds, Holds::Mixed);
        }
    }
    let store = flashback_storage::open(db.location(), Read::default())
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
for_each_backend!(a_mixed_database_holds_both: sqlite, postgres);

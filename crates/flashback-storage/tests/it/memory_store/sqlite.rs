//! LangGraph's memory Store in SQLite files made here with the tables `SqliteStore.setup()`
//! creates (the interop test `tests/interop/store_test.py` checks against the real Python), and
//! what only SQLite does (the shared behaviours, run here too, are in `behaviours.rs`):
//! store-only files open, reads match Python's namespace semantics and never write, a bad row
//! damages only itself, and put/delete write the rows Python writes.

use flashback_storage::memory::Page;
use flashback_storage::sqlite::SqliteStore;
use flashback_storage::{CheckpointStore, Holds, StoreError};
use rusqlite::{params, Connection};
use serde_json::json;

use super::behaviours::{namespace_counts, ns};
use super::tables::{STORE, VECTORS};
use std::path::{Path, PathBuf};

/// A store file with items in nested namespaces, one with a TTL, one with vectors, one bad.
fn store_file(dir: &Path) -> PathBuf {
    let path = dir.join("memory.sqlite");
    let conn = Connection::open(&path).expect("create");
    conn.execute_batch(STORE).expect("store");
    conn.execute_batch(VECTORS).expect("vectors");
    let put = |prefix: &str, key: &str, value: &[u8], updated: &str| {
        conn.execute(
            "INSERT INTO store (prefix, key, value, created_at, updated_at) VALUES (?1, ?2, ?3, '2025-01-01 10:00:00', ?4)",
            params![prefix, key, value, updated],
        )
        .expect("put");
    };
    put(
        "users.u-1",
        "prefs",
        br#"{"theme":"Dark","n":1}"#,
        "2025-01-02 10:00:00",
    );
    put(
        "users.u-1",
        "notes",
        br#"{"text":"likes tea"}"#,
        "2025-01-03 10:00:00",
    );
    put(
        "users.u-2",
        "prefs",
        br#"{"theme":"light"}"#,
        "2025-01-04 10:00:00",
    );
    put("users", "root", br#"{"x":[1,2]}"#, "2025-01-05 10:00:00");
    put(
        "users2",
        "other",
        br#"{"theme":"dark"}"#,
        "2025-01-06 10:00:00",
    );
    put("docs", "bad", b"{not json", "2025-01-07 10:00:00");
    conn.execute(
        "UPDATE store SET expires_at = '2000-01-01 00:00:00.5+00:00', ttl_minutes = 1.5 \
         WHERE prefix = 'users.u-2'",
        [],
    )
    .expect("ttl");
    let floats: Vec<u8> = (0..8).flat_map(|i| (i as f32).to_le_bytes()).collect();
    for field in ["$", "text"] {
        conn.execute(
            "INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES ('users.u-1', 'notes', ?1, ?2)",
            params![field, floats],
        )
        .expect("vector");
    }
    path
}

fn bytes_of(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .map(|e| {
            let p = e.expect("entry").path();
            (p.display().to_string(), std::fs::read(&p).expect("read"))
        })
        .collect();
    files.sort();
    files
}

#[tokio::test]
async fn a_store_only_file_opens_without_threads_and_reads_like_python() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = store_file(dir.path());
    let before = bytes_of(dir.path());
    let store = SqliteStore::open(path.to_str().expect("utf-8"))
        .await
        .expect("a store-only file opens");
    assert_eq!(store.schema().holds, Holds::Store);
    assert!(
        store.schema().description.contains("memory store only"),
        "{}",
        store.schema().description
    );
    assert!(store.list_threads().await.expect("threads").is_empty());
    let m = store.memory().expect("the memory store");
    assert!(m.schema().has_ttl() && m.schema().has_vectors);
    assert_eq!(m.schema().migration_version, Some(4));
    let summary = m.summary().await.expect("summary");
    assert_eq!((summary.items, summary.namespaces), (6, 5));

    // Newest update first; `users` matches whole labels only (not `users2`).
    let all = m.list(&[], Page::default()).await.expect("list");
    let keys: Vec<&str> = all.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(keys, ["bad", "other", "root", "prefs", "notes", "prefs"]);
    let users = m
        .list(&ns(&["users"]), Page::default())
        .await
        .expect("users");
    let names: Vec<String> = users
        .iter()
        .map(|i| format!("{}/{}", i.namespace.join("."), i.key))
        .collect();
    assert_eq!(
        names,
        [
            "users/root",
            "users.u-2/prefs",
            "users.u-1/notes",
            "users.u-1/prefs"
        ]
    );
    let page = m
        .list(
            &ns(&["users"]),
            Page {
                limit: Some(2),
                offset: 1,
            },
        )
        .await
        .expect("page");
    assert_eq!(page.len(), 2);
    assert_eq!(page[0].key, "prefs");
    assert!(m
        .list(&ns(&["user"]), Page::default())
        .await
        .expect("none")
        .is_empty());

    // One item: ISO times, the TTL and its expiry, vectors with their dimensions.
    let notes = m
        .get(&ns(&["users", "u-1"]), "notes")
        .await
        .expect("get")
        .expect("notes");
    assert_eq!(notes.value, json!({"text": "likes tea"}));
    assert_eq!(
        notes.created_at.as_deref(),
        Some("2025-01-01T10:00:00+00:00")
    );
    assert_eq!(
        notes.updated_at.as_deref(),
        Some("2025-01-03T10:00:00+00:00")
    );
    assert_eq!((notes.expires_at.as_deref(), notes.expired), (None, false));
    let vectors: Vec<(&str, Option<u32>)> = notes
        .vectors
        .iter()
        .map(|v| (v.field.as_str(), v.dims))
        .collect();
    assert_eq!(vectors, [("$", Some(8)), ("text", Some(8))]);
    let expired = m
        .get(&ns(&["users", "u-2"]), "prefs")
        .await
        .expect("get")
        .expect("u-2");
    assert_eq!(
        expired.expires_at.as_deref(),
        Some("2000-01-01T00:00:00.500000+00:00")
    );
    assert_eq!(expired.ttl_minutes, Some(1.5));
    assert!(expired.expired);
    assert!(m.get(&ns(&["users"]), "nope").await.expect("get").is_none());

    // A value that is not JSON damages only its own item.
    let bad = all.iter().find(|i| i.key == "bad").expect("bad row listed");
    assert!(
        bad.problem
            .as_deref()
            .is_some_and(|p| p.contains("not valid JSON")),
        "{bad:?}"
    );
    assert!(all
        .iter()
        .filter(|i| i.key != "bad")
        .all(|i| i.problem.is_none()));

    // Text search: case-insensitive, in the compact JSON text, under a prefix, paged.
    let dark = m
        .search(&[], "\"THEME\":\"dark\"", Page::default())
        .await
        .expect("search");
    let found: Vec<&str> = dark.iter().map(|i| i.key.as_str()).collect();
    assert_eq!(found, ["other", "prefs"]);
    let under = m
        .search(&ns(&["users"]), "dark", Page::default())
        .await
        .expect("search");
    assert_eq!(under.len(), 1);
    let first = m
        .search(
            &[],
            "theme",
            Page {
                limit: Some(1),
                offset: 1,
            },
        )
        .await
        .expect("paged");
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].namespace, ns(&["users", "u-2"]));
    assert_eq!(
        m.search(&[], "not json", Page::default())
            .await
            .expect("raw")
            .len(),
        1
    );

    assert_eq!(
        namespace_counts(m).await,
        [
            ("docs".to_owned(), 1),
            ("users".to_owned(), 1),
            ("users/u-1".to_owned(), 2),
            ("users/u-2".to_owned(), 1),
            ("users2".to_owned(), 1)
        ]
    );
    assert_eq!(m.namespaces(&ns(&["users"])).await.expect("under").len(), 3);
    let e = m
        .list(&ns(&["a.b"]), Page::default())
        .await
        .expect_err("a dotted label");
    assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");

    drop(store);
    assert_eq!(bytes_of(dir.path()), before, "reading wrote nothing");
}

/// (A store beside checkpoint tables is a shared behaviour: `behaviours.rs`.)
#[tokio::test]
async fn checkpoint_files_hold_no_store_and_files_with_neither_are_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite");
    let cps = flashback_storage::open(
        fixture.to_str().expect("utf-8"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("fixture");
    assert_eq!(cps.schema().holds, Holds::Checkpoints);
    assert!(cps.memory().is_none());

    let other = dir.path().join("other.sqlite");
    Connection::open(&other)
        .expect("create")
        .execute_batch("CREATE TABLE store (a INTEGER); CREATE TABLE notes (b TEXT);")
        .expect("tables");
    match flashback_storage::open(
        other.to_str().expect("utf-8"),
        flashback_storage::Read::default(),
    )
    .await
    {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(found.contains("notes"), "{found}")
        }
        Ok(_) => panic!("a file with neither opened"),
        Err(e) => panic!("unexpected {e}"),
    }
}

#[tokio::test]
async fn put_and_delete_write_the_rows_python_writes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = store_file(dir.path());
    let location = path.to_str().expect("utf-8");
    let w = flashback_storage::open_memory_writable(location)
        .await
        .expect("writable");
    let conn = Connection::open(&path).expect("inspect");
    let row = |prefix: &str, key: &str| {
        conn.query_row(
            "SELECT typeof(value), CAST(value AS TEXT), created_at, updated_at, expires_at, ttl_minutes \
             FROM store WHERE prefix = ?1 AND key = ?2",
            params![prefix, key],
            |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, Option<String>>(4)?,
                    r.get::<_, Option<f64>>(5)?,
                ))
            },
        )
    };
    let vectors = |key: &str| -> i64 {
        conn.query_row(
            "SELECT count(*) FROM store_vectors WHERE prefix = 'users.u-1' AND key = ?1",
            [key],
            |r| r.get(0),
        )
        .expect("count")
    };

    // A new item with a TTL: compact JSON in a BLOB, CURRENT_TIMESTAMP, `str(datetime)`.
    let done = w
        .put(
            &ns(&["users", "u-3"]),
            "k",
            &json!({"a": "é", "b": [1, 2]}),
            Some(30.0),
        )
        .await
        .expect("put");
    assert!(done.created && done.removed_vectors.is_empty());
    let (kind, text, created, updated, expires, ttl) = row("users.u-3", "k").expect("row");
    assert_eq!(
        (kind.as_str(), text.as_str()),
        ("blob", r#"{"a":"é","b":[1,2]}"#)
    );
    assert_eq!(created, updated);
    assert_eq!(created.len(), "2025-01-01 10:00:00".len(), "{created}");
    let expires = expires.expect("expires_at");
    assert!(
        expires.ends_with("+00:00") && expires.as_bytes()[10] == b' ',
        "{expires}"
    );
    assert_eq!(ttl, Some(30.0));
    assert!(done.item.expires_at.is_some() && !done.item.expired);

    // An update replaces the row as `INSERT OR REPLACE` does (created_at too) and removes the
    // item's stale vectors; without a TTL, expires_at and ttl_minutes are NULL.
    assert_eq!(vectors("notes"), 2);
    let done = w
        .put(
            &ns(&["users", "u-1"]),
            "notes",
            &json!({"text": "likes coffee"}),
            None,
        )
        .await
        .expect("update");
    assert!(!done.created);
    assert_eq!(done.removed_vectors, ["$", "text"]);
    assert!(done.item.vectors.is_empty());
    assert_eq!(vectors("notes"), 0);
    let (_, text, created, _, expires, ttl) = row("users.u-1", "notes").expect("row");
    assert_eq!(text, r#"{"text":"likes coffee"}"#);
    assert_ne!(created, "2025-01-01 10:00:00");
    assert_eq!((expires, ttl), (None, None));

    // Bad input is refused before anything is written.
    for (namespace, value, ttl) in [
        (ns(&[]), json!({}), None),
        (ns(&["langgraph"]), json!({}), None),
        (ns(&["a.b"]), json!({}), None),
        (ns(&["a"]), json!("text"), None),
        (ns(&["a"]), json!({}), Some(-1.0)),
    ] {
        let e = w
            .put(&namespace, "k", &value, ttl)
            .await
            .expect_err("refused");
        assert!(matches!(e, StoreError::InvalidInput(_)), "{e}");
    }

    // Delete removes the item and its vectors; a second delete finds nothing.
    conn.execute(
        "INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES ('users.u-1', 'prefs', '$', x'00000000')",
        [],
    )
    .expect("vector");
    let gone = w
        .delete(&ns(&["users", "u-1"]), "prefs")
        .await
        .expect("delete")
        .expect("it existed");
    assert_eq!(gone.removed_vectors, 1);
    assert_eq!(gone.item.value, json!({"theme": "Dark", "n": 1}));
    assert!(row("users.u-1", "prefs").is_err());
    assert_eq!(vectors("prefs"), 0);
    assert!(w
        .delete(&ns(&["users", "u-1"]), "prefs")
        .await
        .expect("again")
        .is_none());

    // A file without a store is refused for writing; nothing is created.
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite");
    let copy = dir.path().join("cps.sqlite");
    std::fs::copy(fixture, &copy).expect("copy");
    match flashback_storage::open_memory_writable(copy.to_str().expect("utf-8")).await {
        Err(StoreError::UnsupportedSchema { .. }) => {}
        Err(e) => panic!("unexpected {e}"),
        Ok(_) => panic!("a file without a store opened for writing"),
    }
}

#[tokio::test]
async fn stores_from_before_the_ttl_migrations_are_read_and_written_without_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("old.sqlite");
    Connection::open(&path)
        .expect("create")
        .execute_batch(
            "CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value text NOT NULL, \
             created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, \
             PRIMARY KEY (prefix, key)); \
             INSERT INTO store (prefix, key, value) VALUES ('a', 'k', '{\"v\":1}');",
        )
        .expect("old store");
    let location = path.to_str().expect("utf-8");
    let store = flashback_storage::open(location, flashback_storage::Read::default())
        .await
        .expect("open");
    let m = store.memory().expect("store");
    assert!(!m.schema().has_ttl() && !m.schema().has_vectors);
    let items = m.list(&[], Page::default()).await.expect("list");
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].value, json!({"v": 1}));
    let w = flashback_storage::open_memory_writable(location)
        .await
        .expect("writable");
    w.put(&ns(&["a"]), "k2", &json!({"v": 2}), None)
        .await
        .expect("put");
    let e = w
        .put(&ns(&["a"]), "k3", &json!({}), Some(5.0))
        .await
        .expect_err("no TTL columns");
    assert!(e.to_string().contains("predate TTLs"), "{e}");
    assert_eq!(m.list(&[], Page::default()).await.expect("list").len(), 2);
}

#[tokio::test]
async fn a_huge_value_is_listed_by_its_size_and_read_whole_by_get() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("huge.sqlite");
    let conn = Connection::open(&path).expect("create");
    conn.execute_batch(STORE).expect("store");
    let big = format!(r#"{{"image":"{}"}}"#, "A".repeat(3 << 20));
    conn.execute(
        "INSERT INTO store (prefix, key, value) VALUES ('docs', 'scan', ?1), ('docs', 'small', '{\"a\":1}')",
        params![big],
    )
    .expect("put");
    drop(conn);
    let store = SqliteStore::open(path.to_str().expect("utf-8"))
        .await
        .expect("open");
    let m = store.memory().expect("store");
    let listed = m.list(&ns(&["docs"]), Page::default()).await.expect("list");
    let scan = listed.iter().find(|i| i.key == "scan").expect("listed");
    assert_eq!(
        scan.value["$too_large"]["bytes"],
        json!(big.len()),
        "{:.200}",
        scan.value
    );
    assert!(scan.problem.is_none());
    let small = listed.iter().find(|i| i.key == "small").expect("listed");
    assert_eq!(small.value, json!({"a": 1}));
    let found = m
        .search(&ns(&["docs"]), "AAAA", Page::default())
        .await
        .expect("search");
    assert_eq!(found.len(), 1);
    assert!(found[0].value.get("$too_large").is_some());
    let whole = m
        .get(&ns(&["docs"]), "scan")
        .await
        .expect("get")
        .expect("item");
    assert_eq!(whole.value["image"].as_str().map(str::len), Some(3 << 20));
}

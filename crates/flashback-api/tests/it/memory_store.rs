//! The memory Store through the API: what DbInfo says a database holds, the `store_*`
//! commands' JSON (the item shape the app relies on), their errors, and writes.

use crate::common;

use common::{api_in, fixture_copy, open};
use flashback_api::{DbHolds, ErrorCode, Initial, ThreadsRequest};
use rusqlite::{params, Connection};
use serde_json::{json, Value as Json};
use std::path::{Path, PathBuf};

const STORE: &str = "
CREATE TABLE store_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store (
    prefix text NOT NULL, key text NOT NULL, value text NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    expires_at TIMESTAMP, ttl_minutes REAL, PRIMARY KEY (prefix, key));
INSERT INTO store_migrations VALUES (0), (1), (2), (3), (4);
CREATE TABLE vector_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store_vectors (
    prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, embedding BLOB,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name));";

/// Store tables with four items (`into` an existing file: a mixed database).
fn add_store(path: &Path) {
    let conn = Connection::open(path).expect("open");
    conn.execute_batch(STORE).expect("store");
    let put = |prefix: &str, key: &str, value: &[u8], updated: &str| {
        conn.execute(
            "INSERT INTO store (prefix, key, value, created_at, updated_at) VALUES (?1, ?2, ?3, '2025-01-01 00:00:00', ?4)",
            params![prefix, key, value, updated],
        )
        .expect("put");
    };
    put(
        "users.u-1",
        "prefs",
        br#"{"theme":"dark"}"#,
        "2025-01-01 00:00:01",
    );
    put("users.u-1", "ttl", br#"{"n":1}"#, "2025-01-01 00:00:02");
    put(
        "users.u-2",
        "vec",
        br#"{"text":"hi"}"#,
        "2025-01-01 00:00:03",
    );
    put("users.u-2", "bad", b"[oops", "2025-01-01 00:00:04");
    conn.execute(
        "UPDATE store SET expires_at = '2999-01-01 00:00:00+00:00', ttl_minutes = 5 WHERE key = 'ttl'",
        [],
    )
    .expect("ttl");
    conn.execute(
        "INSERT INTO store_vectors (prefix, key, field_name, embedding) VALUES ('users.u-2', 'vec', 'text', ?1)",
        [vec![0u8; 32]],
    )
    .expect("vector");
}

fn store_only(dir: &Path) -> PathBuf {
    let path = dir.join("memory.sqlite");
    add_store(&path);
    path
}

async fn call(api: &flashback_api::Api, command: &str, req: Json) -> Result<Json, ErrorCode> {
    api.dispatch(command, &json!({ "req": req }))
        .await
        .map_err(|e| e.code)
}

fn keys(v: &Json) -> Vec<&str> {
    let mut k: Vec<&str> = v
        .as_object()
        .expect("object")
        .keys()
        .map(String::as_str)
        .collect();
    k.sort_unstable();
    k
}

#[tokio::test]
async fn a_store_only_database_shows_its_items_in_the_documented_shape() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = store_only(dir.path());
    let api = api_in(dir.path(), Initial::None);
    let info = open(&api, path.to_str().expect("utf-8")).await;
    assert_eq!(info.holds, DbHolds::Store);
    assert!(info.schema.contains("memory store only"), "{}", info.schema);
    let s = info.store.clone().expect("a store summary");
    assert_eq!(
        (s.items, s.namespaces, s.vectors, s.ttl),
        (4, 2, true, true)
    );
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: info.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    assert!(threads.is_empty());

    let db = info.db.clone();
    let list = call(&api, "store_list", json!({"db": db, "prefix": ["users"]}))
        .await
        .expect("list");
    let items = list.as_array().expect("array");
    let by_key = |k: &str| items.iter().find(|i| i["key"] == k).expect(k);
    assert_eq!(
        items
            .iter()
            .map(|i| i["key"].as_str().expect("key"))
            .collect::<Vec<_>>(),
        ["bad", "vec", "ttl", "prefs"]
    );
    let prefs = by_key("prefs");
    assert_eq!(
        keys(prefs),
        [
            "created_at",
            "expired",
            "key",
            "namespace",
            "preview",
            "updated_at",
            "value"
        ]
    );
    assert_eq!(prefs["namespace"], json!(["users", "u-1"]));
    // The value on one line, as `store ls` and the app's Memory list show it.
    assert_eq!(prefs["preview"], r#"{"theme":"dark"}"#);
    assert_eq!(prefs["value"], json!({"theme": "dark"}));
    assert_eq!(prefs["created_at"], "2025-01-01T00:00:00+00:00");
    assert_eq!(prefs["expired"], false);
    let ttl = by_key("ttl");
    assert_eq!(ttl["expires_at"], "2999-01-01T00:00:00+00:00");
    assert_eq!(ttl["ttl_minutes"], 5.0);
    assert_eq!(
        by_key("vec")["vectors"],
        json!([{"field": "text", "dims": 8}])
    );
    let bad = by_key("bad");
    assert_eq!(bad["value"], Json::Null);
    assert!(bad["problem"]
        .as_str()
        .is_some_and(|p| p.contains("not valid JSON")));

    let one = call(
        &api,
        "store_get",
        json!({"db": db, "namespace": ["users", "u-1"], "key": "prefs"}),
    )
    .await
    .expect("get");
    assert_eq!(&one, prefs);
    let found = call(&api, "store_search", json!({"db": db, "query": "DARK"}))
        .await
        .expect("search");
    assert_eq!(found, json!([prefs]));
    let tree = call(&api, "store_namespaces", json!({"db": db}))
        .await
        .expect("tree");
    assert_eq!(
        tree,
        json!([{"namespace": ["users", "u-1"], "items": 2}, {"namespace": ["users", "u-2"], "items": 2}])
    );

    let missing = json!({"db": db, "namespace": ["users"], "key": "nope"});
    assert_eq!(
        call(&api, "store_get", missing.clone()).await,
        Err(ErrorCode::NotFound)
    );
    let dry = json!({"db": db, "namespace": ["users"], "key": "nope", "dry_run": true});
    assert_eq!(
        call(&api, "store_delete", dry).await,
        Err(ErrorCode::NotFound)
    );
    let dotted = json!({"db": db, "prefix": ["users.u-1"]});
    assert_eq!(
        call(&api, "store_list", dotted).await,
        Err(ErrorCode::InvalidInput)
    );
}

#[tokio::test]
async fn puts_and_deletes_write_and_say_what_they_did() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = store_only(dir.path());
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await.db;

    let put = call(
        &api,
        "store_put",
        json!({"db": db, "namespace": ["users", "u-2"], "key": "vec", "value": {"text": "bye"}, "ttl_minutes": 10}),
    )
    .await
    .expect("put");
    assert_eq!(put["created"], false);
    assert_eq!(put["removed_vectors"], json!(["text"]));
    assert_eq!(put["item"]["value"], json!({"text": "bye"}));
    assert_eq!(put["item"]["ttl_minutes"], 10.0);
    assert!(put["item"].get("vectors").is_none());
    let got = call(
        &api,
        "store_get",
        json!({"db": db, "namespace": ["users", "u-2"], "key": "vec"}),
    )
    .await
    .expect("get after put");
    assert_eq!(got, put["item"]);

    let req = |dry_run: bool| json!({"db": db, "namespace": ["users", "u-1"], "key": "prefs", "dry_run": dry_run});
    let preview = call(&api, "store_delete", req(true))
        .await
        .expect("preview");
    assert_eq!(
        (
            preview["dry_run"].clone(),
            preview["removed_vectors"].clone()
        ),
        (json!(true), json!(0))
    );
    call(
        &api,
        "store_get",
        json!({"db": db, "namespace": ["users", "u-1"], "key": "prefs"}),
    )
    .await
    .expect("still there after the preview");
    let done = call(&api, "store_delete", req(false))
        .await
        .expect("delete");
    assert_eq!(done["item"]["value"], json!({"theme": "dark"}));
    assert_eq!(
        call(
            &api,
            "store_get",
            json!({"db": db, "namespace": ["users", "u-1"], "key": "prefs"})
        )
        .await,
        Err(ErrorCode::NotFound)
    );
    let bad = json!({"db": db, "namespace": ["users"], "key": "k", "value": [1]});
    assert_eq!(
        call(&api, "store_put", bad).await,
        Err(ErrorCode::InvalidInput)
    );
    let langgraph = json!({"db": db, "namespace": ["langgraph"], "key": "k", "value": {}});
    assert_eq!(
        call(&api, "store_put", langgraph).await,
        Err(ErrorCode::InvalidInput)
    );
}

#[tokio::test]
async fn checkpoint_databases_say_they_have_no_store_and_mixed_ones_show_both() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let api = api_in(dir.path(), Initial::None);
    let info = open(&api, path.to_str().expect("utf-8")).await;
    assert_eq!(
        (info.holds, info.store.is_none()),
        (DbHolds::Checkpoints, true)
    );
    let err = call(&api, "store_list", json!({"db": info.db})).await;
    assert_eq!(err, Err(ErrorCode::UnsupportedSchema));

    add_store(&path);
    let mixed = open(&api, path.to_str().expect("utf-8")).await;
    assert_eq!(mixed.holds, DbHolds::Mixed);
    assert_eq!(mixed.store.expect("store").items, 4);
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: mixed.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    assert_eq!(threads.len(), 12, "the fixture's threads are all there");
    let list = call(&api, "store_list", json!({"db": mixed.db, "limit": 2}))
        .await
        .expect("list");
    assert_eq!(list.as_array().expect("array").len(), 2);
}

#[tokio::test]
async fn a_postgres_store_through_the_api() {
    let pg = flashback_testkit::pg_or_skip!();
    let pool = pg.pool().await.expect("pool");
    sqlx::raw_sql(
        "CREATE TABLE store (prefix text NOT NULL, key text NOT NULL, value jsonb NOT NULL, \
         created_at timestamptz DEFAULT CURRENT_TIMESTAMP, updated_at timestamptz DEFAULT CURRENT_TIMESTAMP, \
         expires_at timestamptz, ttl_minutes INT, PRIMARY KEY (prefix, key)); \
         INSERT INTO store (prefix, key, value) VALUES ('users.u-1', 'prefs', '{\"theme\": \"dark\"}')",
    )
    .execute(&pool)
    .await
    .expect("store");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let info = open(&api, pg.url()).await;
    assert_eq!(info.holds, DbHolds::Store);
    let db = info.db;
    let put = call(
        &api,
        "store_put",
        json!({"db": db, "namespace": ["users", "u-1"], "key": "new", "value": {"a": 1}, "ttl_minutes": 3}),
    )
    .await
    .expect("put");
    assert_eq!(
        (put["created"].clone(), put["item"]["ttl_minutes"].clone()),
        (json!(true), json!(3.0))
    );
    let list = call(&api, "store_list", json!({"db": db, "prefix": ["users"]}))
        .await
        .expect("list");
    assert_eq!(list.as_array().expect("array").len(), 2);
    let done = call(
        &api,
        "store_delete",
        json!({"db": db, "namespace": ["users", "u-1"], "key": "prefs", "dry_run": false}),
    )
    .await
    .expect("delete");
    assert_eq!(done["item"]["value"], json!({"theme": "dark"}));
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM store")
        .fetch_one(&pool)
        .await
        .expect("count");
    assert_eq!(left, 1);
}

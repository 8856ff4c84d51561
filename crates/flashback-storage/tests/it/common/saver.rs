//! Helpers of the Postgres saver's write-side tests: checkpoints, versions and metadata to put, a
//! store on a fresh database set up by our `setup()`, and SQL shortcuts to read the tables back.

use flashback_codec::{Decoded, Value};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointSaver, PutRequest, StoreError, Version, Versions};
use flashback_testkit::TestPg;
use serde_json::{Map, Value as Json};
use sqlx::{AssertSqlSafe, PgPool};
use std::path::PathBuf;
use std::sync::Arc;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub async fn exec(pool: &PgPool, sql: &str) {
    sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
        .execute(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// One text per row (a whole-row literal, e.g. `(t1,"",id,,…)`: NULL and `''` differ, JSONB
/// in its normalised text form, bytea in hex).
pub async fn texts(pool: &PgPool, sql: &str) -> Vec<String> {
    sqlx::query_scalar::<_, String>(AssertSqlSafe(sql.to_owned()))
        .fetch_all(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

pub async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql.to_owned()))
        .fetch_one(pool)
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

pub fn s(x: &str) -> Decoded {
    Decoded::Msgpack(Value::Str(x.into()))
}

pub fn int(i: i64) -> Decoded {
    Decoded::Msgpack(Value::Int(i))
}

pub fn list(items: &[i64]) -> Decoded {
    Decoded::Msgpack(Value::Array(items.iter().map(|i| Value::Int(*i)).collect()))
}

pub fn ver(n: u32) -> Version {
    Version::Str(format!("{n:032}.0.{}", 5000 + n))
}

pub fn checkpoint(
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

pub fn versions(entries: &[(&str, u32)]) -> Versions {
    entries
        .iter()
        .map(|(c, n)| ((*c).to_owned(), ver(*n)))
        .collect()
}

pub fn md(v: Json) -> Map<String, Json> {
    v.as_object().cloned().expect("object")
}

pub async fn put(
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
pub async fn new_store(pg: &TestPg) -> PostgresStore {
    let store = PostgresStore::connect_for_setup(pg.url())
        .await
        .expect("connect");
    store.setup().await.expect("setup");
    store
}

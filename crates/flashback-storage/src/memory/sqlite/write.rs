//! Writing the memory Store of a SQLite file: a read-write connection of its own, one
//! transaction per put or delete, the rows `SqliteStore` writes.

use super::{detect, Cx};
use crate::escape::{key_or_note, RawKey};
use crate::memory::time::{now_micros, python_str};
use crate::memory::{
    check_labels, check_put, no_store, prefix_text, DeleteOutcome, MemoryItem, MemoryRead,
    MemorySchema, MemorySummary, MemoryWrite, NamespaceCount, Page, PutOutcome,
};
use crate::sqlite::write_err;
use crate::StoreError;
use async_trait::async_trait;
use rusqlite::{params, Connection, TransactionBehavior};
use serde_json::Value as Json;
use std::sync::{Arc, Mutex};

/// The memory Store of a SQLite file opened for writing (its own read-write connection).
pub(crate) struct SqliteMemoryWriter {
    conn: Arc<Mutex<Connection>>,
    path: String,
    schema: MemorySchema,
}

impl SqliteMemoryWriter {
    /// Open an existing file that holds a memory Store; nothing is created.
    pub(crate) async fn open(path: &str) -> Result<SqliteMemoryWriter, StoreError> {
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || {
            let p = std::path::Path::new(&path);
            if !p.is_file() {
                return Err(if p.exists() {
                    StoreError::NotADatabase {
                        path: path.clone(),
                        detail: "it is not a file".into(),
                    }
                } else {
                    StoreError::NotFound(format!("no such file: {path}"))
                });
            }
            let conn = crate::sqlite::connect::read_write(&path)?;
            // The first read rolls back a hot journal, as any SQLite writer would.
            let schema = detect(&conn, &path)?.ok_or_else(|| no_store(&path))?;
            Ok(SqliteMemoryWriter {
                conn: Arc::new(Mutex::new(conn)),
                path,
                schema,
            })
        })
        .await
        .map_err(|e| StoreError::Query(format!("open task failed: {e}")))?
    }

    async fn with<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection, &MemorySchema, &str) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        let schema = self.schema.clone();
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = conn
                .lock()
                .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
            f(&mut guard, &schema, &path)
        })
        .await
        .map_err(|e| StoreError::Query(format!("write task failed: {e}")))?
    }

    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Cx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.with(move |conn, schema, path| f(&Cx { conn, schema, path }))
            .await
    }
}

/// The item's vector fields, deleted.
fn remove_vectors(
    tx: &rusqlite::Transaction<'_>,
    schema: &MemorySchema,
    prefix: &str,
    key: &str,
) -> rusqlite::Result<Vec<String>> {
    if !schema.has_vectors {
        return Ok(Vec::new());
    }
    let fields = tx
        .prepare("SELECT field_name FROM store_vectors WHERE prefix = ?1 AND key = ?2 ORDER BY field_name")?
        .query_map(params![prefix, key], |r| {
            Ok(key_or_note("field_name", RawKey::from(r.get_ref(0)?), &mut Vec::new()))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    tx.execute(
        "DELETE FROM store_vectors WHERE prefix = ?1 AND key = ?2",
        params![prefix, key],
    )?;
    Ok(fields)
}

fn put_blocking(
    conn: &mut Connection,
    schema: &MemorySchema,
    path: &str,
    (namespace, key, value, ttl): (&[String], &str, &Json, Option<f64>),
) -> Result<PutOutcome, StoreError> {
    check_put(schema, namespace, value, ttl)?;
    let prefix = prefix_text(namespace);
    // As Python stores it: `orjson.dumps(value)`, compact JSON bytes (a BLOB).
    let bytes = serde_json::to_vec(value)
        .map_err(|e| StoreError::InvalidInput(format!("the value cannot be stored: {e}")))?;
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(write_err)?;
    let existed = tx
        .query_row(
            "SELECT count(*) FROM store WHERE prefix = ?1 AND key = ?2",
            params![prefix, key],
            |r| r.get::<_, i64>(0),
        )
        .map_err(write_err)?
        > 0;
    let removed_vectors = remove_vectors(&tx, schema, &prefix, key).map_err(write_err)?;
    // Python: `INSERT OR REPLACE … VALUES (?, ?, ?, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, ?, ?)`
    // with `expires_at = now(utc) + timedelta(minutes=ttl)` stored as `str(datetime)`.
    let expires_at =
        ttl.map(|t| python_str(now_micros().saturating_add((t * 60_000_000.0) as i64)));
    let mut columns = String::from("prefix, key, value, created_at, updated_at");
    let mut values = String::from("?1, ?2, ?3, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP");
    if schema.has_expires_at {
        columns.push_str(", expires_at");
        values.push_str(", ?4");
    }
    if schema.has_ttl_minutes {
        columns.push_str(", ttl_minutes");
        values.push_str(", ?5");
    }
    let sql = format!("INSERT OR REPLACE INTO store ({columns}) VALUES ({values})");
    let mut stmt = tx.prepare(&sql).map_err(write_err)?;
    stmt.raw_bind_parameter(1, &prefix).map_err(write_err)?;
    stmt.raw_bind_parameter(2, key).map_err(write_err)?;
    stmt.raw_bind_parameter(3, &bytes).map_err(write_err)?;
    if schema.has_expires_at {
        stmt.raw_bind_parameter(4, expires_at).map_err(write_err)?;
    }
    if schema.has_ttl_minutes {
        stmt.raw_bind_parameter(5, ttl).map_err(write_err)?;
    }
    stmt.raw_execute().map_err(write_err)?;
    drop(stmt);
    let item = Cx {
        conn: &tx,
        schema,
        path,
    }
    .get(namespace, key)?
    .ok_or_else(|| StoreError::Query("the item just written cannot be read back".into()))?;
    tx.commit().map_err(write_err)?;
    Ok(PutOutcome {
        item,
        created: !existed,
        removed_vectors,
    })
}

fn delete_blocking(
    conn: &mut Connection,
    schema: &MemorySchema,
    path: &str,
    namespace: &[String],
    key: &str,
) -> Result<Option<DeleteOutcome>, StoreError> {
    check_labels(namespace, "namespace")?;
    let prefix = prefix_text(namespace);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(write_err)?;
    let item = Cx {
        conn: &tx,
        schema,
        path,
    }
    .get(namespace, key)?;
    let Some(item) = item else {
        return Ok(None);
    };
    let removed = remove_vectors(&tx, schema, &prefix, key).map_err(write_err)?;
    tx.execute(
        "DELETE FROM store WHERE prefix = ?1 AND key = ?2",
        params![prefix, key],
    )
    .map_err(write_err)?;
    tx.commit().map_err(write_err)?;
    Ok(Some(DeleteOutcome {
        item,
        removed_vectors: removed.len() as u64,
    }))
}

super::memory_reads_through_cx!(SqliteMemoryWriter);

#[async_trait]
impl MemoryWrite for SqliteMemoryWriter {
    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: &Json,
        ttl_minutes: Option<f64>,
    ) -> Result<PutOutcome, StoreError> {
        let (namespace, key, value) = (namespace.to_vec(), key.to_owned(), value.clone());
        self.with(move |conn, schema, path| {
            put_blocking(conn, schema, path, (&namespace, &key, &value, ttl_minutes))
        })
        .await
    }

    async fn delete(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<DeleteOutcome>, StoreError> {
        let (namespace, key) = (namespace.to_vec(), key.to_owned());
        self.with(move |conn, schema, path| delete_blocking(conn, schema, path, &namespace, &key))
            .await
    }
}

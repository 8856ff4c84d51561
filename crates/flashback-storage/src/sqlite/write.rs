//! Writing LangGraph SQLite checkpoint files exactly as langgraph-checkpoint-sqlite 3.1.2 does.
//!
//! Reading goes through a [`SqliteStore`] (its own read-only connection); writes use a separate
//! read-write connection that is opened only by [`SqliteSaver`], so merely browsing a file can
//! never write to it.

use super::connect::{self, write_err};
use super::SqliteStore;
use crate::model::*;
use crate::pyfmt::py_json_dumps;
use crate::saver::{
    checkpoint_document, write_idx, writes_replace, CheckpointSaver, PutRequest, WriteBatch,
};
use crate::serializer::Serde;
use crate::{jsformat, CheckpointStore, Dialect, StoreError};
use async_trait::async_trait;
use flashback_codec::{msgpack, AesKey, Decoded};
use rusqlite::{params, Connection, TransactionBehavior};
use std::sync::{Arc, Mutex};

const SETUP_SQL: &str = include_str!("../../../../migrations/sqlite/0001_setup.sql");
const TASK_PATH_SQL: &str = include_str!("../../../../migrations/sqlite/0002_writes_task_path.sql");

/// Read-write access to a LangGraph SQLite checkpoint file.
pub struct SqliteSaver {
    store: SqliteStore,
    conn: Arc<Mutex<Connection>>,
    /// Encrypts what is written (and decrypts what is read) as `EncryptedSerializer` does.
    key: Option<Arc<AesKey>>,
}

impl SqliteSaver {
    /// Open an existing checkpoint file for writing (it must already hold the LangGraph schema).
    ///
    /// A hot journal left by an interrupted write is rolled back first (the read-write
    /// connection's first read does it, as any SQLite writer would), restoring the last
    /// committed state.
    pub async fn open(path: &str) -> Result<SqliteSaver, StoreError> {
        let conn = Self::writer(path);
        let store = SqliteStore::open(path).await?;
        Self::from_parts(store, conn)
    }

    /// The read-write connection of [`open`](Self::open), made before the file is read (its
    /// first read rolls back a hot journal); an error is reported by the read-only open or
    /// [`from_parts`](Self::from_parts).
    pub(crate) fn writer(path: &str) -> rusqlite::Result<Connection> {
        if std::path::Path::new(path).is_file() {
            let conn = connect::read_write_raw(path);
            if let Ok(c) = &conn {
                // Errors here (not a database, read-only…) are reported by the opens below.
                let _ = c.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
                    r.get::<_, i64>(0)
                });
            }
            conn
        } else {
            connect::read_write_raw(path)
        }
    }

    /// The saver on a read-only store and a read-write connection of the same file.
    pub(crate) fn from_parts(
        store: SqliteStore,
        conn: rusqlite::Result<Connection>,
    ) -> Result<SqliteSaver, StoreError> {
        let conn = connect::waiting(conn)?;
        Ok(SqliteSaver {
            store,
            conn: Arc::new(Mutex::new(conn)),
            key: None,
        })
    }

    /// The same saver for a database written with LangGraph's `EncryptedSerializer`: reads
    /// decrypt `+aes` values, and every serde value written (checkpoint documents, writes) is
    /// encrypted with `key` as Python's serializer would (`msgpack+aes`, …).
    pub fn with_key(mut self, key: Option<Arc<AesKey>>) -> Self {
        self.store = self.store.with_key(key.clone());
        self.key = key;
        self
    }

    /// The key it encrypts with, if any.
    pub(super) fn key(&self) -> Option<Arc<AesKey>> {
        self.key.clone()
    }

    /// How it stores values: the database's dialect, sealed with its key.
    fn serde(&self) -> Serde<'_> {
        Serde::new(self.store.schema().dialect, self.key.as_deref())
    }

    /// Create the file if needed and run `setup()` (as Python's saver does on first use).
    pub async fn create(path: &str) -> Result<SqliteSaver, StoreError> {
        let conn = connect::create(path)?;
        setup_blocking(&conn)?;
        let store = SqliteStore::open(path).await?;
        Ok(SqliteSaver {
            store,
            conn: Arc::new(Mutex::new(conn)),
            key: None,
        })
    }

    /// The file path.
    pub fn path(&self) -> &str {
        self.store.path()
    }

    async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
    {
        on_connection(&self.conn, f).await
    }
}

fn setup_blocking(conn: &Connection) -> Result<(), StoreError> {
    conn.execute_batch(SETUP_SQL).map_err(write_err)?;
    match conn.execute_batch(TASK_PATH_SQL) {
        Err(rusqlite::Error::SqliteFailure(_, Some(msg)))
            if msg.contains("duplicate column name") =>
        {
            Ok(())
        }
        other => other.map_err(write_err),
    }
}

/// Insert one checkpoint row (`INSERT OR REPLACE`, as Python and JS).
fn put_blocking(tx: &rusqlite::Transaction<'_>, req: &OwnedPut) -> Result<(), StoreError> {
    tx.execute(
        "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
         VALUES (?, ?, ?, ?, ?, ?, ?)",
        params![
            req.thread_id,
            req.checkpoint_ns,
            req.checkpoint_id,
            req.parent_checkpoint_id,
            req.tag,
            req.doc,
            req.metadata,
        ],
    )
    .map_err(write_err)?;
    Ok(())
}

/// Run `f` on a saver's shared connection, on a blocking thread (shared with the three-table
/// store's saver).
pub(crate) async fn on_connection<T, F>(
    conn: &Arc<Mutex<Connection>>,
    f: F,
) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T, StoreError> + Send + 'static,
{
    let conn = Arc::clone(conn);
    tokio::task::spawn_blocking(move || {
        let mut guard = conn
            .lock()
            .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
        f(&mut guard)
    })
    .await
    .map_err(|e| StoreError::Query(format!("write task failed: {e}")))?
}

/// A [`PutRequest`] encoded, to move into the blocking writer.
struct OwnedPut {
    thread_id: String,
    checkpoint_ns: String,
    checkpoint_id: String,
    parent_checkpoint_id: Option<String>,
    tag: String,
    doc: Vec<u8>,
    metadata: Vec<u8>,
}

impl OwnedPut {
    /// The row Python's saver writes (a msgpack document, metadata as `json.dumps` text), or
    /// LangGraph.js's (`json` document and metadata); the document sealed by `serde`.
    fn new(req: &PutRequest<'_>, serde: Serde<'_>) -> Result<OwnedPut, StoreError> {
        let (tag, doc, metadata) = match serde.dialect {
            Dialect::Js => {
                let doc = jsformat::sqlite_document(req.checkpoint)?;
                let metadata = serde_json::Value::Object(req.metadata.clone());
                ("json".to_owned(), doc, jsformat::to_bytes(&metadata))
            }
            Dialect::Python => {
                let doc = msgpack::encode(&checkpoint_document(req.checkpoint)?);
                let metadata = py_json_dumps(&serde_json::Value::Object(req.metadata.clone()));
                ("msgpack".to_owned(), doc, metadata.into_bytes())
            }
        };
        let (tag, doc) = serde.seal(tag, doc);
        Ok(OwnedPut {
            thread_id: req.thread_id.to_owned(),
            checkpoint_ns: req.checkpoint_ns.to_owned(),
            checkpoint_id: req.checkpoint.id.clone(),
            parent_checkpoint_id: req.parent_checkpoint_id.map(str::to_owned),
            tag,
            doc,
            metadata,
        })
    }
}

/// A `put_writes` batch, encoded, to move into the blocking writer.
struct OwnedWrites {
    sql: String,
    has_task_path: bool,
    /// thread, ns, checkpoint id, task id, task path.
    key: [String; 5],
    /// idx, channel, type, value.
    rows: Vec<(i64, String, String, Vec<u8>)>,
}

impl OwnedWrites {
    fn new(
        schema: &SchemaInfo,
        serde: Serde<'_>,
        w: &WriteBatch<'_>,
    ) -> Result<OwnedWrites, StoreError> {
        let has_task_path = schema.has_task_path;
        let verb = if writes_replace(w.writes) {
            "INSERT OR REPLACE"
        } else {
            "INSERT OR IGNORE"
        };
        let sql = if has_task_path {
            format!("{verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        } else {
            format!("{verb} INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        };
        let rows = w
            .writes
            .iter()
            .enumerate()
            .map(|(i, (channel, value))| {
                let (tag, bytes) = serde.dumps_typed(channel, value)?;
                Ok((write_idx(channel, i), channel.clone(), tag, bytes))
            })
            .collect::<Result<_, StoreError>>()?;
        let key = [
            w.thread_id,
            w.checkpoint_ns,
            w.checkpoint_id,
            w.task_id,
            w.task_path,
        ]
        .map(str::to_owned);
        Ok(OwnedWrites {
            sql,
            has_task_path,
            key,
            rows,
        })
    }
}

/// Insert one `put_writes` batch (`INSERT OR REPLACE` / `INSERT OR IGNORE`, as Python).
fn put_writes_blocking(tx: &rusqlite::Transaction<'_>, w: &OwnedWrites) -> Result<(), StoreError> {
    let mut stmt = tx.prepare_cached(&w.sql).map_err(write_err)?;
    let [thread, ns, cid, task, path] = &w.key;
    for (idx, channel, tag, bytes) in &w.rows {
        if w.has_task_path {
            stmt.execute(params![
                thread, ns, cid, task, path, idx, channel, tag, bytes
            ])
        } else {
            stmt.execute(params![thread, ns, cid, task, idx, channel, tag, bytes])
        }
        .map_err(write_err)?;
    }
    Ok(())
}

crate::generic::forward_reads!(SqliteSaver, store);

#[async_trait]
impl CheckpointSaver for SqliteSaver {
    async fn setup(&self) -> Result<(), StoreError> {
        self.write(|conn| setup_blocking(conn)).await
    }

    async fn put(&self, req: PutRequest<'_>) -> Result<(), StoreError> {
        let owned = OwnedPut::new(&req, self.serde())?;
        self.write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(write_err)?;
            put_blocking(&tx, &owned)?;
            tx.commit().map_err(write_err)
        })
        .await
    }

    async fn put_writes(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: &str,
        task_id: &str,
        task_path: &str,
        writes: &[(String, Decoded)],
    ) -> Result<(), StoreError> {
        let owned = OwnedWrites::new(
            self.store.schema(),
            self.serde(),
            &WriteBatch {
                thread_id,
                checkpoint_ns,
                checkpoint_id,
                task_id,
                task_path,
                writes,
            },
        )?;
        self.write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(write_err)?;
            put_writes_blocking(&tx, &owned)?;
            tx.commit().map_err(write_err)
        })
        .await
    }

    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError> {
        // Everything is encoded before the transaction starts.
        let schema = self.store.schema();
        let puts: Vec<OwnedPut> = puts
            .iter()
            .map(|p| OwnedPut::new(p, self.serde()))
            .collect::<Result<_, _>>()?;
        let writes: Vec<OwnedWrites> = writes
            .iter()
            .map(|w| OwnedWrites::new(schema, self.serde(), w))
            .collect::<Result<_, _>>()?;
        self.write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(write_err)?;
            for put in &puts {
                put_blocking(&tx, put)?;
            }
            for batch in &writes {
                put_writes_blocking(&tx, batch)?;
            }
            tx.commit().map_err(write_err)
        })
        .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        let thread = thread_id.to_owned();
        self.write(move |conn| {
            let tx = conn
                .transaction_with_behavior(TransactionBehavior::Immediate)
                .map_err(write_err)?;
            tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [&thread])
                .map_err(write_err)?;
            tx.execute("DELETE FROM writes WHERE thread_id = ?", [&thread])
                .map_err(write_err)?;
            tx.commit().map_err(write_err)
        })
        .await
    }
}

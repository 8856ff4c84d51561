//! [`ThreeTableSaver`]: `setup` (the migrations in `migrations/three-table/sqlite/`), `put`
//! (method A or B, `rows.rs`), `put_writes`, `put_batch` and `delete_thread`, each in one
//! transaction on a read-write connection of its own; reads go through a [`ThreeTableStore`].

use crate::decode::checkpoint_from_msgpack;
use crate::model::*;
use crate::pyfmt::py_json_dumps;
use crate::saver::WriteBatch;
use crate::saver::{write_idx, writes_replace, CheckpointSaver, PutRequest};
use crate::serializer::Serde;
use crate::sqlite::write_err;
use crate::three::rows::{blob_rows, document_bytes, materialise, now_iso, ns_hash, Memo, NewBlob};
use crate::three::ThreeTableOptions;
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::{AesKey, Decoded};
use rusqlite::{params, Connection, Transaction, TransactionBehavior};
use std::sync::{Arc, Mutex};

use super::{is_three_table, ThreeTableStore};

/// The migrations, `(version, statement)`, applied in order by `setup`.
const MIGRATIONS: [(i64, &str); 3] = [
    (
        1,
        include_str!("../../../../../migrations/three-table/sqlite/0001_checkpoints.sql"),
    ),
    (
        2,
        include_str!("../../../../../migrations/three-table/sqlite/0002_checkpoint_blobs.sql"),
    ),
    (
        3,
        include_str!("../../../../../migrations/three-table/sqlite/0003_checkpoint_writes.sql"),
    ),
];
const VERSION_TABLE: &str =
    include_str!("../../../../../migrations/three-table/sqlite/0000_three_table_migrations.sql");

/// Read-write access to a three-table SQLite file.
pub struct ThreeTableSaver {
    store: ThreeTableStore,
    conn: Arc<Mutex<Connection>>,
    key: Option<Arc<AesKey>>,
    options: ThreeTableOptions,
}

/// Create the tables (or bring them up to date) in one transaction, then turn on WAL mode.
fn setup_blocking(conn: &mut Connection) -> Result<(), StoreError> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(write_err)?;
    let langgraph: bool = tx
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map_err(write_err)?
        > 0
        && !is_three_table(&tx).map_err(write_err)?;
    if langgraph {
        return Err(StoreError::InvalidInput(
            "the database holds LangGraph's checkpoint tables; the three-table store needs a \
             database of its own"
                .into(),
        ));
    }
    tx.execute_batch(VERSION_TABLE).map_err(write_err)?;
    let current: i64 = tx
        .query_row(
            "SELECT coalesce(max(v), 0) FROM three_table_migrations",
            [],
            |r| r.get(0),
        )
        .map_err(write_err)?;
    tx.execute(
        "INSERT OR IGNORE INTO three_table_migrations (v) VALUES (0)",
        [],
    )
    .map_err(write_err)?;
    for (v, sql) in MIGRATIONS {
        if v > current {
            tx.execute_batch(sql).map_err(write_err)?;
            tx.execute("INSERT INTO three_table_migrations (v) VALUES (?)", [v])
                .map_err(write_err)?;
        }
    }
    tx.commit().map_err(write_err)?;
    // As LangGraph's `SqliteSaver.setup()`: a write-ahead log, so that each `put` commits
    // with one sync of the log instead of a rollback journal's several.
    conn.execute_batch("PRAGMA journal_mode=WAL;")
        .map_err(write_err)
}

impl ThreeTableSaver {
    /// Open an existing three-table file for writing.
    pub async fn open(path: &str, options: ThreeTableOptions) -> Result<Self, StoreError> {
        let conn = crate::sqlite::connect::read_write(path)?;
        Self::with_conn(path, conn, options).await
    }

    /// Create the file if needed and run `setup`.
    pub async fn create(path: &str, options: ThreeTableOptions) -> Result<Self, StoreError> {
        let mut conn = crate::sqlite::connect::create(path)?;
        setup_blocking(&mut conn)?;
        Self::with_conn(path, conn, options).await
    }

    async fn with_conn(
        path: &str,
        conn: Connection,
        options: ThreeTableOptions,
    ) -> Result<Self, StoreError> {
        let store = ThreeTableStore::try_open(path).await?.ok_or_else(|| {
            StoreError::UnsupportedSchema {
                found: format!("{path} does not hold the three-table schema"),
            }
        })?;
        Self::from_parts(store, Ok(conn), options)
    }

    /// The saver on a read-only store and a read-write connection of the same file.
    pub(crate) fn from_parts(
        store: ThreeTableStore,
        conn: rusqlite::Result<Connection>,
        options: ThreeTableOptions,
    ) -> Result<Self, StoreError> {
        let conn = crate::sqlite::connect::waiting(conn)?;
        Ok(ThreeTableSaver {
            store,
            conn: Arc::new(Mutex::new(conn)),
            key: None,
            options,
        })
    }

    /// What a caller that may create a database opens on a SQLite file (`flashback bridge`):
    /// with `create` and `three` (`Some` options), a three-table file created or brought up
    /// to date; else the three-table saver when the file holds that schema (`three` without
    /// `create` and without the schema is an error); `None`: LangGraph's saver is for it.
    pub async fn open_for(
        path: &str,
        create: bool,
        three: Option<ThreeTableOptions>,
    ) -> Result<Option<Self>, StoreError> {
        match three {
            Some(options) if create => return Self::create(path, options).await.map(Some),
            _ => {}
        }
        if ThreeTableStore::try_open(path).await?.is_some() {
            let options = three.unwrap_or_default();
            return Self::open(path, options).await.map(Some);
        }
        if three.is_some() {
            return Err(StoreError::InvalidInput(format!(
                "{path} does not hold the three-table store (create it with --create)"
            )));
        }
        Ok(None)
    }

    /// Encrypt what is written (and decrypt what is read) with `key`.
    pub fn with_key(mut self, key: Option<Arc<AesKey>>) -> Self {
        self.store = self.store.with_key(key.clone());
        self.key = key;
        self
    }

    /// The file path.
    pub fn path(&self) -> &str {
        self.store.path()
    }

    pub(super) fn key(&self) -> Option<Arc<AesKey>> {
        self.key.clone()
    }

    /// Run `f` in one write transaction.
    pub(super) async fn write<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.write_or_rollback(true, f).await
    }

    /// Run `f` in one write transaction, committed when `commit` (else rolled back: a dry run).
    pub(super) async fn write_or_rollback<T, F>(&self, commit: bool, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        self.with_connection(move |conn| {
            // A rolled-back run only reads: a deferred transaction takes no write lock.
            let behavior = if commit {
                TransactionBehavior::Immediate
            } else {
                TransactionBehavior::Deferred
            };
            let tx = conn
                .transaction_with_behavior(behavior)
                .map_err(write_err)?;
            let out = f(&tx)?;
            if commit {
                tx.commit().map_err(write_err)?;
            }
            Ok(out)
        })
        .await
    }

    /// Run `f` on the saver's connection (its own transactions: a batched prune).
    pub(super) async fn with_connection<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<T, StoreError> + Send + 'static,
    {
        crate::sqlite::on_connection(&self.conn, f).await
    }
}

/// A [`PutRequest`] with owned data.
struct OwnedPut {
    thread_id: String,
    ns: String,
    parent: Option<String>,
    checkpoint: Checkpoint,
    metadata: String,
}

impl OwnedPut {
    fn new(req: &PutRequest<'_>) -> OwnedPut {
        OwnedPut {
            thread_id: req.thread_id.to_owned(),
            ns: req.checkpoint_ns.to_owned(),
            parent: req.parent_checkpoint_id.map(str::to_owned),
            checkpoint: req.checkpoint.clone(),
            metadata: py_json_dumps(&serde_json::Value::Object(req.metadata.clone())),
        }
    }
}

/// The parent's `channel_versions` (empty when there is no readable parent).
fn parent_versions(
    tx: &Transaction<'_>,
    thread: &str,
    hash: &str,
    parent: &str,
    key: Option<&AesKey>,
) -> Result<Versions, StoreError> {
    let row: Option<(Option<String>, Option<Vec<u8>>)> = tx
        .query_row(
            "SELECT type, checkpoint FROM checkpoints \
             WHERE thread_id = ? AND checkpoint_ns_hash = ? AND checkpoint_id = ?",
            [thread, hash, parent],
            |r| Ok((r.get(0).ok(), r.get(1).ok())),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(write_err(e)),
        })?;
    let Some((tag, doc)) = row else {
        return Ok(Vec::new());
    };
    let decoded = flashback_codec::decode_typed_keyed(
        tag.as_deref().unwrap_or("msgpack"),
        doc.as_deref(),
        key,
    );
    Ok(match decoded {
        Decoded::Msgpack(v) => checkpoint_from_msgpack(v)
            .map(|c| c.channel_versions)
            .unwrap_or_default(),
        _ => Vec::new(),
    })
}

fn put_blocking(
    tx: &Transaction<'_>,
    req: &OwnedPut,
    key: Option<&AesKey>,
    options: ThreeTableOptions,
) -> Result<(), StoreError> {
    let hash = ns_hash(&req.ns);
    let (thread, cp) = (req.thread_id.as_str(), &req.checkpoint);
    let mut parent: Option<Versions> = None;
    let mut memo = Memo::new();
    let mut exists_stmt = tx
        .prepare_cached(
            "SELECT count(*) FROM checkpoint_blobs \
             WHERE thread_id = ? AND checkpoint_ns_hash = ? AND channel = ? AND version = ?",
        )
        .map_err(write_err)?;
    let mut exists = |channel: &str, version: &str| -> Result<bool, StoreError> {
        let n: i64 = exists_stmt
            .query_row([thread, &hash, channel, version], |r| r.get(0))
            .map_err(write_err)?;
        Ok(n > 0)
    };
    let mut base = |channel: &str| -> Result<_, StoreError> {
        let Some(parent_id) = req.parent.as_deref() else {
            return Ok(None);
        };
        if parent.is_none() {
            parent = Some(parent_versions(tx, thread, &hash, parent_id, key)?);
        }
        let Some(v) = parent
            .as_ref()
            .and_then(|p| p.iter().find(|(c, _)| c == channel))
            .map(|(_, v)| crate::three::rows::version_text(v))
        else {
            return Ok(None);
        };
        let probe = ThreeTableStoreProbe {
            tx,
            thread,
            hash: &hash,
            channel,
        };
        let mut fetch = |ver: &str| probe.fetch(ver);
        // A damaged base is no base: the value is stored whole.
        Ok(
            materialise((thread, &hash, channel), &v, &mut memo, &mut fetch)
                .ok()
                .flatten()
                .map(|m| (v, m)),
        )
    };
    let blobs = blob_rows(cp, options.blobs, key, &mut exists, &mut base)?;
    insert_blobs(tx, thread, &hash, &blobs)?;
    let (tag, doc) = document_bytes(cp, key)?;
    let now = now_iso();
    tx.execute(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint_id, \
         parent_checkpoint_id, type, checkpoint, metadata, gmt_create, gmt_modified) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?9) \
         ON CONFLICT (thread_id, checkpoint_ns_hash, checkpoint_id) DO UPDATE SET \
         checkpoint_ns = excluded.checkpoint_ns, parent_checkpoint_id = excluded.parent_checkpoint_id, \
         type = excluded.type, checkpoint = excluded.checkpoint, metadata = excluded.metadata, \
         gmt_modified = excluded.gmt_modified",
        params![thread, req.ns, hash, cp.id, req.parent, tag, doc, req.metadata.as_bytes(), now],
    )
    .map_err(write_err)?;
    Ok(())
}

/// Reading blob rows inside a write transaction.
struct ThreeTableStoreProbe<'a> {
    tx: &'a Transaction<'a>,
    thread: &'a str,
    hash: &'a str,
    channel: &'a str,
}

impl ThreeTableStoreProbe<'_> {
    fn fetch(&self, version: &str) -> Result<Option<crate::three::rows::StoredBlob>, String> {
        let mut stmt = self
            .tx
            .prepare_cached(
                "SELECT type, kind, base_version, depth, blob_data FROM checkpoint_blobs \
                 WHERE thread_id = ? AND checkpoint_ns_hash = ? AND channel = ? AND version = ?",
            )
            .map_err(|e| e.to_string())?;
        let mut rows = stmt
            .query([self.thread, self.hash, self.channel, version])
            .map_err(|e| e.to_string())?;
        let Some(r) = rows.next().map_err(|e| e.to_string())? else {
            return Ok(None);
        };
        Ok(Some(crate::three::rows::StoredBlob {
            type_tag: r.get(0).map_err(|e| e.to_string())?,
            kind: r.get(1).map_err(|e| e.to_string())?,
            base_version: r.get(2).map_err(|e| e.to_string())?,
            depth: r.get(3).map_err(|e| e.to_string())?,
            data: r.get(4).map_err(|e| e.to_string())?,
        }))
    }
}

fn insert_blobs(
    tx: &Transaction<'_>,
    thread: &str,
    hash: &str,
    blobs: &[NewBlob],
) -> Result<(), StoreError> {
    let mut stmt = tx
        .prepare_cached(
            "INSERT OR IGNORE INTO checkpoint_blobs (thread_id, checkpoint_ns_hash, channel, \
             version, type, kind, base_version, depth, blob_data, gmt_create) \
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .map_err(write_err)?;
    let now = now_iso();
    for b in blobs {
        stmt.execute(params![
            thread,
            hash,
            b.channel,
            b.version,
            b.type_tag,
            b.kind.as_str(),
            b.base_version,
            b.depth,
            b.data,
            now
        ])
        .map_err(write_err)?;
    }
    Ok(())
}

/// A `put_writes` batch, encoded: `(verb, key columns, rows (idx, channel, type, bytes))`.
struct OwnedWrites {
    verb: &'static str,
    key: [String; 4],
    rows: Vec<(i64, String, String, Vec<u8>)>,
}

impl OwnedWrites {
    fn new(w: &WriteBatch<'_>, key: Option<&AesKey>) -> Result<OwnedWrites, StoreError> {
        let rows = w
            .writes
            .iter()
            .enumerate()
            .map(|(i, (channel, value))| {
                let (tag, bytes) = Serde::python(key).dumps_typed(channel, value)?;
                Ok((write_idx(channel, i), channel.clone(), tag, bytes))
            })
            .collect::<Result<_, StoreError>>()?;
        Ok(OwnedWrites {
            verb: if writes_replace(w.writes) {
                "INSERT OR REPLACE"
            } else {
                "INSERT OR IGNORE"
            },
            key: [
                w.thread_id.to_owned(),
                ns_hash(w.checkpoint_ns),
                w.checkpoint_id.to_owned(),
                w.task_id.to_owned(),
            ],
            rows,
        })
    }
}

fn put_writes_blocking(
    tx: &Transaction<'_>,
    w: &OwnedWrites,
    task_path: &str,
) -> Result<(), StoreError> {
    let sql = format!(
        "{} INTO checkpoint_writes (thread_id, checkpoint_ns_hash, checkpoint_id, task_id, \
         task_path, idx, channel, type, blob_data, gmt_create) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        w.verb
    );
    let mut stmt = tx.prepare_cached(&sql).map_err(write_err)?;
    let [thread, hash, cid, task] = &w.key;
    let now = now_iso();
    for (idx, channel, tag, bytes) in &w.rows {
        stmt.execute(params![
            thread, hash, cid, task, task_path, idx, channel, tag, bytes, now
        ])
        .map_err(write_err)?;
    }
    Ok(())
}

crate::generic::forward_reads!(ThreeTableSaver, store);

#[async_trait]
impl CheckpointSaver for ThreeTableSaver {
    async fn setup(&self) -> Result<(), StoreError> {
        let conn = Arc::clone(&self.conn);
        tokio::task::spawn_blocking(move || {
            let mut guard = conn
                .lock()
                .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
            setup_blocking(&mut guard)
        })
        .await
        .map_err(|e| StoreError::Query(format!("write task failed: {e}")))?
    }

    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError> {
        let key = self.key.clone();
        let options = self.options;
        let puts: Vec<OwnedPut> = puts.iter().map(OwnedPut::new).collect();
        let writes: Vec<(OwnedWrites, String)> = writes
            .iter()
            .map(|w| Ok((OwnedWrites::new(w, key.as_deref())?, w.task_path.to_owned())))
            .collect::<Result<_, StoreError>>()?;
        self.write(move |tx| {
            for p in &puts {
                put_blocking(tx, p, key.as_deref(), options)?;
            }
            for (w, path) in &writes {
                put_writes_blocking(tx, w, path)?;
            }
            Ok(())
        })
        .await
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        let thread = thread_id.to_owned();
        self.write(move |tx| {
            for table in ["checkpoints", "checkpoint_writes", "checkpoint_blobs"] {
                tx.execute(
                    &format!("DELETE FROM {table} WHERE thread_id = ?"),
                    [&thread],
                )
                .map_err(write_err)?;
            }
            Ok(())
        })
        .await
    }
}

//! The three-table store on SQLite: [`ThreeTableStore`] reads a file read-only (nothing
//! created beside it, as [`crate::sqlite::SqliteStore`]), [`ThreeTableSaver`] writes it
//! (`write.rs`).

use crate::decode::Decoding;
use crate::model::*;
use crate::sqlite::access::Source;
use crate::sqlite::{open_err, query_err, Reader};
use crate::three::values::ReadMemo;
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::{AesKey, DecodeBudget};
use rusqlite::Connection;
use std::sync::{Arc, Mutex};
use thread as thread_read;

mod maint;
mod read;
mod thread;
mod write;

pub use write::ThreeTableSaver;

/// Whether `conn` holds the three-table schema (`checkpoints.checkpoint_ns_hash`).
pub(super) fn is_three_table(conn: &Connection) -> rusqlite::Result<bool> {
    let mut stmt = conn.prepare("SELECT name FROM pragma_table_info('checkpoints')")?;
    let cols = stmt.query_map([], |r| r.get::<_, String>(0))?;
    for c in cols {
        if c? == "checkpoint_ns_hash" {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The three-table store's schema when `conn` holds its tables (`three_table_migrations`,
/// `checkpoint_blobs`, and `checkpoints` with a `checkpoint_ns_hash` column); `None` when it
/// does not or they cannot be read (LangGraph's detection then says why).
pub(crate) fn detect(conn: &Connection) -> Option<SchemaInfo> {
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' \
             AND name IN ('three_table_migrations', 'checkpoint_blobs')",
            [],
            |r| r.get(0),
        )
        .ok()?;
    if tables < 2 {
        return None;
    }
    schema_of(conn)
}

/// The schema of a connection whose `checkpoints` has a `checkpoint_ns_hash` column.
fn schema_of(conn: &Connection) -> Option<SchemaInfo> {
    if !is_three_table(conn).ok()? {
        return None;
    }
    let version: Option<i64> = conn
        .query_row("SELECT max(v) FROM three_table_migrations", [], |r| {
            r.get(0)
        })
        .ok()
        .flatten();
    let description = match version {
        Some(v) => format!("three-table store (sqlite, migrations 0-{v})"),
        None => "three-table store (sqlite)".to_owned(),
    };
    Some(SchemaInfo {
        backend: Backend::Sqlite,
        has_task_path: true,
        migration_version: version,
        kind: crate::layout::SchemaKind::ThreeTable,
        description,
        holds: Holds::Checkpoints,
        dialect: crate::Dialect::Python,
    })
}

/// A three-table SQLite file, read-only.
pub struct ThreeTableStore {
    reader: Arc<Mutex<(Connection, Source)>>,
    schema: SchemaInfo,
    path: String,
    decoding: Decoding,
}

impl ThreeTableStore {
    /// Open `path` read-only when it holds the three-table schema; `Ok(None)` when it does
    /// not (or cannot be read: the LangGraph store's open then says why).
    pub async fn try_open(path: &str) -> Result<Option<ThreeTableStore>, StoreError> {
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || {
            if !std::path::Path::new(&path).is_file() {
                return Ok(None);
            }
            let Ok(reader) = Reader::open(&path) else {
                return Ok(None);
            };
            Ok(schema_of(&reader.conn).map(|schema| Self::from_reader(&path, reader, schema)))
        })
        .await
        .map_err(|e| StoreError::Query(format!("open task failed: {e}")))?
    }

    /// The store on a connection [`Reader::open`] made, whose schema [`detect`] found.
    pub(crate) fn from_reader(path: &str, reader: Reader, schema: SchemaInfo) -> ThreeTableStore {
        ThreeTableStore {
            reader: Arc::new(Mutex::new((reader.conn, reader.source))),
            schema,
            path: path.to_owned(),
            decoding: Decoding::default(),
        }
    }

    /// The same store decoding within `budget`.
    pub fn with_budget(mut self, budget: DecodeBudget) -> Self {
        self.decoding.budget = budget;
        self
    }

    /// The same store decrypting `+aes` values with `key`.
    pub fn with_key(mut self, key: Option<Arc<AesKey>>) -> Self {
        self.decoding.key = key;
        self
    }

    /// The file path.
    pub fn path(&self) -> &str {
        &self.path
    }

    async fn with_conn<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(
                &Connection,
                &dyn Fn(rusqlite::Error) -> StoreError,
                &Decoding,
            ) -> Result<T, StoreError>
            + Send
            + 'static,
    {
        let reader = Arc::clone(&self.reader);
        let (path, decoding) = (self.path.clone(), self.decoding.clone());
        tokio::task::spawn_blocking(move || {
            let mut guard = reader
                .lock()
                .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
            let (conn, source) = &mut *guard;
            if let Some(fresh) = source.refresh().map_err(|e| open_err(&path, e))? {
                *conn = fresh;
            }
            let err = query_err(&path);
            // One read transaction: one snapshot.
            let tx = conn.unchecked_transaction().map_err(&err)?;
            let out = f(conn, &err, &decoding)?;
            tx.finish().map_err(&err)?;
            Ok(out)
        })
        .await
        .map_err(|e| StoreError::Query(format!("query task failed: {e}")))?
    }
}

#[async_trait]
impl CheckpointStore for ThreeTableStore {
    fn schema(&self) -> &SchemaInfo {
        &self.schema
    }

    fn memory(&self) -> Option<&dyn crate::memory::MemoryRead> {
        None
    }

    async fn server(
        &self,
    ) -> Result<Option<std::sync::Arc<crate::server::ServerState>>, StoreError> {
        Ok(None)
    }

    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError> {
        crate::generic::list_recent_threads(self, limit).await
    }

    /// The three-table store is not probed: nothing is found sealed.
    async fn encryption_probe(&self) -> Result<crate::EncryptionProbe, StoreError> {
        Ok(crate::EncryptionProbe::default())
    }

    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        crate::generic::get_tuples(self, keys).await
    }

    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
        crate::generic::get_tuples_selecting(self, keys, keep).await
    }

    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError> {
        self.with_conn(|conn, err, _| thread_read::threads(conn, err))
            .await
    }

    async fn find_threads(
        &self,
        query: &crate::ThreadQuery,
    ) -> Result<Vec<crate::FoundThread>, StoreError> {
        crate::find::find_threads(self, query).await
    }

    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError> {
        let q = query.clone();
        self.with_conn(move |conn, err, dec| {
            Ok(read::rows(conn, &q, err)?
                .iter()
                .map(|r| r.header(dec))
                .collect())
        })
        .await
    }

    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError> {
        let q = query.clone();
        self.with_conn(move |conn, err, dec| {
            let mut memo = ReadMemo::new(dec.key.clone());
            let mut cache = dec.cache();
            let rows = read::rows(conn, &q, err)?;
            let mut extras = read::Extras::for_rows(conn, &rows)?;
            rows.into_iter()
                .map(|row| read::tuple(conn, row, &mut memo, &mut extras, &mut cache, err))
                .collect()
        })
        .await
    }

    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError> {
        let thread = thread_id.to_owned();
        self.with_conn(move |conn, err, _| {
            let mut stmt = conn
                .prepare_cached(
                    "SELECT DISTINCT checkpoint_ns FROM checkpoints WHERE thread_id = ?",
                )
                .map_err(err)?;
            let mut out: Vec<String> = stmt
                .query_map([&thread], |r| r.get::<_, String>(0))
                .map_err(err)?
                .collect::<Result<_, _>>()
                .map_err(err)?;
            out.sort();
            Ok(out)
        })
        .await
    }

    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError> {
        let thread = thread_id.to_owned();
        self.with_conn(move |conn, err, _| thread_read::thread_writes(conn, &thread, err))
            .await
    }

    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
        let (thread, needle) = (thread_id.to_owned(), needle.to_owned());
        self.with_conn(move |conn, err, dec| {
            let mut cache = dec.cache();
            thread_read::thread_writes_mentioning(conn, &thread, &needle, &mut cache, err)
        })
        .await
    }
}

//! SQLite files written by `langgraph-checkpoint-sqlite`, opened read-only (and, in WAL mode,
//! without creating anything beside them: see `access.rs`).

use crate::decode::Decoding;
use crate::model::*;
use crate::StoreError;
use access::Source;
use flashback_codec::DecodeBudget;
use rusqlite::Connection;
use schema::detect_schema;
use std::sync::{Arc, Mutex};

pub(crate) mod access;
mod batch;
pub(crate) mod batches;
pub(crate) mod connect;
mod ctx;
mod find;
mod holders;
pub(crate) mod maintenance;
pub(crate) mod query;
pub(crate) mod read;
pub(crate) mod reader;
mod rows;
mod schema;
mod stored;
pub(crate) mod threads;
mod write;

pub(crate) use connect::{classify, open_err, query_err, write_err};
pub(crate) use reader::Reader;
pub(crate) use write::on_connection;
pub use write::SqliteSaver;

/// A read-only connection to a LangGraph SQLite checkpoint file.
pub struct SqliteStore {
    reader: Arc<Mutex<Reader>>,
    schema: SchemaInfo,
    path: String,
    decoding: Decoding,
    /// The memory Store in the same file, read through the same connection.
    memory: Option<crate::memory::sqlite::SqliteMemory>,
}

impl SqliteStore {
    /// Open `path` read-only and detect its schema. The file is never created or modified, and
    /// nothing is created beside it.
    pub async fn open(path: &str) -> Result<SqliteStore, StoreError> {
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || Self::open_blocking(&path))
            .await
            .map_err(|e| StoreError::Query(format!("open task failed: {e}")))?
    }

    /// Blocking variant of [`SqliteStore::open`].
    pub fn open_blocking(path: &str) -> Result<SqliteStore, StoreError> {
        Self::from_reader(path, Reader::open(path)?)
    }

    /// The store on a connection [`Reader::open`] made, its schema detected (a file holding
    /// another source's schema, e.g. the three-table store, is an
    /// [`StoreError::UnsupportedSchema`]).
    pub(crate) fn from_reader(path: &str, reader: Reader) -> Result<SqliteStore, StoreError> {
        let Reader { conn, source } = reader;
        let memory = crate::memory::sqlite::detect(&conn, path)?;
        let schema = detect_schema(&conn, path, memory.is_some())?;
        let reader = Arc::new(Mutex::new(Reader { conn, source }));
        let memory = memory
            .map(|m| crate::memory::sqlite::SqliteMemory::new(Arc::clone(&reader), path.into(), m));
        Ok(SqliteStore {
            reader,
            schema,
            path: path.into(),
            decoding: Decoding::default(),
            memory,
        })
    }

    /// The same store decoding within `budget` (values over it are left undecoded; see
    /// [`flashback_codec::budget`]). Opened stores have no budget.
    pub fn with_budget(mut self, budget: DecodeBudget) -> Self {
        self.decoding.budget = budget;
        self
    }

    /// The same store decrypting `+aes` values with `key` (without one they stay
    /// [`flashback_codec::Decoded::Encrypted`], and an encrypted document gives a checkpoint
    /// marked [`Sealing::locked`](crate::Sealing::locked)).
    pub fn with_key(mut self, key: Option<Arc<flashback_codec::AesKey>>) -> Self {
        self.decoding.key = key;
        self
    }

    /// The file path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The memory Store in the file, if it has one.
    pub(crate) fn memory_reader(&self) -> Option<&crate::memory::sqlite::SqliteMemory> {
        self.memory.as_ref()
    }

    async fn with_conn<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Source, &SchemaInfo, &str, &Decoding) -> Result<T, StoreError>
            + Send
            + 'static,
    {
        self.with_conn_decoding(self.decoding.clone(), f).await
    }

    /// [`with_conn`](Self::with_conn) with another way of decoding (a selecting read).
    async fn with_conn_decoding<T, F>(&self, decoding: Decoding, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Source, &SchemaInfo, &str, &Decoding) -> Result<T, StoreError>
            + Send
            + 'static,
    {
        let reader = Arc::clone(&self.reader);
        let schema = self.schema.clone();
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = reader
                .lock()
                .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
            let Reader { conn, source } = &mut *guard;
            if let Some(fresh) = source.refresh().map_err(|e| open_err(&path, e))? {
                *conn = fresh;
            }
            f(conn, source, &schema, &path, &decoding)
        })
        .await
        .map_err(|e| StoreError::Query(format!("query task failed: {e}")))?
    }
}

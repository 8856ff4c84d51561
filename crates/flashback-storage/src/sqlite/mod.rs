//! SQLite files written by `langgraph-checkpoint-sqlite`, opened read-only.

use crate::model::*;
use crate::StoreError;
use rusqlite::{Connection, OpenFlags};
use schema::detect_schema;
use std::path::Path;
use std::sync::{Arc, Mutex};

mod maintenance;
mod read;
mod schema;
mod write;

pub use write::SqliteSaver;

/// A read-only connection to a LangGraph SQLite checkpoint file.
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    schema: SchemaInfo,
    path: String,
}

fn query_err(e: rusqlite::Error) -> StoreError {
    StoreError::Query(e.to_string())
}

impl SqliteStore {
    /// Open `path` read-only and detect its schema. The file is never created or modified.
    pub async fn open(path: &str) -> Result<SqliteStore, StoreError> {
        let path = path.to_owned();
        tokio::task::spawn_blocking(move || Self::open_blocking(&path))
            .await
            .map_err(|e| StoreError::Query(format!("open task failed: {e}")))?
    }

    /// Blocking variant of [`SqliteStore::open`].
    pub fn open_blocking(path: &str) -> Result<SqliteStore, StoreError> {
        let p = Path::new(path);
        if !p.exists() {
            return Err(StoreError::NotFound(format!("no such file: {path}")));
        }
        if p.is_dir() {
            return Err(StoreError::NotADatabase {
                path: path.into(),
                detail: "it is a directory".into(),
            });
        }
        let conn = open_read_only(p).map_err(|e| StoreError::NotADatabase {
            path: path.into(),
            detail: e.to_string(),
        })?;
        let schema = detect_schema(&conn, path)?;
        Ok(SqliteStore {
            conn: Arc::new(Mutex::new(conn)),
            schema,
            path: path.into(),
        })
    }

    /// The file path.
    pub fn path(&self) -> &str {
        &self.path
    }

    async fn with_conn<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &SchemaInfo) -> Result<T, StoreError> + Send + 'static,
    {
        let conn = Arc::clone(&self.conn);
        let schema = self.schema.clone();
        tokio::task::spawn_blocking(move || {
            let guard = conn
                .lock()
                .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
            f(&guard, &schema)
        })
        .await
        .map_err(|e| StoreError::Query(format!("query task failed: {e}")))?
    }
}

/// A read-only connection: never creates, never writes, never changes the journal mode.
fn open_read_only(path: &Path) -> rusqlite::Result<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let conn = Connection::open_with_flags(path, flags)?;
    // Memory-map reads (a per-connection setting; nothing is written to the file): loading
    // a long history reads every page, and mmap saves a copy per page. The pragma answers
    // with the size granted (0 where mmap is unavailable, which is fine).
    let _ = conn.query_row("PRAGMA mmap_size = 1073741824", [], |r| r.get::<_, i64>(0));
    // Sorts (ORDER BY checkpoint_id) stay in memory rather than in temporary files.
    conn.execute_batch("PRAGMA temp_store = MEMORY")?;
    Ok(conn)
}

//! The shared read-only connection of a SQLite file: opened one way, reopened when the file
//! changed the way it must be read (see `access.rs`).

use super::access::Source;
use super::connect::{self, open_err};
use crate::StoreError;
use rusqlite::Connection;
use std::path::Path;
use std::sync::{Arc, Mutex};

/// The connection and how it was made (reopened when that no longer fits the file).
pub(crate) struct Reader {
    pub(crate) conn: Connection,
    pub(crate) source: Source,
}

impl Reader {
    /// Open `path` read-only (never created or modified, nothing created beside it): the one
    /// way a SQLite file is opened for reading.
    pub(crate) fn open(path: &str) -> Result<Reader, StoreError> {
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
        let (source, conn) = connect::read_only(path)?;
        Ok(Reader { conn, source })
    }
}

/// Run `f` on a shared read-only connection, reopened first when the file changed the way it
/// must be read (see `access.rs`).
pub(crate) async fn read_shared<T, F>(
    reader: &Arc<Mutex<Reader>>,
    path: &str,
    f: F,
) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&Connection) -> Result<T, StoreError> + Send + 'static,
{
    let reader = Arc::clone(reader);
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let mut guard = reader
            .lock()
            .map_err(|_| StoreError::Query("connection poisoned by an earlier panic".into()))?;
        let Reader { conn, source } = &mut *guard;
        if let Some(fresh) = source.refresh().map_err(|e| open_err(&path, e))? {
            *conn = fresh;
        }
        f(conn)
    })
    .await
    .map_err(|e| StoreError::Query(format!("query task failed: {e}")))?
}

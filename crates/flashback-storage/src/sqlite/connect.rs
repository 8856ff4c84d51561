//! The one way a SQLite connection is made — read-only through [`Source`] (nothing created
//! beside the file), read-write on an existing file, or creating it; writers wait
//! [`BUSY_TIMEOUT`] for another's lock — and what its errors mean.

use super::access::{OpenError, Source, BUSY_TIMEOUT};
use crate::StoreError;
use rusqlite::{Connection, OpenFlags};
use std::path::Path;

/// Open `path` read-only: never created or modified, nothing created beside it.
pub(crate) fn read_only(path: &str) -> Result<(Source, Connection), StoreError> {
    Source::open(Path::new(path)).map_err(|e| open_err(path, e))
}

/// A read-write connection to an existing file, before anything is read through it (a
/// writer's first read rolls back a hot journal).
pub(crate) fn read_write_raw(path: &str) -> rusqlite::Result<Connection> {
    Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_WRITE)
}

/// A read-write connection to an existing file, waiting [`BUSY_TIMEOUT`] for locks.
pub(crate) fn read_write(path: &str) -> Result<Connection, StoreError> {
    waiting(read_write_raw(path))
}

/// A read-write connection, the file created when missing, waiting [`BUSY_TIMEOUT`].
pub(crate) fn create(path: &str) -> Result<Connection, StoreError> {
    waiting(Connection::open(path))
}

/// The connection, waiting [`BUSY_TIMEOUT`] for another's lock.
pub(crate) fn waiting(conn: rusqlite::Result<Connection>) -> Result<Connection, StoreError> {
    let conn = conn.map_err(write_err)?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(write_err)?;
    Ok(conn)
}

/// A SQLite error from a write: a read-only file or directory ([`StoreError::ReadOnly`]),
/// another process's lock ([`StoreError::Locked`]), anything else a failed query.
pub(crate) fn write_err(e: rusqlite::Error) -> StoreError {
    match &e {
        // The journal or -wal cannot be created beside the file.
        rusqlite::Error::SqliteFailure(f, _) if f.code == rusqlite::ErrorCode::CannotOpen => {
            StoreError::ReadOnly(format!(
                "the database cannot be written ({e}); check the permissions of the file and \
                 of its directory"
            ))
        }
        _ => classify("the database", e, |e| StoreError::Query(e.to_string())),
    }
}

/// `SQLITE_READONLY_ROLLBACK`: a hot journal that only a read-write connection may roll back.
const READONLY_ROLLBACK: i32 = 776;

/// A SQLite error as a [`StoreError`]: another process's lock, a read-only file, a hot
/// journal, or (`otherwise`) what the caller makes of the rest.
pub(crate) fn classify(
    path: &str,
    e: rusqlite::Error,
    otherwise: impl FnOnce(rusqlite::Error) -> StoreError,
) -> StoreError {
    let rusqlite::Error::SqliteFailure(f, _) = &e else {
        return otherwise(e);
    };
    match f.code {
        _ if f.extended_code == READONLY_ROLLBACK => StoreError::InvalidInput(format!(
            "{path} has a hot journal ({path}-journal) left by a write that was interrupted; \
             Flashback reads files read-only and cannot roll it back: open the file once \
             for writing (any flashback write command, or `sqlite3 {path} \"PRAGMA \
             quick_check\"`) to restore its last committed state"
        )),
        rusqlite::ErrorCode::DatabaseBusy | rusqlite::ErrorCode::DatabaseLocked => {
            StoreError::Locked(format!("{path}: {e}"))
        }
        rusqlite::ErrorCode::ReadOnly => StoreError::ReadOnly(format!(
            "{path} cannot be written ({e}); check the permissions of the file and of its \
             directory"
        )),
        _ => otherwise(e),
    }
}

/// A failed read query.
pub(crate) fn query_err(path: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| classify(path, e, |e| StoreError::Query(e.to_string()))
}

/// A failed open: anything unclassified means the file is not a SQLite database.
pub(crate) fn open_err(path: &str, e: OpenError) -> StoreError {
    match e {
        OpenError::Sqlite(e) => classify(path, e, |e| StoreError::NotADatabase {
            path: path.into(),
            detail: e.to_string(),
        }),
        OpenError::Snapshot(message) => StoreError::InvalidInput(message),
    }
}

//! Storage errors.

use thiserror::Error;

/// Everything that can go wrong opening or reading a checkpoint database.
#[derive(Debug, Error)]
pub enum StoreError {
    /// The file or database does not exist.
    #[error("not found: {0}")]
    NotFound(String),
    /// The file exists but is not a SQLite database.
    #[error("{path} is not a SQLite database ({detail})")]
    NotADatabase {
        /// The path given.
        path: String,
        /// What SQLite said.
        detail: String,
    },
    /// The database is readable but is not a LangGraph checkpoint schema we know.
    #[error("unsupported schema: {found}")]
    UnsupportedSchema {
        /// What was found instead (tables, columns, migration versions).
        found: String,
    },
    /// The server could not be reached.
    #[error("cannot connect: {0}")]
    Connection(String),
    /// The server refused the credentials.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// A query failed.
    #[error("query failed: {0}")]
    Query(String),
    /// A row could not be interpreted (e.g. a checkpoint document that is not a map).
    #[error("corrupt checkpoint {checkpoint_id}: {detail}")]
    Corrupt {
        /// The checkpoint concerned.
        checkpoint_id: String,
        /// What is wrong.
        detail: String,
    },
    /// The caller passed something unusable (e.g. an invalid metadata filter key).
    #[error("invalid input: {0}")]
    InvalidInput(String),
    /// Another process holds a lock that stops this read or write (SQLite `SQLITE_BUSY` /
    /// `SQLITE_LOCKED`): worth trying again.
    #[error("the database is locked by another process ({0}); try again")]
    Locked(String),
    /// Refused because another program uses the database and the operation would stop it
    /// (the message says why and what to do).
    #[error("{0}")]
    InUse(String),
    /// The database (or the directory SQLite must write beside it) cannot be written, and the
    /// operation needed to (SQLite `SQLITE_READONLY`).
    #[error("the database is read-only here: {0}")]
    ReadOnly(String),
    /// Values are sealed (`EncryptedSerializer`) in a way Flashback cannot open or write: a
    /// cipher other than `aes`, or no key. The text says which and that nothing was written.
    #[error("{0}")]
    Sealed(String),
}

impl StoreError {
    /// A short stable code for machine-readable output.
    pub fn code(&self) -> &'static str {
        match self {
            StoreError::NotFound(_) => "not_found",
            StoreError::NotADatabase { .. } => "not_a_database",
            StoreError::UnsupportedSchema { .. } => "unsupported_schema",
            StoreError::Connection(_) => "connection",
            StoreError::Auth(_) => "auth",
            StoreError::Query(_) => "query",
            StoreError::Corrupt { .. } => "corrupt",
            StoreError::InvalidInput(_) => "invalid_input",
            StoreError::Locked(_) | StoreError::InUse(_) => "locked",
            StoreError::ReadOnly(_) => "read_only",
            StoreError::Sealed(_) => "sealed",
        }
    }
}

//! Storage errors.

use std::time::Duration;
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
    /// A file of a source made of files (the `langgraph dev` folder) cannot be read: not the
    /// structure its writer leaves, or damaged. Nothing of it is shown.
    #[error("{path} cannot be read: {detail}")]
    UnreadableFile {
        /// The file.
        path: String,
        /// What is wrong, one line.
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
    /// The server did not answer within the location's time limit (a stalled server, network
    /// or proxy, or a statement over its `statement_timeout`): worth trying again.
    #[error("Postgres at {server} did not answer within {}{}", duration_text(*after),
        during.as_deref().map(|d| format!(" while {d}")).unwrap_or_default())]
    Timeout {
        /// Where: `host:port/database` (never a password).
        server: String,
        /// The limit that passed.
        after: Duration,
        /// What was being read or written (`reading the thread list`), when known.
        during: Option<String>,
    },
    /// An HTTP server (an Agent Server) did not answer within the time limit: the message
    /// names the server, the request and the limit.
    #[error("{0}")]
    ServerTimeout(String),
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
            StoreError::Corrupt { .. } | StoreError::UnreadableFile { .. } => "corrupt",
            StoreError::InvalidInput(_) => "invalid_input",
            StoreError::Locked(_) | StoreError::InUse(_) => "locked",
            StoreError::ReadOnly(_) => "read_only",
            StoreError::Sealed(_) => "sealed",
            StoreError::Timeout { .. } | StoreError::ServerTimeout(_) => "timeout",
        }
    }

    /// Say what was being done when the server stopped answering (`reading the thread
    /// list`): a [`StoreError::Timeout`] takes `what` (the outermost caller knows best, so it
    /// replaces what an inner step said); other errors are returned as they are.
    pub fn during(self, what: impl FnOnce() -> String) -> StoreError {
        match self {
            StoreError::Timeout { server, after, .. } => StoreError::Timeout {
                server,
                after,
                during: Some(what()),
            },
            other => other,
        }
    }

    /// Whether the server did not answer in time ([`StoreError::Timeout`]).
    pub fn is_timeout(&self) -> bool {
        matches!(
            self,
            StoreError::Timeout { .. } | StoreError::ServerTimeout(_)
        )
    }
}

/// A time limit as messages show it: `30 s`, `1.5 s`, `250 ms`.
pub fn duration_text(d: Duration) -> String {
    let ms = d.as_millis();
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let secs = format!("{}.{:03}", ms / 1000, ms % 1000);
    format!("{} s", secs.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_one_line_naming_the_server_and_the_read() {
        let e = StoreError::Timeout {
            server: "127.0.0.1:6543/app".into(),
            after: Duration::from_secs(30),
            during: None,
        };
        assert_eq!(
            e.to_string(),
            "Postgres at 127.0.0.1:6543/app did not answer within 30 s"
        );
        assert_eq!(e.code(), "timeout");
        let e = e
            .during(|| "reading the pending writes".into())
            .during(|| "reading the thread list".into());
        assert!(e.is_timeout());
        assert_eq!(
            e.to_string(),
            "Postgres at 127.0.0.1:6543/app did not answer within 30 s while reading the thread list"
        );
        // Other errors are left alone.
        let e = StoreError::Query("x".into()).during(|| "reading".into());
        assert_eq!(e.to_string(), "query failed: x");
        assert_eq!(duration_text(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(duration_text(Duration::from_millis(250)), "250 ms");
        assert_eq!(duration_text(Duration::from_millis(1234)), "1.234 s");
        assert_eq!(duration_text(Duration::from_secs(120)), "120 s");
    }
}

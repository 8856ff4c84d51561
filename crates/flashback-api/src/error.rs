//! The one error shape that crosses IPC and HTTP: `{code, message}`.

use flashback_engine::EngineError;
use flashback_storage::StoreError;
use serde::{Deserialize, Serialize};
use specta::Type;

/// What kind of failure, for the UI to branch on (a variant exists only where it does).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// A thread, checkpoint, file or job that does not exist.
    NotFound,
    /// The file is not a SQLite database.
    NotADatabase,
    /// The database holds no LangGraph checkpoint schema Flashback knows.
    UnsupportedSchema,
    /// The server could not be reached.
    Connection,
    /// The server refused the credentials.
    Auth,
    /// A Postgres connection needs a password (none given, none saved).
    NeedsPassword,
    /// Bad arguments (a malformed location, an empty runner command…).
    InvalidInput,
    /// An edited value does not fit its channel (the message names the JSON path).
    InvalidEdit,
    /// Stored data could not be interpreted.
    Corrupt,
    /// A database query failed.
    Query,
    /// Reading or writing a file failed.
    Io,
    /// Another process holds a lock on the database (SQLite "database is locked"): try again.
    Locked,
    /// The server did not answer within the location's time limit (Postgres: a stalled
    /// server, network or proxy, or a statement over `statement_timeout`): try again.
    Timeout,
    /// The database is encrypted and no key was given (`LANGGRAPH_AES_KEY`, the keyring or
    /// the app's Unlock), the key given does not open it, or its values are sealed with a
    /// cipher Flashback cannot open (then nothing is written from them).
    Encrypted,
    /// The database cannot be written here (a read-only file or directory).
    ReadOnly,
    /// The work was cancelled.
    Cancelled,
    /// The database handle is not open (the server restarted, or it was closed).
    NotOpen,
    /// `flashback serve`: the request lacks the token printed at start, or came from elsewhere.
    Unauthorized,
    /// Not allowed here: `flashback serve` needs `--allow-run` / `--export-dir` for that.
    NotAllowed,
    /// Anything else.
    Internal,
}

impl ErrorCode {
    /// The `flashback` CLI's exit status for this failure (the one mapping): 2 bad usage,
    /// 3 thread/checkpoint not found, 4 not a LangGraph database, 1 anything else. (5, a
    /// bundle that failed `verify`, is a successful command's answer, not an error.)
    pub fn exit_code(self) -> u8 {
        match self {
            ErrorCode::InvalidInput | ErrorCode::InvalidEdit => 2,
            ErrorCode::NotFound => 3,
            ErrorCode::NotADatabase | ErrorCode::UnsupportedSchema => 4,
            ErrorCode::Connection
            | ErrorCode::Auth
            | ErrorCode::NeedsPassword
            | ErrorCode::Corrupt
            | ErrorCode::Query
            | ErrorCode::Io
            | ErrorCode::Locked
            | ErrorCode::Timeout
            | ErrorCode::Encrypted
            | ErrorCode::ReadOnly
            | ErrorCode::Cancelled
            | ErrorCode::NotOpen
            | ErrorCode::Unauthorized
            | ErrorCode::NotAllowed
            | ErrorCode::Internal => 1,
        }
    }
}

/// A failed command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, thiserror::Error)]
#[error("{message}")]
pub struct ApiError {
    /// The kind of failure.
    pub code: ErrorCode,
    /// One sentence for the user (never a password).
    pub message: String,
}

impl ApiError {
    /// An error of `code` with `message`.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError {
            code,
            message: message.into(),
        }
    }

    /// [`ErrorCode::InvalidInput`].
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::InvalidInput, message)
    }

    /// [`ErrorCode::NotFound`].
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::NotFound, message)
    }

    /// [`ErrorCode::Io`].
    pub fn io(message: impl Into<String>) -> Self {
        Self::new(ErrorCode::Io, message)
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        let code = match &e {
            StoreError::NotFound(_) => ErrorCode::NotFound,
            StoreError::NotADatabase { .. } => ErrorCode::NotADatabase,
            StoreError::UnsupportedSchema { .. } => ErrorCode::UnsupportedSchema,
            StoreError::Connection(_) => ErrorCode::Connection,
            StoreError::Auth(_) => ErrorCode::Auth,
            StoreError::Query(_) => ErrorCode::Query,
            StoreError::Corrupt { .. } | StoreError::UnreadableFile { .. } => ErrorCode::Corrupt,
            StoreError::InvalidInput(_) => ErrorCode::InvalidInput,
            StoreError::Locked(_) | StoreError::InUse(_) => ErrorCode::Locked,
            StoreError::ReadOnly(_) => ErrorCode::ReadOnly,
            StoreError::Sealed(_) => ErrorCode::Encrypted,
            StoreError::Timeout { .. } | StoreError::ServerTimeout(_) => ErrorCode::Timeout,
        };
        ApiError::new(code, e.to_string())
    }
}

impl From<EngineError> for ApiError {
    fn from(e: EngineError) -> Self {
        match e {
            EngineError::Store(s) => s.into(),
            EngineError::UnknownCheckpoint { .. } | EngineError::UnknownNamespace(_) => {
                ApiError::not_found(e.to_string())
            }
            EngineError::InvalidEdit { .. } => ApiError::new(ErrorCode::InvalidEdit, e.to_string()),
            EngineError::Cancelled => ApiError::new(ErrorCode::Cancelled, "cancelled"),
            EngineError::MixedThreads { .. } => ApiError::new(ErrorCode::Corrupt, e.to_string()),
        }
    }
}

impl From<rusqlite::Error> for ApiError {
    fn from(e: rusqlite::Error) -> Self {
        ApiError::new(
            ErrorCode::Internal,
            format!("Flashback's own state database: {e}"),
        )
    }
}

/// Results of API calls.
pub type ApiResult<T> = Result<T, ApiError>;

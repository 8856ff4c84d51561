//! The engine's error type.

use thiserror::Error;

/// What can go wrong in the engine.
///
/// Corrupt data (parent cycles, missing parents, unknown spawning checkpoints) is *not* an
/// error: it is reported as warnings and the rest of the thread stays usable.
#[derive(Debug, Error)]
pub enum EngineError {
    /// The headers passed to [`crate::ThreadDag::build`] belong to more than one thread.
    #[error("checkpoints from more than one thread: {expected:?} and {found:?}")]
    MixedThreads {
        /// The first thread id seen.
        expected: String,
        /// Another thread id.
        found: String,
    },
    /// A namespace was asked for that the thread does not have.
    #[error("namespace {0:?} not found in this thread")]
    UnknownNamespace(String),
    /// A checkpoint was asked for that the thread does not have.
    #[error("checkpoint {id:?} not found in namespace {ns:?}")]
    UnknownCheckpoint {
        /// The namespace.
        ns: String,
        /// The checkpoint id.
        id: String,
    },
    /// Reading or writing the database failed.
    #[error(transparent)]
    Store(#[from] flashback_storage::StoreError),
    /// The caller stopped the work (a progress observer returned `false`).
    #[error("cancelled")]
    Cancelled,
    /// A user-given value for a channel does not fit (edit forks).
    #[error("cannot set channel {channel:?}: {source}")]
    InvalidEdit {
        /// The channel.
        channel: String,
        /// What is wrong, with a JSON path.
        #[source]
        source: flashback_codec::unview::UnviewError,
    },
}

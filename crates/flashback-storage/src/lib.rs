//! # flashback-storage
//!
//! Reads LangGraph checkpoint databases behind one async trait, [`CheckpointStore`], with a
//! SQLite implementation ([`sqlite::SqliteStore`], rusqlite, opened **read-only** — browsing never
//! changes a byte of the user's file, unlike Python's saver which adds a column on open) and a
//! Postgres implementation ([`postgres::PostgresStore`], sqlx, read-only transactions; feature
//! `postgres`).
//!
//! Writing is separate and explicit: [`CheckpointSaver`] (`setup`, `put`, `put_writes`,
//! `delete_thread`) stores rows byte-identical to the Python savers' — a
//! [`sqlite::SqliteSaver`] opens its own read-write connection, and the Postgres store
//! writes only inside these methods, each in one transaction. [`open`] with [`Read`] never
//! writes; [`Write`] is for explicit actions such as a fork, [`Create`] for a program that
//! may create the database. What a location holds ([`Layout`]) is detected once, by `open`.
//!
//! ## The model
//!
//! ```text
//!  thread "t1", ns ""            ns "child:<task id>" (a subgraph run, spawned by c2's task)
//!  c0 ◀─parent─ c1 ◀─ c2 ◀─ c3         s0 ◀─ s1
//!                └─◀ c2' (a fork: update_state / time travel)
//! ```
//!
//! A *checkpoint* is the graph state after a step: a document with channel values and versions
//! plus JSON metadata, chained to its parent by `parent_checkpoint_id` (same thread and
//! namespace). Several children of one parent are branches. *Pending writes* are rows a task
//! wrote against a checkpoint (its results, errors, interrupts) before the next checkpoint
//! existed; they are returned sorted by `(task_path, task_id, idx)` exactly as Python does.
//! Subgraphs live in the same thread under their own namespace.
//!
//! Schema generations are detected on open ([`SchemaInfo`]); anything unknown is a clear
//! [`StoreError::UnsupportedSchema`]. A database may also (or only) hold LangGraph's memory
//! Store ([`memory`], [`SchemaInfo::holds`]): a store-only database opens as a checkpoint
//! store without threads, its items read through [`CheckpointStore::memory`] and written
//! through [`open_memory_writable`].

#![deny(missing_docs)]

pub mod agentserver;
mod decode;
pub mod devserver;
pub mod error;
mod escape;
pub mod find;
pub mod generic;
pub mod indexes;
pub mod jsformat;
pub mod layout;
pub mod maintenance;
pub mod memory;
pub mod model;
mod open;
pub mod pgurl;
#[cfg(feature = "postgres")]
pub mod postgres;
pub mod pyfmt;
pub mod report;
pub mod saver;
pub mod sealed;
pub mod serializer;
pub mod server;
pub mod sqlite;
mod stored;
pub mod three;

pub use error::StoreError;
pub use find::{FoundThread, ThreadQuery};
pub use flashback_codec::Decoded;
pub use layout::{Dialect, Layout, SchemaKind};
pub use model::*;
pub use open::{open, open_memory_writable, Access, Create, Read, Write};
pub use pgurl::is_postgres_url;
pub use saver::{CheckpointSaver, PutRequest, WriteBatch};
pub use sealed::EncryptionProbe;
pub use serializer::Serde;
pub use stored::{StoredBytes, ValueAt};

use async_trait::async_trait;

/// The largest stored value [`CheckpointStore::thread_writes_mentioning`] reads.
pub const MENTION_MAX_BYTES: usize = 1 << 20;

/// Read access to a LangGraph checkpoint database.
///
/// Only [`get_tuple`](Self::get_tuple) has a default body (one `list_tuples` of one
/// checkpoint): every source answers the other methods itself, or names the whole-thread
/// path in [`generic`] on purpose.
#[async_trait]
pub trait CheckpointStore: Send + Sync {
    /// The detected schema.
    fn schema(&self) -> &SchemaInfo;

    /// LangGraph's memory Store in the same database, read through the same read-only
    /// connection; `None` when the database has none (see [`memory`]).
    fn memory(&self) -> Option<&dyn memory::MemoryRead>;

    /// What the server that wrote the location knows beyond its checkpoints (its threads'
    /// status and runs, notes on a running or stale server: [`server`]); `None` for a
    /// database.
    async fn server(&self) -> Result<Option<std::sync::Arc<server::ServerState>>, StoreError>;

    /// A source written through a server's own API (the Agent Server: forks, runs, copies
    /// are requests the server decides, [`agentserver::write`]); `None` for a database or a
    /// folder, written through a saver.
    fn server_writes(&self) -> Option<&dyn agentserver::write::ServerWrites> {
        None
    }

    /// Every thread with its namespaces, checkpoint count and latest root checkpoint, sorted by
    /// thread id.
    async fn list_threads(&self) -> Result<Vec<ThreadInfo>, StoreError>;

    /// The `limit` most recently active threads (by their latest root checkpoint id, which
    /// grows with time), newest first, as [`list_threads`](Self::list_threads) describes
    /// them: a thread list's first page, without describing every thread. Threads without a
    /// root-namespace checkpoint are left out.
    async fn list_recent_threads(&self, limit: usize) -> Result<Vec<ThreadInfo>, StoreError>;

    /// The threads that have a checkpoint matching `query` (its metadata filter and time
    /// range at once), newest match first, after `query.after`, at most `query.limit`: see
    /// [`find`]. Databases answer it in SQL; the sources read whole name
    /// [`find::find_threads`].
    async fn find_threads(&self, query: &ThreadQuery) -> Result<Vec<FoundThread>, StoreError>;

    /// Checkpoint headers (no channel values, no writes), newest first, with Python `list()`
    /// semantics for the query.
    async fn list_headers(&self, query: &ListQuery) -> Result<Vec<CheckpointHeader>, StoreError>;

    /// Full checkpoints with values and pending writes, newest first, with Python `list()`
    /// semantics (what `saver.list(...)` yields).
    async fn list_tuples(&self, query: &ListQuery) -> Result<Vec<CheckpointTuple>, StoreError>;

    /// One checkpoint (the latest of the namespace when `checkpoint_id` is `None`), as
    /// `saver.get_tuple(config)` returns it; `Ok(None)` when there is none.
    async fn get_tuple(
        &self,
        thread_id: &str,
        checkpoint_ns: &str,
        checkpoint_id: Option<&str>,
    ) -> Result<Option<CheckpointTuple>, StoreError> {
        let query = ListQuery::one(thread_id, checkpoint_ns, checkpoint_id);
        Ok(self.list_tuples(&query).await?.into_iter().next())
    }

    /// The namespaces of a thread, sorted (`""` first): what a point read needs without
    /// listing the thread's checkpoints. Backends answer it from the primary key's index.
    async fn thread_namespaces(&self, thread_id: &str) -> Result<Vec<String>, StoreError>;

    /// Every pending write of a thread (all namespaces) without its value, in no particular
    /// order: which tasks ran or failed at each checkpoint, read without decoding anything.
    /// Backends read only the key columns.
    async fn thread_writes(&self, thread_id: &str) -> Result<Vec<WriteInfo>, StoreError>;

    /// A thread's pending writes whose stored value holds `needle` (its bytes, as stored: a
    /// value stored encrypted never matches) and is at most [`MENTION_MAX_BYTES`], decoded —
    /// e.g. the messages that carry `usage_metadata`. A backend that cannot search the bytes
    /// returns every write with its value (the caller checks the values anyway).
    async fn thread_writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, Decoded)>, StoreError>;

    /// What the newest rows say about encryption (see [`sealed`]).
    async fn encryption_probe(&self) -> Result<EncryptionProbe, StoreError>;

    /// One value of a checkpoint as stored (a channel's value, or a pending write), read
    /// without reading or decoding anything else: a page of a list over the decode budget is
    /// read from it. `Ok(None)`: no such value, or this source cannot read one value alone
    /// (the caller then decodes the checkpoint).
    async fn stored_value(
        &self,
        _thread_id: &str,
        _checkpoint_ns: &str,
        _checkpoint_id: &str,
        _at: ValueAt<'_>,
    ) -> Result<Option<StoredBytes>, StoreError> {
        Ok(None)
    }

    /// Several checkpoints, each as [`get_tuple`](Self::get_tuple) returns it, in the order of
    /// `keys` (`(thread_id, checkpoint_ns, checkpoint_id)`): what a list of many threads needs.
    /// Backends may read them in one go (SQLite: one call to its connection, one snapshot).
    async fn get_tuples(
        &self,
        keys: &[(&str, &str, Option<&str>)],
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError>;

    /// [`get_tuples`](Self::get_tuples) decoding only the values of the channels `keep`
    /// accepts (the others are left out of `channel_values`; everything else is read as
    /// usual): what a thread list needs to tell a thread's status, without decoding its state.
    async fn get_tuples_selecting(
        &self,
        keys: &[(&str, &str, Option<&str>)],
        keep: ChannelFilter,
    ) -> Result<Vec<Option<CheckpointTuple>>, StoreError>;
}

/// Sort threads by their latest root checkpoint id, newest first (ties by thread id).
pub(crate) fn newest_first(threads: &mut [ThreadInfo]) {
    threads.sort_by(|a, b| {
        (&b.latest_checkpoint_id, &a.thread_id).cmp(&(&a.latest_checkpoint_id, &b.thread_id))
    });
}

/// Check a metadata filter key the way Python's SQLite saver does (`^[a-zA-Z0-9_.-]+$`).
pub fn validate_filter_key(key: &str) -> Result<(), StoreError> {
    let ok = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(StoreError::InvalidInput(format!(
            "metadata filter key {key:?} must match ^[a-zA-Z0-9_.-]+$"
        )))
    }
}

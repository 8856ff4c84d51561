//! Jobs: export, verify and re-run requests, progress, events and snapshots.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;

/// Export format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// `flashback-audit/1` JSON.
    Json,
    /// A standalone HTML report with the bundle embedded.
    Html,
}

/// Export an audit bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ExportRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// The branch ending here (default: the whole tree).
    #[serde(default)]
    pub checkpoint_id: Option<String>,
    /// JSON or HTML.
    pub format: ExportFormat,
    /// Key patterns to mask (`*token*`).
    #[serde(default)]
    pub redact: Vec<String>,
    /// Where to write it; `None` returns the content (a browser downloads it).
    #[serde(default)]
    pub path: Option<String>,
    /// On an encrypted database, export the decrypted values (needs the key). Otherwise its
    /// encrypted values are exported as their ciphertext's size and SHA-256 only.
    #[serde(default)]
    pub decrypt: bool,
}

/// What an export produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ExportResult {
    /// The file written, if a path was given.
    pub path: Option<String>,
    /// A suggested file name.
    pub file_name: String,
    /// The content, when no path was given.
    pub content: Option<String>,
    /// The bundle hash.
    pub bundle_hash: String,
    /// Checkpoints exported.
    pub checkpoints: u32,
    /// Bytes.
    pub size: u32,
}

/// Verify an exported bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct VerifyRequest {
    /// A file to read…
    #[serde(default)]
    pub path: Option<String>,
    /// …or the content itself.
    #[serde(default)]
    pub content: Option<String>,
}

/// Re-run from a checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct RerunRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The checkpoint to fork and resume from.
    pub checkpoint_id: String,
    /// The shell command that resumes the graph (`python my_agent.py`).
    pub runner: String,
    /// Stop it after this many seconds.
    pub timeout_secs: u32,
    /// The value to resume an interrupt with (`Command(resume=…)`): handed to the runner as
    /// JSON in `FLASHBACK_RESUME` (absent: the variable is not set).
    #[serde(default)]
    pub resume: Option<serde_json::Value>,
}

/// Search inside the threads' values (a job: one [`JobEvent::SearchHit`] per matching thread;
/// the result is a [`ValueSearchSummary`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct ValueSearchRequest {
    /// Database handle.
    pub db: String,
    /// The text to find, any case, in keys and in string and number values.
    pub query: String,
    /// Stop after this many matching threads (default 200).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Search only these threads (default: every thread, newest first).
    #[serde(default)]
    pub threads: Option<Vec<String>>,
}

/// What a value search went through.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ValueSearchSummary {
    /// Threads to search (with a root-namespace checkpoint).
    pub threads_total: u32,
    /// Threads searched.
    pub threads_searched: u32,
    /// Threads whose latest checkpoint holds the text.
    pub threads_matched: u32,
    /// Stopped at the limit before every thread was searched.
    pub truncated: bool,
    /// Threads skipped: their values are encrypted and the database is locked.
    pub threads_locked: u32,
    /// Threads skipped: their latest checkpoint could not be read.
    pub threads_unreadable: u32,
}

/// The schema a conversion writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "kebab-case")]
pub enum ConvertTo {
    /// Flashback's three-table store (`docs/three-table.md`).
    ThreeTable,
    /// LangGraph's own schema (SQLite or Postgres saver).
    Langgraph,
}

/// Copy an open database's threads into another database, in the other schema.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct ConvertRequest {
    /// The source: a database handle.
    pub db: String,
    /// The destination: a `.sqlite` path (created when missing) or a `postgres://` URL.
    pub target: String,
    /// The schema to write.
    pub to: ConvertTo,
    /// Three-table only: store every channel version whole (method A) instead of as deltas.
    #[serde(default)]
    pub whole_blobs: bool,
    /// The threads to convert (empty: every thread).
    #[serde(default)]
    pub threads: Vec<String>,
    /// Only read and estimate; nothing is written (the destination is not even created).
    #[serde(default)]
    pub dry_run: bool,
}

/// What a conversion copied, or (dry run) would copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ConvertReport {
    /// Threads converted (each in one transaction on the destination).
    pub threads: u32,
    /// Checkpoints.
    pub checkpoints: u32,
    /// Pending writes.
    pub writes: u32,
    /// The channel values' bytes as LangGraph stores them: every version whole.
    pub value_bytes: f64,
    /// The same values as the three-table store stores them with `whole_blobs` off (method B);
    /// `None` when converting to LangGraph's schema.
    pub three_table_bytes: Option<f64>,
    /// Nothing was written.
    pub dry_run: bool,
    /// Threads left out, each with why (a checkpoint that cannot be read as stored, a value
    /// that cannot be written back as it was read, a target thread that is not empty); the
    /// others are converted.
    pub skipped: Vec<SkippedThread>,
}

/// Where the bytes of an open database, or of one of its threads, are (`docs/storage.md`).
#[derive(Debug, Clone, Serialize, Deserialize, Type, JsonSchema)]
pub struct StorageRequest {
    /// The database handle.
    pub db: String,
    /// One thread (all its namespaces, with each checkpoint's size); `None`: the whole
    /// database.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// How many rows the lists keep (default 20).
    #[serde(default)]
    pub top: Option<u32>,
}

/// A thread a conversion left out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SkippedThread {
    /// The thread.
    pub thread_id: String,
    /// Why, one line.
    pub reason: String,
}

/// Kinds of background work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// An audit export.
    Export,
    /// A re-run with a live tail.
    Rerun,
    /// A search inside the threads' values.
    Search,
    /// A conversion between LangGraph's schema and the three-table store.
    Convert,
    /// A storage report (where the bytes are).
    Storage,
    /// Creating or dropping the index advisor's indexes.
    Index,
}

/// Where a job is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    /// Still working.
    Running,
    /// Done; `result` holds what it made.
    Succeeded,
    /// Failed; `error` says why.
    Failed,
    /// Stopped by the user.
    Cancelled,
}

/// Progress of a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct JobProgress {
    /// Units done.
    pub done: u32,
    /// Units in all (0 when unknown).
    pub total: u32,
    /// What it is doing.
    pub label: String,
}

/// Something a job reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum JobEvent {
    /// A checkpoint appeared in the database.
    Checkpoint {
        /// Namespace.
        checkpoint_ns: String,
        /// Id.
        checkpoint_id: String,
        /// Parent id.
        parent_checkpoint_id: Option<String>,
        /// `metadata.step`.
        step: Option<i32>,
        /// `metadata.source`.
        source: Option<String>,
    },
    /// A line the runner printed.
    Output {
        /// `stdout` or `stderr`.
        stream: String,
        /// The line.
        line: String,
    },
    /// A thread whose latest checkpoint holds the searched text (value search).
    SearchHit {
        /// Thread id.
        thread_id: String,
        /// The checkpoint searched: the thread's latest in the root namespace.
        checkpoint_id: String,
        /// The first matches, in the order the state view shows them.
        matches: Vec<flashback_engine::search::ValueHit>,
        /// Whether the checkpoint holds more matches than these.
        more: bool,
    },
}

/// A job as the UI polls it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct JobSnapshot {
    /// Job id.
    pub id: String,
    /// What it does.
    pub kind: JobKind,
    /// Where it is.
    pub state: JobState,
    /// How far.
    pub progress: Option<JobProgress>,
    /// Events after the requested cursor.
    pub events: Vec<JobEvent>,
    /// Pass this as `cursor` next time.
    pub cursor: u32,
    /// What it made (export: [`ExportResult`]; rerun: the fork).
    pub result: Option<Json>,
    /// Why it failed.
    pub error: Option<crate::ApiError>,
}

/// Poll a job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct JobPollRequest {
    /// Job id.
    pub job: String,
    /// Events already seen.
    #[serde(default)]
    pub cursor: u32,
}

/// A job id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct JobRequest {
    /// Job id.
    pub job: String,
}

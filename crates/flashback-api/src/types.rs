//! Requests and responses of the commands (exported to TypeScript through specta).
//!
//! Field names are snake_case on both sides, as in the CLI's JSON. Decoded values travel as
//! the JSON view of `docs/json-view.md`. Counts are `u32`; ids are strings.

use flashback_engine::merge::MergeMode;
use flashback_engine::{EdgeKind, TaskSet, TaskStatus, ThreadStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;

/// Which front end the backend serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum HostMode {
    /// The Tauri desktop app.
    Desktop,
    /// `flashback serve` (a browser).
    Serve,
}

/// SQLite file or Postgres server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DbKind {
    /// A `.sqlite` file.
    Sqlite,
    /// A `postgres://` URL.
    Postgres,
}

impl DbKind {
    /// The `connections.kind` value.
    pub fn as_str(self) -> &'static str {
        match self {
            DbKind::Sqlite => "sqlite",
            DbKind::Postgres => "postgres",
        }
    }
}

/// An open database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct DbInfo {
    /// The handle the other commands take.
    pub db: String,
    /// SQLite or Postgres.
    pub kind: DbKind,
    /// A short name (file name, or `database @ host`).
    pub display_name: String,
    /// The path, or the URL without its password.
    pub location: String,
    /// The detected LangGraph schema.
    pub schema: String,
    /// Whether this is the built-in demo database (a private copy).
    pub demo: bool,
}

/// What the UI needs at start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AppInfo {
    /// Flashback's version.
    pub version: String,
    /// Desktop or serve.
    pub host: HostMode,
    /// Whether Postgres passwords can be saved in the OS keyring.
    pub keyring: bool,
    /// The database to show first (command line, `--demo`, or the last one opened).
    pub initial: Option<DbInfo>,
    /// Why the initial database could not be opened, if it could not.
    pub initial_error: Option<crate::ApiError>,
    /// Saved settings (`theme`, …).
    pub settings: Vec<Setting>,
}

/// A saved setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Setting {
    /// `theme`, `runner:<location>`, …
    pub key: String,
    /// Its value.
    pub value: String,
}

/// Open a database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct OpenRequest {
    /// A path to a SQLite file or a `postgres://` URL.
    pub location: String,
    /// The Postgres password, when not in the URL (never stored in plain files).
    #[serde(default)]
    pub password: Option<String>,
    /// Add it to the recent connections.
    #[serde(default)]
    pub remember: bool,
    /// Keep the Postgres password in the OS keyring.
    #[serde(default)]
    pub save_password: bool,
}

/// Open the built-in demo database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DemoRequest {
    /// Start again from a fresh copy (drops forks made in the demo).
    #[serde(default)]
    pub reset: bool,
}

/// A remembered connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RecentConnection {
    /// Row id.
    pub id: i32,
    /// SQLite or Postgres.
    pub kind: DbKind,
    /// A short name.
    pub display_name: String,
    /// Path or URL without password.
    pub location: String,
    /// When it was last opened (UTC ISO 8601).
    pub last_opened_at: Option<String>,
    /// Whether a password for it is in the keyring.
    pub has_saved_password: bool,
    /// For files: whether the file still exists.
    pub missing: bool,
}

/// Open a remembered connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct OpenRecentRequest {
    /// [`RecentConnection::id`].
    pub id: i32,
    /// A password to use (and save again if asked) instead of the saved one.
    #[serde(default)]
    pub password: Option<String>,
    /// Keep `password` in the keyring.
    #[serde(default)]
    pub save_password: bool,
}

/// A connection id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ConnectionId {
    /// [`RecentConnection::id`].
    pub id: i32,
}

/// A database handle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DbRequest {
    /// [`DbInfo::db`].
    pub db: String,
}

/// One thread of the database.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ThreadSummary {
    /// Thread id.
    pub thread_id: String,
    /// Namespaces (`""` = the root graph).
    pub namespaces: Vec<String>,
    /// Checkpoints in all namespaces.
    pub checkpoint_count: u32,
    /// The head.
    pub latest_checkpoint_id: Option<String>,
    /// Its timestamp.
    pub latest_ts: Option<String>,
    /// Its step.
    pub latest_step: Option<i32>,
    /// Finished, interrupted, failed or pending.
    pub status: Option<ThreadStatus>,
    /// For interrupted threads: the interrupt values waiting for a human (JSON view).
    pub interrupts: Vec<Json>,
    /// For failed threads: the error (JSON view).
    pub error: Option<Json>,
    /// Nodes due next.
    pub next: Vec<String>,
}

/// A thread of a database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ThreadRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
}

/// The checkpoint graph of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct GraphRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Subgraph namespaces to hide (collapsed in the UI).
    #[serde(default)]
    pub collapsed: Vec<String>,
}

/// A line from one row to the next.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
pub struct GraphEdge {
    /// Lane at this row.
    pub from: u32,
    /// Lane at the next row.
    pub to: u32,
    /// Parent link, or a subgraph's link to its spawning checkpoint.
    pub kind: EdgeKind,
}

/// One checkpoint of the graph (a row, newest first).
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct GraphRow {
    /// Checkpoint id.
    pub id: String,
    /// Namespace.
    pub ns: String,
    /// Stored parent id.
    pub parent_id: Option<String>,
    /// Lane of the dot.
    pub lane: u32,
    /// Namespace depth (0 = root graph).
    pub depth: u32,
    /// Branch number.
    pub branch: u32,
    /// Two or more children.
    pub fork_point: bool,
    /// The thread's head.
    pub head: bool,
    /// The latest checkpoint of its namespace.
    pub ns_head: bool,
    /// Row of the parent (or spawning checkpoint).
    pub parent_row: Option<u32>,
    /// Lane of that row.
    pub parent_lane: Option<u32>,
    /// The stored parent is missing from the database.
    pub orphan_parent: Option<String>,
    /// Lines from this row down to the next.
    pub edges: Vec<GraphEdge>,
    /// `metadata.step`.
    pub step: Option<i32>,
    /// `metadata.source` (`input`, `loop`, `update`, `fork`).
    pub source: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// Subgraph namespaces this checkpoint's step ran.
    pub subgraphs: Vec<String>,
    /// What Flashback did to make it (`copy_fork`, `edit_fork`, `merge`), if it did.
    pub flashback_action: Option<String>,
}

/// A subgraph namespace of the thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct NamespaceInfo {
    /// The namespace.
    pub ns: String,
    /// Its checkpoints.
    pub count: u32,
    /// Whether it is hidden in this layout.
    pub collapsed: bool,
}

/// A thread laid out as branch lanes.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ThreadGraph {
    /// Thread id.
    pub thread_id: String,
    /// Lanes used.
    pub width: u32,
    /// The head checkpoint.
    pub head: Option<String>,
    /// Rows, newest first.
    pub rows: Vec<GraphRow>,
    /// Subgraph namespaces (excluding the root graph).
    pub namespaces: Vec<NamespaceInfo>,
    /// Data problems (parent cycles, orphans) found while building the DAG.
    pub warnings: Vec<String>,
}

/// One checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CheckpointRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Show `SecretStr` values in plain text.
    #[serde(default)]
    pub reveal_secrets: bool,
}

/// One channel's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ChannelValue {
    /// The channel.
    pub channel: String,
    /// Its version.
    pub version: Option<String>,
    /// The Python type (`list`, `langchain_core.messages.ai.AIMessage`, …).
    pub type_name: String,
    /// JSON view.
    pub value: Json,
    /// Stored size in bytes.
    pub size: u32,
    /// Whether it could not be decoded (the view holds `$error`).
    pub error: Option<String>,
}

/// What a pending write is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum WriteKind {
    /// A value for a state channel.
    Value,
    /// `__error__`: the task raised.
    Error,
    /// `__interrupt__`: the task is waiting for a human.
    Interrupt,
    /// `__resume__`: the answer to an interrupt.
    Resume,
    /// `__pregel_tasks`: a `Send` packet.
    Send,
    /// Other control channels (`branch:to:*`, `__no_writes__`, …).
    Control,
}

/// One pending write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct WriteEntry {
    /// Position in the task's batch (negative for special channels).
    pub idx: i32,
    /// The channel.
    pub channel: String,
    /// Serde type tag.
    pub type_tag: String,
    /// JSON view.
    pub value: Json,
    /// Stored size in bytes.
    pub size: u32,
    /// What it is.
    pub kind: WriteKind,
}

/// The writes of one task, in execution order.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct WriteGroup {
    /// Task id.
    pub task_id: String,
    /// Task path.
    pub task_path: String,
    /// The node that ran (from the derived tasks), if known.
    pub node: Option<String>,
    /// The task's status, if it is one of the derived tasks.
    pub status: Option<TaskStatus>,
    /// Its writes, by `idx`.
    pub writes: Vec<WriteEntry>,
}

/// Everything about one checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct CheckpointDetail {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent id.
    pub parent_checkpoint_id: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// `metadata.step`.
    pub step: Option<i32>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// `metadata.run_id`.
    pub run_id: Option<String>,
    /// Metadata as stored.
    pub metadata: Json,
    /// Channel values in stored order.
    pub values: Vec<ChannelValue>,
    /// Pending writes grouped per task, in execution order.
    pub writes: Vec<WriteGroup>,
    /// Next tasks (as `get_state` shows them).
    pub tasks: TaskSet,
    /// Live (latest of its namespace: finished tasks drop out of `next`) or history.
    pub live: bool,
    /// The LangGraph config that points at this checkpoint.
    pub config: Json,
    /// Subgraph namespaces run from this checkpoint.
    pub subgraphs: Vec<String>,
}

/// A checkpoint by namespace and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CheckpointRef {
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
}

/// Diff two checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DiffRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// The older side.
    pub a: CheckpointRef,
    /// The newer side.
    pub b: CheckpointRef,
}

/// The steps of a branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ReplayRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The branch tip (default: the namespace's head).
    #[serde(default)]
    pub tip: Option<String>,
}

/// A new value for a channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ChannelEdit {
    /// The channel.
    pub channel: String,
    /// Its new value, in the JSON view.
    pub value: Json,
}

/// Fork a checkpoint (copy, or with edited channels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ForkRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The checkpoint to fork from.
    pub checkpoint_id: String,
    /// Channels to change (empty: a copy fork).
    #[serde(default)]
    pub edits: Vec<ChannelEdit>,
}

/// Check an edited value without writing.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct ValidateEditRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The checkpoint to fork from.
    pub checkpoint_id: String,
    /// The edit.
    pub edit: ChannelEdit,
}

/// Whether an edit fits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct EditCheck {
    /// It fits.
    pub ok: bool,
    /// Why not.
    pub message: Option<String>,
    /// Where (JSON path such as `values.messages[1].tool_calls`).
    pub path: Option<String>,
}

/// The 3-way view of branches A and B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct MergePreviewRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Tip of branch A (the merge goes on top of it).
    pub into: String,
    /// Tip of branch B (values come from here).
    pub from: String,
    /// Channels (empty: all).
    #[serde(default)]
    pub channels: Vec<String>,
}

/// A channel to take from B.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct MergeChannel {
    /// The channel.
    pub channel: String,
    /// B's value, or A's list plus B's additions.
    pub mode: MergeMode,
}

/// Merge channels of branch B into branch A.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct MergeRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Tip of branch A.
    pub into: String,
    /// Tip of branch B.
    pub from: String,
    /// What to take.
    pub channels: Vec<MergeChannel>,
}

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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
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
}

/// Delete a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DeleteRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Only say what would go.
    pub dry_run: bool,
}

/// What a delete removes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DeleteReport {
    /// Thread id.
    pub thread_id: String,
    /// Checkpoints (all namespaces).
    pub checkpoints: u32,
    /// Pending writes.
    pub writes: u32,
    /// Nothing was written.
    pub dry_run: bool,
}

/// `keep_latest` or `delete`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum PruneMode {
    /// Keep each namespace's latest checkpoint.
    KeepLatest,
    /// Delete everything of the threads.
    Delete,
}

/// Prune threads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PruneRequest {
    /// Database handle.
    pub db: String,
    /// Thread ids.
    pub thread_ids: Vec<String>,
    /// Strategy.
    pub strategy: PruneMode,
    /// Only say what would go.
    pub dry_run: bool,
}

/// What a prune removes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PruneSummary {
    /// Checkpoints removed (`[thread, ns, id]`), sorted.
    pub checkpoints: Vec<CheckpointKey>,
    /// Pending writes removed.
    pub writes: u32,
    /// Blobs removed (Postgres).
    pub blobs: u32,
    /// Nothing was written.
    pub dry_run: bool,
}

/// A checkpoint anywhere in the database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CheckpointKey {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
}

/// Save a setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SetSettingRequest {
    /// `theme` or `runner:<location>`.
    pub key: String,
    /// Its value (`None` deletes it).
    pub value: Option<String>,
}

/// Kinds of background work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum JobKind {
    /// An audit export.
    Export,
    /// A re-run with a live tail.
    Rerun,
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

/// Clamp a count for the wire.
pub(crate) fn count(n: impl TryInto<u32>) -> u32 {
    n.try_into().unwrap_or(u32::MAX)
}

/// `metadata.step` as an `i32`.
pub(crate) fn step_of(metadata: &Json) -> Option<i32> {
    metadata
        .get("step")
        .and_then(Json::as_i64)
        .and_then(|s| i32::try_from(s).ok())
}

/// `metadata.source`.
pub(crate) fn source_of(metadata: &Json) -> Option<String> {
    metadata
        .get("source")
        .and_then(Json::as_str)
        .map(str::to_owned)
}

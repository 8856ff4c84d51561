//! What the write commands take and return: edits, forks, merges, delete, prune, copy.

use flashback_engine::merge::MergeMode;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;

/// A new value for a channel.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type, JsonSchema)]
pub struct ChannelEdit {
    /// The channel.
    pub channel: String,
    /// Its new value, in the JSON view.
    pub value: Json,
}

/// Fork a checkpoint (copy, or with edited channels).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type, JsonSchema)]
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
    /// An Agent Server only: the node the update is made as (`update_state(…, as_node=…)`;
    /// absent: the server's choice). Databases ignore it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub as_node: Option<String>,
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct MergeChannel {
    /// The channel.
    pub channel: String,
    /// B's value, or A's list plus B's additions.
    pub mode: MergeMode,
}

/// Merge channels of branch B into branch A.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
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

/// Delete a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
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

/// Copy a thread to a new thread id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct CopyRequest {
    /// Database handle of the source.
    pub db: String,
    /// The thread to copy.
    pub thread_id: String,
    /// The new thread id (must not exist yet in the target).
    pub target_thread_id: String,
    /// Another open database to copy into (default: the same one).
    #[serde(default)]
    pub to_db: Option<String>,
}

/// Prune threads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct PruneRequest {
    /// Database handle.
    pub db: String,
    /// Thread ids.
    pub thread_ids: Vec<String>,
    /// Strategy.
    pub strategy: flashback_storage::maintenance::PruneStrategy,
    /// Only say what would go.
    pub dry_run: bool,
}

/// Delete a branch: a checkpoint and every checkpoint after it (a failed re-run's fork).
#[derive(Debug, Clone, Serialize, Deserialize, Type, JsonSchema)]
pub struct DeleteBranchRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The branch's first checkpoint (a fork).
    pub checkpoint_id: String,
    /// Only say what would go.
    pub dry_run: bool,
    /// The number of checkpoints the preview showed (the app sends it with the confirmed
    /// delete): when the branch holds another number inside the writing transaction — a
    /// program wrote to it since — nothing is deleted and `skipped` says so.
    #[serde(default)]
    pub expect_checkpoints: Option<u32>,
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
    /// Why nothing was deleted: the branch planned inside the writing transaction was not the
    /// one previewed (`expect_checkpoints`).
    pub skipped: Option<flashback_storage::maintenance::SkipReason>,
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

/// Rebuild a three-table thread's damaged blob rows from the writes, or preview it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct RepairRequest {
    /// Database handle.
    pub db: String,
    /// Thread id (every namespace of it is repaired).
    pub thread_id: String,
    /// Only say what would be written.
    pub dry_run: bool,
}

/// A thread status to prune (`--status`), one per [`flashback_engine::ThreadStatus`]: the
/// status the thread list shows, from the latest root checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StatusFilter {
    /// Nothing left to run.
    Finished,
    /// A task raised and nothing recovered.
    Failed,
    /// Waiting at an interrupt.
    Interrupted,
    /// Tasks are due but nothing waits for input (a crash, `interrupt_before`).
    Pending,
}

/// Prune across the whole database: the threads chosen by id, by the age of their latest
/// checkpoint and by status (all given conditions hold; at least one is required).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct RetentionRequest {
    /// Database handle.
    pub db: String,
    /// Only these threads (empty: any thread).
    #[serde(default)]
    pub thread_ids: Vec<String>,
    /// Only threads whose latest checkpoint is older than this: a number and a unit, `s`,
    /// `m`, `h`, `d` or `w` (`90m`, `12h`, `30d`, `2w`).
    #[serde(default)]
    pub older_than: Option<String>,
    /// Only threads with one of these statuses (empty: any).
    #[serde(default)]
    pub statuses: Vec<StatusFilter>,
    /// `keep_latest` (keep the latest checkpoints of each namespace) or `delete` (whole
    /// threads).
    pub strategy: flashback_storage::maintenance::PruneStrategy,
    /// With `keep_latest`: how many checkpoints of each namespace stay, along its head's
    /// lineage (default 1; at least 1).
    #[serde(default)]
    pub keep_last: Option<u32>,
    /// After the prune, give the space back (SQLite `VACUUM`, Postgres `VACUUM ANALYZE`). A
    /// dry run previews it (`vacuum_preview`: how long SQLite's stops every writer).
    #[serde(default)]
    pub vacuum: bool,
    /// Run SQLite's VACUUM even while another program has the file open (its writes wait
    /// for the whole VACUUM; LangGraph's give up after 5 s).
    #[serde(default)]
    pub force_vacuum: bool,
    /// Only say what would go (a read-only transaction; nothing is written).
    pub dry_run: bool,
}

/// What a retention prune was asked to choose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RetentionFilters {
    /// The thread ids given (empty: any thread).
    pub thread_ids: Vec<String>,
    /// The age given (`30d`), if any.
    pub older_than: Option<String>,
    /// The statuses given (empty: any).
    pub statuses: Vec<StatusFilter>,
    /// The strategy.
    pub strategy: flashback_storage::maintenance::PruneStrategy,
    /// Checkpoints kept per namespace (`keep_latest`; 0 with `delete`).
    pub keep_last: u32,
}

/// One thread a retention prune chose, and what goes from it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RetentionThread {
    /// Thread id.
    pub thread_id: String,
    /// Its status, as the thread list shows it (`None`: not derivable — no root checkpoint,
    /// encrypted without a key, or unreadable).
    pub status: Option<flashback_engine::ThreadStatus>,
    /// The time of its latest root checkpoint (`checkpoint.ts`, as stored).
    pub last_checkpoint_ts: Option<String>,
    /// Checkpoints that go (all namespaces).
    pub checkpoints: u64,
    /// Checkpoints that stay.
    pub kept: u64,
    /// Pending writes that go.
    pub writes: u64,
    /// Blob rows that go.
    pub blobs: u64,
    /// Their bytes as stored (documents, metadata, write and blob values).
    pub bytes: u64,
    /// Why it was left alone (nothing went from it), when it was: checked inside the
    /// writing transaction against the thread as it was when chosen.
    pub skipped: Option<flashback_storage::maintenance::SkipReason>,
}

/// The sums over a retention prune's threads.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RetentionTotals {
    /// Threads chosen.
    pub threads: u64,
    /// Of them, left alone ([`RetentionThread::skipped`]).
    #[serde(default)]
    pub skipped: u64,
    /// Checkpoints that go.
    pub checkpoints: u64,
    /// Checkpoints that stay (in the threads chosen).
    pub kept: u64,
    /// Pending writes that go.
    pub writes: u64,
    /// Blob rows that go.
    pub blobs: u64,
    /// Bytes that go, as stored.
    pub bytes: u64,
}

/// What a VACUUM gave back: SQLite `page_count × page_size` (the file), Postgres the summed
/// `pg_total_relation_size` of the saver's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct VacuumSummary {
    /// Before the VACUUM (after the prune).
    pub bytes_before: u64,
    /// After it.
    pub bytes_after: u64,
    /// `bytes_before - bytes_after` (0 when it grew).
    pub bytes_returned: u64,
}

/// What a retention prune removes (dry run) or removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct RetentionReport {
    /// The cutoff used for `older_than` (ISO 8601, UTC): threads whose latest checkpoint is
    /// earlier were chosen. `None` without `older_than`.
    pub cutoff: Option<String>,
    /// What was asked.
    pub filters: RetentionFilters,
    /// The threads chosen, by id.
    pub threads: Vec<RetentionThread>,
    /// Their sums.
    pub totals: RetentionTotals,
    /// The VACUUM's outcome (`None` without `vacuum`, in a dry run, or when it failed).
    pub vacuum: Option<VacuumSummary>,
    /// What the VACUUM asked for would do (with `vacuum`): how long SQLite's stops every
    /// writer, and whether another program has the file open now.
    pub vacuum_preview: Option<flashback_storage::maintenance::VacuumPreview>,
    /// Why the VACUUM failed after the prune committed (the prune's report stands).
    pub vacuum_error: Option<String>,
    /// Writing transactions the prune committed (0 in a dry run): each holds the write lock
    /// briefly, so a program writing beside it waits little.
    pub transactions: u32,
    /// The longest of them, in milliseconds.
    pub longest_transaction_ms: u64,
    /// Nothing was written.
    pub dry_run: bool,
}

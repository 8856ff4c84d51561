//! What the write commands take and return: edits, forks, merges, delete, prune, copy.

use flashback_engine::merge::MergeMode;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;

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

/// Copy a thread to a new thread id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
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
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
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

/// Rebuild a three-table thread's damaged blob rows from the writes, or preview it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RepairRequest {
    /// Database handle.
    pub db: String,
    /// Thread id (every namespace of it is repaired).
    pub thread_id: String,
    /// Only say what would be written.
    pub dry_run: bool,
}

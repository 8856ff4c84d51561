//! The bundle model: [`Bundle`] and its parts ([`BundleCheckpoint`], [`BundleWrite`],
//! [`ToolInfo`], [`SourceInfo`], [`Scope`]), the [`FORMAT`] identifier, and what to export
//! ([`ExportOptions`]).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};

/// The bundle format identifier (`Bundle::format`).
pub const FORMAT: &str = "flashback-audit/1";

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// `Some(id)`: the branch ending at this checkpoint (its lineage to the root, in its own
    /// namespace); `None`: the whole tree (every checkpoint, all namespaces).
    pub checkpoint_id: Option<String>,
    /// Key patterns to redact: case-insensitive globs (`*` any run, `?` one character) matched
    /// against whole keys; see the [module docs](super).
    pub redact: Vec<String>,
    /// The exporting tool's version (`Bundle::tool.version`).
    pub tool_version: String,
    /// `generated_at` to record; `None` = now (UTC, ISO 8601). For reproducible bundles.
    pub generated_at: Option<String>,
    /// How DeltaChannels are rebuilt (the reducers chosen for the database).
    pub delta: crate::delta::DeltaOptions,
}

/// Which part of the thread a bundle holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// One checkpoint and its ancestors.
    Branch,
    /// Every checkpoint of the thread, all namespaces.
    Tree,
}

impl Scope {
    /// `"branch"` or `"tree"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Branch => "branch",
            Scope::Tree => "tree",
        }
    }
}

/// The tool that made a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `"flashback"`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// Where the data came from (never a path, URL or credential).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// `"sqlite"` or `"postgres"`.
    pub backend: String,
    /// The detected schema ([`flashback_storage::SchemaInfo::description`]).
    pub schema: String,
}

/// One pending write in a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The task's path.
    pub task_path: String,
    /// Position in the task's batch.
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The serde type tag as stored.
    #[serde(rename = "type")]
    pub type_tag: String,
    /// The value (JSON view; `null` for an `empty` value), secrets masked, redacted.
    pub value: Json,
}

/// One checkpoint in a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleCheckpoint {
    /// Namespace (`""` for the root graph).
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent checkpoint id as stored.
    pub parent_checkpoint_id: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// Metadata as stored, redacted.
    pub metadata: Json,
    /// Channel values in stored order (JSON view), secrets masked, redacted.
    pub values: Map<String, Json>,
    /// Pending writes, sorted as the saver returns them.
    pub pending_writes: Vec<BundleWrite>,
    /// Why the checkpoint could not be read in full (its `values` are then empty); absent for
    /// a sound checkpoint. Covered by `hash` like every other member.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// SHA-256 (hex) of this entry's canonical form without `hash` and `chain`.
    pub hash: String,
    /// SHA-256 (hex) of the chain predecessor's `chain` (or 64 zeros) followed by `hash`.
    pub chain: String,
}

/// An audit export. Serialize it with `serde_json` (any formatting) to get the JSON bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// [`FORMAT`].
    pub format: String,
    /// When it was made (ISO 8601).
    pub generated_at: String,
    /// The tool that made it.
    pub tool: ToolInfo,
    /// Where the data came from.
    pub source: SourceInfo,
    /// Thread id.
    pub thread_id: String,
    /// Branch or tree.
    pub scope: Scope,
    /// The chosen checkpoint (branch) or the thread head (tree).
    pub head: Option<String>,
    /// The redaction patterns applied.
    pub redactions: Vec<String>,
    /// Number of entries in `checkpoints`.
    pub checkpoint_count: usize,
    /// The checkpoints, oldest first along parents.
    pub checkpoints: Vec<BundleCheckpoint>,
    /// SHA-256 (hex) of the canonical form of the bundle without `bundle_hash`.
    pub bundle_hash: String,
}

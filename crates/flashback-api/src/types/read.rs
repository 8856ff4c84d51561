//! What the read commands take and return: threads, history, the graph, one checkpoint, diff, replay, rebuild.

use super::{source_of, step_of};
use flashback_engine::delta::Rebuilt;
use flashback_engine::{TaskSet, TaskStatus, ThreadStatus};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;
use std::collections::BTreeMap;

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
    /// Its timestamp: the checkpoint's `ts`, or, when its document does not read (encrypted
    /// without a key, damaged), the time its UUIDv6 id was made.
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
    /// What could not be read: the thread's keys (an id stored as a BLOB or not UTF-8, shown
    /// escaped as `⟨…⟩`), or its latest checkpoint (then `status` is `None`). `None` for a
    /// sound thread.
    pub problem: Option<String>,
    /// Its latest checkpoint is encrypted and no key was given: `status` and `next` are
    /// unknown until the database is unlocked.
    pub locked: bool,
    /// What the server that wrote it says of it (the `langgraph dev` folder: its status,
    /// metadata, assistant and graph, times and runs, as Studio lists them). Absent for a
    /// database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<flashback_storage::server::ServerThread>,
    /// The thread's token usage (as [`ThreadGraph::tokens`]): filled in by `flashback threads`;
    /// the app reads it per row from `thread_activity`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<flashback_engine::TokenUsage>,
    /// The run of similar ids it belongs to (`bulk-` for `bulk-000001`, `bulk-000002`, …;
    /// the rule is [`crate::groups::group_prefix`]), set when at least
    /// [`crate::groups::GROUP_MIN`] threads of the list share it: the app's list and
    /// `flashback threads` fold them into one row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// Found by a filter or time range ([`ThreadsRequest::finds`]): the newest of its
    /// checkpoints that matched (any namespace). Absent from a plain list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matched_checkpoint_id: Option<String>,
    /// Found by a filter or time range: pass it as [`ThreadsRequest::after`] for the threads
    /// after this one. Absent from a plain list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// Threads whose history to look through (the rows of the list in view).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct ThreadActivityRequest {
    /// Database handle.
    pub db: String,
    /// Thread ids (at most 500).
    pub thread_ids: Vec<String>,
}

/// What a thread's whole history says beyond its latest checkpoint (from the writes' keys).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Type)]
pub struct ThreadActivity {
    /// Thread id.
    pub thread_id: String,
    /// The nodes of the tasks that raised, then finished on a retry (one entry per task,
    /// sorted): a thread that `finished` may still have failed on the way.
    pub recovered: Vec<String>,
    /// The nodes that ran anywhere in its history, each once, sorted (LangGraph's own
    /// `__start__` left out): what the thread list's search matches besides the row's text.
    #[serde(default)]
    pub nodes: Vec<String>,
    /// Why the history could not be read (then `recovered` and `nodes` are empty).
    pub problem: Option<String>,
    /// The thread does not exist (gone since it was listed, or never there): one entry of a
    /// list stays answerable; a command naming the thread says not found.
    #[serde(default)]
    pub missing: bool,
    /// The thread's token usage (as [`ThreadGraph::tokens`]); `None` when no message carried
    /// usage.
    pub tokens: Option<flashback_engine::TokenUsage>,
}

/// A thread of a database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ThreadRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
}

/// The threads of a database.
///
/// With any of `filter`, `since`, `until`, `status` or `after`, it finds threads: those with
/// a checkpoint (any namespace) whose metadata has every `filter` key equal to its value (as
/// LangGraph's `list(filter=…)` matches a checkpoint) and that was made within
/// `[since, until)` (the time its UUIDv6 id says), whose status is one of `status`; newest
/// match first, one page of `limit` (default 100, at most 1,000), each thread with its
/// `matched_checkpoint_id` and the `cursor` that lists the threads after it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct ThreadsRequest {
    /// Database handle.
    pub db: String,
    /// Only the `limit` most recently active threads, newest first (a list's first page,
    /// shown before the whole list arrives). `None`: every thread, sorted by id. When
    /// finding threads: the page size (default 100, at most 1,000).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only threads with a checkpoint whose metadata has every key equal to its value
    /// (`{"user_id": "u-48213", "assistant_id": "…"}`; keys `^[a-zA-Z0-9_.-]+$`): LangGraph's
    /// `list(filter=…)`, matched per checkpoint.
    #[serde(default, skip_serializing_if = "serde_json::Map::is_empty")]
    pub filter: serde_json::Map<String, Json>,
    /// Only threads with a (matching) checkpoint made at or after this time: `2026-11-26`,
    /// `2026-11-26T12:00`, `2026-11-26T12:00:00+01:00` (no zone: UTC).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// Only threads with a (matching) checkpoint made before this time (as `since`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Only threads in one of these statuses (of their latest checkpoint).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub status: Vec<ThreadStatus>,
    /// The next page of threads found: the `cursor` of the last thread of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

impl ThreadsRequest {
    /// Whether it finds threads (a filter, a time range, a status or `after`) rather than
    /// listing them.
    pub fn finds(&self) -> bool {
        !self.filter.is_empty()
            || self.since.is_some()
            || self.until.is_some()
            || !self.status.is_empty()
            || self.after.is_some()
    }
}

/// A thread's checkpoints, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type, JsonSchema)]
pub struct HistoryRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// One namespace (`""` = the root graph); `None`: every namespace, interleaved as
    /// Python's `list()` returns them.
    #[serde(default)]
    pub checkpoint_ns: Option<String>,
    /// At most this many.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Only checkpoints older than this id.
    #[serde(default)]
    pub before: Option<String>,
    /// Metadata filter: every key must equal its value.
    #[serde(default)]
    pub filter: serde_json::Map<String, Json>,
}

/// One checkpoint of a history.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct HistoryEntry {
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent id.
    pub parent_checkpoint_id: Option<String>,
    /// Namespace.
    pub checkpoint_ns: String,
    /// Timestamp.
    pub ts: String,
    /// `metadata.step`.
    pub step: Option<i32>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// Metadata as stored.
    pub metadata: Json,
    /// Why the checkpoint could not be read in full (see [`CheckpointDetail::problem`]).
    #[serde(default)]
    pub problem: Option<String>,
}

impl From<&flashback_storage::CheckpointHeader> for HistoryEntry {
    fn from(h: &flashback_storage::CheckpointHeader) -> Self {
        HistoryEntry {
            checkpoint_id: h.checkpoint_id.clone(),
            parent_checkpoint_id: h.parent_checkpoint_id.clone(),
            checkpoint_ns: h.checkpoint_ns.clone(),
            ts: h.ts.clone(),
            step: step_of(&h.metadata),
            source: source_of(&h.metadata),
            metadata: h.metadata.clone(),
            problem: h.problem.clone(),
        }
    }
}

/// The checkpoint graph of a thread.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct GraphRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Subgraph namespaces to hide (collapsed in the UI).
    #[serde(default)]
    pub collapsed: Vec<String>,
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
    pub rows: Vec<flashback_engine::GraphRow>,
    /// Subgraph namespaces (excluding the root graph).
    pub namespaces: Vec<NamespaceInfo>,
    /// Data problems (parent cycles, orphans) found while building the DAG.
    pub warnings: Vec<String>,
    /// The checkpoints that could not be read in full, to mark in the graph (each stays in
    /// place with its links; the rest of the thread is unaffected).
    pub unreadable: Vec<CheckpointProblem>,
    /// The thread's token usage over every namespace, each message counted once where the
    /// model produced it (`None`: no message carried usage).
    pub tokens: Option<flashback_engine::TokenUsage>,
    /// The models that answered (`response_metadata.model_name`), first seen first.
    pub models: Vec<String>,
}

/// A checkpoint that could not be read in full, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct CheckpointProblem {
    /// Namespace.
    pub checkpoint_ns: String,
    /// Checkpoint id (escaped as `⟨…⟩` when the stored id is not text).
    pub checkpoint_id: String,
    /// What could not be read.
    pub problem: String,
}

/// One checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct CheckpointRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Checkpoint id (default: the namespace's latest).
    #[serde(default)]
    pub checkpoint_id: Option<String>,
    /// Show `SecretStr` values in plain text.
    #[serde(default)]
    pub reveal_secrets: bool,
    /// Decode every value whatever its size: the explicit way to open a value shown as
    /// "too large" (`{"$too_large": …}`) under the decode budget (setting `max_value_mb`).
    #[serde(default)]
    pub full: bool,
    /// The saver's view: DeltaChannels as stored (snapshots wrapped, nothing between them)
    /// instead of rebuilt as the graph sees them.
    #[serde(default)]
    pub raw: bool,
    /// The reducer to rebuild a DeltaChannel with (`append`, `add_messages`, `merge`,
    /// `last`), per channel; the others are inferred from the values.
    #[serde(default)]
    pub reducers: BTreeMap<String, String>,
    /// On an encrypted database without its key, answer with the values locked instead of
    /// failing (the app shows them so, beside its Unlock).
    #[serde(default)]
    pub allow_locked: bool,
    /// Which view: `None` — live (Python's `get_state(config)`) when no `checkpoint_id` is
    /// given, else the step record (`get_state` of a config with that id, as
    /// `get_state_history` shows it, even for the latest checkpoint); `Some(true)` — live when
    /// the checkpoint is its namespace's latest (the app's head row); `Some(false)` — the step
    /// record.
    #[serde(default)]
    pub live: Option<bool>,
    /// Paged: a list longer than this shows its first `page` items (said in `pages`; the
    /// rest with `state_page`), and strings longer than 16,384 characters are folded
    /// (`{"$folded": {"chars", "path"}, …}`). Default: everything whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page: Option<u32>,
}

/// What a checkpoint holds in one channel, beside its value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ChannelInfo {
    /// The channel.
    pub channel: String,
    /// Its version.
    pub version: Option<String>,
    /// The Python type (`list`, `langchain_core.messages.ai.AIMessage`, …).
    pub type_name: String,
    /// Stored size in bytes.
    pub size: u32,
    /// Why it could not be decoded (the value's view then holds `$error`).
    pub error: Option<String>,
    /// A LangGraph control channel (`__…__`, `branch:…`, `join:…`) rather than graph state.
    pub control: bool,
    /// Shown folded under "internal": a control channel or an agent's bookkeeping
    /// (`jump_to`, call counts, keys named `_…`).
    pub internal: bool,
    /// Not stored: the channel's empty start (`[]`, `{}`) that Python shows before its first
    /// write, its reducer known from the thread.
    pub default: bool,
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
    /// The checkpoint format version (`v`).
    pub v: i64,
    /// Channel values (JSON view), in stored order, as Python's `get_state().values` (plus
    /// control channels).
    pub values: serde_json::Map<String, Json>,
    /// Each channel's version, type, size, decode error, in stored order.
    pub channels: Vec<ChannelInfo>,
    /// Every channel's version (`{channel: version}`), as stored.
    pub channel_versions: Json,
    /// The versions each node has seen (`{node: {channel: version}}`), as stored.
    pub versions_seen: Json,
    /// The channels the step that made this checkpoint updated: as recorded, else (LangGraph.js,
    /// checkpoints before `v` 4, forks) those whose version differs from the parent's.
    pub updated_channels: Option<Vec<String>>,
    /// Pending writes grouped per task, in execution order: stored on this checkpoint, they
    /// are the writes of the *next* step (the tasks that run from here).
    pub writes: Vec<WriteGroup>,
    /// The writes that made this checkpoint (a `loop` one): the pending writes of the step
    /// that ran from its parent, stored on the parent, grouped per task like `writes` (the
    /// nodes the graph row names). Empty for a root, an input, an update or a fork.
    pub made_by: Vec<WriteGroup>,
    /// Next tasks (as `get_state` shows them).
    pub tasks: TaskSet,
    /// The live view (Python's `get_state(config)`: values with the writes of the step's
    /// finished tasks applied, finished tasks out of `next`, only waiting interrupts) or the
    /// step record (`get_state` with a checkpoint id / `get_state_history`: values as the step
    /// started, every task, every interrupt raised). See [`CheckpointRequest::live`].
    pub live: bool,
    /// The pending writes folded into `values`: input/update (null-task) writes in both views,
    /// the finished tasks' writes in the live view.
    pub applied: Vec<flashback_engine::live::AppliedWrites>,
    /// What this snapshot says of the thread: finished, waiting for a human (interrupted),
    /// failed, or pending.
    pub status: ThreadStatus,
    /// The human-in-the-loop approvals among the interrupts (LangChain's
    /// `HumanInTheLoopMiddleware`, batched or per call), to answer with decisions.
    pub approvals: Vec<flashback_engine::hitl::Approval>,
    /// The LangGraph config that points at this checkpoint.
    pub config: Json,
    /// Subgraph namespaces run from this checkpoint.
    pub subgraphs: Vec<String>,
    /// Why the checkpoint could not be read in full: a key stored as something other than
    /// text, or a document that does not decode (its `values`, versions and tasks are then
    /// empty; metadata and writes are shown as far as they read). `None` for a sound one.
    pub problem: Option<String>,
    /// The DeltaChannels whose values were rebuilt (snapshot plus replayed writes), with how;
    /// empty in the raw view and for graphs without DeltaChannels.
    pub rebuilt: BTreeMap<String, Rebuilt>,
    /// How it was stored, in an encrypted database (absent for a plaintext one): whether its
    /// values are locked, and which parts are plaintext although the database is encrypted.
    pub sealing: Option<super::CheckpointSealing>,
    /// With a `page` asked for: the channels whose lists are shown in part (absent otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pages: Vec<super::ChannelPage>,
}

/// A checkpoint by namespace and id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct CheckpointRef {
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
}

/// Diff two checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
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

/// Rebuild a branch's channels from its writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct RebuildRequest {
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

/// Watch a key: the checkpoints where the value at a path changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct WatchRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    #[serde(default)]
    pub checkpoint_ns: String,
    /// The path: a channel, then keys and list indexes (`messages[2].content`, `plan.steps`,
    /// `plan["a.b"]`, `messages[-1]` for the last item).
    pub path: String,
    /// Values whose JSON text is larger are sent as a preview only (default 8 KiB).
    #[serde(default)]
    pub max_value_bytes: Option<u32>,
    /// The line to list first: the changes from the root to this checkpoint (a branch's tip,
    /// the one the app is on), then each other branch's. Default: the namespace's head.
    #[serde(default)]
    pub along: Option<String>,
}

/// The metadata keys the newest checkpoints carry: suggestions for a thread filter.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct MetadataKeysRequest {
    /// Database handle.
    pub db: String,
}

/// A metadata key seen in the sample, with the values seen most.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct MetadataKey {
    /// The key (top level of the metadata).
    pub key: String,
    /// How many sampled checkpoints carry it.
    pub count: u32,
    /// Its most common scalar values in the sample (strings, numbers, booleans; at most 8).
    pub values: Vec<Json>,
}

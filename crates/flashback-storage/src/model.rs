//! What a checkpoint database holds, decoded.

use flashback_codec::Decoded;
use serde::Serialize;
use std::cmp::Ordering;
use std::sync::Arc;

/// The task id LangGraph uses for writes that belong to the checkpoint itself (input,
/// `Command(update=…)`, `Command(resume=…)`), not to a task.
pub const NULL_TASK_ID: &str = "00000000-0000-0000-0000-000000000000";

pub use crate::layout::Backend;
use crate::layout::{Dialect, Layout, SchemaKind};
pub use crate::server::{Served, ServedTask};

/// What a LangGraph database holds: checkpoints (a saver's tables), LangGraph's memory Store
/// (`store`, see [`crate::memory`]), or both in the same file or database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Holds {
    /// Only a checkpoint saver's tables.
    Checkpoints,
    /// Only the memory Store (no checkpoint tables: the store has no threads).
    Store,
    /// Both.
    Mixed,
}

impl Holds {
    /// Whether there are checkpoint tables to read.
    pub fn checkpoints(self) -> bool {
        matches!(self, Holds::Checkpoints | Holds::Mixed)
    }

    /// Whether there is a memory Store.
    pub fn store(self) -> bool {
        matches!(self, Holds::Store | Holds::Mixed)
    }

    /// From what was found.
    pub fn of(checkpoints: bool, store: bool) -> Holds {
        match (checkpoints, store) {
            (true, true) => Holds::Mixed,
            (false, true) => Holds::Store,
            _ => Holds::Checkpoints,
        }
    }
}

/// What schema generation was detected when the database was opened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SchemaInfo {
    /// The backend.
    pub backend: Backend,
    /// SQLite: whether `writes.task_path` exists (added in langgraph-checkpoint-sqlite 3.1.2).
    /// Postgres: whether `checkpoint_writes.task_path` exists (migration 9).
    pub has_task_path: bool,
    /// Postgres: the highest version recorded in `checkpoint_migrations` (`None` on SQLite).
    pub migration_version: Option<i64>,
    /// Which tables: LangGraph's, the shallow saver's, the three-table store's, or only a
    /// memory Store (then [`holds`](Self::holds) is [`Holds::Store`]).
    pub kind: SchemaKind,
    /// Human-readable summary, e.g. `postgres migrations 0-9`, or `… memory store only`.
    pub description: String,
    /// Checkpoint tables, a memory Store, or both. With [`Holds::Store`] there are no
    /// checkpoint tables: the checkpoint reads return no threads and no checkpoints.
    pub holds: Holds,
    /// Which library's format the database is in (LangGraph or LangGraph.js); writes use it.
    pub dialect: Dialect,
}

impl SchemaInfo {
    /// What the location holds (see [`crate::layout`]).
    pub fn layout(&self) -> Layout {
        Layout {
            backend: self.backend,
            schema: self.kind,
            dialect: self.dialect,
        }
    }

    /// The deprecated Postgres shallow saver's tables (one checkpoint per thread and
    /// namespace).
    pub fn shallow(&self) -> bool {
        self.kind == SchemaKind::Shallow
    }
}

/// A channel version as stored: Python compares strings as strings and numbers as numbers.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Version {
    /// An integer version (the base class default, used by the conformance suite).
    Int(i64),
    /// A float version (possible with custom savers).
    Float(f64),
    /// The savers' `"{counter:032}.{random:016}"` string.
    Str(String),
}

impl Version {
    /// The counter part: the integer before the first `.` (for numbers, the number itself).
    pub fn counter(&self) -> Option<i64> {
        match self {
            Version::Int(i) => Some(*i),
            Version::Float(f) => Some(*f as i64),
            Version::Str(s) => s.split('.').next().and_then(|p| p.parse().ok()),
        }
    }

    /// The "null" version of the same type (`""` for strings, `0` for numbers), as in Python's
    /// `type(v)()`.
    pub fn null_like(&self) -> Version {
        match self {
            Version::Int(_) => Version::Int(0),
            Version::Float(_) => Version::Float(0.0),
            Version::Str(_) => Version::Str(String::new()),
        }
    }

    /// Python's `a > b` for two versions (strings compare as strings, numbers as numbers;
    /// mixed kinds — which Python would reject — compare by counter).
    pub fn py_cmp(&self, other: &Version) -> Ordering {
        match (self, other) {
            (Version::Str(a), Version::Str(b)) => a.cmp(b),
            (Version::Int(a), Version::Int(b)) => a.cmp(b),
            (a, b) => {
                let fa = a.as_f64();
                let fb = b.as_f64();
                fa.partial_cmp(&fb).unwrap_or(Ordering::Equal)
            }
        }
    }

    fn as_f64(&self) -> f64 {
        match self {
            Version::Int(i) => *i as f64,
            Version::Float(f) => *f,
            Version::Str(_) => self.counter().unwrap_or(0) as f64,
        }
    }

    /// From a decoded msgpack value or JSON value.
    pub fn from_json(v: &serde_json::Value) -> Option<Version> {
        match v {
            serde_json::Value::String(s) => Some(Version::Str(s.clone())),
            serde_json::Value::Number(n) => n
                .as_i64()
                .map(Version::Int)
                .or_else(|| n.as_f64().map(Version::Float)),
            _ => None,
        }
    }

    /// As a JSON value (`None` for a float JSON has no form for: NaN, ±infinity).
    pub fn to_json(&self) -> Option<serde_json::Value> {
        Some(match self {
            Version::Int(i) => serde_json::Value::from(*i),
            Version::Float(f) => serde_json::Value::Number(serde_json::Number::from_f64(*f)?),
            Version::Str(s) => serde_json::Value::String(s.clone()),
        })
    }

    /// The text Postgres compares with `checkpoint_blobs.version` (`jsonb_each_text`).
    pub fn as_text(&self) -> String {
        match self {
            Version::Int(i) => i.to_string(),
            Version::Float(f) => {
                serde_json::Number::from_f64(*f).map_or_else(|| f.to_string(), |n| n.to_string())
            }
            Version::Str(s) => s.clone(),
        }
    }
}

/// An ordered `{name: version}` map.
pub type Versions = Vec<(String, Version)>;

/// Which channels' values a selecting read decodes
/// ([`CheckpointStore::get_tuples_selecting`](crate::CheckpointStore::get_tuples_selecting)).
pub type ChannelFilter = std::sync::Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// The checkpoint document (`Checkpoint` TypedDict in Python).
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// Format version (4 today).
    pub v: i64,
    /// The checkpoint id (uuid6).
    pub id: String,
    /// ISO-8601 timestamp.
    pub ts: String,
    /// Channel values in stored order. Values are shared (`Arc`) because Postgres checkpoints
    /// reuse blobs across many checkpoints.
    pub channel_values: Vec<(String, Arc<Decoded>)>,
    /// Channel versions.
    pub channel_versions: Versions,
    /// Versions each node (or pseudo node such as `__input__`) has seen.
    pub versions_seen: Vec<(String, Versions)>,
    /// Channels updated by the step that produced this checkpoint (`None` on update/fork rows
    /// and rows from before Aug 2025).
    pub updated_channels: Option<Vec<String>>,
    /// Pre-v4 checkpoints only: the Sends that v4 keeps in `__pregel_tasks`.
    pub pending_sends: Option<Vec<Arc<Decoded>>>,
}

impl Checkpoint {
    /// A channel's value.
    pub fn value(&self, channel: &str) -> Option<&Arc<Decoded>> {
        self.channel_values
            .iter()
            .find(|(c, _)| c == channel)
            .map(|(_, v)| v)
    }

    /// Keep the values of the channels `keep` accepts (a selecting read's result).
    pub fn retain_channel_values(&mut self, keep: &ChannelFilter) {
        self.channel_values.retain(|(c, _)| keep(c));
    }

    /// A channel's version.
    pub fn version(&self, channel: &str) -> Option<&Version> {
        self.channel_versions
            .iter()
            .find(|(c, _)| c == channel)
            .map(|(_, v)| v)
    }

    /// The versions a node has seen (`None` when the node has no entry).
    pub fn seen(&self, node: &str) -> Option<&Versions> {
        self.versions_seen
            .iter()
            .find(|(n, _)| n == node)
            .map(|(_, v)| v)
    }
}

/// One pending write (a row of `writes` / `checkpoint_writes`).
#[derive(Debug, Clone, PartialEq)]
pub struct PendingWrite {
    /// The task that wrote it (or [`NULL_TASK_ID`]).
    pub task_id: String,
    /// The task's path (`''` before the column existed and for input/update writes).
    pub task_path: String,
    /// Position in the task's batch; special channels use fixed negative indexes.
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The serde type tag as stored.
    pub type_tag: String,
    /// The decoded value.
    pub value: Decoded,
}

/// A pending write without its value: which task wrote which channel at which checkpoint
/// ([`CheckpointStore::thread_writes`](crate::CheckpointStore::thread_writes)).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WriteInfo {
    /// Namespace of the checkpoint the write is pending on.
    pub checkpoint_ns: String,
    /// That checkpoint's id.
    pub checkpoint_id: String,
    /// The task that wrote it (or [`NULL_TASK_ID`]).
    pub task_id: String,
    /// The task's path (`''` before the column existed).
    pub task_path: String,
    /// The channel written.
    pub channel: String,
}

/// Sort writes the way Python's savers return them: by `(task_path, task_id, idx)`.
pub fn sort_writes(writes: &mut [PendingWrite]) {
    writes.sort_by(|a, b| {
        (a.task_path.as_str(), a.task_id.as_str(), a.idx).cmp(&(
            b.task_path.as_str(),
            b.task_id.as_str(),
            b.idx,
        ))
    });
}

/// A checkpoint row without its channel values (cheap to list).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CheckpointHeader {
    /// Thread id.
    pub thread_id: String,
    /// Namespace (`''` for the root graph).
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent checkpoint id (same thread and namespace).
    pub parent_checkpoint_id: Option<String>,
    /// Timestamp from the checkpoint document.
    pub ts: String,
    /// Metadata as stored (JSON).
    pub metadata: serde_json::Value,
    /// What could not be read in this row, when something could not: a key column that is not
    /// valid text (the id is then shown escaped, e.g. `⟨BLOB x'74'⟩`), or a checkpoint
    /// document that does not decode (the checkpoint then has no values). `None` for a sound
    /// row. The rest of the thread is unaffected.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

impl CheckpointHeader {
    /// [`metadata_step`] of the metadata.
    pub fn step(&self) -> Option<i64> {
        metadata_step(&self.metadata)
    }

    /// [`metadata_source`] of the metadata.
    pub fn source(&self) -> Option<&str> {
        metadata_source(&self.metadata)
    }

    /// [`metadata_run_id`] of the metadata.
    pub fn run_id(&self) -> Option<&str> {
        metadata_run_id(&self.metadata)
    }

    /// [`metadata_flashback_action`] of the metadata.
    pub fn flashback_action(&self) -> Option<&str> {
        metadata_flashback_action(&self.metadata)
    }

    /// [`metadata_merged_from`] of the metadata.
    pub fn merged_from(&self) -> Option<&str> {
        metadata_merged_from(&self.metadata)
    }
}

/// `metadata.step`, when it is an integer: the superstep that produced the checkpoint (`-1`
/// for the first input checkpoint).
pub fn metadata_step(metadata: &serde_json::Value) -> Option<i64> {
    metadata.get("step").and_then(serde_json::Value::as_i64)
}

/// `metadata.source`, when it is a string: `input`, `loop`, `update` or `fork`.
pub fn metadata_source(metadata: &serde_json::Value) -> Option<&str> {
    metadata.get("source").and_then(serde_json::Value::as_str)
}

/// `metadata.run_id`, when it is a string.
pub fn metadata_run_id(metadata: &serde_json::Value) -> Option<&str> {
    metadata.get("run_id").and_then(serde_json::Value::as_str)
}

/// `metadata.flashback.action`, when it is a string: why Flashback wrote the checkpoint
/// (`copy_fork`, `edit_fork`, `merge`, …).
pub fn metadata_flashback_action(metadata: &serde_json::Value) -> Option<&str> {
    metadata
        .pointer("/flashback/action")
        .and_then(serde_json::Value::as_str)
}

/// `metadata.flashback.from` of a Flashback merge: the checkpoint of branch B it took channels
/// from.
pub fn metadata_merged_from(metadata: &serde_json::Value) -> Option<&str> {
    match metadata_flashback_action(metadata) {
        Some("merge") => metadata
            .pointer("/flashback/from")
            .and_then(serde_json::Value::as_str),
        _ => None,
    }
}

/// A full checkpoint: what Python's `get_tuple` returns.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointTuple {
    /// Ids, parent, timestamp and metadata.
    pub header: CheckpointHeader,
    /// The checkpoint document with its channel values.
    pub checkpoint: Checkpoint,
    /// Pending writes sorted by `(task_path, task_id, idx)`.
    pub pending_writes: Vec<PendingWrite>,
    /// Which of the checkpoint's serde values were stored encrypted (the writes carry their
    /// own `type_tag`).
    pub sealing: Sealing,
    /// The tasks of the next step as a server's API gave them, for a source without channel
    /// versions to derive them from (the Agent Server, [`crate::agentserver`]); `None` for
    /// stored checkpoints.
    pub served: Option<Arc<Served>>,
}

impl CheckpointTuple {
    /// The ciphers of everything in it left sealed (`aes` without a key, `kms`…): its parts
    /// ([`Sealing::locked_ciphers`]) and its pending writes, sorted.
    pub fn locked_ciphers(&self) -> Vec<String> {
        let mut out = self.sealing.locked_ciphers.clone();
        for w in &self.pending_writes {
            if let flashback_codec::Decoded::Encrypted { tag, .. } = &w.value {
                out.push(
                    flashback_codec::cipher::cipher_of(tag)
                        .unwrap_or(tag)
                        .to_owned(),
                );
            }
        }
        out.sort();
        out.dedup();
        out
    }
}

/// How a checkpoint's serde values were stored, for databases written with LangGraph's
/// `EncryptedSerializer` (tags `<inner>+<cipher>`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Sealing {
    /// Parts stored encrypted: `checkpoint` (SQLite's document, which holds every channel
    /// value) or, on Postgres, the channels whose blobs are.
    pub encrypted: Vec<String>,
    /// Parts stored as plaintext serde values (on Postgres, inline primitives are never
    /// serde values and are not listed).
    pub plaintext: Vec<String>,
    /// An encrypted part was left unopened for lack of a key, or because its cipher is not one
    /// Flashback opens: its values are
    /// [`Decoded::Encrypted`](flashback_codec::Decoded::Encrypted), and when it is SQLite's
    /// document the checkpoint has no values, versions or next tasks to show.
    pub locked: bool,
    /// The ciphers of the parts left locked (`aes` without a key, `kms`…), sorted.
    pub locked_ciphers: Vec<String>,
}

impl Sealing {
    /// Note a part stored with the encrypted serde tag `tag` that was left locked.
    pub fn lock(&mut self, tag: &str) {
        self.locked = true;
        let cipher = flashback_codec::cipher::cipher_of(tag).unwrap_or(tag);
        if let Err(at) = self
            .locked_ciphers
            .binary_search_by(|c| c.as_str().cmp(cipher))
        {
            self.locked_ciphers.insert(at, cipher.to_owned());
        }
    }

    /// The locked ciphers Flashback cannot open whatever the key (all but `aes`).
    pub fn unopenable(&self) -> Vec<String> {
        self.locked_ciphers
            .iter()
            .filter(|c| c.as_str() != flashback_codec::cipher::AES)
            .cloned()
            .collect()
    }
}

/// Summary of one thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThreadInfo {
    /// Thread id.
    pub thread_id: String,
    /// Namespaces present, root (`''`) first, then sorted.
    pub namespaces: Vec<String>,
    /// Number of checkpoints over all namespaces.
    pub checkpoint_count: u64,
    /// The latest root-namespace checkpoint id (`max(checkpoint_id)`, as Python's "latest").
    pub latest_checkpoint_id: Option<String>,
    /// What could not be read in the thread's keys: a thread id, namespace or latest checkpoint
    /// id that is not valid text (shown escaped, e.g. `⟨BLOB x'74'⟩`; such a thread cannot be
    /// looked up by its id). `None` when they are sound.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// Which checkpoints to list; the same semantics as Python's `saver.list(config, filter=…,
/// before=…, limit=…)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ListQuery {
    /// Restrict to one thread.
    pub thread_id: Option<String>,
    /// Restrict to one namespace; `None` lists every namespace (as Python does when the config
    /// has no `checkpoint_ns`).
    pub checkpoint_ns: Option<String>,
    /// Restrict to one checkpoint id.
    pub checkpoint_id: Option<String>,
    /// Restrict to these checkpoint ids (empty: no restriction): a batch of known checkpoints,
    /// such as a chain of ancestors, in one query.
    pub checkpoint_ids: Vec<String>,
    /// Only checkpoints whose id sorts before this one.
    pub before: Option<String>,
    /// At most this many (newest first).
    pub limit: Option<u64>,
    /// Metadata filter: every key must match (SQLite: `json_extract` equality;
    /// Postgres: `metadata @> filter`).
    pub filter: serde_json::Map<String, serde_json::Value>,
}

impl ListQuery {
    /// Python's `get_tuple` lookup: one checkpoint by id, or the latest of the namespace.
    pub fn one(thread_id: &str, checkpoint_ns: &str, checkpoint_id: Option<&str>) -> Self {
        ListQuery {
            thread_id: Some(thread_id.to_owned()),
            checkpoint_ns: Some(checkpoint_ns.to_owned()),
            checkpoint_id: checkpoint_id.map(str::to_owned),
            limit: Some(1),
            ..Default::default()
        }
    }

    /// Every checkpoint of a thread, all namespaces.
    pub fn thread(thread_id: &str) -> Self {
        ListQuery {
            thread_id: Some(thread_id.to_owned()),
            ..Default::default()
        }
    }

    /// What the query reads, for messages: `reading checkpoint 1ef… of thread t1`.
    pub fn reading(&self) -> String {
        let of_thread = match &self.thread_id {
            Some(t) => format!(" of thread {}", t.escape_debug()),
            None => String::new(),
        };
        match (&self.checkpoint_id, self.checkpoint_ids.len(), self.limit) {
            (Some(id), _, _) => format!("reading checkpoint {}{of_thread}", id.escape_debug()),
            (None, n, _) if n > 0 => format!("reading {n} checkpoints{of_thread}"),
            (None, _, Some(1)) => format!("reading the latest checkpoint{of_thread}"),
            _ => format!("reading the checkpoints{of_thread}"),
        }
    }
}

/// What reading a thread's pending writes is called in messages.
pub fn reading_writes(thread_id: &str) -> String {
    format!(
        "reading the pending writes of thread {}",
        thread_id.escape_debug()
    )
}

/// What reading the thread list is called in messages.
pub const READING_THREADS: &str = "reading the thread list";

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn queries_say_what_they_read() {
        assert_eq!(
            ListQuery::one("t\n1", "", Some("c1")).reading(),
            "reading checkpoint c1 of thread t\\n1"
        );
        assert_eq!(
            ListQuery::one("t", "", None).reading(),
            "reading the latest checkpoint of thread t"
        );
        assert_eq!(
            ListQuery::thread("t").reading(),
            "reading the checkpoints of thread t"
        );
        let ids = ListQuery {
            checkpoint_ids: vec!["a".into(), "b".into()],
            ..ListQuery::thread("t")
        };
        assert_eq!(ids.reading(), "reading 2 checkpoints of thread t");
    }

    #[test]
    fn metadata_accessors() {
        let header = |metadata| CheckpointHeader {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: "1".into(),
            parent_checkpoint_id: None,
            ts: String::new(),
            metadata,
            problem: None,
        };
        let h = header(json!({"step": -1, "source": "input", "run_id": "r1",
                              "flashback": {"action": "merge"}}));
        assert_eq!(h.step(), Some(-1));
        assert_eq!(h.source(), Some("input"));
        assert_eq!(h.run_id(), Some("r1"));
        assert_eq!(h.flashback_action(), Some("merge"));
        // Other JSON types are not the fact.
        for odd in [
            json!({"step": "3", "source": 1, "run_id": 7, "flashback": "merge"}),
            json!({"step": 1.5, "flashback": {"action": null}}),
            json!(null),
        ] {
            let h = header(odd);
            assert_eq!(
                (h.step(), h.source(), h.run_id(), h.flashback_action()),
                (None, None, None, None)
            );
        }
    }
}

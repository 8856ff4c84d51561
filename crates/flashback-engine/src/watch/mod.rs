//! Watch a key: every checkpoint of one namespace where the value at a path changed, along
//! every branch, with the task writes that produced it.
//!
//! ```text
//!  list_tuples(thread, ns) ──materialize_all──▶ values as the graph sees them
//!        │                                              │ JSON view of the channel,
//!        ▼                                              ▼ resolved at the path (KeyPath)
//!  ThreadDag + layout ──rows, oldest first──▶ compare with the (effective) parent's value
//!                                                       │ differs / appears / disappears
//!                                                       ▼
//!                                  WatchChange + the parent's writes to the channel
//! ```
//!
//! Values are compared by their JSON view (a SHA-256 of its text, so a long history holds no
//! copies). Checkpoints are compared in DAG order (parents before children; the layout's order
//! reversed); the changes are listed along lineage (`order.rs`): those on one line (the head's,
//! or a given checkpoint's) root first, then each other branch's grouped, each with its branch
//! (`branch_key`, as the graph rows colour it) and whether it is on the line of the namespace's
//! head. A checkpoint that could not be read in full is not compared: its children compare
//! with the last value read above it.

mod order;
mod path;
#[cfg(test)]
mod tests;

pub use path::{KeyPath, PathError, Segment};

use crate::dag::ThreadDag;
use crate::error::EngineError;
use crate::layout::{layout, LayoutOptions};
use crate::tasks::step_tasks;
use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::{CheckpointStore, CheckpointTuple, Dialect, ListQuery};
use serde::Serialize;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// Values (and written values) whose JSON text is larger than this are sent as a preview only.
pub const MAX_VALUE_BYTES: usize = 8 * 1024;

/// The longest preview, in characters.
pub const PREVIEW_CHARS: usize = 160;

/// How a watched value changed from the parent's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum ChangeKind {
    /// There was no value at the path before (or no parent).
    Appeared,
    /// The value differs.
    Changed,
    /// The path has no value any more.
    Removed,
}

/// A value as the watch list shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WatchValue {
    /// The JSON view; `None` when its text is over the size limit (see `preview`).
    pub value: Option<Json>,
    /// Whether `value` was left out for its size.
    pub truncated: bool,
    /// The size of the JSON view's text, in bytes.
    pub size: u32,
    /// One line of text (at most [`PREVIEW_CHARS`] characters).
    pub preview: String,
}

/// A write, stored on the parent checkpoint, to the watched channel.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WatchWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The task's node, when the task is known (`None` for e.g. `update_state` writes).
    pub node: Option<String>,
    /// Position in the task's writes.
    pub idx: i64,
    /// The channel written (the watched one).
    pub channel: String,
    /// The value written.
    pub value: WatchValue,
}

/// One checkpoint where the watched value changed.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WatchChange {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The parent it was compared with (`None` for a root, or a parent not in the data).
    pub parent_checkpoint_id: Option<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source` (`input`, `loop`, `update`, `fork`).
    pub source: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// Appeared, changed or removed.
    pub kind: ChangeKind,
    /// The branch it is on: the id of the branch's first checkpoint, as on the graph rows.
    pub branch_key: String,
    /// Whether it is the namespace's head or one of its ancestors.
    pub on_head_branch: bool,
    /// The value at the path here (`None`: removed).
    pub value: Option<WatchValue>,
    /// The writes to the channel stored on the parent that produced this value (for a checkpoint
    /// made by a step: empty for an `update_state` edit, a fork or an input).
    pub writes: Vec<WatchWrite>,
}

/// Every change of the value at a path, in one namespace of a thread.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct WatchReport {
    /// The thread.
    pub thread_id: String,
    /// The namespace.
    pub checkpoint_ns: String,
    /// The path, in its canonical form.
    pub path: String,
    /// The channel it is in.
    pub channel: String,
    /// How many checkpoints were read.
    pub checkpoints_read: u32,
    /// How many of them could not be read in full (not compared).
    pub unreadable: u32,
    /// The namespace's head (latest checkpoint).
    pub head: Option<String>,
    /// The changes along lineage: those on the line read along (the head's, unless another
    /// checkpoint's was asked for) root first, then each other branch's, grouped by branch, the
    /// branches in the order they fork off. Parents always come before their children.
    pub changes: Vec<WatchChange>,
}

/// How much of each value to send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchLimits {
    /// Values whose JSON text is larger are sent as a preview only.
    pub max_value_bytes: usize,
}

impl Default for WatchLimits {
    fn default() -> Self {
        WatchLimits {
            max_value_bytes: MAX_VALUE_BYTES,
        }
    }
}

/// Read a namespace of a thread (DeltaChannels rebuilt as the graph sees them) and list the
/// changes of the value at `path` (see the module docs), along the line from the root to
/// `along` (default: the namespace's head). A namespace with no checkpoints is an
/// [`EngineError::UnknownNamespace`], except the root one (an empty report); an `along` that is
/// not in the namespace is an [`EngineError::UnknownCheckpoint`].
pub async fn watch(
    store: &dyn CheckpointStore,
    thread_id: &str,
    checkpoint_ns: &str,
    path: &KeyPath,
    delta: &crate::delta::DeltaOptions,
    limits: WatchLimits,
    along: Option<&str>,
) -> Result<WatchReport, EngineError> {
    let query = ListQuery {
        checkpoint_ns: Some(checkpoint_ns.to_owned()),
        ..ListQuery::thread(thread_id)
    };
    let mut tuples = store.list_tuples(&query).await?;
    if tuples.is_empty() && !checkpoint_ns.is_empty() {
        return Err(EngineError::UnknownNamespace(checkpoint_ns.to_owned()));
    }
    crate::delta::materialize_all(&mut tuples, delta);
    let mut report = changes(&tuples, path, limits, store.schema().dialect, along)?;
    report.thread_id = thread_id.to_owned();
    report.checkpoint_ns = checkpoint_ns.to_owned();
    Ok(report)
}

/// The changes of the value at `path` over the checkpoints of one namespace (values already
/// rebuilt), along the line from the root to `along` (default: the head; see
/// [`WatchReport::changes`]), in a database of the given library (whose task ids name the
/// writes' nodes).
pub fn changes(
    tuples: &[CheckpointTuple],
    path: &KeyPath,
    limits: WatchLimits,
    dialect: Dialect,
    along: Option<&str>,
) -> Result<WatchReport, EngineError> {
    let ns = tuples
        .first()
        .map(|t| t.header.checkpoint_ns.clone())
        .unwrap_or_default();
    let mut report = WatchReport {
        thread_id: tuples
            .first()
            .map(|t| t.header.thread_id.clone())
            .unwrap_or_default(),
        checkpoint_ns: ns.clone(),
        path: path.to_string(),
        channel: path.channel.clone(),
        checkpoints_read: u32::try_from(tuples.len()).unwrap_or(u32::MAX),
        unreadable: 0,
        head: None,
        changes: Vec::new(),
    };
    if tuples.is_empty() {
        return Ok(report);
    }
    let headers: Vec<_> = tuples.iter().map(|t| t.header.clone()).collect();
    let dag = ThreadDag::build(&headers)?;
    let rows = layout(
        &dag,
        &LayoutOptions {
            ns: ns.clone(),
            ..Default::default()
        },
    )?
    .rows;
    report.head = dag.namespace(&ns).and_then(|n| n.head.clone());
    let line_of = |tip: Option<&str>| -> HashSet<&str> {
        tip.map(|t| {
            dag.lineage(&ns, t)
                .into_iter()
                .map(|n| n.checkpoint_id.as_str())
                .collect()
        })
        .unwrap_or_default()
    };
    let head_line = line_of(report.head.as_deref());
    let line = match along {
        Some(id) if dag.node(&ns, id).is_none() => {
            return Err(EngineError::UnknownCheckpoint {
                ns,
                id: id.to_owned(),
            })
        }
        Some(id) => line_of(Some(id)),
        None => head_line.clone(),
    };
    let mut by_id: HashMap<&str, &CheckpointTuple> = HashMap::with_capacity(tuples.len());
    for t in tuples {
        by_id.entry(t.header.checkpoint_id.as_str()).or_insert(t);
    }
    let view = ViewOptions::default();
    // The digest of each checkpoint's value at the path (`None`: no value there).
    let mut seen: HashMap<&str, Option<[u8; 32]>> = HashMap::with_capacity(tuples.len());
    for row in rows.iter().rev() {
        let (Some(t), Some(node)) = (by_id.get(row.id.as_str()), dag.node(&ns, &row.id)) else {
            continue;
        };
        let id = t.header.checkpoint_id.as_str();
        let parent = node.parent.as_deref().and_then(|p| by_id.get(p).copied());
        let before = parent.and_then(|p| seen.get(p.header.checkpoint_id.as_str()).copied());
        let before = before.flatten();
        if t.header.problem.is_some() {
            report.unreadable += 1;
            seen.insert(id, before);
            continue;
        }
        let channel = t
            .checkpoint
            .value(&path.channel)
            .and_then(|d| view_decoded(d, view));
        let at = channel.as_ref().and_then(|v| path.resolve(v));
        let text = at.map(|v| serde_json::to_string(v).unwrap_or_default());
        let digest = text.as_deref().map(|s| Sha256::digest(s.as_bytes()).into());
        seen.insert(id, digest);
        let kind = match (before, digest) {
            (a, b) if a == b => continue,
            (None, _) => ChangeKind::Appeared,
            (_, None) => ChangeKind::Removed,
            _ => ChangeKind::Changed,
        };
        report.changes.push(WatchChange {
            checkpoint_id: id.to_owned(),
            parent_checkpoint_id: parent.map(|p| p.header.checkpoint_id.clone()),
            step: t.header.step(),
            source: t.header.source().map(str::to_owned),
            ts: t.header.ts.clone(),
            kind,
            branch_key: row.branch_key.clone(),
            on_head_branch: head_line.contains(id),
            value: at.zip(text).map(|(v, s)| shown(v, &s, limits)),
            writes: parent
                .filter(|_| made_by_a_step(t))
                .map(|p| writes_to(p, &path.channel, limits, dialect))
                .unwrap_or_default(),
        });
    }
    report.changes = order::along_line(std::mem::take(&mut report.changes), &line);
    Ok(report)
}

/// Whether the checkpoint was made by a step of the graph from its parent's pending writes (a
/// `loop` checkpoint). An `update_state` edit, a fork or an input is not: the parent's writes
/// (shared by all its children) made another child.
fn made_by_a_step(t: &CheckpointTuple) -> bool {
    matches!(t.header.source(), None | Some("loop"))
}

/// The parent's pending writes to `channel`, with the node of each task.
fn writes_to(
    parent: &CheckpointTuple,
    channel: &str,
    limits: WatchLimits,
    dialect: Dialect,
) -> Vec<WatchWrite> {
    let mine: Vec<_> = parent
        .pending_writes
        .iter()
        .filter(|w| w.channel == channel)
        .collect();
    if mine.is_empty() {
        return Vec::new();
    }
    let tasks = step_tasks(parent, dialect);
    let node_of = |task: &str| {
        tasks
            .tasks
            .iter()
            .find(|t| t.id == task)
            .map(|t| t.name.clone())
    };
    mine.into_iter()
        .map(|w| {
            let value = view_decoded(&w.value, ViewOptions::default()).unwrap_or(Json::Null);
            let text = serde_json::to_string(&value).unwrap_or_default();
            WatchWrite {
                task_id: w.task_id.clone(),
                node: node_of(&w.task_id),
                idx: w.idx,
                channel: w.channel.clone(),
                value: shown(&value, &text, limits),
            }
        })
        .collect()
}

/// A value with its text, cut to a preview when over the limit.
fn shown(v: &Json, text: &str, limits: WatchLimits) -> WatchValue {
    let truncated = text.len() > limits.max_value_bytes;
    WatchValue {
        value: (!truncated).then(|| v.clone()),
        truncated,
        size: u32::try_from(text.len()).unwrap_or(u32::MAX),
        preview: preview(v, text),
    }
}

/// `text` on one line (a newline shown as `⏎`), cut to `max` chars with `…` when longer.
pub fn clip(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    if one_line.chars().count() <= max {
        one_line
    } else {
        let cut: String = one_line.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

/// `langchain_core.messages.ai.AIMessage` → `AIMessage`.
fn short_type(t: &str) -> &str {
    t.rsplit('.').next().unwrap_or(t)
}

/// The names of a message's tool calls.
fn tool_calls(o: &serde_json::Map<String, Json>) -> Vec<&str> {
    o.get("tool_calls")
        .and_then(Json::as_array)
        .map(|calls| {
            calls
                .iter()
                .filter_map(|c| c.get("name").and_then(Json::as_str))
                .collect()
        })
        .unwrap_or_default()
}

/// One line for a value: its JSON text when short; else a list's length and last item, an
/// object's type and text content, or the text cut.
pub fn preview(v: &Json, text: &str) -> String {
    if text.chars().count() <= PREVIEW_CHARS {
        return clip(text, PREVIEW_CHARS);
    }
    match v {
        Json::Array(items) => {
            let n = items.len();
            let head = format!("[{n} item{}]", if n == 1 { "" } else { "s" });
            match items.last() {
                Some(last) => {
                    let inner = preview(last, &serde_json::to_string(last).unwrap_or_default());
                    clip(&format!("{head} … {inner}"), PREVIEW_CHARS)
                }
                None => head,
            }
        }
        Json::Object(o) => match (o.get("$type").and_then(Json::as_str), o.get("content")) {
            (Some(t), Some(Json::String(c))) if c.is_empty() && !tool_calls(o).is_empty() => clip(
                &format!("{} tool calls: {}", short_type(t), tool_calls(o).join(", ")),
                PREVIEW_CHARS,
            ),
            (Some(t), Some(Json::String(c))) => clip(
                &format!("{} {}", short_type(t), Json::from(c.as_str())),
                PREVIEW_CHARS,
            ),
            _ => clip(text, PREVIEW_CHARS),
        },
        _ => clip(text, PREVIEW_CHARS),
    }
}

//! One checkpoint in full: values with their types and sizes, writes grouped per task, the
//! derived next tasks, metadata and the config that points at it.

use crate::types::{
    count, source_of, step_of, ChannelInfo, CheckpointDetail, WriteEntry, WriteGroup, WriteKind,
};
use flashback_codec::{reserved, view_decoded, Decoded, ViewOptions};
use flashback_engine::delta::Rebuilt;
use flashback_engine::live::{apply_pending, Reducers};
use flashback_engine::tasks::{derive_tasks_with, step_tasks, DeriveOptions, SnapshotMode};
use flashback_engine::{is_control_channel, is_internal_channel};
use flashback_storage::{CheckpointTuple, Dialect, PendingWrite, Serde};
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, HashMap};

fn type_name(d: &Decoded) -> String {
    match d {
        Decoded::Msgpack(v) => v.type_name(),
        Decoded::Null => "None".into(),
        Decoded::Bytes(_) => "bytes".into(),
        Decoded::ByteArray(_) => "bytearray".into(),
        Decoded::Pickle(_) => "pickle".into(),
        Decoded::Encrypted { tag, .. } => format!("encrypted ({tag})"),
        Decoded::Empty => "empty".into(),
        Decoded::Error { tag, .. } => format!("undecodable ({tag})"),
        Decoded::TooLarge { kind, .. } => kind.clone(),
    }
}

/// The value's size in the database's own serde: msgpack, or LangGraph.js's JSON.
fn size_of(d: &Decoded, dialect: Dialect) -> u32 {
    match d {
        Decoded::TooLarge { bytes, .. } => u32::try_from(*bytes).unwrap_or(u32::MAX),
        _ => count(Serde::new(dialect, None).stored_len(d)),
    }
}

fn write_kind(channel: &str) -> WriteKind {
    match channel {
        reserved::ERROR => WriteKind::Error,
        reserved::INTERRUPT => WriteKind::Interrupt,
        reserved::RESUME => WriteKind::Resume,
        reserved::TASKS => WriteKind::Send,
        c if is_control_channel(c) => WriteKind::Control,
        _ => WriteKind::Value,
    }
}

fn error_of(view: &Json) -> Option<String> {
    view.get("$error").and_then(Json::as_str).map(str::to_owned)
}

fn group_writes(
    writes: &[PendingWrite],
    names: &HashMap<&str, (&str, flashback_engine::TaskStatus)>,
    opts: ViewOptions,
    dialect: Dialect,
    page: Option<u32>,
) -> Vec<WriteGroup> {
    let mut groups: Vec<WriteGroup> = Vec::new();
    for w in writes {
        let value = match page {
            // A long list written (an `update_state` of thousands of messages): its first page.
            Some(n) => crate::pagedview::detail_view(&w.channel, &w.value, n, opts).0,
            None => view_decoded(&w.value, opts).unwrap_or(Json::Null),
        };
        let entry = WriteEntry {
            idx: i32::try_from(w.idx).unwrap_or(i32::MAX),
            channel: w.channel.clone(),
            type_tag: w.type_tag.clone(),
            value,
            size: size_of(&w.value, dialect),
            kind: write_kind(&w.channel),
        };
        match groups.last_mut() {
            Some(g) if g.task_id == w.task_id && g.task_path == w.task_path => g.writes.push(entry),
            _ => {
                let known = names.get(w.task_id.as_str());
                groups.push(WriteGroup {
                    task_id: w.task_id.clone(),
                    task_path: w.task_path.clone(),
                    node: known.map(|(n, _)| (*n).to_owned()),
                    status: known.map(|(_, s)| *s),
                    writes: vec![entry],
                });
            }
        }
    }
    groups
}

/// Which view of a checkpoint to show, and what the thread says of its channels' reducers.
#[derive(Debug, Clone, Default)]
pub struct View {
    /// Python's live `get_state(config)` rather than the step record.
    pub live: bool,
    /// The reducers known for the thread's channels.
    pub reducers: Reducers,
    /// A value seen in the thread for channels this checkpoint may lack (for their defaults).
    pub known: BTreeMap<String, flashback_codec::Value>,
}

/// Derive the tasks and apply the pending writes `get_state` applies (`view.live`: the live
/// view), so the tuple's values are the ones shown.
pub(crate) fn apply_view(
    tuple: &mut CheckpointTuple,
    view: &View,
    namespaces: Vec<String>,
    dialect: Dialect,
) -> (
    flashback_engine::tasks::TaskSet,
    flashback_engine::live::LiveValues,
) {
    let live = view.live;
    let mut tasks = derive_tasks_with(
        tuple,
        &DeriveOptions {
            mode: if live {
                SnapshotMode::Live
            } else {
                SnapshotMode::History
            },
            namespaces,
            dialect,
            ..Default::default()
        },
    );
    let applied = apply_pending(tuple, &tasks, live, &view.reducers, &view.known);
    tasks.warnings.extend(applied.warnings.iter().cloned());
    (tasks, applied)
}

/// One checkpoint in full. `namespaces` are the thread's namespaces (for subgraph links of
/// tasks); the latest checkpoint of its namespace is shown live, any other as history. With
/// `page`, a list longer than that shows its first `page` items, their long strings folded
/// (`pagedview`).
pub fn checkpoint_detail(
    tuple: &mut CheckpointTuple,
    view: &View,
    namespaces: Vec<String>,
    opts: ViewOptions,
    rebuilt: BTreeMap<String, Rebuilt>,
    dialect: Dialect,
    page: Option<u32>,
) -> CheckpointDetail {
    let live = view.live;
    let (tasks, applied) = apply_view(tuple, view, namespaces, dialect);
    let tuple = &*tuple;
    let cp = &tuple.checkpoint;
    let h = &tuple.header;
    let mut values = serde_json::Map::new();
    let mut channels = Vec::with_capacity(cp.channel_values.len());
    let mut pages = Vec::new();
    for (channel, v) in &cp.channel_values {
        let value = match page {
            None => view_decoded(v, opts).unwrap_or(Json::Null),
            Some(n) => {
                let (value, paged) = crate::pagedview::detail_view(channel, v, n, opts);
                pages.extend(paged);
                value
            }
        };
        channels.push(ChannelInfo {
            channel: channel.clone(),
            version: cp.version(channel).map(|v| v.as_text()),
            type_name: type_name(v),
            size: size_of(v, dialect),
            error: error_of(&value),
            control: is_control_channel(channel),
            internal: is_internal_channel(channel),
            // Not stored: the empty start shown before the first write (by `apply_pending`,
            // or a DeltaChannel rebuilt from nothing).
            default: applied.defaults.contains(channel)
                || rebuilt.get(channel).is_some_and(|r| {
                    r.from_checkpoint.is_none() && r.writes == 0 && r.error.is_none()
                }),
        });
        values.insert(channel.clone(), value);
    }
    let names: HashMap<&str, (&str, flashback_engine::TaskStatus)> = tasks
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), (t.name.as_str(), t.status)))
        .collect();
    let writes = group_writes(&tuple.pending_writes, &names, opts, dialect, page);
    let subgraphs = tasks.tasks.iter().filter_map(|t| t.state.clone()).collect();
    CheckpointDetail {
        thread_id: h.thread_id.clone(),
        checkpoint_ns: h.checkpoint_ns.clone(),
        checkpoint_id: h.checkpoint_id.clone(),
        parent_checkpoint_id: h.parent_checkpoint_id.clone(),
        ts: cp.ts.clone(),
        step: step_of(&h.metadata),
        source: source_of(&h.metadata),
        run_id: h.run_id().map(str::to_owned),
        metadata: h.metadata.clone(),
        v: cp.v,
        values,
        channels,
        channel_versions: cp
            .channel_versions
            .iter()
            .map(|(c, v)| (c.clone(), serde_json::to_value(v).unwrap_or(Json::Null)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        versions_seen: cp
            .versions_seen
            .iter()
            .map(|(n, vs)| {
                let inner: serde_json::Map<String, Json> = vs
                    .iter()
                    .map(|(c, v)| (c.clone(), serde_json::to_value(v).unwrap_or(Json::Null)))
                    .collect();
                (n.clone(), Json::Object(inner))
            })
            .collect::<serde_json::Map<_, _>>()
            .into(),
        updated_channels: cp.updated_channels.clone(),
        writes,
        made_by: Vec::new(),
        config: json!({"configurable": {
            "thread_id": h.thread_id,
            "checkpoint_ns": h.checkpoint_ns,
            "checkpoint_id": h.checkpoint_id,
        }}),
        live,
        applied: applied.applied,
        status: tasks.status(),
        approvals: flashback_engine::hitl::approvals(&tasks),
        subgraphs,
        tasks,
        problem: h.problem.clone(),
        rebuilt,
        sealing: None,
        pages,
    }
}

/// The writes of the step that ran from `parent` (what made its `loop` child), grouped per
/// task and named by the parent's tasks as the step record derives them.
pub fn step_writes(
    parent: &CheckpointTuple,
    opts: ViewOptions,
    dialect: Dialect,
) -> Vec<WriteGroup> {
    let tasks = step_tasks(parent, dialect);
    let names: HashMap<&str, (&str, flashback_engine::TaskStatus)> = tasks
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), (t.name.as_str(), t.status)))
        .collect();
    group_writes(&parent.pending_writes, &names, opts, dialect, None)
}

//! Read-side views: thread summaries, the laid-out graph, one checkpoint in full.

use crate::error::{ApiError, ApiResult};
use crate::types::{
    count, source_of, step_of, ChannelValue, CheckpointDetail, GraphEdge, GraphRow, NamespaceInfo,
    ThreadGraph, ThreadSummary, WriteEntry, WriteGroup, WriteKind,
};
use flashback_codec::{encode_typed, view_decoded, Decoded, ViewOptions};
use flashback_engine::edit::edit_fork;
use flashback_engine::fork::{copy_fork, ForkResult};
use flashback_engine::tasks::{derive_tasks, derive_tasks_with, DeriveOptions, SnapshotMode};
use flashback_engine::{layout, EngineError, LayoutOptions, ThreadDag};
use flashback_storage::{
    CheckpointSaver, CheckpointStore, CheckpointTuple, ListQuery, PendingWrite,
};
use serde_json::{json, Value as Json};
use std::collections::HashMap;

/// Every thread with its status.
pub async fn thread_summaries(store: &dyn CheckpointStore) -> ApiResult<Vec<ThreadSummary>> {
    let threads = store.list_threads().await?;
    // The latest root checkpoint of every thread, read in one go.
    let keys: Vec<(&str, &str, Option<&str>)> = threads
        .iter()
        .filter_map(|t| {
            t.latest_checkpoint_id
                .as_deref()
                .map(|id| (t.thread_id.as_str(), "", Some(id)))
        })
        .collect();
    let mut tuples = store.get_tuples(&keys).await?.into_iter();
    let mut out = Vec::with_capacity(threads.len());
    for t in threads {
        let latest = match &t.latest_checkpoint_id {
            Some(_) => tuples.next().flatten(),
            None => None,
        };
        let mut s = ThreadSummary {
            thread_id: t.thread_id,
            namespaces: t.namespaces,
            checkpoint_count: count(t.checkpoint_count),
            latest_checkpoint_id: t.latest_checkpoint_id,
            latest_ts: None,
            latest_step: None,
            status: None,
            interrupts: Vec::new(),
            error: None,
            next: Vec::new(),
        };
        if let Some(tuple) = latest {
            let tasks = derive_tasks(&tuple);
            s.latest_ts = Some(tuple.checkpoint.ts.clone());
            s.latest_step = step_of(&tuple.header.metadata);
            s.status = Some(tasks.status());
            s.interrupts = tasks
                .tasks
                .iter()
                .filter(|t| !t.finished)
                .flat_map(|t| t.interrupts.iter().cloned())
                .collect();
            s.error = tasks.tasks.iter().find_map(|t| t.error.clone());
            s.next = tasks.next;
        }
        out.push(s);
    }
    Ok(out)
}

/// The one wording for a checkpoint that is not there.
pub fn checkpoint_not_found(thread_id: &str, checkpoint_ns: &str, checkpoint_id: &str) -> ApiError {
    ApiError::not_found(format!(
        "checkpoint {checkpoint_id} not found in thread {thread_id:?} (namespace {checkpoint_ns:?})"
    ))
}

/// Fork a checkpoint: a copy when `edits` is empty, else an edit fork. The engine reads the
/// checkpoint once; only when it is missing is the thread looked up, so the error names the
/// known threads when the thread itself is wrong. Shared by the app, `rerun` and the CLI.
pub async fn fork(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    edits: &[(String, Json)],
) -> ApiResult<ForkResult> {
    let forked = if edits.is_empty() {
        copy_fork(saver, thread_id, checkpoint_ns, checkpoint_id).await
    } else {
        edit_fork(saver, thread_id, checkpoint_ns, checkpoint_id, edits).await
    };
    match forked {
        Err(EngineError::UnknownCheckpoint { .. }) => {
            ensure_thread(saver, thread_id).await?;
            Err(checkpoint_not_found(
                thread_id,
                checkpoint_ns,
                checkpoint_id,
            ))
        }
        other => Ok(other?),
    }
}

/// Fail with "thread not found" (naming a few threads) unless the thread exists.
pub async fn ensure_thread(store: &dyn CheckpointStore, thread: &str) -> ApiResult<()> {
    let threads = store.list_threads().await?;
    if threads.iter().any(|t| t.thread_id == thread) {
        return Ok(());
    }
    let mut known: Vec<&str> = threads
        .iter()
        .map(|t| t.thread_id.as_str())
        .take(10)
        .collect();
    if threads.len() > 10 {
        known.push("…");
    }
    Err(ApiError::not_found(format!(
        "thread {thread:?} not found (threads: {})",
        if known.is_empty() {
            "none".to_string()
        } else {
            known.join(", ")
        }
    )))
}

/// The thread's checkpoint DAG as lanes (newest first), with collapsed namespaces left out.
pub async fn thread_graph(
    store: &dyn CheckpointStore,
    thread_id: &str,
    collapsed: &[String],
) -> ApiResult<ThreadGraph> {
    let headers = store.list_headers(&ListQuery::thread(thread_id)).await?;
    if headers.is_empty() {
        ensure_thread(store, thread_id).await?;
    }
    let dag = ThreadDag::build(&headers)?;
    let opts = LayoutOptions {
        collapsed: collapsed.to_vec(),
        ..LayoutOptions::nested()
    };
    let lay = layout(&dag, &opts)?;
    let meta: HashMap<(&str, &str), &flashback_storage::CheckpointHeader> = headers
        .iter()
        .map(|h| ((h.checkpoint_ns.as_str(), h.checkpoint_id.as_str()), h))
        .collect();
    let rows = lay
        .rows
        .iter()
        .map(|r| {
            let h = meta.get(&(r.ns.as_str(), r.checkpoint_id.as_str()));
            let node = dag.node(&r.ns, &r.checkpoint_id);
            GraphRow {
                id: r.checkpoint_id.clone(),
                ns: r.ns.clone(),
                parent_id: h.and_then(|h| h.parent_checkpoint_id.clone()),
                lane: count(r.lane),
                depth: count(r.depth),
                branch: count(r.branch),
                fork_point: r.is_fork_point,
                head: r.is_head,
                ns_head: r.is_ns_head,
                parent_row: r.parent_row.map(count),
                parent_lane: r.parent_lane.map(count),
                orphan_parent: r.orphan_parent.clone(),
                edges: r
                    .edges
                    .iter()
                    .map(|e| GraphEdge {
                        from: count(e.from),
                        to: count(e.to),
                        kind: e.kind,
                    })
                    .collect(),
                step: h.and_then(|h| step_of(&h.metadata)),
                source: h.and_then(|h| source_of(&h.metadata)),
                ts: h.map(|h| h.ts.clone()).unwrap_or_default(),
                subgraphs: node.map(|n| n.subgraphs.clone()).unwrap_or_default(),
                flashback_action: h.and_then(|h| {
                    h.metadata
                        .pointer("/flashback/action")
                        .and_then(Json::as_str)
                        .map(str::to_owned)
                }),
            }
        })
        .collect();
    let namespaces = dag
        .namespaces()
        .iter()
        .filter(|n| !n.ns.is_empty())
        .map(|n| NamespaceInfo {
            ns: n.ns.clone(),
            count: count(n.checkpoint_ids.len()),
            collapsed: opts.hides(&n.ns),
        })
        .collect();
    Ok(ThreadGraph {
        thread_id: thread_id.to_owned(),
        width: count(lay.width),
        head: dag.head().map(str::to_owned),
        rows,
        namespaces,
        warnings: dag.warnings().to_vec(),
    })
}

fn type_name(d: &Decoded) -> String {
    match d {
        Decoded::Msgpack(v) => v.type_name(),
        Decoded::Null => "None".into(),
        Decoded::Bytes(_) => "bytes".into(),
        Decoded::ByteArray(_) => "bytearray".into(),
        Decoded::Json { .. } => "json (legacy)".into(),
        Decoded::Pickle(_) => "pickle".into(),
        Decoded::Encrypted { tag, .. } => format!("encrypted ({tag})"),
        Decoded::Empty => "empty".into(),
        Decoded::Error { tag, .. } => format!("undecodable ({tag})"),
    }
}

fn size_of(d: &Decoded) -> u32 {
    count(encode_typed(d).1.len())
}

fn write_kind(channel: &str) -> WriteKind {
    match channel {
        "__error__" => WriteKind::Error,
        "__interrupt__" => WriteKind::Interrupt,
        "__resume__" => WriteKind::Resume,
        "__pregel_tasks" => WriteKind::Send,
        c if c.starts_with("__") || c.starts_with("branch:") || c.starts_with("join:") => {
            WriteKind::Control
        }
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
) -> Vec<WriteGroup> {
    let mut groups: Vec<WriteGroup> = Vec::new();
    for w in writes {
        let entry = WriteEntry {
            idx: i32::try_from(w.idx).unwrap_or(i32::MAX),
            channel: w.channel.clone(),
            type_tag: w.type_tag.clone(),
            value: view_decoded(&w.value, opts).unwrap_or(Json::Null),
            size: size_of(&w.value),
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

/// One checkpoint in full. `namespaces` are the thread's namespaces (for subgraph links of
/// tasks); the latest checkpoint of its namespace is shown live, any other as history.
pub fn checkpoint_detail(
    tuple: &CheckpointTuple,
    live: bool,
    namespaces: Vec<String>,
    opts: ViewOptions,
) -> CheckpointDetail {
    let cp = &tuple.checkpoint;
    let h = &tuple.header;
    let tasks = derive_tasks_with(
        tuple,
        &DeriveOptions {
            mode: if live {
                SnapshotMode::Live
            } else {
                SnapshotMode::History
            },
            namespaces,
            ..Default::default()
        },
    );
    let values = cp
        .channel_values
        .iter()
        .map(|(channel, v)| {
            let value = view_decoded(v, opts).unwrap_or(Json::Null);
            ChannelValue {
                channel: channel.clone(),
                version: cp.version(channel).map(|v| v.as_text()),
                type_name: type_name(v),
                error: error_of(&value),
                value,
                size: size_of(v),
            }
        })
        .collect();
    let names: HashMap<&str, (&str, flashback_engine::TaskStatus)> = tasks
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), (t.name.as_str(), t.status)))
        .collect();
    let writes = group_writes(&tuple.pending_writes, &names, opts);
    let subgraphs = tasks.tasks.iter().filter_map(|t| t.state.clone()).collect();
    CheckpointDetail {
        thread_id: h.thread_id.clone(),
        checkpoint_ns: h.checkpoint_ns.clone(),
        checkpoint_id: h.checkpoint_id.clone(),
        parent_checkpoint_id: h.parent_checkpoint_id.clone(),
        ts: cp.ts.clone(),
        step: step_of(&h.metadata),
        source: source_of(&h.metadata),
        run_id: h
            .metadata
            .get("run_id")
            .and_then(Json::as_str)
            .map(str::to_owned),
        metadata: h.metadata.clone(),
        values,
        writes,
        config: json!({"configurable": {
            "thread_id": h.thread_id,
            "checkpoint_ns": h.checkpoint_ns,
            "checkpoint_id": h.checkpoint_id,
        }}),
        live,
        subgraphs,
        tasks,
    }
}

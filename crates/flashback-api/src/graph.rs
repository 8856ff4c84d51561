//! The thread graph: the engine's lane layout with each row's metadata, as the UI draws it.

use crate::error::ApiResult;
use crate::summaries::ensure_thread;
use crate::types::{count, CheckpointProblem, NamespaceInfo, ThreadGraph};
use flashback_engine::{annotate, annotate_usage, layout, thread_usage, LayoutOptions, ThreadDag};
use flashback_storage::{CheckpointStore, ListQuery};

/// Whether a graph's rows carry token usage (read from the writes that mention it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Usage {
    /// Read it: rows' `tokens`/`models`, the thread's total.
    Read,
    /// Leave it out (the topology counts nodes, not tokens).
    Skip,
}

/// The thread's checkpoint DAG as lanes (newest first), with collapsed namespaces left out.
pub async fn thread_graph(
    store: &dyn CheckpointStore,
    thread_id: &str,
    collapsed: &[String],
) -> ApiResult<ThreadGraph> {
    laid_out(store, thread_id, collapsed, Usage::Read).await
}

/// [`thread_graph`], with or without the token usage.
pub(crate) async fn laid_out(
    store: &dyn CheckpointStore,
    thread_id: &str,
    collapsed: &[String],
    usage: Usage,
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
    let mut lay = layout(&dag, &opts)?;
    // Which nodes ran and how each step went, from the writes' keys (nothing decoded); the
    // graph stands without them.
    let mut warnings = dag.warnings().to_vec();
    match store.thread_writes(thread_id).await {
        Ok(mut writes) => {
            if !store.schema().layout().stores_task_paths() {
                flashback_engine::activity::name_js_tasks(&mut writes, &headers);
            }
            let sends = send_names(store, thread_id, &writes, &headers).await;
            annotate(&mut lay.rows, &writes, &sends)
        }
        Err(e) => warnings.push(format!("the steps' tasks cannot be shown: {e}")),
    }
    // Token usage: only the writes whose bytes mention `usage_metadata` are read.
    let mut tokens = None;
    let mut models = Vec::new();
    let read = match usage {
        Usage::Read => Some(
            store
                .thread_writes_mentioning(thread_id, flashback_engine::usage::NEEDLE)
                .await,
        ),
        Usage::Skip => None,
    };
    match read {
        None => {}
        Some(Ok(writes)) => {
            let usage = thread_usage(&writes);
            annotate_usage(&mut lay.rows, &usage);
            tokens = (usage.total.messages > 0).then_some(usage.total);
            models = usage.all_models;
        }
        Some(Err(e)) => warnings.push(format!("the steps' token usage cannot be shown: {e}")),
    }
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
    let unreadable = headers
        .iter()
        .filter_map(|h| {
            Some(CheckpointProblem {
                checkpoint_ns: h.checkpoint_ns.clone(),
                checkpoint_id: h.checkpoint_id.clone(),
                problem: h.problem.clone()?,
            })
        })
        .collect();
    Ok(ThreadGraph {
        unreadable,
        thread_id: thread_id.to_owned(),
        width: count(lay.width),
        head: dag.head().map(str::to_owned),
        rows: lay.rows,
        namespaces,
        warnings,
        tokens,
        models,
    })
}

/// The targets of the thread's `Send` tasks (named from their ids). The nodes the writes name
/// come first; only when a `Send` stays unnamed are the namespaces' latest checkpoints read
/// (without their values) for the nodes in their `versions_seen`.
pub(crate) async fn send_names(
    store: &dyn CheckpointStore,
    thread_id: &str,
    writes: &[flashback_storage::WriteInfo],
    headers: &[flashback_storage::CheckpointHeader],
) -> flashback_engine::activity::SendNames {
    use flashback_engine::activity::send_names as names;
    let found = names(writes, headers, &[]);
    let push = format!("~{}", flashback_codec::reserved::PUSH);
    let pushes = writes
        .iter()
        .filter(|w| w.task_path.starts_with(&push))
        .filter(|w| !found.contains_key(&w.task_id))
        .count();
    if pushes == 0 {
        return found;
    }
    let mut spaces: Vec<&str> = headers.iter().map(|h| h.checkpoint_ns.as_str()).collect();
    spaces.sort_unstable();
    spaces.dedup();
    let keys: Vec<(&str, &str, Option<&str>)> =
        spaces.iter().map(|ns| (thread_id, *ns, None)).collect();
    let Ok(heads) = store
        .get_tuples_selecting(&keys, std::sync::Arc::new(|_: &str| false))
        .await
    else {
        return found;
    };
    let mut extra: Vec<String> = Vec::new();
    for t in heads.iter().flatten() {
        for (node, _) in &t.checkpoint.versions_seen {
            if !extra.contains(node) {
                extra.push(node.clone());
            }
        }
    }
    names(writes, headers, &extra)
}

//! The thread graph: the engine's lane layout with each row's metadata, as the UI draws it.

use crate::error::ApiResult;
use crate::summaries::ensure_thread;
use crate::types::{count, CheckpointProblem, NamespaceInfo, ThreadGraph};
use flashback_engine::{annotate, annotate_usage, layout, step_usage, LayoutOptions, ThreadDag};
use flashback_storage::{CheckpointStore, ListQuery};

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
    let mut lay = layout(&dag, &opts)?;
    // Which nodes ran and how each step went, from the writes' keys (nothing decoded); the
    // graph stands without them.
    let mut warnings = dag.warnings().to_vec();
    match store.thread_writes(thread_id).await {
        Ok(mut writes) => {
            if !store.schema().layout().stores_task_paths() {
                flashback_engine::activity::name_js_tasks(&mut writes, &headers);
            }
            annotate(&mut lay.rows, &writes)
        }
        Err(e) => warnings.push(format!("the steps' tasks cannot be shown: {e}")),
    }
    // Token usage: only the writes whose bytes mention `usage_metadata` are read.
    match store
        .thread_writes_mentioning(thread_id, flashback_engine::usage::NEEDLE)
        .await
    {
        Ok(writes) => annotate_usage(&mut lay.rows, &step_usage(&writes)),
        Err(e) => warnings.push(format!("the steps' token usage cannot be shown: {e}")),
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
    })
}

//! Thread summaries (the threads list) and the "not found" answers naming what exists.

use crate::error::{ApiError, ApiResult};
use crate::types::{count, step_of, ThreadSummary};
use flashback_engine::tasks::derive_tasks;
use flashback_storage::CheckpointStore;

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

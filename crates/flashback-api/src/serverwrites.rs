//! Writes to an Agent Server, the server's way ([`flashback_storage::agentserver::write`]):
//! a fork or an edited fork is one `update_state` from the checkpoint (several channels at
//! once, made as the node the user chose), a copy is the server's own thread copy, and a
//! re-run or *Resume with…* is a run from the checkpoint whose events stream into the job
//! while the new checkpoints are reported as they land. No runner script: the server runs
//! its own graph. A refused write is the server's error, one line.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::forks::refuse_subgraph;
use crate::rerun::RerunEvent;
use flashback_engine::fork::ForkResult;
use flashback_storage::agentserver::write::{RunEvent, RunRequest, ServerWrites, StateUpdate};
use flashback_storage::maintenance::CopyReport;
use flashback_storage::{CheckpointStore, ListQuery};
use serde_json::{Map, Value as Json};
use std::collections::HashSet;
use std::time::Duration;

/// How often the thread is read for new checkpoints while a run goes on.
const POLL: Duration = Duration::from_millis(500);

/// The new checkpoint as a fork result (its step read back from the server).
async fn forked(
    store: &dyn CheckpointStore,
    thread_id: &str,
    checkpoint_ns: &str,
    parent: &str,
    id: String,
) -> ApiResult<ForkResult> {
    // LangGraph's copy (`as_node="__copy__"`) is a sibling of the checkpoint: its parent is
    // the checkpoint's parent, as the server says.
    let header = store
        .get_tuple(thread_id, checkpoint_ns, Some(&id))
        .await?
        .map(|t| t.header);
    Ok(ForkResult {
        thread_id: thread_id.to_owned(),
        checkpoint_ns: checkpoint_ns.to_owned(),
        step: header.as_ref().and_then(|h| h.step()).unwrap_or(0),
        parent_checkpoint_id: header
            .and_then(|h| h.parent_checkpoint_id)
            .unwrap_or_else(|| parent.to_owned()),
        checkpoint_id: id,
    })
}

/// Fork (no edits: a copy of the checkpoint) or edit-fork through `POST /threads/{id}/state`.
pub(crate) async fn fork(
    store: &dyn CheckpointStore,
    writes: &dyn ServerWrites,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    edits: Vec<(String, Json)>,
    as_node: Option<&str>,
) -> ApiResult<ForkResult> {
    refuse_subgraph(checkpoint_ns, "fork")?;
    if store
        .get_tuple(thread_id, checkpoint_ns, Some(checkpoint_id))
        .await?
        .is_none()
    {
        crate::summaries::ensure_thread(store, thread_id).await?;
        return Err(crate::summaries::checkpoint_not_found(
            thread_id,
            checkpoint_ns,
            checkpoint_id,
        ));
    }
    let values: Map<String, Json> = edits.into_iter().collect();
    let id = writes
        .update_state(StateUpdate {
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            values,
            as_node: as_node.filter(|n| !n.is_empty()),
        })
        .await?;
    forked(store, thread_id, checkpoint_ns, checkpoint_id, id).await
}

/// Copy a thread with the server's own copy (it chooses the new id, reported in the result).
pub(crate) async fn copy(
    store: &dyn CheckpointStore,
    writes: &dyn ServerWrites,
    thread_id: &str,
) -> ApiResult<CopyReport> {
    crate::summaries::ensure_thread(store, thread_id).await?;
    let new_id = writes.copy_thread(thread_id).await?;
    let checkpoints = store.list_headers(&ListQuery::thread(&new_id)).await?.len() as u64;
    Ok(CopyReport {
        checkpoints,
        writes: 0,
        blobs: 0,
        thread_id: Some(new_id),
    })
}

/// Delete a thread through the server (or, with `dry_run`, count what would go: its
/// checkpoints and the writes the API shows).
pub(crate) async fn delete(
    store: &dyn CheckpointStore,
    writes: &dyn ServerWrites,
    thread_id: &str,
    dry_run: bool,
) -> ApiResult<crate::types::DeleteReport> {
    crate::summaries::ensure_thread(store, thread_id).await?;
    let checkpoints = store
        .list_headers(&ListQuery::thread(thread_id))
        .await?
        .len();
    let pending = store.thread_writes(thread_id).await?.len();
    if !dry_run {
        writes.delete_thread(thread_id).await?;
    }
    Ok(crate::types::DeleteReport {
        thread_id: thread_id.to_owned(),
        checkpoints: crate::types::count(checkpoints),
        writes: crate::types::count(pending),
        dry_run,
    })
}

/// What a run streamed, one line: `updates · model`, `error · ValueError: …`.
fn event_line(ev: &RunEvent) -> String {
    let detail = match (&ev.event[..], &ev.data) {
        (e, Json::Object(m)) if e.starts_with("updates") => {
            m.keys().cloned().collect::<Vec<_>>().join(", ")
        }
        ("metadata", d) => d
            .get("run_id")
            .and_then(Json::as_str)
            .map_or_else(String::new, |r| format!("run {r}")),
        (_, Json::String(s)) => s.clone(),
        (_, d) => d.to_string(),
    };
    let line = format!("{} · {detail}", ev.event);
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// The server's error event as one line.
fn run_error(ev: &RunEvent) -> String {
    let d = &ev.data;
    match (
        d.get("error").and_then(Json::as_str),
        d.get("message").and_then(Json::as_str),
    ) {
        (Some(e), Some(m)) => format!("{e}: {m}"),
        (None, Some(m)) | (Some(m), None) => m.to_owned(),
        (None, None) => d.to_string(),
    }
}

/// What a run on the server needs.
pub(crate) struct ServerRunSpec {
    pub thread_id: String,
    pub checkpoint_ns: String,
    pub checkpoint_id: String,
    pub resume: Option<Json>,
    pub timeout: Duration,
}

async fn report_new(
    store: &dyn CheckpointStore,
    writes: &dyn ServerWrites,
    thread_id: &str,
    seen: &mut HashSet<(String, String)>,
    sink: &mut (dyn FnMut(RerunEvent<'_>) + Send),
    first_new: &mut Option<flashback_storage::CheckpointHeader>,
) -> ApiResult<()> {
    writes.forget(thread_id);
    let mut headers = store.list_headers(&ListQuery::thread(thread_id)).await?;
    headers.reverse();
    for h in headers {
        if seen.insert((h.checkpoint_ns.clone(), h.checkpoint_id.clone())) {
            sink(RerunEvent::Checkpoint(&h));
            if first_new.is_none() && h.checkpoint_ns.is_empty() {
                *first_new = Some(h.clone());
            }
        }
    }
    Ok(())
}

/// Run from a checkpoint on the server (resuming an interrupt with `resume`), stream its
/// events and report its checkpoints as they land; `cancel` resolving cancels the run on the
/// server. The result is the run's first new root checkpoint.
pub(crate) async fn rerun(
    store: &dyn CheckpointStore,
    writes: &dyn ServerWrites,
    spec: &ServerRunSpec,
    sink: &mut (dyn FnMut(RerunEvent<'_>) + Send),
    cancel: impl std::future::Future<Output = ()>,
) -> ApiResult<ForkResult> {
    refuse_subgraph(&spec.checkpoint_ns, "re-run from")?;
    let mut seen: HashSet<(String, String)> = store
        .list_headers(&ListQuery::thread(&spec.thread_id))
        .await?
        .into_iter()
        .map(|h| (h.checkpoint_ns, h.checkpoint_id))
        .collect();
    if !seen.contains(&(spec.checkpoint_ns.clone(), spec.checkpoint_id.clone())) {
        crate::summaries::ensure_thread(store, &spec.thread_id).await?;
        return Err(crate::summaries::checkpoint_not_found(
            &spec.thread_id,
            &spec.checkpoint_ns,
            &spec.checkpoint_id,
        ));
    }
    let mut stream = writes
        .start_run(&RunRequest {
            thread_id: spec.thread_id.clone(),
            checkpoint_id: Some(spec.checkpoint_id.clone()),
            checkpoint_ns: spec.checkpoint_ns.clone(),
            resume: spec.resume.clone(),
            ..RunRequest::default()
        })
        .await?;
    let mut first_new = None;
    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    tokio::pin!(cancel);
    let mut tick = tokio::time::interval(POLL);
    let failure: Option<ApiError> = loop {
        tokio::select! {
            ev = stream.next() => match ev {
                Ok(Some(ev)) => {
                    sink(RerunEvent::Output { stream: "events", line: &event_line(&ev) });
                    if ev.event == "error" {
                        break Some(ApiError::new(ErrorCode::Query, format!("the run failed on the server: {}", run_error(&ev))));
                    }
                }
                Ok(None) => break None,
                Err(e) => break Some(e.into()),
            },
            _ = tick.tick() => report_new(store, writes, &spec.thread_id, &mut seen, sink, &mut first_new).await?,
            () = &mut deadline => {
                if let Some(run) = stream.run_id.clone() {
                    writes.cancel_run(&spec.thread_id, &run).await?;
                }
                break Some(ApiError::io(format!(
                    "the run did not finish within {} s and was cancelled on the server",
                    spec.timeout.as_secs()
                )));
            }
            () = &mut cancel => {
                if let Some(run) = stream.run_id.clone() {
                    writes.cancel_run(&spec.thread_id, &run).await?;
                }
                break Some(ApiError::new(ErrorCode::Cancelled, "the run was cancelled on the server"));
            }
        }
    };
    report_new(
        store,
        writes,
        &spec.thread_id,
        &mut seen,
        sink,
        &mut first_new,
    )
    .await?;
    if let Some(e) = failure {
        return Err(e);
    }
    let h = first_new.ok_or_else(|| {
        ApiError::new(
            ErrorCode::Query,
            "the run ended without writing a checkpoint",
        )
    })?;
    Ok(ForkResult {
        step: h.step().unwrap_or(0),
        thread_id: h.thread_id,
        checkpoint_ns: h.checkpoint_ns,
        checkpoint_id: h.checkpoint_id,
        parent_checkpoint_id: spec.checkpoint_id.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn events_read_as_one_line() {
        let ev = RunEvent {
            event: "updates".into(),
            data: json!({"model": {"x": 1}}),
        };
        assert_eq!(event_line(&ev), "updates · model");
        let ev = RunEvent {
            event: "error".into(),
            data: json!({"error": "ValueError", "message": "boom"}),
        };
        assert_eq!(run_error(&ev), "ValueError: boom");
    }
}

//! Forks written through a saver (a database or a dev folder): a copy fork or an edit fork of
//! a root-graph checkpoint, the one path the app, `rerun` and the CLI share. (An Agent Server
//! forks through its API: `serverwrites.rs`.)

use crate::error::{ApiError, ApiResult};
use crate::summaries::{checkpoint_not_found, ensure_thread};
use crate::ForkResult;
use flashback_engine::delta::DeltaOptions;
use flashback_engine::edit::edit_fork;
use flashback_engine::fork::copy_fork_as;
use flashback_engine::{Action, EngineError};
use flashback_storage::CheckpointSaver;
use serde_json::Value as Json;

/// Fork a checkpoint: a copy when `edits` is empty, else an edit fork. The engine reads the
/// checkpoint once; only when it is missing is the thread looked up, so the error names the
/// known threads when the thread itself is wrong. Shared by the app, `rerun` and the CLI.
pub(crate) async fn fork(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    edits: &[(String, Json)],
    delta: &DeltaOptions,
) -> ApiResult<ForkResult> {
    fork_as(
        saver,
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        edits,
        Action::CopyFork,
        delta,
    )
    .await
}

/// [`fork`], a copy fork recorded as `action` ([`Action::Rerun`] for a re-run's fork).
pub(crate) async fn fork_as(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    edits: &[(String, Json)],
    action: Action,
    delta: &DeltaOptions,
) -> ApiResult<ForkResult> {
    let what = match action {
        Action::Rerun => "re-run from",
        _ => "fork",
    };
    refuse_subgraph(checkpoint_ns, what)?;
    let forked = if edits.is_empty() {
        copy_fork_as(
            saver,
            thread_id,
            checkpoint_ns,
            checkpoint_id,
            action,
            delta,
        )
        .await
    } else {
        edit_fork(saver, thread_id, checkpoint_ns, checkpoint_id, edits, delta).await
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

/// Forks, merges and re-runs start from the root graph. LangGraph resumes a thread from its
/// root namespace's latest checkpoint and runs a subgraph again only from the parent step that
/// calls it, so a checkpoint written inside a subgraph namespace would not be where the
/// program resumes (nor what a re-run runs).
pub(crate) fn refuse_subgraph(checkpoint_ns: &str, what: &str) -> ApiResult<()> {
    if checkpoint_ns.is_empty() {
        return Ok(());
    }
    Err(ApiError::invalid(format!(
        "cannot {what} a checkpoint of the subgraph namespace {checkpoint_ns:?}: LangGraph \
         resumes a thread from its root graph and re-enters a subgraph only from the parent \
         step that calls it; {what} the parent-graph checkpoint this subgraph hangs from instead"
    )))
}

//! Forks: new checkpoints that the real Python program resumes from.
//!
//! A *copy fork* of checkpoint `X` is a new checkpoint whose parent is `X`, with `X`'s channel
//! values, versions and `versions_seen`, metadata `source: "fork"`, `step: X.step + 1`, and the
//! newest id — so the thread's head moves there and
//! `graph.invoke(None, {"configurable": {"thread_id": T}})` continues from `X`'s point. It
//! starts with no pending writes: every task of that step runs again, as after LangGraph's own
//! time travel. On Postgres no blob is written (the versions are unchanged, so the existing
//! blobs are shared).

use crate::error::EngineError;
use flashback_codec::Decoded;
use flashback_storage::pyfmt::{next_version, utc_now_isoformat, uuid6};
use flashback_storage::{
    Checkpoint, CheckpointSaver, CheckpointStore, CheckpointTuple, PutRequest, StoreError, Versions,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};
use std::sync::Arc;

/// What a fork wrote.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ForkResult {
    /// Thread id.
    pub thread_id: String,
    /// Namespace.
    pub checkpoint_ns: String,
    /// The new checkpoint.
    pub checkpoint_id: String,
    /// The checkpoint it was forked from (its parent).
    pub parent_checkpoint_id: String,
    /// The new checkpoint's step.
    pub step: i64,
}

/// Write a copy fork of `checkpoint_id` (one transaction).
pub async fn copy_fork(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
) -> Result<ForkResult, EngineError> {
    copy_fork_as(saver, thread_id, checkpoint_ns, checkpoint_id, "copy_fork").await
}

/// [`copy_fork`] recorded as `action` in `metadata.flashback` (`rerun` for the fork a re-run
/// resumes, so the graph labels that branch a re-run).
pub async fn copy_fork_as(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    action: &str,
) -> Result<ForkResult, EngineError> {
    let source = load_source(saver, thread_id, checkpoint_ns, checkpoint_id).await?;
    let note = json!({"action": action, "forked_from": checkpoint_id});
    write_fork(saver, &source, "fork", note, |_| Vec::new()).await
}

/// A checkpoint that must exist and be readable (the one a fork starts from, either side of a
/// diff): one whose row could not be read in full ([`CheckpointHeader::problem`]) would be
/// forked, merged or compared as something it is not, so it is refused with the reason.
///
/// [`CheckpointHeader::problem`]: flashback_storage::CheckpointHeader::problem
pub(crate) async fn load_source(
    store: &dyn CheckpointStore,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
) -> Result<CheckpointTuple, EngineError> {
    let tuple = store
        .get_tuple(thread_id, checkpoint_ns, Some(checkpoint_id))
        .await?
        .ok_or_else(|| EngineError::UnknownCheckpoint {
            ns: checkpoint_ns.to_owned(),
            id: checkpoint_id.to_owned(),
        })?;
    readable(&tuple)?;
    Ok(tuple)
}

/// Refuse a checkpoint whose row could not be read in full.
pub(crate) fn readable(tuple: &CheckpointTuple) -> Result<(), EngineError> {
    match &tuple.header.problem {
        None => Ok(()),
        Some(problem) => Err(StoreError::Corrupt {
            checkpoint_id: tuple.header.checkpoint_id.clone(),
            detail: problem.clone(),
        }
        .into()),
    }
}

/// Write a new child of `source` as the thread's newest checkpoint: a copy of it with a new
/// id and time, `step + 1`, `updated_channels = None` and the given metadata `source`;
/// `change` may edit the copy and returns the versions that are new (Postgres writes blobs
/// for those only). `note` is recorded under the metadata key `flashback`.
pub(crate) async fn write_fork(
    saver: &dyn CheckpointSaver,
    source: &CheckpointTuple,
    metadata_source: &str,
    note: Json,
    change: impl FnOnce(&mut Checkpoint) -> Versions,
) -> Result<ForkResult, EngineError> {
    let header = &source.header;
    let step = header.step().unwrap_or(-1) + 1;
    let mut checkpoint = source.checkpoint.clone();
    checkpoint.id = uuid6(step);
    checkpoint.ts = utc_now_isoformat();
    checkpoint.updated_channels = None;
    let new_versions = change(&mut checkpoint);
    let mut metadata = Map::new();
    metadata.insert("source".into(), metadata_source.into());
    metadata.insert("step".into(), step.into());
    let parents = header.metadata.get("parents").cloned();
    metadata.insert("parents".into(), parents.unwrap_or_else(|| json!({})));
    metadata.insert("flashback".into(), note);
    saver
        .put(PutRequest {
            thread_id: &header.thread_id,
            checkpoint_ns: &header.checkpoint_ns,
            parent_checkpoint_id: Some(&header.checkpoint_id),
            checkpoint: &checkpoint,
            metadata: &metadata,
            new_versions: &new_versions,
        })
        .await?;
    Ok(ForkResult {
        thread_id: header.thread_id.clone(),
        checkpoint_ns: header.checkpoint_ns.clone(),
        checkpoint_id: checkpoint.id,
        parent_checkpoint_id: header.checkpoint_id.clone(),
        step,
    })
}

/// Replace (or add) channel values in a fork and give every one of them ONE new version —
/// `get_next_version(max of all versions)`, as `apply_writes` does for the channels a step
/// updates. Returns those new versions (for `PutRequest::new_versions`).
pub(crate) fn set_channels(
    checkpoint: &mut Checkpoint,
    values: Vec<(String, Arc<Decoded>)>,
) -> Versions {
    let max_version = checkpoint
        .channel_versions
        .iter()
        .map(|(_, v)| v)
        .max_by(|a, b| a.py_cmp(b));
    let version = next_version(max_version);
    let mut new_versions: Versions = Vec::with_capacity(values.len());
    for (channel, value) in values {
        match checkpoint
            .channel_values
            .iter_mut()
            .find(|(c, _)| *c == channel)
        {
            Some((_, v)) => *v = value,
            None => checkpoint.channel_values.push((channel.clone(), value)),
        }
        match checkpoint
            .channel_versions
            .iter_mut()
            .find(|(c, _)| *c == channel)
        {
            Some((_, v)) => *v = version.clone(),
            None => checkpoint
                .channel_versions
                .push((channel.clone(), version.clone())),
        }
        new_versions.push((channel, version.clone()));
    }
    new_versions
}

//! Forks: new checkpoints that the real Python program resumes from.
//!
//! A *copy fork* of checkpoint `X` is a new checkpoint whose parent is `X`, with `X`'s channel
//! values, versions and `versions_seen`, metadata `source: "fork"`, `step: X.step + 1`, and the
//! newest id — so the thread's head moves there and
//! `graph.invoke(None, {"configurable": {"thread_id": T}})` continues from `X`'s point. It
//! starts with no pending writes: every task of that step runs again, as after LangGraph's own
//! time travel. On Postgres no blob is written (the versions are unchanged, so the existing
//! blobs are shared).

use crate::action::Action;
use crate::delta::{DeltaOptions, Rebuilt};
use crate::error::EngineError;
use flashback_codec::{Decoded, Value};
use flashback_storage::pyfmt::uuid6;
use flashback_storage::saver::check_read;
use flashback_storage::sealed::sealed_source;
use flashback_storage::{
    Checkpoint, CheckpointSaver, CheckpointStore, CheckpointTuple, Dialect, PutRequest, StoreError,
    Version, Versions,
};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value as Json};
use std::collections::BTreeMap;
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
    let delta = DeltaOptions::default();
    copy_fork_as(
        saver,
        thread_id,
        checkpoint_ns,
        checkpoint_id,
        Action::CopyFork,
        &delta,
    )
    .await
}

/// [`copy_fork`] recorded as `action` in `metadata.flashback` ([`Action::Rerun`] for the fork a
/// re-run resumes, so the graph labels that branch a re-run), DeltaChannels rebuilt with `opts`.
pub async fn copy_fork_as(
    saver: &dyn CheckpointSaver,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    action: Action,
    opts: &DeltaOptions,
) -> Result<ForkResult, EngineError> {
    let (source, delta) =
        load_rebuilt(saver, thread_id, checkpoint_ns, checkpoint_id, opts).await?;
    let note = json!({"action": action.as_str(), "forked_from": checkpoint_id});
    write_fork(saver, &source, &delta, "fork", note, |_, _| Vec::new()).await
}

/// A checkpoint that must exist and be readable (the one a fork starts from, either side of a
/// diff), with its DeltaChannels rebuilt (`opts`) and their provenance (what a fork needs to
/// store them as snapshots). One whose row could not be read in full
/// ([`CheckpointHeader::problem`]) would be forked, merged or compared as something it is not,
/// so it is refused with the reason.
///
/// [`CheckpointHeader::problem`]: flashback_storage::CheckpointHeader::problem
pub(crate) async fn load_rebuilt(
    store: &dyn CheckpointStore,
    thread_id: &str,
    checkpoint_ns: &str,
    checkpoint_id: &str,
    opts: &DeltaOptions,
) -> Result<(CheckpointTuple, BTreeMap<String, Rebuilt>), EngineError> {
    let mut tuple = store
        .get_tuple(thread_id, checkpoint_ns, Some(checkpoint_id))
        .await?
        .ok_or_else(|| EngineError::UnknownCheckpoint {
            ns: checkpoint_ns.to_owned(),
            id: checkpoint_id.to_owned(),
        })?;
    readable(&tuple)?;
    let delta = crate::delta::materialize(store, &mut tuple, opts).await?;
    Ok((tuple, delta))
}

/// Refuse a checkpoint whose row could not be read in full, or whose values stayed sealed (a
/// cipher Flashback cannot open, or no key): it would be forked, merged or compared as
/// something it is not.
pub(crate) fn readable(tuple: &CheckpointTuple) -> Result<(), EngineError> {
    let id = &tuple.header.checkpoint_id;
    if let Some(problem) = &tuple.header.problem {
        return Err(StoreError::Corrupt {
            checkpoint_id: id.clone(),
            detail: problem.clone(),
        }
        .into());
    }
    if tuple.sealing.locked {
        let what = format!("checkpoint {id}");
        return Err(sealed_source(&what, &tuple.sealing.locked_ciphers).into());
    }
    Ok(())
}

/// Write a new child of `source` as the thread's newest checkpoint: a copy of it with a new
/// id and time, `step + 1`, `updated_channels = None` and the given metadata `source`;
/// `change` may edit the copy and returns the versions that are new (Postgres writes blobs
/// for those only). `note` is recorded under the metadata key `flashback`. The source's
/// DeltaChannels (`delta`, rebuilt into its values by [`load_rebuilt`]) are stored as
/// snapshots, as LangGraph's own `update_state` does off the head: the fork's parent holds
/// writes of the original next step, which a replay from the fork must not pick up.
pub(crate) async fn write_fork(
    saver: &dyn CheckpointSaver,
    source: &CheckpointTuple,
    delta: &BTreeMap<String, Rebuilt>,
    metadata_source: &str,
    note: Json,
    change: impl FnOnce(&mut Checkpoint, Dialect) -> Versions,
) -> Result<ForkResult, EngineError> {
    // Written in the database's own format: LangGraph's, or LangGraph.js's (integer versions,
    // `toISOString` times, `json` values: the saver encodes them).
    let dialect = saver.schema().dialect;
    let header = &source.header;
    let step = header.step().unwrap_or(-1) + 1;
    let mut checkpoint = source.checkpoint.clone();
    checkpoint.id = uuid6(step);
    checkpoint.ts = dialect.now();
    checkpoint.updated_channels = None;
    let mut new_versions = change(&mut checkpoint, dialect);
    snapshot_deltas(&mut checkpoint, source, delta, &mut new_versions, dialect)?;
    // What is carried from the source (not replaced by an edit) must have been read.
    let id = &header.checkpoint_id;
    for (channel, v) in &checkpoint.channel_values {
        check_read(&format!("channel {channel:?} of checkpoint {id}"), v)?;
    }
    for v in checkpoint.pending_sends.iter().flatten() {
        check_read(&format!("a pending send of checkpoint {id}"), v)?;
    }
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

/// Store each DeltaChannel of a fork as a `_DeltaSnapshot` of its (rebuilt or edited) value,
/// its version among `new_versions` so that Postgres writes the blob. Refuses a channel whose
/// value could not be rebuilt.
fn snapshot_deltas(
    checkpoint: &mut Checkpoint,
    source: &CheckpointTuple,
    delta: &BTreeMap<String, Rebuilt>,
    new_versions: &mut Versions,
    dialect: Dialect,
) -> Result<(), EngineError> {
    for (channel, info) in delta {
        if let Some(error) = &info.error {
            return Err(StoreError::InvalidInput(format!(
                "channel {channel:?} is a DeltaChannel whose value cannot be rebuilt ({error}); \
                 a fork would not resume with the right value, so nothing was written"
            ))
            .into());
        }
        let Some(pos) = checkpoint
            .channel_values
            .iter()
            .position(|(c, _)| c == channel)
        else {
            continue;
        };
        let value = match checkpoint.channel_values[pos].1.as_ref() {
            Decoded::Msgpack(Value::DeltaSnapshot(v)) => (**v).clone(),
            Decoded::Msgpack(v) => v.clone(),
            Decoded::Null => Value::Nil,
            _ => continue,
        };
        let version = match checkpoint.version(channel) {
            Some(v) => v.clone(),
            // Never written: LangGraph keeps no value for it, unless writes on the source
            // would otherwise be replayed into it.
            None if !source.pending_writes.iter().any(|w| &w.channel == channel) => {
                checkpoint.channel_values.remove(pos);
                continue;
            }
            None => {
                let v = step_version(checkpoint, dialect);
                checkpoint
                    .channel_versions
                    .push((channel.clone(), v.clone()));
                v
            }
        };
        checkpoint.channel_values[pos].1 =
            Arc::new(Decoded::Msgpack(Value::DeltaSnapshot(Box::new(value))));
        if !new_versions.iter().any(|(c, _)| c == channel) {
            new_versions.push((channel.clone(), version));
        }
    }
    Ok(())
}

/// `get_next_version(max of all versions)`: the version a step gives the channels it updates.
fn step_version(checkpoint: &Checkpoint, dialect: Dialect) -> Version {
    let max = checkpoint
        .channel_versions
        .iter()
        .map(|(_, v)| v)
        .max_by(|a, b| a.py_cmp(b));
    dialect.next_version(max)
}

/// Replace (or add) channel values in a fork and give every one of them ONE new version —
/// `get_next_version(max of all versions)`, as `apply_writes` does for the channels a step
/// updates. Returns those new versions (for `PutRequest::new_versions`).
pub(crate) fn set_channels(
    checkpoint: &mut Checkpoint,
    values: Vec<(String, Arc<Decoded>)>,
    dialect: Dialect,
) -> Versions {
    let version = step_version(checkpoint, dialect);
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

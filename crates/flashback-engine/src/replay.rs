//! Replay: a branch as an ordered list of steps, for stepping through (and animating) what
//! happened.
//!
//! ```text
//!  checkpoint c0 ──(tasks of step 0 write w…)──▶ checkpoint c1 ──(…)──▶ … ──▶ tip
//! ```
//!
//! Each [`ReplayStep`] is one checkpoint of the branch (root first): its metadata, the tasks
//! that were due to run from it (derived as Python's `get_state` would, history mode), the
//! pending writes stored against it (what those tasks wrote, errors and interrupts included),
//! and what changed in the next checkpoint of the branch (channels whose version moved). A
//! checkpoint that could not be read is a step with its `problem` (and no tasks or changes).

use crate::dag::ThreadDag;
use crate::error::EngineError;
use crate::tasks::{step_tasks, TaskSet};
use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery};
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::HashMap;

/// One write of a step, in Python's order `(task_path, task_id, idx)`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct StepWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The task's path.
    pub task_path: String,
    /// Position in the task's batch (negative for special channels).
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// JSON view of the value (secrets masked).
    pub value: Json,
}

/// One checkpoint of a branch and what happened after it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ReplayStep {
    /// Position in the replay (0 = the branch's root).
    pub index: usize,
    /// The checkpoint.
    pub checkpoint_id: String,
    /// Its namespace.
    pub checkpoint_ns: String,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source` (`input`, `loop`, `update`, `fork`).
    pub source: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// The tasks due from this checkpoint, with their status.
    pub tasks: TaskSet,
    /// The writes stored against this checkpoint.
    pub writes: Vec<StepWrite>,
    /// The next checkpoint on the branch (`None` at the tip).
    pub next_checkpoint_id: Option<String>,
    /// Channels whose version changed between this checkpoint and the next, sorted.
    pub changed_channels: Vec<String>,
    /// Why this checkpoint could not be read in full (its tasks and changes are then unknown;
    /// the rest of the branch is unaffected).
    pub problem: Option<String>,
}

/// The steps of the branch ending at `tip` (default: the namespace's head), root first.
pub async fn replay(
    store: &dyn CheckpointStore,
    thread_id: &str,
    checkpoint_ns: &str,
    tip: Option<&str>,
    opts: &crate::delta::DeltaOptions,
) -> Result<Vec<ReplayStep>, EngineError> {
    let query = ListQuery {
        thread_id: Some(thread_id.to_owned()),
        checkpoint_ns: Some(checkpoint_ns.to_owned()),
        ..Default::default()
    };
    let mut tuples = store.list_tuples(&query).await?;
    crate::delta::materialize_all(&mut tuples, opts);
    let headers: Vec<_> = tuples.iter().map(|t| t.header.clone()).collect();
    let dag = ThreadDag::build(&headers)?;
    let tip = match tip {
        Some(id) => id.to_owned(),
        None => match dag.namespace(checkpoint_ns).and_then(|n| n.head.clone()) {
            Some(head) => head,
            None => return Ok(Vec::new()),
        },
    };
    if dag.node(checkpoint_ns, &tip).is_none() {
        return Err(EngineError::UnknownCheckpoint {
            ns: checkpoint_ns.to_owned(),
            id: tip,
        });
    }
    let by_id: HashMap<&str, &CheckpointTuple> = tuples
        .iter()
        .map(|t| (t.header.checkpoint_id.as_str(), t))
        .collect();
    let mut lineage: Vec<&CheckpointTuple> = dag
        .lineage(checkpoint_ns, &tip)
        .iter()
        .filter_map(|n| by_id.get(n.checkpoint_id.as_str()).copied())
        .collect();
    lineage.reverse();
    let dialect = store.schema().dialect;
    let steps = lineage
        .iter()
        .enumerate()
        .map(|(index, t)| {
            let next = lineage.get(index + 1);
            ReplayStep {
                index,
                checkpoint_id: t.header.checkpoint_id.clone(),
                checkpoint_ns: t.header.checkpoint_ns.clone(),
                step: t.header.step(),
                source: t.header.source().map(str::to_owned),
                ts: t.header.ts.clone(),
                tasks: step_tasks(t, dialect),
                writes: t
                    .pending_writes
                    .iter()
                    .map(|w| StepWrite {
                        task_id: w.task_id.clone(),
                        task_path: w.task_path.clone(),
                        idx: w.idx,
                        channel: w.channel.clone(),
                        value: view_decoded(&w.value, ViewOptions::default()).unwrap_or(Json::Null),
                    })
                    .collect(),
                next_checkpoint_id: next.map(|n| n.header.checkpoint_id.clone()),
                changed_channels: match next {
                    Some(n) if t.header.problem.is_none() && n.header.problem.is_none() => {
                        changed(t, n)
                    }
                    _ => Vec::new(),
                },
                problem: t.header.problem.clone(),
            }
        })
        .collect();
    Ok(steps)
}

/// Channels whose version differs (or appears/disappears) between two checkpoints.
fn changed(a: &CheckpointTuple, b: &CheckpointTuple) -> Vec<String> {
    let mut out: Vec<String> = b
        .checkpoint
        .channel_versions
        .iter()
        .filter(|(c, v)| a.checkpoint.version(c) != Some(v))
        .map(|(c, _)| c.clone())
        .chain(
            a.checkpoint
                .channel_versions
                .iter()
                .filter(|(c, _)| b.checkpoint.version(c).is_none())
                .map(|(c, _)| c.clone()),
        )
        .collect();
    out.sort();
    out.dedup();
    out
}

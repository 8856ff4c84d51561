//! The values `graph.get_state` shows, from a checkpoint and its pending writes, without the
//! graph object (langgraph 1.2.22, `Pregel._prepare_state_snapshot`):
//!
//! * the writes of the null task (`Command(update=…)` input, `update_state` leftovers) are
//!   applied in every view;
//! * **live** (`get_state(config)` without a checkpoint id): the output writes of the step's
//!   finished tasks are applied too, task by task in task-path order, as `apply_writes` does —
//!   so a partly answered approval shows the approved call's tool result;
//! * a **step record** (`get_state` of a config with an id, `get_state_history`) shows the
//!   values as the step started;
//! * a channel whose reducer starts from an empty value (`add_messages`, `operator.add`, a
//!   dict merge) shows `[]`/`{}` before its first write, as Python's `BinaryOperatorAggregate`
//!   does — when the thread shows which channels those are.
//!
//! The database does not record reducers. A channel's reducer is read from the values: message
//! lists are `add_messages`; the state keys LangChain's agents declare are known by name; for
//! others, the caller may pass evidence (a step whose parent, writes and result are all known).

use crate::delta::{empty, replay};
use crate::is_control_channel;
use crate::reducer::{apply, known_reducer, Reducer, REDUCERS};
use crate::tasks::{write_kind, TaskSet, WriteKind};
use flashback_codec::reserved::{NO_WRITES, RETURN, TASKS};
use flashback_codec::Value;
use flashback_storage::{CheckpointTuple, Decoded, PendingWrite, NULL_TASK_ID};
use serde::Serialize;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Pending writes folded into the values shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct AppliedWrites {
    /// The task that wrote them ([`NULL_TASK_ID`] for input/update writes).
    pub task_id: String,
    /// Its node (`None` for input/update writes).
    pub node: Option<String>,
    /// The channels they changed, in write order.
    pub channels: Vec<String>,
}

/// What was applied, what could not be, and which channels show their empty default.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LiveValues {
    /// The writes folded in.
    pub applied: Vec<AppliedWrites>,
    /// Channels whose value is the reducer's empty start, not stored.
    pub defaults: Vec<String>,
    /// Writes that could not be applied (undecodable, or not what the reducer takes).
    pub warnings: Vec<String>,
}

/// `EphemeralValue` channels of LangChain's agents: cleared by a step that does not write them.
const EPHEMERAL: [&str; 1] = ["jump_to"];

/// Reducers known for a thread's channels (from names, shapes and observed steps).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reducers {
    by_channel: BTreeMap<String, Reducer>,
}

fn is_message(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.module.starts_with("langchain_core.messages"))
}

fn holds_messages(v: &Value) -> bool {
    match v {
        Value::Array(items) => items.iter().any(is_message),
        v => is_message(v),
    }
}

impl Reducers {
    /// The reducer of `channel`, given a value or write of it seen somewhere.
    pub fn of(&self, channel: &str, seen: Option<&Value>) -> Reducer {
        if let Some(r) = self.by_channel.get(channel) {
            return *r;
        }
        if let Some(r) = known_reducer(channel) {
            return r;
        }
        match seen {
            Some(v) if holds_messages(v) => Reducer::AddMessages,
            _ => Reducer::LastValue,
        }
    }

    /// Whether `channel`'s reducer is settled without evidence from the thread's steps: known
    /// by name or from observed steps, a message list, or a value no aggregate takes.
    pub fn settled(&self, channel: &str, seen: &Value) -> bool {
        self.by_channel.contains_key(channel)
            || known_reducer(channel).is_some()
            || holds_messages(seen)
            || !matches!(seen, Value::Array(_) | Value::Map(_))
    }

    /// The channels written by the finished tasks of `tuple`'s step whose reducer is not
    /// settled (see [`Reducers::settled`]).
    pub fn unsettled(&self, tuple: &CheckpointTuple, tasks: &TaskSet) -> Vec<String> {
        let finished = finished_ids(tasks);
        let mut out: Vec<String> = Vec::new();
        for w in sorted_writes(&tuple.pending_writes, |w| {
            finished.contains(&w.task_id.as_str())
        }) {
            if let Decoded::Msgpack(v) = &w.value {
                if !self.settled(&w.channel, v) && !out.contains(&w.channel) {
                    out.push(w.channel.clone());
                }
            }
        }
        out
    }

    /// Whether the reducer of `channel` is known to start from an empty list or dict.
    fn aggregate(&self, channel: &str, seen: &Value) -> Option<Value> {
        match self.of(channel, Some(seen)) {
            Reducer::AddMessages | Reducer::ListAppend => Some(Value::Array(Vec::new())),
            Reducer::DictMerge => Some(Value::Map(Vec::new())),
            Reducer::LastValue => None,
        }
    }

    /// Learn from channel values seen elsewhere in the thread (shapes only) and from complete
    /// steps: a parent, the writes of its finished tasks, and the child they made. A reducer
    /// is recorded when exactly one kind (last value, or an aggregate) reproduces the child.
    pub fn learn_step(
        &mut self,
        parent: &CheckpointTuple,
        tasks: &TaskSet,
        child: &CheckpointTuple,
    ) {
        let finished = finished_ids(tasks);
        let mut by_channel: BTreeMap<&str, Vec<&Value>> = BTreeMap::new();
        for w in sorted_writes(&parent.pending_writes, |w| {
            finished.contains(&w.task_id.as_str())
        }) {
            if let Decoded::Msgpack(v) = &w.value {
                by_channel.entry(w.channel.as_str()).or_default().push(v);
            }
        }
        for (channel, writes) in by_channel {
            if self.by_channel.contains_key(channel) || is_control_channel(channel) {
                continue;
            }
            let (Some(after), before) = (value_of(child, channel), value_of(parent, channel))
            else {
                continue;
            };
            let fits: Vec<Reducer> = REDUCERS
                .into_iter()
                .filter(|r| apply(*r, before, &writes).as_ref() == Some(after))
                .collect();
            let last = fits.contains(&Reducer::LastValue);
            match fits.as_slice() {
                [only] => {
                    self.by_channel.insert(channel.to_owned(), *only);
                }
                many if !many.is_empty() && !last => {
                    self.by_channel.insert(channel.to_owned(), many[0]);
                }
                _ => {}
            }
        }
    }
}

/// The ids of the step's finished tasks.
fn finished_ids(tasks: &TaskSet) -> Vec<&str> {
    tasks
        .tasks
        .iter()
        .filter(|t| t.finished)
        .map(|t| t.id.as_str())
        .collect()
}

fn value_of<'a>(t: &'a CheckpointTuple, channel: &str) -> Option<&'a Value> {
    match t.checkpoint.value(channel).map(Arc::as_ref) {
        Some(Decoded::Msgpack(v)) => Some(match v {
            Value::DeltaSnapshot(inner) => inner,
            v => v,
        }),
        _ => None,
    }
}

/// The writes `keep` accepts that change state, in Python's order: by task path, then as
/// stored within a task.
fn sorted_writes(
    writes: &[PendingWrite],
    keep: impl Fn(&PendingWrite) -> bool,
) -> Vec<&PendingWrite> {
    let mut out: Vec<&PendingWrite> = writes
        .iter()
        .filter(|w| keep(w))
        .filter(|w| write_kind(&w.channel) == WriteKind::Output)
        .filter(|w| !matches!(w.channel.as_str(), NO_WRITES | RETURN | TASKS))
        .filter(|w| !is_control_channel(&w.channel))
        .collect();
    // Stable: a task's writes keep their stored order.
    out.sort_by(|a, b| a.task_path.cmp(&b.task_path));
    out
}

/// Fold the pending writes `get_state` applies into `tuple`'s values (see the module docs),
/// and add the empty defaults of the aggregate channels `known` (channel → a value seen in the
/// thread) names that `tuple` has no value for.
pub fn apply_pending(
    tuple: &mut CheckpointTuple,
    tasks: &TaskSet,
    live: bool,
    reducers: &Reducers,
    known: &BTreeMap<String, Value>,
) -> LiveValues {
    let mut out = LiveValues::default();
    if tuple.served.is_some() {
        // A server's API already answers as get_state does.
        return out;
    }
    let names: BTreeMap<&str, &str> = tasks
        .tasks
        .iter()
        .map(|t| (t.id.as_str(), t.name.as_str()))
        .collect();
    let finished: Vec<String> = tasks
        .tasks
        .iter()
        .filter(|t| t.finished)
        .map(|t| t.id.clone())
        .collect();
    let writes = std::mem::take(&mut tuple.pending_writes);
    // The null task's writes first (applied on their own, as Python does), then the step's.
    let null = sorted_writes(&writes, |w| w.task_id == NULL_TASK_ID);
    fold(tuple, &null, reducers, &names, &mut out);
    if live {
        let done = sorted_writes(&writes, |w| finished.contains(&w.task_id));
        let updated = fold(tuple, &done, reducers, &names, &mut out);
        if !done.is_empty() {
            // A step that ran clears the ephemeral channels it did not write.
            tuple
                .checkpoint
                .channel_values
                .retain(|(c, _)| !EPHEMERAL.contains(&c.as_str()) || updated.contains(c));
        }
    }
    tuple.pending_writes = writes;
    for (channel, seen) in known {
        if tuple.checkpoint.value(channel).is_some() || is_control_channel(channel) {
            continue;
        }
        if let Some(empty) = reducers.aggregate(channel, seen) {
            tuple
                .checkpoint
                .channel_values
                .push((channel.clone(), Arc::new(Decoded::Msgpack(empty))));
            out.defaults.push(channel.clone());
        }
    }
    out
}

/// Apply `writes` (already in order) channel by channel; returns the channels updated.
fn fold(
    tuple: &mut CheckpointTuple,
    writes: &[&PendingWrite],
    reducers: &Reducers,
    names: &BTreeMap<&str, &str>,
    out: &mut LiveValues,
) -> Vec<String> {
    let mut updated: Vec<String> = Vec::new();
    let mut by_channel: Vec<(&str, Vec<&PendingWrite>)> = Vec::new();
    for w in writes {
        let task = match out.applied.iter_mut().find(|a| a.task_id == w.task_id) {
            Some(a) => a,
            None => {
                out.applied.push(AppliedWrites {
                    task_id: w.task_id.clone(),
                    node: names.get(w.task_id.as_str()).map(|n| (*n).to_owned()),
                    channels: Vec::new(),
                });
                let last = out.applied.len() - 1;
                &mut out.applied[last]
            }
        };
        if !task.channels.contains(&w.channel) {
            task.channels.push(w.channel.clone());
        }
        match by_channel.iter_mut().find(|(c, _)| *c == w.channel) {
            Some((_, ws)) => ws.push(w),
            None => by_channel.push((w.channel.as_str(), vec![w])),
        }
    }
    for (channel, ws) in by_channel {
        let values: Option<Vec<&Value>> = ws
            .iter()
            .map(|w| match &w.value {
                Decoded::Msgpack(v) => Some(v),
                _ => None,
            })
            .collect();
        let current = tuple.checkpoint.value(channel).cloned();
        let new = match values {
            Some(values) => {
                let reducer = reducers.of(channel, values.first().copied());
                let base = match current.as_deref() {
                    Some(Decoded::Msgpack(Value::DeltaSnapshot(inner))) => inner.as_ref().clone(),
                    Some(Decoded::Msgpack(v)) => v.clone(),
                    _ => empty(reducer),
                };
                match replay(reducer, base, &values) {
                    Ok(v) => Some(Decoded::Msgpack(v)),
                    Err(e) => {
                        out.warnings.push(format!(
                            "the pending writes to {channel:?} could not be applied ({e}): the \
                             value shown is the stored one"
                        ));
                        continue;
                    }
                }
            }
            // LastValue of an undecodable write is that write, as stored.
            None if reducers.of(channel, None) == Reducer::LastValue => {
                ws.last().map(|w| w.value.clone())
            }
            None => None,
        };
        match new {
            Some(v) => {
                let v = Arc::new(v);
                match tuple
                    .checkpoint
                    .channel_values
                    .iter_mut()
                    .find(|(c, _)| c == channel)
                {
                    Some((_, slot)) => *slot = v,
                    None => tuple
                        .checkpoint
                        .channel_values
                        .push((channel.to_owned(), v)),
                }
                updated.push(channel.to_owned());
            }
            None => out.warnings.push(format!(
                "the pending writes to {channel:?} could not be applied (not readable, or not \
                 what its reducer takes): the value shown is the stored one"
            )),
        }
    }
    updated
}

#[cfg(test)]
mod tests;

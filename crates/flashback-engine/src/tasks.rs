//! `StateSnapshot.next` and `.tasks` for a checkpoint, derived without the graph object.
//!
//! This follows `Pregel._prepare_state_snapshot`, `prepare_next_tasks` and
//! `read_task_statuses` (langgraph 1.2.22):
//!
//! * **PUSH** tasks: one per `langgraph.types.Send` in `channel_values["__pregel_tasks"]` (or a
//!   pre-v4 checkpoint's `pending_sends`), path `["__pregel_push", index, false]`. Items that
//!   are not `Send`s are skipped but keep their index.
//! * **PULL** tasks: the nodes named by trigger channels (`__start__`, `branch:to:X`, `join:A+B:X`) whose trigger
//!   is available and newer than what the node has seen, path `["__pregel_pull", name]`. None
//!   when `channel_versions` is empty.
//! * **Status** from the pending writes: writes under [`NULL_TASK_ID`] are ignored; a task is
//!   finished iff it has a write outside `__error__`, `__error_source_node__`, `__interrupt__`
//!   and `__resume__`.
//!
//! **Order.** PUSH tasks come first in index order, as in Python. Python then visits PULL
//! candidates in the graph's node order (`processes` dict order: `__start__`, then nodes in
//! `add_node` order), which the checkpoint does not record; here they follow the order in which
//! each node's trigger channels first appear in `channel_versions` (insertion order in SQLite
//! and in memory; Postgres JSONB reorders keys, so compare as sets there).
//!
//! **Task ids** are LangGraph's (XXH3-128 of the checkpoint id and the task's parts), or on a
//! LangGraph.js database JS's (`uuid5(JSON.stringify(parts), checkpoint_id)`, a PULL task's parts
//! ending with the one trigger that fired: JS takes the first in the node's declared trigger
//! order, here the first in sorted order, which agrees for nodes with one trigger — every
//! `StateGraph` node with a single incoming edge or branch), so pending writes find their tasks.
//!
//! **Limits.** Only `StateGraph` naming conventions are understood: custom Pregel graphs,
//! functional-API `Call` tasks, static `interrupt_before/after`, whether a node really exists,
//! and whether a PULL node actually has input (`_proc_input` returning `MISSING`) cannot be
//! known. `state` is only filled in when the caller passes the thread's namespaces.

use crate::ns;
use crate::taskid::{js_task_id, pull_task_id, push_task_id};
use crate::triggers::Channels;
use flashback_codec::reserved::{ERROR, ERROR_SOURCE_NODE, INTERRUPT, PULL, PUSH, RESUME, TASKS};
use flashback_codec::{view_decoded, Decoded, Value, ViewOptions};
use flashback_storage::{CheckpointTuple, Dialect, NULL_TASK_ID};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use std::collections::{HashMap, HashSet};

/// What one of a task's pending writes says about the task.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WriteKind {
    /// `__error__`: it raised.
    Error,
    /// `__interrupt__`: it stopped at an `interrupt()`.
    Interrupt,
    /// `__error_source_node__` / `__resume__`: bookkeeping, neither output nor outcome.
    Control,
    /// Anything else: an output, so the task finished.
    Output,
}

/// The kind of a write on `channel` (`read_task_statuses`' reading of the channel names).
pub(crate) fn write_kind(channel: &str) -> WriteKind {
    match channel {
        ERROR => WriteKind::Error,
        INTERRUPT => WriteKind::Interrupt,
        ERROR_SOURCE_NODE | RESUME => WriteKind::Control,
        _ => WriteKind::Output,
    }
}

/// A task's status from what its writes say: it raised, it has an output (finished), it has
/// interrupts waiting.
pub(crate) fn task_status(raised: bool, finished: bool, interrupted: bool) -> TaskStatus {
    match (raised, finished) {
        (true, true) => TaskStatus::Recovered,
        (true, false) => TaskStatus::Failed,
        (false, true) => TaskStatus::Done,
        (false, false) if interrupted => TaskStatus::Interrupted,
        (false, false) => TaskStatus::Pending,
    }
}

/// Where a task comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum TaskKind {
    /// A `Send` packet (`__pregel_push`).
    Push,
    /// A node triggered by its channels (`__pregel_pull`).
    Pull,
}

/// A task's status, read from the checkpoint's pending writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum TaskStatus {
    /// No writes yet.
    Pending,
    /// Finished: has an output write (possibly `__no_writes__`).
    Done,
    /// Has an `__error__` write and no output: it raised.
    Failed,
    /// Has an `__error__` write and an output: it raised, then finished on a retry (the
    /// failed attempt's error is kept in [`Task::error`]).
    Recovered,
    /// Not finished and has interrupts waiting.
    Interrupted,
}

/// The status of a whole thread, from its latest root-namespace checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[cfg_attr(feature = "schemars", derive(schemars::JsonSchema))]
#[serde(rename_all = "lowercase")]
pub enum ThreadStatus {
    /// Nothing left to run.
    Finished,
    /// Waiting on an interrupt.
    Interrupted,
    /// A task failed.
    Failed,
    /// Tasks are due but nothing is waiting for input (e.g. a crash or `interrupt_before`).
    Pending,
}

/// Which kind of `StateSnapshot` to reproduce.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SnapshotMode {
    /// `get_state(config)` without a checkpoint id: `next` omits finished tasks and
    /// `interrupts` lists only those still waiting.
    #[default]
    Live,
    /// `get_state` with a checkpoint id, or `get_state_history`: `next` lists every task of
    /// the step and `interrupts` every interrupt raised.
    History,
}

/// Options for [`derive_tasks_with`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeriveOptions {
    /// Which snapshot to reproduce.
    pub mode: SnapshotMode,
    /// More channel names known for the graph (e.g. from other checkpoints of the thread):
    /// they complete nodes' trigger lists, which enter the task ids.
    pub extra_channels: Vec<String>,
    /// The thread's checkpoint namespaces: a task whose subgraph namespace is among them gets
    /// [`Task::state`].
    pub namespaces: Vec<String>,
    /// The database's library: LangGraph.js computes task ids its own way
    /// ([`crate::taskid::js_task_id`]), and its pending writes carry those ids.
    pub dialect: Dialect,
}

/// One output write of a task.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TaskWrite {
    /// Channel written.
    pub channel: String,
    /// JSON view of the value (`None` for the Postgres `empty` sentinel).
    pub value: Option<Json>,
}

/// A task of the checkpoint's next step (Python's `PregelTask`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Task {
    /// Task id.
    pub id: String,
    /// Node name.
    pub name: String,
    /// PUSH or PULL.
    pub kind: TaskKind,
    /// `["__pregel_pull", name]` or `["__pregel_push", index, false]`.
    pub path: Json,
    /// The trigger channels hashed into the id (sorted; `["__pregel_push"]` for PUSH).
    pub triggers: Vec<String>,
    /// The namespace a subgraph run by this task uses: `"<ns|>name:task_id"`.
    pub checkpoint_ns: String,
    /// JSON view of the task's first `__error__` write.
    pub error: Option<Json>,
    /// JSON views of its interrupts (pending ones only in live mode).
    pub interrupts: Vec<Json>,
    /// The subgraph namespace, when the thread has checkpoints under it.
    pub state: Option<String>,
    /// Output writes (everything but the control channels), in stored order.
    pub writes: Vec<TaskWrite>,
    /// Whether the task has an output write.
    pub finished: bool,
    /// Status.
    pub status: TaskStatus,
    /// For PUSH tasks, JSON view of the `Send` argument.
    pub send_arg: Option<Json>,
}

/// `next` and `tasks` of a checkpoint.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TaskSet {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// Its namespace.
    pub checkpoint_ns: String,
    /// The step the tasks belong to (`metadata.step + 1`).
    pub step: i64,
    /// Names of the tasks still to run, in task order.
    pub next: Vec<String>,
    /// Tasks: PUSH first, then PULL.
    pub tasks: Vec<Task>,
    /// Task ids with pending writes that match no derived task (e.g. `update_state` writes).
    pub unmatched_task_ids: Vec<String>,
    /// What could not be derived.
    pub warnings: Vec<String>,
}

impl TaskSet {
    /// The thread status these tasks imply.
    pub fn status(&self) -> ThreadStatus {
        if self.tasks.iter().any(|t| t.status == TaskStatus::Failed) {
            ThreadStatus::Failed
        } else if self
            .tasks
            .iter()
            .any(|t| !t.finished && !t.interrupts.is_empty())
        {
            ThreadStatus::Interrupted
        } else if !self.next.is_empty() {
            ThreadStatus::Pending
        } else {
            ThreadStatus::Finished
        }
    }
}

/// The status of a thread from its latest root-namespace checkpoint (live mode).
pub fn thread_status(latest_root: &CheckpointTuple) -> ThreadStatus {
    derive_tasks(latest_root).status()
}

/// `next` and `tasks` as `graph.get_state(config)` (live mode) would show them.
pub fn derive_tasks(tuple: &CheckpointTuple) -> TaskSet {
    derive_tasks_with(tuple, &DeriveOptions::default())
}

/// Whether [`derive_tasks`] reads this channel's value (`__pregel_tasks` and the trigger
/// channels); the others' values may be left out of a read that only needs the tasks
/// ([`CheckpointStore::get_tuples_selecting`](flashback_storage::CheckpointStore::get_tuples_selecting)).
pub fn reads_value_of(channel: &str) -> bool {
    channel == TASKS || crate::triggers::is_trigger_channel(channel)
}

fn view(d: &Decoded) -> Option<Json> {
    view_decoded(d, ViewOptions::default())
}

/// The node and argument of a `Send` packet.
fn send_packet(v: &Value) -> Option<(&str, Option<&Value>)> {
    let Value::Object(o) = v else { return None };
    if o.module != "langgraph.types" || o.name != "Send" {
        return None;
    }
    match &o.payload {
        Value::Array(args) => Some((args.first()?.as_str()?, args.get(1))),
        Value::Map(_) => Some((o.payload.get("node")?.as_str()?, o.payload.get("arg"))),
        _ => None,
    }
}

/// The list of packets in `__pregel_tasks` (a Topic; older Topics stored `(set, list)`).
fn packets(d: &Decoded) -> Vec<&Value> {
    match d.as_value() {
        Some(Value::Array(items)) => match items.as_slice() {
            [first, Value::Array(rest)] if send_packet(first).is_none() => rest.iter().collect(),
            _ => items.iter().collect(),
        },
        _ => Vec::new(),
    }
}

/// The step record of a checkpoint: its tasks as `get_state` with its id derives them (every
/// task, every interrupt raised) — what names the writes a step made and the tasks of a step.
pub fn step_tasks(tuple: &CheckpointTuple, dialect: Dialect) -> TaskSet {
    derive_tasks_with(
        tuple,
        &DeriveOptions {
            mode: SnapshotMode::History,
            dialect,
            ..Default::default()
        },
    )
}

/// [`derive_tasks`] with options.
pub fn derive_tasks_with(tuple: &CheckpointTuple, opts: &DeriveOptions) -> TaskSet {
    let cp = &tuple.checkpoint;
    let parent_ns = tuple.header.checkpoint_ns.as_str();
    let step = tuple.header.step().unwrap_or(-1) + 1;
    let mut warnings = Vec::new();
    let channels = Channels::new(cp);
    let task_ns = |name: &str| {
        if parent_ns.is_empty() {
            name.to_owned()
        } else {
            format!("{parent_ns}|{name}")
        }
    };
    let mut tasks: Vec<Task> = Vec::new();
    let push = |tasks: &mut Vec<Task>,
                id: Option<String>,
                name: &str,
                kind: TaskKind,
                path: Json,
                triggers: Vec<String>,
                arg: Option<Json>| {
        let Some(id) = id else { return };
        let task = Task {
            checkpoint_ns: ns::task_ns(parent_ns, name, &id),
            id,
            name: name.to_owned(),
            kind,
            path,
            triggers,
            error: None,
            interrupts: Vec::new(),
            state: None,
            writes: Vec::new(),
            finished: false,
            status: TaskStatus::Pending,
            send_arg: arg,
        };
        match tasks.iter_mut().find(|t| t.id == task.id) {
            Some(slot) => *slot = task,
            None => tasks.push(task),
        }
    };
    if let Some(served) = &tuple.served {
        // A server's API names the tasks itself (no channel versions to derive them from).
        for t in &served.tasks {
            let kind = match t.path.get(0).and_then(Json::as_str) {
                Some(PUSH) => TaskKind::Push,
                _ => TaskKind::Pull,
            };
            let triggers = match kind {
                TaskKind::Push => vec![PUSH.to_owned()],
                TaskKind::Pull => Vec::new(),
            };
            push(
                &mut tasks,
                Some(t.id.clone()),
                &t.name,
                kind,
                t.path.clone(),
                triggers,
                None,
            );
            if let (Some(ns), Some(last)) = (&t.checkpoint_ns, tasks.last_mut()) {
                last.checkpoint_ns = ns.clone();
            }
        }
    } else {
        if checkpoint_bytes_invalid(&cp.id) {
            warnings.push(format!(
                "checkpoint id {:?} is not hex: task ids cannot be computed",
                cp.id
            ));
        }

        // PUSH: Sends (a v<4 checkpoint keeps them in `pending_sends`).
        let legacy = cp
            .pending_sends
            .as_ref()
            .filter(|s| cp.v < 4 && !s.is_empty());
        let sends: Vec<&Value> = match legacy {
            Some(list) => list.iter().filter_map(|d| d.as_value()).collect(),
            None => channels.value(TASKS).map(packets).unwrap_or_default(),
        };
        for (idx, packet) in sends.iter().enumerate() {
            let Some((node, arg)) = send_packet(packet) else {
                warnings.push(format!("{TASKS}[{idx}] is not a Send: skipped"));
                continue;
            };
            let id = match opts.dialect {
                Dialect::Python => push_task_id(cp.v, &cp.id, &task_ns(node), step, node, idx),
                Dialect::Js => js_task_id(
                    &cp.id,
                    &json!([task_ns(node), step.to_string(), node, PUSH, idx.to_string()]),
                ),
            };
            let path = json!([PUSH, idx, false]);
            let arg = arg.map(|a| flashback_codec::view(a, ViewOptions::default()));
            push(
                &mut tasks,
                id,
                node,
                TaskKind::Push,
                path,
                vec![PUSH.to_owned()],
                arg,
            );
        }

        // PULL: nodes whose triggers fired.
        if let Some(null) = channels.null_version() {
            for c in channels.candidates(&opts.extra_channels) {
                if channels.triggered(&c, &null) {
                    let id = match (opts.dialect, channels.fired(&c, &null)) {
                        (Dialect::Js, Some(trigger)) => js_task_id(
                            &cp.id,
                            &json!([task_ns(&c.name), step.to_string(), c.name, PULL, [trigger]]),
                        ),
                        _ => pull_task_id(
                            cp.v,
                            &cp.id,
                            &task_ns(&c.name),
                            step,
                            &c.name,
                            &c.triggers,
                        ),
                    };
                    let path = json!([PULL, c.name]);
                    push(
                        &mut tasks,
                        id,
                        &c.name,
                        TaskKind::Pull,
                        path,
                        c.triggers,
                        None,
                    );
                }
            }
        }
    }

    let unmatched_task_ids = apply_statuses(tuple, &mut tasks, opts.mode);
    let namespaces: HashSet<&str> = opts.namespaces.iter().map(String::as_str).collect();
    for t in &mut tasks {
        if namespaces.contains(t.checkpoint_ns.as_str())
            || namespaces.contains(ns::recast(&t.checkpoint_ns).as_str())
        {
            t.state = Some(t.checkpoint_ns.clone());
        }
    }
    let next = tasks
        .iter()
        .filter(|t| opts.mode == SnapshotMode::History || !t.finished)
        .map(|t| t.name.clone())
        .collect();
    TaskSet {
        checkpoint_id: cp.id.clone(),
        checkpoint_ns: parent_ns.to_owned(),
        step,
        next,
        tasks,
        unmatched_task_ids,
        warnings,
    }
}

fn checkpoint_bytes_invalid(id: &str) -> bool {
    crate::taskid::checkpoint_id_bytes(id).is_none()
}

/// `read_task_statuses` + `tasks_w_writes`; returns the task ids that match no task.
fn apply_statuses(tuple: &CheckpointTuple, tasks: &mut [Task], mode: SnapshotMode) -> Vec<String> {
    let pos: HashMap<String, usize> = tasks
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.clone(), i))
        .collect();
    let mut unmatched: Vec<String> = Vec::new();
    let mut raised: Vec<Vec<Json>> = vec![Vec::new(); tasks.len()];
    for w in &tuple.pending_writes {
        if w.task_id == NULL_TASK_ID {
            continue;
        }
        let Some(&i) = pos.get(&w.task_id) else {
            if !unmatched.contains(&w.task_id) {
                unmatched.push(w.task_id.clone());
            }
            continue;
        };
        let task = &mut tasks[i];
        match write_kind(&w.channel) {
            WriteKind::Interrupt => match w.value.as_value() {
                Some(Value::Array(items)) => raised[i].extend(
                    items
                        .iter()
                        .map(|v| flashback_codec::view(v, ViewOptions::default())),
                ),
                _ => raised[i].extend(view(&w.value)),
            },
            WriteKind::Error => {
                if task.error.is_none() {
                    task.error = Some(view(&w.value).unwrap_or(Json::Null));
                }
            }
            WriteKind::Control => {}
            WriteKind::Output => task.writes.push(TaskWrite {
                channel: w.channel.clone(),
                value: view(&w.value),
            }),
        }
    }
    for (task, raised) in tasks.iter_mut().zip(raised) {
        task.finished = !task.writes.is_empty();
        task.interrupts = if mode == SnapshotMode::History || !task.finished {
            raised
        } else {
            Vec::new()
        };
        task.status = task_status(
            task.error.is_some(),
            task.finished,
            !task.interrupts.is_empty(),
        );
    }
    unmatched
}

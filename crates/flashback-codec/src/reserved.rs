//! LangGraph's reserved names, written once: the channels and write keys a checkpoint holds
//! beside the graph's state, the task-path markers, the trigger-channel prefixes of
//! `StateGraph`, and the fixed `idx` of special writes.
//!
//! The names are LangGraph's (`langgraph/_internal/_constants.py`,
//! `langgraph/checkpoint/serde/types.py`, `WRITES_IDX_MAP` in `langgraph/checkpoint/base`);
//! LangGraph.js uses the same strings. Every crate of the house takes them from here.

/// The first (virtual) node of a graph, and the channel that triggers it.
pub const START: &str = "__start__";
/// The last (virtual) node of a graph.
pub const END: &str = "__end__";
/// The write key of the values passed as input to the graph.
pub const INPUT: &str = "__input__";
/// The write key of the interrupts a task raised (`interrupt()`).
pub const INTERRUPT: &str = "__interrupt__";
/// The write key of the values passed to resume a task after an interrupt.
pub const RESUME: &str = "__resume__";
/// The write key of the error a task raised.
pub const ERROR: &str = "__error__";
/// Written beside [`ERROR`] for a node with an error handler: the node that failed.
pub const ERROR_SOURCE_NODE: &str = "__error_source_node__";
/// The write key marking a task that wrote nothing.
pub const NO_WRITES: &str = "__no_writes__";
/// The write key of a task's return value (functional API).
pub const RETURN: &str = "__return__";
/// The write key of a task scheduled but not yet run.
pub const SCHEDULED: &str = "__scheduled__";
/// The channel of `Send` packets (PUSH tasks of the next step).
pub const TASKS: &str = "__pregel_tasks";
/// The task-path marker of PUSH tasks (created by `Send`s).
pub const PUSH: &str = "__pregel_push";
/// The task-path marker of PULL tasks (triggered by channels).
pub const PULL: &str = "__pregel_pull";
/// The `versions_seen` pseudo-node of DeltaChannel bookkeeping.
pub const SNAPSHOT_BUMPS: &str = "__snapshot_bumps__";

/// The prefix of every reserved name (`__start__`, `__pregel_tasks`, …).
pub const RESERVED_PREFIX: &str = "__";
/// The prefix of `StateGraph`'s branch channels (`branch:to:X`, and before v3
/// `branch:<src>:<cond>:X`).
pub const BRANCH_PREFIX: &str = "branch:";
/// The prefix of the channel that triggers node X: `branch:to:X`.
pub const BRANCH_TO: &str = "branch:to:";
/// The prefix of a join barrier's channel: `join:A+B:X`.
pub const JOIN_PREFIX: &str = "join:";

/// LangGraph's `WRITES_IDX_MAP`: special writes get a fixed negative `idx`, one slot per task,
/// so they never collide with a task's ordinary writes (numbered from 0).
pub const WRITES_IDX_MAP: [(&str, i64); 4] =
    [(ERROR, -1), (SCHEDULED, -2), (INTERRUPT, -3), (RESUME, -4)];

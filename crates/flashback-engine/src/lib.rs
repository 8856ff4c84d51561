//! # flashback-engine
//!
//! The model behind Flashback's time-travel view of a LangGraph thread, computed from what
//! `flashback-storage` reads (no Python, no graph object).
//!
//! ```text
//!  CheckpointHeader[] ──ThreadDag::build──▶ ThreadDag ──layout──▶ Layout ──render_text──▶ text
//!   (one thread,           parent links per       lanes, rows         (GUI draws the same
//!    all namespaces)       namespace, branches,   newest first,        rows and lines)
//!                          forks, orphans,        each with its line
//!                          cycles, subgraph       to its parent: O(n)
//!                          attachment
//!
//!  CheckpointTuple ──derive_tasks──▶ TaskSet { next, tasks[id, name, path, status, …] }
//!                                      └──status()──▶ ThreadStatus
//! ```
//!
//! A thread in the checkpoint database is a set of trees, one set per namespace. Lineage comes
//! from `parent_checkpoint_id` (ids sort by time only within one process). Subgraph
//! namespaces hang off the parent-graph checkpoint whose step ran them (`metadata.parents`).
//! Below, `f1` is an `update_state` fork of `c2` made after `c3` (so it is the head), and
//! `c2`'s next step ran the subgraph `mid`, whose checkpoints `c2a`/`c2b` were written in
//! between; the subgraph root c2a hangs off c2 like a branch (a `:` line when it passes other
//! rows):
//!
//! ```
//! use flashback_engine::{layout, render_text, LayoutOptions, ThreadDag};
//! use flashback_storage::CheckpointHeader;
//! use serde_json::json;
//!
//! let row = |ns: &str, id: &str, parent: Option<&str>, parents: serde_json::Value| CheckpointHeader {
//!     thread_id: "t".into(),
//!     checkpoint_ns: ns.into(),
//!     checkpoint_id: id.into(),
//!     parent_checkpoint_id: parent.map(Into::into),
//!     ts: String::new(),
//!     metadata: json!({"parents": parents}),
//!     problem: None,
//! };
//! let headers = [
//!     row("", "c1", None, json!({})),
//!     row("", "c2", Some("c1"), json!({})),
//!     row("", "c3", Some("c2"), json!({})),
//!     row("", "f1", Some("c2"), json!({})),
//!     row("mid:t", "c2a", None, json!({"": "c2"})),
//!     row("mid:t", "c2b", Some("c2a"), json!({"": "c2"})),
//! ];
//! let dag = ThreadDag::build(&headers).unwrap();
//! let rows = layout(&dag, &LayoutOptions::nested()).unwrap();
//! let text = render_text(&rows.rows, |r| format!("{} {}", r.id, r.ns));
//! // c1–c3 is the run as it first went (lane 0); the subgraph's branch was made before f1.
//! assert_eq!(text, &r"
//!     * f1
//! *   | c3
//! | * | c2b mid:t
//! | * | c2a mid:t
//! |/ /
//! :/
//! * c2
//! * c1
//! "[1..]);
//! assert_eq!(dag.head(), Some("f1"));
//! assert_eq!(dag.node("", "c2").unwrap().subgraphs, ["mid:t"]);
//! ```
//!
//! * [`dag`]: [`ThreadDag`] — roots, orphans (parent id missing), branches (every child after
//!   the first, by id, starts one), fork points, the head (`max(checkpoint_id)` in the root
//!   namespace), parent cycles broken deterministically and reported as warnings, and
//!   subgraph namespaces attached to their spawning checkpoint.
//! * [`layout`](mod@layout): [`layout()`](fn@layout) computes git-graph lanes (lane 0 is the
//!   head's lineage) in O(n log n) with an O(n) output however wide the graph, and
//!   [`render_text`] draws them like `git log --graph`.
//! * [`tasks`]: [`derive_tasks`] reproduces `StateSnapshot.next` / `.tasks` (PUSH tasks from
//!   `Send`s, PULL tasks from `branch:to:*` / `join:*` / `__start__` channels, XXH3 task ids,
//!   status from pending writes) and [`thread_status`].
//! * [`taskid`]: the task and interrupt id formulas.
//! * [`activity`]: from the thread's pending-write keys alone, the nodes whose step made each
//!   checkpoint and how the next step went (failed, recovered on a retry, interrupted,
//!   resumed), on the graph rows.
//! * [`diff`]: any two checkpoints channel by channel, list items matched (messages by id).
//! * [`watch`]: the checkpoints where the value at a path (`messages[2].content`) changed,
//!   across branches, with the writes that produced each value.
//! * [`topology`]: the nodes and transitions a thread (or several) shows by what ran, counted,
//!   sub-agents nested under the node that ran them; failures and interrupts on their nodes.
//! * [`search`]: where a text occurs in a checkpoint's state (keys and scalars, any case), with
//!   each match's path and a snippet.
//!
//! Public APIs identify checkpoints by `(namespace, checkpoint id)` strings.
//!
//! ## Where the derivation can differ from Python
//!
//! * PULL task order: Python follows the graph's node order, which is not stored; tasks follow
//!   the first appearance of their trigger channels in `channel_versions` (compare as sets on
//!   Postgres, whose JSONB reorders keys).
//! * A node's triggers (hashed into its id) are `branch:to:X` plus the `join:…:X` channels the
//!   data names; a barrier that never appears in the checkpoint is missing unless passed in
//!   [`DeriveOptions::extra_channels`].
//! * Only `StateGraph` conventions are known: no static `interrupt_before/after`, functional-API
//!   tasks, custom Pregel triggers, or nodes that no longer exist in the graph.
//! * Pre-v3 bare node-name channels are not migrated (that needs the graph's edges).

#![deny(missing_docs)]

pub mod action;
pub mod activity;
pub mod channels;
pub mod dag;
pub mod delta;
pub mod diff;
pub mod edit;
mod error;
pub mod export;
pub mod fork;
pub mod hitl;
pub mod layout;
pub mod live;
pub mod merge;
pub mod ns;
mod query;
mod reducer;
pub mod repair;
pub mod replay;
pub mod search;
pub mod taskid;
pub mod tasks;
pub mod topology;
mod triggers;
pub mod usage;
pub mod watch;

pub use action::Action;
pub use activity::{nodes_that_ran, recovered_tasks, StepMark};
pub use channels::{is_control_channel, is_internal_channel};
pub use dag::{Branch, DagNode, EdgeKind, Namespace, SpawnRef, ThreadDag};
pub use error::EngineError;
pub use layout::{annotate, annotate_usage, layout, render_text, GraphRow, Layout, LayoutOptions};
pub use tasks::{
    derive_tasks, derive_tasks_with, thread_status, DeriveOptions, SnapshotMode, Task, TaskKind,
    TaskSet, TaskStatus, TaskWrite, ThreadStatus,
};
pub use usage::{thread_usage, ThreadUsage, TokenUsage};

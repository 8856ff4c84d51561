//! What happened around each checkpoint of a thread, from its pending writes' keys alone (no
//! value decoded): the nodes whose step made it (`GraphRow::ran`) and how the step after it
//! went (`GraphRow::marks`: a task that failed, raised and then finished on a retry, waits at
//! an interrupt, or was resumed).
//!
//! A checkpoint's pending writes belong to the tasks of its *next* step: a `loop` checkpoint
//! was made by the tasks that wrote at its parent. Task names come from `task_path`
//! (`~__pregel_pull, NAME`; a `Send` task's path holds no name and counts as `Send`), so a
//! database written before that column existed has no names, only marks. LangGraph.js stores
//! no path either; [`name_js_tasks`] finds its PULL tasks' names from their ids.

use crate::taskid::{js_task_id, push_task_id};
use crate::tasks::{task_status, write_kind, TaskStatus, WriteKind};
use flashback_codec::reserved::{BRANCH_TO, PULL, PUSH, START};
use flashback_storage::{CheckpointHeader, WriteInfo, NULL_TASK_ID};
use serde::Serialize;
use std::collections::HashMap;

/// How a task of the step after a checkpoint went, as its writes tell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum StepMark {
    /// A task raised and has no output: the step failed.
    Failed,
    /// A task raised, then finished on a retry (its error and its output are both stored).
    Recovered,
    /// A task waits at an `interrupt()`.
    Interrupted,
    /// A task was interrupted, then resumed and finished.
    Resumed,
}

/// One task's writes at one checkpoint.
#[derive(Default)]
struct TaskWrites<'a> {
    path: &'a str,
    error: bool,
    interrupt: bool,
    output: bool,
}

/// What the writes pending on one checkpoint say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StepActivity {
    /// The tasks' node names in task-path order (`Send` for a `Send` task).
    pub tasks: Vec<String>,
    /// How they went (sorted, each once).
    pub marks: Vec<StepMark>,
    /// Each task with a mark: the mark and the task's node (sorted, each once).
    pub marked: Vec<(StepMark, String)>,
}

/// Each checkpoint's `metadata.step`, by `(namespace, checkpoint id)`.
fn steps_of(headers: &[CheckpointHeader]) -> HashMap<(&str, &str), i64> {
    headers
        .iter()
        .filter_map(|h| {
            Some((
                (h.checkpoint_ns.as_str(), h.checkpoint_id.as_str()),
                h.step()?,
            ))
        })
        .collect()
}

/// The nodes of `Send` tasks, by task id: a `Send`'s path holds no name, its id does
/// ([`send_names`]).
pub type SendNames = HashMap<String, String>;

/// The node a task runs: `~__pregel_pull, NAME` → `NAME`; a `Send` task → its target when
/// [`send_names`] found it, else `Send`.
fn task_name(path: &str, task_id: &str, sends: &SendNames) -> Option<String> {
    let path = path.strip_prefix('~').unwrap_or(path);
    let mut parts = path.split(", ");
    match parts.next()? {
        PULL => parts.next().map(str::to_owned),
        PUSH => Some(
            sends
                .get(task_id)
                .cloned()
                .unwrap_or_else(|| "Send".to_owned()),
        ),
        _ => None,
    }
}

/// The targets of a thread's `Send` tasks. A PUSH task's id is LangGraph's hash of the
/// checkpoint id and `[task_ns, step, node, "__pregel_push", idx]`, the index being in its path
/// (`~__pregel_push, IDX, …`): each candidate node is tried — the nodes the thread's tasks and
/// writes name (`~__pregel_pull, NAME`, `branch:to:NAME`), `tools` (where `create_agent` and
/// `ToolNode` send tool calls) and `extra` (e.g. the nodes in the checkpoints' `versions_seen`).
pub fn send_names(
    writes: &[WriteInfo],
    headers: &[CheckpointHeader],
    extra: &[String],
) -> SendNames {
    let steps = steps_of(headers);
    let mut nodes: Vec<String> = vec!["tools".to_owned()];
    let mut add = |n: &str| {
        if !n.is_empty() && !nodes.iter().any(|x| x == n) {
            nodes.push(n.to_owned());
        }
    };
    for w in writes {
        if let Some(n) = w.channel.strip_prefix(BRANCH_TO) {
            add(n);
        }
        if let Some(n) = w
            .task_path
            .strip_prefix('~')
            .and_then(|p| p.strip_prefix(PULL))
        {
            add(n
                .trim_start_matches(", ")
                .split(", ")
                .next()
                .unwrap_or_default());
        }
    }
    extra.iter().for_each(|n| add(n));
    let mut out = SendNames::new();
    for w in writes {
        if out.contains_key(&w.task_id) {
            continue;
        }
        let Some(rest) = w
            .task_path
            .strip_prefix('~')
            .and_then(|p| p.strip_prefix(PUSH))
        else {
            continue;
        };
        let Some(idx) = rest
            .trim_start_matches(", ")
            .split(", ")
            .next()
            .and_then(|i| i.parse::<usize>().ok())
        else {
            continue;
        };
        let Some(step) = steps.get(&(w.checkpoint_ns.as_str(), w.checkpoint_id.as_str())) else {
            continue;
        };
        let found = nodes.iter().find(|node| {
            let task_ns = match w.checkpoint_ns.as_str() {
                "" => (*node).clone(),
                ns => format!("{ns}|{node}"),
            };
            push_task_id(4, &w.checkpoint_id, &task_ns, step + 1, node, idx).as_deref()
                == Some(w.task_id.as_str())
        });
        if let Some(node) = found {
            out.insert(w.task_id.clone(), node.clone());
        }
    }
    out
}

type TasksAt<'a> = HashMap<(&'a str, &'a str), Vec<(&'a str, TaskWrites<'a>)>>;

/// Each checkpoint's tasks (by id, in the order first written) and what they wrote.
fn tasks_at(writes: &[WriteInfo]) -> TasksAt<'_> {
    let mut tasks: TasksAt<'_> = HashMap::new();
    for w in writes {
        if w.task_id == NULL_TASK_ID {
            continue;
        }
        let at = tasks
            .entry((w.checkpoint_ns.as_str(), w.checkpoint_id.as_str()))
            .or_default();
        let i = match at.iter().position(|(id, _)| *id == w.task_id) {
            Some(i) => i,
            None => {
                at.push((w.task_id.as_str(), TaskWrites::default()));
                at.len() - 1
            }
        };
        let t = &mut at[i].1;
        if t.path.is_empty() {
            t.path = &w.task_path;
        }
        match write_kind(&w.channel) {
            WriteKind::Error => t.error = true,
            WriteKind::Interrupt => t.interrupt = true,
            WriteKind::Control => {}
            WriteKind::Output => t.output = true,
        }
    }
    tasks
}

/// The activity of every checkpoint that has pending writes, by `(namespace, checkpoint id)`.
pub fn step_activity(
    writes: &[WriteInfo],
    sends: &SendNames,
) -> HashMap<(String, String), StepActivity> {
    tasks_at(writes)
        .into_iter()
        .map(|((ns, id), mut at)| {
            at.sort_by(|a, b| (a.1.path, a.0).cmp(&(b.1.path, b.0)));
            let mut marked: Vec<(StepMark, String)> = at
                .iter()
                .filter_map(|(id, t)| {
                    let mark = match task_status(t.error, t.output, t.interrupt) {
                        TaskStatus::Failed => StepMark::Failed,
                        TaskStatus::Recovered => StepMark::Recovered,
                        TaskStatus::Interrupted => StepMark::Interrupted,
                        // Finished after an interrupt: it was resumed.
                        TaskStatus::Done if t.interrupt => StepMark::Resumed,
                        TaskStatus::Done | TaskStatus::Pending => return None,
                    };
                    let node = task_name(t.path, id, sends).unwrap_or_else(|| "?".to_owned());
                    Some((mark, node))
                })
                .collect();
            marked.sort();
            marked.dedup();
            let mut marks: Vec<StepMark> = marked.iter().map(|(m, _)| *m).collect();
            marks.dedup();
            let activity = StepActivity {
                tasks: at
                    .iter()
                    .filter_map(|(id, t)| task_name(t.path, id, sends))
                    .collect(),
                marks,
                marked,
            };
            ((ns.to_owned(), id.to_owned()), activity)
        })
        .collect()
}

/// The tasks anywhere in a thread's history that raised and then finished on a retry: their
/// node names (`Send`, or `?` when the path names none), one entry per task, sorted.
pub fn recovered_tasks(writes: &[WriteInfo], sends: &SendNames) -> Vec<String> {
    let mut out: Vec<String> = tasks_at(writes)
        .into_values()
        .flatten()
        .filter(|(_, t)| task_status(t.error, t.output, t.interrupt) == TaskStatus::Recovered)
        .map(|(id, t)| task_name(t.path, id, sends).unwrap_or_else(|| "?".to_owned()))
        .collect();
    out.sort();
    out
}

/// Whether some task of the writes is a `Send`'s (a PUSH path names no node: [`send_names`]
/// finds it).
pub fn has_unnamed_tasks(writes: &[WriteInfo]) -> bool {
    writes.iter().any(|w| {
        let path = w.task_path.strip_prefix('~').unwrap_or(&w.task_path);
        path.split(", ").next() == Some(PUSH)
    })
}

/// The nodes that ran anywhere in a thread's history, each once, sorted: the tasks' names
/// (`Send` tasks by their target when `sends` knows it), without LangGraph's own (`__start__`)
/// and without the placeholders of a task the writes do not name (`Send`, `?`).
pub fn nodes_that_ran(writes: &[WriteInfo], sends: &SendNames) -> Vec<String> {
    let mut out: Vec<String> = tasks_at(writes)
        .into_values()
        .flatten()
        .filter_map(|(id, t)| task_name(t.path, id, sends))
        .filter(|n| n != "Send" && n != "?" && !n.starts_with("__"))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// LangGraph.js stores no task path. Give each write of a LangGraph.js thread the path of the
/// PULL task whose JS task id it carries (`uuid5(JSON.stringify([task_ns, step, name,
/// "__pregel_pull", [trigger]]), checkpoint_id)`), trying every node the thread's writes route
/// to (`branch:to:NAME`, trigger that channel) and `__start__`, at the step after the
/// checkpoint's `metadata.step` (from the thread's `headers`). A task matching none (a `Send`'s,
/// a node reached otherwise) keeps no name, as in a database without the column.
pub fn name_js_tasks(writes: &mut [WriteInfo], headers: &[CheckpointHeader]) {
    let steps = steps_of(headers);
    let step_of = |ns: &str, id: &str| steps.get(&(ns, id)).copied();
    let mut nodes: Vec<(String, String)> = vec![(START.into(), START.into())];
    for w in writes.iter() {
        if let Some(node) = w.channel.strip_prefix(BRANCH_TO) {
            if !nodes.iter().any(|(n, _)| n == node) {
                nodes.push((node.to_owned(), w.channel.clone()));
            }
        }
    }
    let mut known: HashMap<(String, String, String), Option<String>> = HashMap::new();
    for w in writes.iter_mut() {
        if !w.task_path.is_empty() || w.task_id == NULL_TASK_ID {
            continue;
        }
        let key = (
            w.checkpoint_ns.clone(),
            w.checkpoint_id.clone(),
            w.task_id.clone(),
        );
        let path = known.entry(key).or_insert_with(|| {
            let step = (step_of(&w.checkpoint_ns, &w.checkpoint_id)? + 1).to_string();
            nodes.iter().find_map(|(name, trigger)| {
                let task_ns = match w.checkpoint_ns.as_str() {
                    "" => name.clone(),
                    ns => format!("{ns}|{name}"),
                };
                let parts = serde_json::json!([task_ns, step, name, PULL, [trigger]]);
                let id = js_task_id(&w.checkpoint_id, &parts)?;
                (id == w.task_id).then(|| format!("~{PULL}, {name}"))
            })
        });
        if let Some(path) = path {
            w.task_path = path.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use flashback_codec::reserved::{ERROR, INTERRUPT, RESUME};

    fn w(id: &str, task: &str, path: &str, channel: &str) -> WriteInfo {
        WriteInfo {
            checkpoint_ns: String::new(),
            checkpoint_id: id.into(),
            task_id: task.into(),
            task_path: path.into(),
            channel: channel.into(),
        }
    }

    #[test]
    fn tasks_and_marks_from_write_keys() {
        let writes = [
            w("c1", "t-b", "~__pregel_pull, beta", "x"),
            w("c1", "t-a", "~__pregel_pull, alpha", "x"),
            w("c1", "t-a", "~__pregel_pull, alpha", "branch:to:beta"),
            // A retry: the error of the failed attempt and the output of the good one.
            w("c2", "t-f", "~__pregel_pull, flaky", ERROR),
            w("c2", "t-f", "~__pregel_pull, flaky", "n"),
            w(
                "c3",
                "t-s0",
                "~__pregel_push, 0000000000, 0000000000",
                "out",
            ),
            w(
                "c3",
                "t-s1",
                "~__pregel_push, 0000000001, 0000000000",
                ERROR,
            ),
            w("c4", "t-r", "~__pregel_pull, review", INTERRUPT),
            w("c5", "t-r", "~__pregel_pull, review", INTERRUPT),
            w("c5", "t-r", "~__pregel_pull, review", RESUME),
            w("c5", "t-r", "~__pregel_pull, review", "approved"),
            // update_state / input writes belong to no task.
            w("c6", NULL_TASK_ID, "", "x"),
            // Before task_path existed: marks, no names.
            w("c7", "t-old", "", ERROR),
        ];
        let a = step_activity(&writes, &SendNames::new());
        let get = |id: &str| a.get(&(String::new(), id.to_owned())).cloned();
        assert_eq!(get("c1").unwrap().tasks, ["alpha", "beta"]);
        assert!(get("c1").unwrap().marks.is_empty());
        assert_eq!(get("c2").unwrap().marks, [StepMark::Recovered]);
        assert_eq!(get("c3").unwrap().tasks, ["Send", "Send"]);
        assert_eq!(get("c3").unwrap().marks, [StepMark::Failed]);
        assert_eq!(get("c4").unwrap().marks, [StepMark::Interrupted]);
        assert_eq!(get("c5").unwrap().marks, [StepMark::Resumed]);
        assert_eq!(get("c6"), None);
        assert_eq!(get("c7").unwrap().tasks, Vec::<String>::new());
        assert_eq!(get("c7").unwrap().marks, [StepMark::Failed]);
        // One task in the whole history raised and then recovered: flaky.
        assert_eq!(recovered_tasks(&writes, &SendNames::new()), ["flaky"]);
        assert!(recovered_tasks(&writes[..3], &SendNames::new()).is_empty());
        // The nodes that ran, each once: not the unnamed Sends nor the null task.
        assert_eq!(
            nodes_that_ran(&writes, &SendNames::new()),
            ["alpha", "beta", "flaky", "review"]
        );
        assert!(has_unnamed_tasks(&writes));
        assert!(!has_unnamed_tasks(&writes[..5]));
        // A Send's target once known; LangGraph's own `__start__` left out.
        let mut sends = SendNames::new();
        sends.insert("t-s0".into(), "worker".into());
        let start = w("c0", "t-0", "~__pregel_pull, __start__", "x");
        let more = [&writes[..], &[start]].concat();
        assert_eq!(
            nodes_that_ran(&more, &sends),
            ["alpha", "beta", "flaky", "review", "worker"]
        );
    }

    #[test]
    fn js_tasks_are_named_from_their_ids() {
        let cid = "1f1e9a8b-ef26-6450-8002-c3c1d3b6c0aa";
        let header = CheckpointHeader {
            thread_id: "t".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: cid.into(),
            parent_checkpoint_id: None,
            ts: String::new(),
            metadata: serde_json::json!({"step": 2}),
            problem: None,
        };
        // The task of node `flaky` at step 3, triggered by `branch:to:flaky`, as JS names it.
        let parts = serde_json::json!(["flaky", "3", "flaky", PULL, ["branch:to:flaky"]]);
        let flaky = js_task_id(cid, &parts).expect("hex id");
        let mut writes = vec![
            w("c0", "t0", "", "branch:to:flaky"),
            w(cid, &flaky, "", ERROR),
            w(cid, &flaky, "", "x"),
            w(cid, "00000000-0000-0000-0000-00000000beef", "", "y"),
        ];
        assert_eq!(recovered_tasks(&writes, &SendNames::new()), ["?"]);
        name_js_tasks(&mut writes, &[header]);
        assert_eq!(writes[1].task_path, "~__pregel_pull, flaky");
        assert_eq!(writes[3].task_path, "", "an id no node gives keeps no name");
        assert_eq!(recovered_tasks(&writes, &SendNames::new()), ["flaky"]);
        assert_eq!(
            step_activity(&writes, &SendNames::new())[&(String::new(), cid.to_owned())].tasks,
            ["flaky"]
        );
    }
}

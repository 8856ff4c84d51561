//! The topology a thread shows by what ran: its nodes and the transitions between them, counted,
//! with sub-agents nested under the node that ran them — without the graph object, from the
//! laid-out rows alone (their checkpoints' parent links and the nodes each step's writes name),
//! so it works on any database.
//!
//! * A **graph** is one namespace path with the task ids left out (`""` the root graph,
//!   `tools` a sub-agent the root's `tools` node ran — a deep agent's `task` tool —,
//!   `tools|tools` one level deeper; a supervisor's workers are `research`, `math`, …): every
//!   call of it (each namespace) adds to the same counts.
//! * A **node** ran once per task of a step that made a row ([`GraphRow::ran`]: `tools` twice
//!   for two `Send`s). Its checkpoints are the rows its steps made, and the rows whose next step
//!   it failed or waits in.
//! * An **edge** A → B counts the steps that ran B right after a step that ran A, along parent
//!   links within one namespace (`update`/`fork` checkpoints in between are passed through).
//!   `__start__` is the entry (its task makes each run's first `loop` checkpoint); `__end__`
//!   follows the nodes of a checkpoint where a run finished with nothing next (`ended`, which
//!   the caller reads: [`end_candidates`] are the rows to ask about). A node that failed or
//!   waits and has not run since gets its edge too (from the nodes before it).
//!
//! The rows say which nodes a mark is about ([`GraphRow::mark_nodes`]) but not which mark is
//! whose when a row has several: a node of the row's own step (in `ran`) takes its `recovered`
//! / `resumed` marks, any other node the `failed` / `interrupted` ones; a row with one kind of
//! mark gives it to each of its nodes.

use crate::activity::StepMark;
use crate::layout::GraphRow;
use crate::ns;
use flashback_codec::reserved::{END, START};
use serde::Serialize;
use std::collections::{HashMap, HashSet};

#[cfg(test)]
mod tests;

/// A thread's (or several threads') observed topology: the root graph first, then each nested
/// graph after the graph whose node ran it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Topology {
    /// The graphs, the root (`path` `""`) first.
    pub graphs: Vec<TopoGraph>,
}

/// One graph: a namespace path, every call of it counted together.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TopoGraph {
    /// The namespace path without task ids: `""` for the root graph, `tools`, `tools|tools`.
    pub path: String,
    /// The path of the graph whose node ran this one (`None` for the root graph).
    pub parent: Option<String>,
    /// That node (the last segment of `path`).
    pub node: Option<String>,
    /// How many times it was invoked: its `__start__` runs (each turn of a chat, each call of
    /// a sub-agent, also of one with its own checkpointer, whose calls share a namespace), or
    /// its namespaces when they are more (steps without names).
    pub calls: u32,
    /// Its nodes, in the order they first ran.
    pub nodes: Vec<TopoNode>,
    /// The transitions seen, in the order first seen.
    pub edges: Vec<TopoEdge>,
}

/// A node of a graph and what became of its runs.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TopoNode {
    /// The node's name (`__start__` the entry, `__end__` where runs finished).
    pub name: String,
    /// Tasks of it that finished (one per task: two `Send`s to it in a step are two).
    pub runs: u32,
    /// Tasks of it that raised and have no output.
    pub failed: u32,
    /// Tasks of it that raised, then finished on a retry.
    pub recovered: u32,
    /// Tasks of it that wait at an interrupt.
    pub interrupted: u32,
    /// Tasks of it that were interrupted, then resumed and finished.
    pub resumed: u32,
    /// Where it ran: the checkpoints its steps made (`mark` none, `recovered` or `resumed`)
    /// and those whose next step it failed or waits in (`failed`, `interrupted`); for
    /// `__end__`, where the runs finished. Oldest first.
    pub checkpoints: Vec<TopoCheckpoint>,
}

/// A checkpoint a node ran at.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TopoCheckpoint {
    /// Its thread.
    pub thread_id: String,
    /// Its namespace.
    pub ns: String,
    /// Its id.
    pub id: String,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// How the node's task went there, when not simply finished.
    pub mark: Option<StepMark>,
}

/// A transition between two nodes of one graph.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TopoEdge {
    /// The node that ran first.
    pub from: String,
    /// The node that ran in the next step (or `__end__`).
    pub to: String,
    /// How many steps went this way.
    pub count: u32,
}

/// How many `update`/`fork` checkpoints a walk up to the nodes before a step passes at most.
const MAX_PASS: usize = 64;

/// The rows where a run may have finished: `loop` checkpoints that made no `loop` checkpoint
/// after them (a branch's tip, or the last step before new input) and whose next step did not
/// fail or wait. The caller tells which of them have nothing next (the `ended` of
/// [`TopologyBuilder::add`]), as `(namespace, checkpoint id)`.
pub fn end_candidates(rows: &[GraphRow]) -> Vec<(String, String)> {
    let followed: HashSet<(&str, &str)> = rows
        .iter()
        .filter(|r| r.source.as_deref() == Some("loop"))
        .filter_map(|r| Some((r.ns.as_str(), r.parent_id.as_deref()?)))
        .collect();
    rows.iter()
        .filter(|r| r.source.as_deref() == Some("loop") && !r.ran.is_empty())
        .filter(|r| !followed.contains(&(r.ns.as_str(), r.id.as_str())))
        .filter(|r| {
            !r.marks
                .iter()
                .any(|m| matches!(m, StepMark::Failed | StepMark::Interrupted))
        })
        .map(|r| (r.ns.clone(), r.id.clone()))
        .collect()
}

/// The topology of one thread's rows (see [`TopologyBuilder::add`]).
pub fn topology(thread_id: &str, rows: &[GraphRow], ended: &HashSet<(String, String)>) -> Topology {
    let mut b = TopologyBuilder::default();
    b.add(thread_id, rows, ended);
    b.build()
}

/// Counts the topology of one thread or more (threads of the same graph add up).
#[derive(Debug, Default)]
pub struct TopologyBuilder {
    graphs: Vec<TopoGraph>,
    by_path: HashMap<String, usize>,
    calls: HashSet<(String, String)>,
}

/// Whether a mark is about the step that made its row (rather than the step after it).
fn own_step(m: &StepMark) -> bool {
    matches!(m, StepMark::Recovered | StepMark::Resumed)
}

/// Each name once, in order.
fn distinct(names: &[String]) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n.as_str()) {
            out.push(n);
        }
    }
    out
}

/// The marks of a row with the node each is about (see the module's note on rows with
/// several marks).
pub fn marked_nodes(row: &GraphRow) -> Vec<(StepMark, &str)> {
    let has_own = row.marks.iter().any(own_step);
    let has_next = row.marks.iter().any(|m| !own_step(m));
    let mut out = Vec::new();
    for n in distinct(&row.mark_nodes) {
        let own = has_own && (!has_next || row.ran.iter().any(|r| r == n));
        for m in row.marks.iter().filter(|m| own_step(m) == own) {
            out.push((*m, n));
        }
    }
    out
}

impl TopologyBuilder {
    /// The index of the graph at `path`, made (with the graphs above it and the node that ran
    /// it) when new.
    fn graph(&mut self, path: &str) -> usize {
        if let Some(&i) = self.by_path.get(path) {
            return i;
        }
        let (parent, node) = match path.rsplit_once('|') {
            Some((p, n)) => (Some(p.to_owned()), Some(n.to_owned())),
            None if path.is_empty() => (None, None),
            None => (Some(String::new()), Some(path.to_owned())),
        };
        if let (Some(p), Some(n)) = (&parent, &node) {
            let pi = self.graph(p);
            node_in(&mut self.graphs[pi], n);
        }
        self.graphs.push(TopoGraph {
            path: path.to_owned(),
            parent,
            node,
            ..TopoGraph::default()
        });
        self.by_path.insert(path.to_owned(), self.graphs.len() - 1);
        self.graphs.len() - 1
    }

    /// Add one thread's rows (as laid out, any order). `ended`: the `(namespace, checkpoint
    /// id)` of checkpoints whose next step has no task (from [`end_candidates`]).
    pub fn add(&mut self, thread_id: &str, rows: &[GraphRow], ended: &HashSet<(String, String)>) {
        self.graph("");
        let by_key: HashMap<(&str, &str), &GraphRow> = rows
            .iter()
            .map(|r| ((r.ns.as_str(), r.id.as_str()), r))
            .collect();
        // The nodes the `loop` children of each checkpoint ran.
        let mut next_ran: HashMap<(&str, &str), HashSet<&str>> = HashMap::new();
        for r in rows.iter().filter(|r| r.source.as_deref() == Some("loop")) {
            if let Some(p) = r.parent_id.as_deref() {
                next_ran
                    .entry((r.ns.as_str(), p))
                    .or_default()
                    .extend(r.ran.iter().map(String::as_str));
            }
        }
        let cp = |r: &GraphRow, mark: Option<StepMark>| TopoCheckpoint {
            thread_id: thread_id.to_owned(),
            ns: r.ns.clone(),
            id: r.id.clone(),
            step: r.step,
            mark,
        };
        // Oldest first: rows come newest first, children above parents.
        let mut order: Vec<&GraphRow> = rows.iter().collect();
        order.reverse();
        for r in order {
            let gi = self.graph(&ns::recast(&r.ns));
            if self.calls.insert((thread_id.to_owned(), r.ns.clone())) {
                self.graphs[gi].calls += 1;
            }
            let g = &mut self.graphs[gi];
            let marked = marked_nodes(r);
            if r.source.as_deref() == Some("loop") && !r.ran.is_empty() {
                let before = r
                    .parent_id
                    .as_deref()
                    .and_then(|p| by_key.get(&(r.ns.as_str(), p)))
                    .map(|p| ran_of(p, &by_key))
                    .unwrap_or_default();
                for n in distinct(&r.ran) {
                    let k =
                        u32::try_from(r.ran.iter().filter(|x| *x == n).count()).unwrap_or(u32::MAX);
                    let own = marked.iter().find(|(m, x)| *x == n && own_step(m));
                    let node = node_in(g, n);
                    node.runs = node.runs.saturating_add(k);
                    node.checkpoints.push(cp(r, own.map(|(m, _)| *m)));
                    for a in &before {
                        edge_in(g, a, n);
                    }
                }
            }
            for (m, n) in &marked {
                let node = node_in(g, n);
                let count = match m {
                    StepMark::Failed => &mut node.failed,
                    StepMark::Recovered => &mut node.recovered,
                    StepMark::Interrupted => &mut node.interrupted,
                    StepMark::Resumed => &mut node.resumed,
                };
                *count = count.saturating_add(1);
                if own_step(m) {
                    continue;
                }
                node.checkpoints.push(cp(r, Some(*m)));
                let ran_since = next_ran
                    .get(&(r.ns.as_str(), r.id.as_str()))
                    .is_some_and(|s| s.contains(n));
                if !ran_since {
                    for a in ran_of(r, &by_key) {
                        edge_in(g, a, n);
                    }
                }
            }
            if ended.contains(&(r.ns.clone(), r.id.clone())) {
                let before = ran_of(r, &by_key);
                if !before.is_empty() {
                    let end = node_in(g, END);
                    end.runs = end.runs.saturating_add(1);
                    end.checkpoints.push(cp(r, None));
                    for a in before {
                        edge_in(g, a, END);
                    }
                }
            }
        }
    }

    /// The topology: the root graph first, each nested graph after its parent's.
    pub fn build(self) -> Topology {
        // Graphs were made after their parents: siblings keep the order they were first called in.
        let mut graphs = self.graphs;
        for g in &mut graphs {
            let starts = g
                .nodes
                .iter()
                .find(|n| n.name == START)
                .map_or(0, |n| n.runs);
            g.calls = g.calls.max(starts);
        }
        let mut out: Vec<TopoGraph> = Vec::with_capacity(graphs.len());
        place(&mut out, &mut graphs, "");
        Topology { graphs: out }
    }
}

/// The nodes whose step made a row, passing `update`/`fork` checkpoints up to the `loop` one
/// before them (none for an input checkpoint, or when the names are unknown).
fn ran_of<'a>(row: &'a GraphRow, by_key: &HashMap<(&str, &str), &'a GraphRow>) -> Vec<&'a str> {
    let mut at = row;
    for _ in 0..MAX_PASS {
        match at.source.as_deref() {
            Some("loop") => return distinct(&at.ran),
            Some("update" | "fork") => {}
            _ => return Vec::new(),
        }
        match at
            .parent_id
            .as_deref()
            .and_then(|p| by_key.get(&(at.ns.as_str(), p)))
        {
            Some(p) => at = p,
            None => return Vec::new(),
        }
    }
    Vec::new()
}

/// Move the graph at `path` and then, depth first, the graphs it ran into `out`.
fn place(out: &mut Vec<TopoGraph>, rest: &mut Vec<TopoGraph>, path: &str) {
    let Some(i) = rest.iter().position(|g| g.path == path) else {
        return;
    };
    out.push(rest.remove(i));
    let children: Vec<String> = rest
        .iter()
        .filter(|g| g.parent.as_deref() == Some(path))
        .map(|g| g.path.clone())
        .collect();
    for c in children {
        place(out, rest, &c);
    }
}

/// The node `name` of a graph, added when new.
fn node_in<'a>(g: &'a mut TopoGraph, name: &str) -> &'a mut TopoNode {
    let i = match g.nodes.iter().position(|n| n.name == name) {
        Some(i) => i,
        None => {
            g.nodes.push(TopoNode {
                name: name.to_owned(),
                ..TopoNode::default()
            });
            g.nodes.len() - 1
        }
    };
    &mut g.nodes[i]
}

/// Count one transition `from` → `to` (both nodes added when new).
fn edge_in(g: &mut TopoGraph, from: &str, to: &str) {
    node_in(g, from);
    node_in(g, to);
    match g.edges.iter_mut().find(|e| e.from == from && e.to == to) {
        Some(e) => e.count = e.count.saturating_add(1),
        None => g.edges.push(TopoEdge {
            from: from.to_owned(),
            to: to.to_owned(),
            count: 1,
        }),
    }
}

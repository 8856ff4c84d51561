//! Git-graph style lane layout of a [`ThreadDag`], computed in Rust so that every front end
//! draws the same picture.
//!
//! Rows are newest first. Ids order time only within one process, so rows are sorted by
//! checkpoint id descending *subject to* every child appearing above its parent (a
//! children-first topological order that always emits the highest ready id). Lane 0 is kept for
//! the *trunk*: from the namespace's oldest root, always the oldest child — the run as it first
//! went, which no later fork, merge or re-run changes, so lanes and colours stay put as branches
//! are added. Other branches take the lowest free lane and converge into their fork point's
//! lane. In nested mode, a subgraph namespace's root hangs off the parent-graph checkpoint that
//! spawned it, like a branch.
//!
//! Each row also names its branch for front ends: `branch_key` (the id of the branch's first
//! checkpoint, stable as the branch grows: colour by it), `branch_label` on each branch's tip
//! (`fork`, `edit`, `re-run`, `merge`, `update`) and `merged_from_row` on a merge.
//!
//! The output is O(n) however wide the graph: a row carries its own dot and the one line that
//! starts at it, the line up from it to its parent (`parent_row`, `parent_lane`,
//! `parent_kind`). That line runs straight down `lane` from the row to the row above
//! `parent_row` and bends into `parent_lane` on the way into `parent_row`. Which lines pass a
//! row is not stored: a front end finds them from those intervals (the UI with an interval
//! index over the rows in view, [`render_text`] by streaming). Cost: O(n log n).

use crate::activity::StepMark;
use crate::dag::{EdgeKind, ThreadDag};
use crate::error::EngineError;
use crate::ns;
use crate::usage::TokenUsage;
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::{EdgeRef, NodeIndexable};
use petgraph::Direction;
use serde::{Deserialize, Serialize};
use std::collections::{BinaryHeap, HashMap};

mod annotate;
mod lanes;
pub use annotate::{annotate, annotate_usage};
mod text;
pub use text::render_text;

/// What to lay out.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct LayoutOptions {
    /// The namespace to lay out (`""`, the root graph, by default).
    pub ns: String,
    /// Also include the subgraph namespaces below `ns`, each hanging off the checkpoint that
    /// spawned it.
    pub nested: bool,
    /// Subgraph namespaces to leave out in nested mode, with every namespace below them (a
    /// collapsed subgraph in the GUI).
    pub collapsed: Vec<String>,
}

impl LayoutOptions {
    /// The root namespace with every subgraph namespace nested under its spawning checkpoint.
    pub fn nested() -> Self {
        LayoutOptions {
            ns: String::new(),
            nested: true,
            collapsed: Vec::new(),
        }
    }

    /// Whether namespace `ns` is left out: it, or a namespace above it, is collapsed.
    pub fn hides(&self, ns: &str) -> bool {
        self.collapsed.iter().any(|c| {
            ns == c
                || ns
                    .strip_prefix(c.as_str())
                    .is_some_and(|r| r.starts_with('|'))
        })
    }
}

/// One row of the graph: one checkpoint with what every front end shows beside its dot, and
/// the line up from it to its parent (the one graph row type: `flashback graph --json`, the app
/// and `serve` all receive it).
///
/// The line runs in `lane` from this row down to the row above `parent_row`, then bends into
/// `parent_lane` on the way into `parent_row` (drawn dotted when `parent_kind` is a subgraph
/// link). No other line uses `lane` between the two rows, and none passes a dot.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct GraphRow {
    /// Checkpoint id.
    pub id: String,
    /// Namespace.
    pub ns: String,
    /// The parent id as stored.
    pub parent_id: Option<String>,
    /// The lane (column) of the checkpoint's dot.
    pub lane: usize,
    /// Namespace depth relative to the laid-out namespace (0 for its own checkpoints).
    pub depth: usize,
    /// Branch id from the DAG.
    pub branch: usize,
    /// Whether the checkpoint has two or more children.
    pub fork_point: bool,
    /// Whether this is the thread head (latest root-namespace checkpoint).
    pub head: bool,
    /// Whether this is the latest checkpoint of its namespace.
    pub ns_head: bool,
    /// Row index of the parent (or, for a subgraph root in nested mode, of the spawning
    /// checkpoint): always below this row. The row's line ends there.
    pub parent_row: Option<usize>,
    /// Lane of that row: where the line bends to in its last segment.
    pub parent_lane: Option<usize>,
    /// How the row links to `parent_row` (a `parent` line or a dotted `subgraph` one).
    pub parent_kind: Option<EdgeKind>,
    /// The stored parent id when it is missing from the data.
    pub orphan_parent: Option<String>,
    /// The stored parent id when its link was dropped to break a cycle.
    pub broken_parent: Option<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source` (`input`, `loop`, `update`, `fork`).
    pub source: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// Subgraph namespaces this checkpoint's step ran.
    pub subgraphs: Vec<String>,
    /// What Flashback did to make it (`copy_fork`, `edit_fork`, `merge`, `rerun`), if it did.
    pub flashback_action: Option<String>,
    /// The id of the first checkpoint of the row's branch (the lane segment it is on): stable
    /// while the branch grows, so front ends colour branches by it.
    pub branch_key: String,
    /// On a branch's tip: what the branch is (`fork`, `edit`, `re-run`, `merge`, `update`),
    /// from how its first checkpoint was made (`head` says which tip is the thread's head).
    pub branch_label: Option<String>,
    /// On a Flashback merge: the row of the branch-B checkpoint it took channels from.
    pub merged_from_row: Option<usize>,
    /// The nodes whose step made this checkpoint (a `loop` one), in task order: the tasks
    /// that wrote at its parent (a `Send` task by its target, `Send` when that is unknown;
    /// empty when unknown). Filled in by [`annotate`] from the thread's writes.
    pub ran: Vec<String>,
    /// What the nodes did, on the row of the node: a task of the step that made this row
    /// raised and then finished on a retry (`recovered`) or was resumed (`resumed`); a task of
    /// the step after it — which has no row yet — failed or waits at an interrupt (also from
    /// `annotate`).
    pub marks: Vec<StepMark>,
    /// The nodes the marks are about, in mark order (`fetch_bad`).
    pub mark_nodes: Vec<String>,
    /// `response_metadata.model_name` of the AI messages counted in [`GraphRow::tokens`].
    pub models: Vec<String>,
    /// Tokens the model calls of the step that made this checkpoint used, from the
    /// `usage_metadata` of the messages it wrote (filled in by
    /// [`annotate_usage`]; `None`: none carried usage).
    pub tokens: Option<TokenUsage>,
}

/// A laid-out thread (serialisable for the GUI).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layout {
    /// The namespace laid out.
    pub ns: String,
    /// Whether subgraph namespaces are nested in.
    pub nested: bool,
    /// Number of lanes used (the highest row lane + 1).
    pub width: usize,
    /// Rows, newest first; each carries its line to its parent.
    pub rows: Vec<GraphRow>,
}

fn selected(dag: &ThreadDag, opts: &LayoutOptions) -> Result<Vec<NodeIndex>, EngineError> {
    if dag.namespace(&opts.ns).is_none() {
        if opts.ns.is_empty() {
            // An empty thread, or one without root checkpoints: lay out nothing of the root.
            if !opts.nested {
                return Ok(Vec::new());
            }
        } else {
            return Err(EngineError::UnknownNamespace(opts.ns.clone()));
        }
    }
    let prefix = format!("{}|", opts.ns);
    let wanted = |n: &str| {
        n == opts.ns
            || (opts.nested && (opts.ns.is_empty() || n.starts_with(&prefix)) && !opts.hides(n))
    };
    Ok(dag
        .graph
        .node_indices()
        .filter(|&i| wanted(&dag.graph[i].ns))
        .collect())
}

/// "Not laid out yet" in the per-node row table.
const NO_ROW: usize = usize::MAX;

/// Lay a thread out. Errors only when `opts.ns` names a namespace the thread does not have.
pub fn layout(dag: &ThreadDag, opts: &LayoutOptions) -> Result<Layout, EngineError> {
    let g = &dag.graph;
    let nodes = selected(dag, opts)?;
    // Per-checkpoint state lives in vectors indexed by `NodeIndex::index()`.
    let bound = g.node_bound();
    let mut in_set = vec![false; bound];
    for n in &nodes {
        in_set[n.index()] = true;
    }

    // The link each node hangs from: its parent, or (nested) the checkpoint that spawned it.
    let mut up: Vec<Option<(NodeIndex, EdgeKind)>> = vec![None; bound];
    let mut pending = vec![0usize; bound];
    for &n in &nodes {
        let link = g
            .edges_directed(n, Direction::Incoming)
            .filter(|e| in_set[e.source().index()])
            .map(|e| (e.source(), *e.weight()))
            .min_by_key(|(_, k)| *k != EdgeKind::Parent);
        if let Some((p, k)) = link {
            up[n.index()] = Some((p, k));
            pending[p.index()] += 1;
        }
    }

    // Rows go out newest first: each checkpoint's rank in (id, ns) order, so that the ready
    // queue compares integers, not strings.
    let mut order = nodes.clone();
    order.sort_unstable_by(|&a, &b| {
        (g[a].checkpoint_id.as_str(), g[a].ns.as_str(), a).cmp(&(
            g[b].checkpoint_id.as_str(),
            g[b].ns.as_str(),
            b,
        ))
    });
    let mut rank = vec![0usize; bound];
    for (r, &n) in order.iter().enumerate() {
        rank[n.index()] = r;
    }
    let mut ready: BinaryHeap<usize> = nodes
        .iter()
        .filter(|n| pending[n.index()] == 0)
        .map(|n| rank[n.index()])
        .collect();

    let base_depth = ns::depth(&opts.ns);
    let heads: HashMap<&str, &str> = dag
        .namespaces()
        .iter()
        .filter_map(|c| c.head.as_deref().map(|h| (c.ns.as_str(), h)))
        .collect();
    let mut rows: Vec<GraphRow> = Vec::with_capacity(nodes.len());
    let mut row_nodes: Vec<NodeIndex> = Vec::with_capacity(nodes.len());
    let mut row_of = vec![NO_ROW; bound];
    // `newest` only matters if the links had a cycle (they cannot: the DAG breaks parent
    // cycles and subgraph links always point to shallower namespaces); it then forces the
    // newest remaining checkpoint out instead of dropping rows.
    let mut newest = order.len();
    loop {
        let n = match ready.pop() {
            Some(r) => order[r],
            None => {
                while newest > 0 && row_of[order[newest - 1].index()] != NO_ROW {
                    newest -= 1;
                }
                match newest {
                    0 => break,
                    k => order[k - 1],
                }
            }
        };
        if row_of[n.index()] != NO_ROW {
            continue;
        }
        let node = &g[n];
        let ns_head = heads.get(node.ns.as_str()).copied() == Some(node.checkpoint_id.as_str());
        row_of[n.index()] = rows.len();
        row_nodes.push(n);
        rows.push(GraphRow {
            id: node.checkpoint_id.clone(),
            ns: node.ns.clone(),
            parent_id: node.parent_checkpoint_id.clone(),
            lane: 0,
            depth: node.depth.saturating_sub(base_depth),
            branch: node.branch,
            fork_point: node.is_fork_point,
            head: node.is_head,
            ns_head,
            parent_row: None,
            parent_lane: None,
            parent_kind: None,
            orphan_parent: node.orphan_parent.clone(),
            broken_parent: node.broken_parent.clone(),
            step: node.step,
            source: node.source.clone(),
            ts: node.ts.clone(),
            subgraphs: node.subgraphs.clone(),
            flashback_action: node.flashback_action.clone(),
            branch_key: String::new(),
            branch_label: None,
            merged_from_row: None,
            ran: Vec::new(),
            marks: Vec::new(),
            mark_nodes: Vec::new(),
            models: Vec::new(),
            tokens: None,
        });
        if let Some((p, _)) = up[n.index()] {
            if row_of[p.index()] == NO_ROW {
                pending[p.index()] -= 1;
                if pending[p.index()] == 0 {
                    ready.push(rank[p.index()]);
                }
            }
        }
    }

    // Parent rows first, then lanes (which read them).
    for (r, &n) in row_nodes.iter().enumerate() {
        if let Some((p, k)) = up[n.index()] {
            let pr = row_of[p.index()];
            if pr != NO_ROW {
                rows[r].parent_row = Some(pr);
                rows[r].parent_kind = Some(k);
            }
        }
    }
    let trunk_root = trunk_root(dag, &opts.ns).map(|i| row_of[i.index()]);
    lanes::assign(&mut rows, trunk_root.filter(|&r| r != NO_ROW));
    for (r, &n) in row_nodes.iter().enumerate() {
        if let Some(from) = &g[n].merged_from {
            let row = dag
                .index_of(&g[n].ns, from)
                .map(|i| row_of[i.index()])
                .filter(|&pr| pr != NO_ROW);
            rows[r].merged_from_row = row;
        }
    }
    let width = rows.iter().map(|r| r.lane).max().map_or(0, |m| m + 1);
    Ok(Layout {
        ns: opts.ns.clone(),
        nested: opts.nested,
        width,
        rows,
    })
}

/// The oldest root of namespace `ns`: where its trunk (lane 0) starts.
fn trunk_root(dag: &ThreadDag, ns: &str) -> Option<NodeIndex> {
    dag.namespace(ns)?
        .roots
        .iter()
        .filter_map(|id| dag.index_of(ns, id))
        .min_by(|&a, &b| dag.graph[a].checkpoint_id.cmp(&dag.graph[b].checkpoint_id))
}

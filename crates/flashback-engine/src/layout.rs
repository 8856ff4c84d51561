//! Git-graph style lane layout of a [`ThreadDag`], computed in Rust so that every front end
//! draws the same picture.
//!
//! Rows are newest first. Ids order time only within one process, so rows are sorted by
//! checkpoint id descending *subject to* every child appearing above its parent (a
//! children-first topological order that always emits the highest ready id). Lane 0 is kept for
//! the head's lineage; other branches take the lowest free lane and converge into their fork
//! point's lane. In nested mode, a subgraph namespace's root hangs off the parent-graph
//! checkpoint that spawned it, like a branch.
//!
//! Cost: O(n log n) for ordering and lane assignment plus the size of the output (each row
//! lists the lines passing it, so O(n · width) in the worst case).

use crate::dag::{EdgeKind, ThreadDag};
use crate::error::EngineError;
use crate::ns;
use petgraph::stable_graph::NodeIndex;
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeSet, BinaryHeap, HashMap, HashSet};

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

/// A line segment between a row and the row below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Edge {
    /// Lane at this row.
    pub from: usize,
    /// Lane at the next row.
    pub to: usize,
    /// The link the line belongs to.
    pub kind: EdgeKind,
}

/// One row of the graph: one checkpoint with what every front end shows beside its dot (the
/// one graph row type: `flashback graph --json`, the app and `serve` all receive it).
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
    /// checkpoint).
    pub parent_row: Option<usize>,
    /// Lane of that row.
    pub parent_lane: Option<usize>,
    /// How the row links to `parent_row`.
    pub parent_kind: Option<EdgeKind>,
    /// The stored parent id when it is missing from the data.
    pub orphan_parent: Option<String>,
    /// The stored parent id when its link was dropped to break a cycle.
    pub broken_parent: Option<String>,
    /// Segments to draw from this row down to the next row.
    pub edges: Vec<Edge>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source` (`input`, `loop`, `update`, `fork`).
    pub source: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// Subgraph namespaces this checkpoint's step ran.
    pub subgraphs: Vec<String>,
    /// What Flashback did to make it (`copy_fork`, `edit_fork`, `merge`), if it did.
    pub flashback_action: Option<String>,
}

/// A laid-out thread (serialisable for the GUI).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Layout {
    /// The namespace laid out.
    pub ns: String,
    /// Whether subgraph namespaces are nested in.
    pub nested: bool,
    /// Number of lanes used.
    pub width: usize,
    /// Rows, newest first.
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

/// Lay a thread out. Errors only when `opts.ns` names a namespace the thread does not have.
pub fn layout(dag: &ThreadDag, opts: &LayoutOptions) -> Result<Layout, EngineError> {
    let g = &dag.graph;
    let nodes = selected(dag, opts)?;
    let in_set: HashSet<NodeIndex> = nodes.iter().copied().collect();

    // The link each node hangs from: its parent, or (nested) the checkpoint that spawned it.
    let mut up: HashMap<NodeIndex, (NodeIndex, EdgeKind)> = HashMap::with_capacity(nodes.len());
    let mut pending: HashMap<NodeIndex, usize> = HashMap::with_capacity(nodes.len());
    for &n in &nodes {
        let link = g
            .edges_directed(n, Direction::Incoming)
            .filter(|e| in_set.contains(&e.source()))
            .map(|e| (e.source(), *e.weight()))
            .min_by_key(|(_, k)| *k != EdgeKind::Parent);
        if let Some((p, k)) = link {
            up.insert(n, (p, k));
            *pending.entry(p).or_default() += 1;
        }
    }

    // Lane 0 belongs to the laid-out namespace's head lineage.
    let mut lineage: HashSet<NodeIndex> = HashSet::new();
    if let Some(head) = dag.namespace(&opts.ns).and_then(|n| n.head.as_deref()) {
        lineage.extend(
            dag.lineage(&opts.ns, head)
                .iter()
                .filter_map(|n| dag.index_of(&n.ns, &n.checkpoint_id)),
        );
    }

    let key = |n: NodeIndex| (g[n].checkpoint_id.as_str(), g[n].ns.as_str(), n);
    let mut ready: BinaryHeap<(&str, &str, NodeIndex)> = nodes
        .iter()
        .filter(|n| !pending.contains_key(n))
        .map(|&n| key(n))
        .collect();

    let base_depth = ns::depth(&opts.ns);
    let heads: HashMap<&str, &str> = dag
        .namespaces()
        .iter()
        .filter_map(|c| c.head.as_deref().map(|h| (c.ns.as_str(), h)))
        .collect();
    let mut rows: Vec<GraphRow> = Vec::with_capacity(nodes.len());
    let mut row_of: HashMap<NodeIndex, usize> = HashMap::with_capacity(nodes.len());
    let mut lanes: Vec<Option<(NodeIndex, EdgeKind)>> = vec![None];
    let mut active: BTreeSet<usize> = BTreeSet::new();
    let mut expecting: HashMap<NodeIndex, Vec<usize>> = HashMap::new();
    let mut free: BTreeSet<usize> = BTreeSet::new();
    // While the head lineage is being drawn, lane 0 is kept for it.
    let mut reserved = !lineage.is_empty();
    if !reserved {
        free.insert(0);
    }

    let mut left: BTreeSet<(&str, &str, NodeIndex)> = nodes.iter().map(|&n| key(n)).collect();
    // `left` only matters if the links had a cycle (they cannot: the DAG breaks parent cycles
    // and subgraph links always point to shallower namespaces); it then forces the newest
    // remaining checkpoint out instead of dropping rows.
    while let Some((_, _, n)) = ready.pop().or_else(|| left.last().copied()) {
        if !left.remove(&key(n)) {
            continue;
        }
        let mut waiting = expecting.remove(&n).unwrap_or_default();
        waiting.sort_unstable();
        let on_lineage = lineage.contains(&n);
        let lane = if on_lineage {
            0
        } else if let Some(&l) = waiting.first() {
            l
        } else if let Some(l) = free.pop_first() {
            l
        } else {
            lanes.push(None);
            lanes.len() - 1
        };
        // The previous row's lines: those waiting for `n` converge into its lane.
        if let Some(prev) = rows.last_mut() {
            prev.edges = active
                .iter()
                .map(|&l| {
                    let kind = lanes[l].map_or(EdgeKind::Parent, |(_, k)| k);
                    let to = if waiting.binary_search(&l).is_ok() {
                        lane
                    } else {
                        l
                    };
                    Edge { from: l, to, kind }
                })
                .collect();
        }
        for &l in &waiting {
            lanes[l] = None;
            active.remove(&l);
            if l != lane && !(reserved && l == 0) {
                free.insert(l);
            }
        }
        let node = &g[n];
        let ns_head = heads.get(node.ns.as_str()).copied() == Some(node.checkpoint_id.as_str());
        row_of.insert(n, rows.len());
        rows.push(GraphRow {
            id: node.checkpoint_id.clone(),
            ns: node.ns.clone(),
            parent_id: node.parent_checkpoint_id.clone(),
            lane,
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
            edges: Vec::new(),
            step: node.step,
            source: node.source.clone(),
            ts: node.ts.clone(),
            subgraphs: node.subgraphs.clone(),
            flashback_action: node.flashback_action.clone(),
        });
        match up.get(&n) {
            Some(&(p, k)) => {
                lanes[lane] = Some((p, k));
                active.insert(lane);
                expecting.entry(p).or_default().push(lane);
                let remaining = pending.get_mut(&p).map(|c| {
                    *c -= 1;
                    *c
                });
                if remaining == Some(0) {
                    ready.push(key(p));
                }
            }
            None => {
                if on_lineage {
                    reserved = false;
                }
                if !(reserved && lane == 0) {
                    free.insert(lane);
                }
            }
        }
    }

    for (&n, &(p, k)) in &up {
        if let (Some(&r), Some(&pr)) = (row_of.get(&n), row_of.get(&p)) {
            let parent_lane = rows[pr].lane;
            let row = &mut rows[r];
            row.parent_row = Some(pr);
            row.parent_lane = Some(parent_lane);
            row.parent_kind = Some(k);
        }
    }
    let width = rows
        .iter()
        .flat_map(|r| std::iter::once(r.lane).chain(r.edges.iter().map(|e| e.from)))
        .max()
        .map_or(0, |m| m + 1);
    Ok(Layout {
        ns: opts.ns.clone(),
        nested: opts.nested,
        width,
        rows,
    })
}

fn vertical(kind: EdgeKind) -> u8 {
    match kind {
        EdgeKind::Parent => b'|',
        EdgeKind::Subgraph => b':',
    }
}

fn put(line: &mut Vec<u8>, col: usize, ch: u8) {
    if line.len() <= col {
        line.resize(col + 1, b' ');
    }
    line[col] = ch;
}

fn finish_line(out: &mut String, line: &[u8], label: Option<&str>) {
    let mut text = String::from_utf8_lossy(line).trim_end().to_owned();
    if let Some(l) = label.filter(|l| !l.is_empty()) {
        text.push(' ');
        text.push_str(l);
    }
    out.push_str(text.trim_end());
    out.push('\n');
}

/// Render a layout as text, like `git log --graph`: `*` is a checkpoint, `|` a parent line,
/// `:` a subgraph attachment line, `/` and `\` lines moving between lanes. Each checkpoint
/// line ends with `label(row)`.
pub fn render_text(rows: &[GraphRow], label: impl Fn(&GraphRow) -> String) -> String {
    let mut out = String::new();
    let mut incoming: Vec<Edge> = Vec::new();
    for row in rows {
        let mut line = Vec::new();
        for e in &incoming {
            put(&mut line, 2 * e.to, vertical(e.kind));
        }
        for e in &row.edges {
            if e.from != row.lane {
                put(&mut line, 2 * e.from, vertical(e.kind));
            }
        }
        put(&mut line, 2 * row.lane, b'*');
        finish_line(&mut out, &line, Some(&label(row)));

        let mut pos: Vec<usize> = row.edges.iter().map(|e| e.from).collect();
        while row.edges.iter().zip(&pos).any(|(e, &p)| p != e.to) {
            let mut line = Vec::new();
            for (e, p) in row.edges.iter().zip(pos.iter_mut()) {
                if *p == e.to {
                    put(&mut line, 2 * *p, vertical(e.kind));
                } else if e.to < *p {
                    put(&mut line, 2 * *p - 1, b'/');
                    *p -= 1;
                } else {
                    put(&mut line, 2 * *p + 1, b'\\');
                    *p += 1;
                }
            }
            finish_line(&mut out, &line, None);
        }
        incoming = row.edges.clone();
    }
    out
}

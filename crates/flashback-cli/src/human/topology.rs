//! `flashback topology`: each graph's nodes with how often they ran and how their runs went,
//! then its transitions `A → B ×n`; a sub-agent's graph indented under the node that ran it.

use super::node_label;
use flashback_api::{ThreadTopology, TopoGraph, TopoNode};

/// What became of a node's runs: `×4`, then `✕ 1 failed` and the like.
fn counts(n: &TopoNode) -> String {
    let mut out = format!("×{}", n.runs);
    for (k, what) in [
        (n.failed, "✕ {} failed"),
        (n.recovered, "↻ {} recovered on retry"),
        (n.interrupted, "⏸ {} waiting at an interrupt"),
        (n.resumed, "▶ {} resumed"),
    ] {
        if k > 0 {
            out.push_str("  ");
            out.push_str(&what.replace("{}", &k.to_string()));
        }
    }
    out
}

/// One graph at `depth` (two spaces a level), the graphs its nodes ran under each node.
fn graph(t: &ThreadTopology, g: &TopoGraph, depth: usize, out: &mut String) {
    let pad = "  ".repeat(depth);
    let width = g
        .nodes
        .iter()
        .map(|n| node_label(&n.name).chars().count())
        .max()
        .unwrap_or(0);
    for n in &g.nodes {
        let name = format!("{:<width$}", node_label(&n.name));
        out.push_str(&format!("{pad}{name}  {}\n", counts(n)));
        for sub in t
            .graphs
            .iter()
            .filter(|s| s.parent.as_deref() == Some(g.path.as_str()))
            .filter(|s| s.node.as_deref() == Some(n.name.as_str()))
        {
            let calls = if sub.calls == 1 { "call" } else { "calls" };
            out.push_str(&format!("{pad}  ↳ {} ({} {calls})\n", sub.path, sub.calls));
            graph(t, sub, depth + 2, out);
        }
    }
    for e in &g.edges {
        let (from, to) = (node_label(&e.from), node_label(&e.to));
        out.push_str(&format!("{pad}{from} → {to} ×{}\n", e.count));
    }
}

/// The topology as text.
pub fn topology(t: &ThreadTopology) -> String {
    let mut out = match t.thread_ids.as_slice() {
        [one] => format!("thread {one}\n"),
        many => format!("{} threads: {}\n", many.len(), many.join(", ")),
    };
    if let Some(root) = t.graphs.iter().find(|g| g.parent.is_none()) {
        graph(t, root, 0, &mut out);
    }
    for w in &t.warnings {
        out.push_str(&format!("warning: {w}\n"));
    }
    out
}

//! Read-only queries on a [`ThreadDag`].

use crate::dag::{Branch, DagNode, Namespace, ThreadDag};
use petgraph::stable_graph::NodeIndex;
use std::collections::BTreeSet;

impl ThreadDag {
    pub(crate) fn index_of(&self, ns: &str, id: &str) -> Option<NodeIndex> {
        self.index.get(ns).and_then(|m| m.get(id)).copied()
    }

    /// The thread id (`None` for an empty DAG).
    pub fn thread_id(&self) -> Option<&str> {
        self.thread_id.as_deref()
    }

    /// Number of checkpoints.
    pub fn len(&self) -> usize {
        self.graph.node_count()
    }

    /// Whether the DAG has no checkpoints.
    pub fn is_empty(&self) -> bool {
        self.graph.node_count() == 0
    }

    /// The thread head: `max(checkpoint_id)` in the root namespace (Python's "latest").
    pub fn head(&self) -> Option<&str> {
        self.head.as_deref()
    }

    /// Problems found in the data (duplicates, missing parents, cycles, missing spawners).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// All namespaces, root first, then sorted.
    pub fn namespaces(&self) -> &[Namespace] {
        &self.namespaces
    }

    /// One namespace.
    pub fn namespace(&self, ns: &str) -> Option<&Namespace> {
        self.namespaces.iter().find(|n| n.ns == ns)
    }

    /// All branches, in discovery order (root namespace first).
    pub fn branches(&self) -> &[Branch] {
        &self.branches
    }

    /// One checkpoint.
    pub fn node(&self, ns: &str, id: &str) -> Option<&DagNode> {
        self.index_of(ns, id).map(|i| &self.graph[i])
    }

    /// Every checkpoint, in no particular order.
    pub fn nodes(&self) -> impl Iterator<Item = &DagNode> + '_ {
        self.graph.node_weights()
    }

    /// The effective parent of a checkpoint.
    pub fn parent(&self, ns: &str, id: &str) -> Option<&DagNode> {
        let node = self.node(ns, id)?;
        node.parent.as_deref().and_then(|p| self.node(ns, p))
    }

    /// The children of a checkpoint, ordered by id.
    pub fn children(&self, ns: &str, id: &str) -> Vec<&DagNode> {
        self.node(ns, id)
            .map(|n| n.children.iter().filter_map(|c| self.node(ns, c)).collect())
            .unwrap_or_default()
    }

    /// A checkpoint and its ancestors, newest first, ending at a root.
    pub fn lineage(&self, ns: &str, id: &str) -> Vec<&DagNode> {
        let mut out = Vec::new();
        let mut cur = self.node(ns, id);
        while let Some(n) = cur {
            out.push(n);
            cur = n.parent.as_deref().and_then(|p| self.node(ns, p));
        }
        out
    }

    /// Fork points of a namespace (checkpoints with two or more children), ordered by id.
    pub fn fork_points(&self, ns: &str) -> Vec<&str> {
        let mut v: Vec<&str> = self
            .index
            .get(ns)
            .map(|m| {
                m.values()
                    .map(|&i| &self.graph[i])
                    .filter(|n| n.is_fork_point)
                    .map(|n| n.checkpoint_id.as_str())
                    .collect()
            })
            .unwrap_or_default();
        v.sort_unstable();
        v
    }

    /// Every subgraph namespace attached, directly or through nested subgraphs, to a
    /// checkpoint (typically a root-namespace checkpoint), sorted. Nested namespaces count
    /// only when they were spawned by a checkpoint that this one spawned.
    pub fn subgraphs_under(&self, ns: &str, id: &str) -> Vec<&str> {
        let mut out: BTreeSet<&str> = BTreeSet::new();
        let mut todo: Vec<&DagNode> = self.node(ns, id).into_iter().collect();
        while let Some(spawner) = todo.pop() {
            for sub in &spawner.subgraphs {
                out.insert(sub);
                let Some(m) = self.index.get(sub) else {
                    continue;
                };
                for &i in m.values() {
                    let n = &self.graph[i];
                    let by_me = n.spawned_by.as_ref().is_some_and(|s| {
                        s.ns == spawner.ns && s.checkpoint_id == spawner.checkpoint_id
                    });
                    if by_me && !n.subgraphs.is_empty() {
                        todo.push(n);
                    }
                }
            }
        }
        out.into_iter().collect()
    }
}

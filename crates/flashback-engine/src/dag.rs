//! The checkpoint DAG of one thread: parent links, branches, forks, orphans, cycles and
//! subgraph attachment.

use crate::error::EngineError;
use crate::ns;
use flashback_storage::CheckpointHeader;
use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::visit::EdgeRef;
use petgraph::Direction;
use serde::Serialize;
use std::collections::{BTreeSet, HashMap};

/// What an edge of the DAG means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum EdgeKind {
    /// `parent_checkpoint_id` link (parent → child, same namespace).
    Parent,
    /// A subgraph namespace's root attached to the parent-graph checkpoint that spawned it.
    Subgraph,
}

/// The parent-graph checkpoint named by a subgraph checkpoint's `metadata.parents`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SpawnRef {
    /// Namespace of the spawning checkpoint (`""` for the root graph).
    pub ns: String,
    /// Its checkpoint id.
    pub checkpoint_id: String,
    /// Whether that checkpoint is present in the data.
    pub present: bool,
}

/// One checkpoint in the DAG.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DagNode {
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Namespace (`""` for the root graph).
    pub ns: String,
    /// Nesting depth of the namespace (0 for the root graph).
    pub depth: usize,
    /// `parent_checkpoint_id` as stored.
    pub parent_checkpoint_id: Option<String>,
    /// The effective parent: the stored one unless it is missing or was dropped to break a cycle.
    pub parent: Option<String>,
    /// Set when the stored parent id is not present in this namespace.
    pub orphan_parent: Option<String>,
    /// Set when the stored parent link was dropped to break a parent cycle.
    pub broken_parent: Option<String>,
    /// Children (same namespace), ordered by checkpoint id.
    pub children: Vec<String>,
    /// The branch this checkpoint belongs to (see [`Branch`]).
    pub branch: usize,
    /// Whether this checkpoint has two or more children.
    pub is_fork_point: bool,
    /// Whether this is the thread head (`max(checkpoint_id)` in the root namespace).
    pub is_head: bool,
    /// For subgraph checkpoints: the spawning parent-graph checkpoint (`metadata.parents`).
    pub spawned_by: Option<SpawnRef>,
    /// Subgraph namespaces with checkpoints spawned by this checkpoint, sorted.
    pub subgraphs: Vec<String>,
    /// `metadata.step`.
    pub step: Option<i64>,
    /// `metadata.source`.
    pub source: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// `metadata.flashback.action`: what Flashback did to make it, if it did.
    pub flashback_action: Option<String>,
    /// For a Flashback merge: the checkpoint of branch B it took channels from.
    pub merged_from: Option<String>,
}

/// One namespace's chain (or forest) of checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Namespace {
    /// The namespace.
    pub ns: String,
    /// Nesting depth (0 for the root graph).
    pub depth: usize,
    /// The namespace of the graph that spawned it (`None` for the root namespace).
    pub parent_ns: Option<String>,
    /// Checkpoint ids, newest (highest id) first.
    pub checkpoint_ids: Vec<String>,
    /// Checkpoints without an effective parent, ordered by id.
    pub roots: Vec<String>,
    /// The namespace's latest checkpoint (`max(checkpoint_id)`).
    pub head: Option<String>,
    /// Where the namespace attaches: the spawn of its oldest root.
    pub spawned_by: Option<SpawnRef>,
}

/// A branch: a first-child chain. Every child after the first (by id) starts a new branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Branch {
    /// Branch id (index into [`ThreadDag::branches`]).
    pub id: usize,
    /// Namespace.
    pub ns: String,
    /// The oldest checkpoint of the branch.
    pub first: String,
    /// The newest checkpoint along the branch's first-child chain.
    pub tip: String,
    /// The fork point it leaves from (`None` for a root's branch).
    pub forked_from: Option<String>,
    /// Number of checkpoints on the branch.
    pub len: usize,
}

/// The DAG of one thread's checkpoints over all namespaces.
#[derive(Debug, Clone)]
pub struct ThreadDag {
    pub(crate) thread_id: Option<String>,
    pub(crate) graph: StableDiGraph<DagNode, EdgeKind>,
    pub(crate) index: HashMap<String, HashMap<String, NodeIndex>>,
    pub(crate) namespaces: Vec<Namespace>,
    pub(crate) branches: Vec<Branch>,
    pub(crate) head: Option<String>,
    pub(crate) warnings: Vec<String>,
}

fn parents_map(meta: &serde_json::Value) -> Option<&serde_json::Map<String, serde_json::Value>> {
    meta.get("parents").and_then(|p| p.as_object())
}

/// The parent-graph checkpoint of a subgraph checkpoint, from `metadata.parents`.
///
/// Only the root namespace or a shallower namespace can be chosen, so that subgraph
/// attachment can never form a cycle, whatever the metadata says.
fn spawn_of(h: &CheckpointHeader) -> Option<(String, String)> {
    let parents = parents_map(&h.metadata)?;
    let want = ns::parent_ns(&h.checkpoint_ns)?;
    let own_depth = ns::depth(&h.checkpoint_ns);
    let mut keys: Vec<&String> = parents
        .keys()
        .filter(|k| *k != &h.checkpoint_ns && (k.is_empty() || ns::depth(k) < own_depth))
        .collect();
    keys.sort();
    let pick = |k: &String| {
        parents
            .get(k)
            .and_then(|v| v.as_str())
            .map(|v| (k.clone(), v.to_owned()))
    };
    if let Some(k) = keys.iter().find(|k| ***k == want) {
        return pick(k);
    }
    // checkpointer=True namespaces have no task ids: match on the recast form.
    let recast = ns::recast(&want);
    if let Some(k) = keys.iter().find(|k| ns::recast(k) == recast) {
        return pick(k);
    }
    // Otherwise the deepest ancestor recorded is the immediate parent graph.
    keys.iter()
        .max_by_key(|k| (ns::depth(k), k.len()))
        .and_then(|k| pick(k))
}

impl ThreadDag {
    /// Build the DAG of one thread from its checkpoint headers (any order, all namespaces).
    ///
    /// Edges come from `parent_checkpoint_id` within the same namespace, never from id order.
    /// Corrupt data does not fail the build: duplicates, missing parents and parent cycles are
    /// reported in [`ThreadDag::warnings`].
    pub fn build(headers: &[CheckpointHeader]) -> Result<ThreadDag, EngineError> {
        let mut thread_id: Option<&str> = None;
        for h in headers {
            match thread_id {
                None => thread_id = Some(&h.thread_id),
                Some(t) if t != h.thread_id => {
                    return Err(EngineError::MixedThreads {
                        expected: t.to_owned(),
                        found: h.thread_id.clone(),
                    })
                }
                Some(_) => {}
            }
        }
        let mut dag = ThreadDag {
            thread_id: thread_id.map(str::to_owned),
            graph: StableDiGraph::with_capacity(headers.len(), headers.len()),
            index: HashMap::new(),
            namespaces: Vec::new(),
            branches: Vec::new(),
            head: None,
            warnings: Vec::new(),
        };
        let mut kept: Vec<(NodeIndex, &CheckpointHeader)> = Vec::with_capacity(headers.len());
        for h in headers {
            let by_id = dag.index.entry(h.checkpoint_ns.clone()).or_default();
            if by_id.contains_key(&h.checkpoint_id) {
                dag.warnings.push(format!(
                    "duplicate checkpoint {:?} in namespace {:?}: kept the first row",
                    h.checkpoint_id, h.checkpoint_ns
                ));
                continue;
            }
            let idx = dag.graph.add_node(DagNode {
                checkpoint_id: h.checkpoint_id.clone(),
                ns: h.checkpoint_ns.clone(),
                depth: ns::depth(&h.checkpoint_ns),
                parent_checkpoint_id: h.parent_checkpoint_id.clone(),
                parent: None,
                orphan_parent: None,
                broken_parent: None,
                children: Vec::new(),
                branch: 0,
                is_fork_point: false,
                is_head: false,
                spawned_by: None,
                subgraphs: Vec::new(),
                step: h.step(),
                source: h.source().map(str::to_owned),
                ts: h.ts.clone(),
                flashback_action: h.flashback_action().map(str::to_owned),
                merged_from: h.merged_from().map(str::to_owned),
            });
            by_id.insert(h.checkpoint_id.clone(), idx);
            kept.push((idx, h));
        }
        dag.link_parents(&kept);
        dag.break_cycles();
        dag.attach_subgraphs(&kept);
        dag.finish();
        Ok(dag)
    }

    fn link_parents(&mut self, kept: &[(NodeIndex, &CheckpointHeader)]) {
        for &(idx, h) in kept {
            let Some(pid) = &h.parent_checkpoint_id else {
                continue;
            };
            match self
                .index
                .get(&h.checkpoint_ns)
                .and_then(|m| m.get(pid))
                .copied()
            {
                Some(p) => {
                    self.graph.add_edge(p, idx, EdgeKind::Parent);
                    self.graph[idx].parent = Some(pid.clone());
                }
                None => {
                    self.graph[idx].orphan_parent = Some(pid.clone());
                    self.warnings.push(format!(
                        "checkpoint {:?} in namespace {:?}: parent {:?} is not in the data",
                        h.checkpoint_id, h.checkpoint_ns, pid
                    ));
                }
            }
        }
    }

    fn parent_index(&self, idx: NodeIndex) -> Option<NodeIndex> {
        self.graph
            .edges_directed(idx, Direction::Incoming)
            .find(|e| *e.weight() == EdgeKind::Parent)
            .map(|e| e.source())
    }

    /// Parent links form a functional graph; find every cycle in O(n) and drop, in each, the
    /// parent link of the checkpoint with the smallest id.
    fn break_cycles(&mut self) {
        let order: Vec<NodeIndex> = self.graph.node_indices().collect();
        let mut state: HashMap<NodeIndex, u8> = HashMap::with_capacity(order.len());
        for start in order {
            if state.contains_key(&start) {
                continue;
            }
            let mut path = Vec::new();
            let mut cur = Some(start);
            while let Some(n) = cur {
                match state.get(&n) {
                    Some(1) => {
                        let pos = path.iter().position(|&p| p == n).unwrap_or(0);
                        let cycle = path[pos..].to_vec();
                        self.break_cycle(&cycle);
                        break;
                    }
                    Some(_) => break,
                    None => {
                        state.insert(n, 1);
                        path.push(n);
                        cur = self.parent_index(n);
                    }
                }
            }
            for n in path {
                state.insert(n, 2);
            }
        }
    }

    fn break_cycle(&mut self, cycle: &[NodeIndex]) {
        let Some(&victim) = cycle.iter().min_by(|a, b| {
            self.graph[**a]
                .checkpoint_id
                .cmp(&self.graph[**b].checkpoint_id)
        }) else {
            return;
        };
        let edge = self
            .graph
            .edges_directed(victim, Direction::Incoming)
            .find(|e| *e.weight() == EdgeKind::Parent)
            .map(|e| e.id());
        if let Some(e) = edge {
            self.graph.remove_edge(e);
        }
        let mut ids: Vec<&str> = cycle
            .iter()
            .map(|&n| self.graph[n].checkpoint_id.as_str())
            .collect();
        ids.sort_unstable();
        let node = &self.graph[victim];
        let old = node.parent.clone().unwrap_or_default();
        let msg = format!(
            "parent cycle in namespace {:?} among {:?}: dropped the parent link {:?} -> {:?}",
            node.ns, ids, node.checkpoint_id, old
        );
        self.warnings.push(msg);
        let node = &mut self.graph[victim];
        node.broken_parent = node.parent.take();
    }

    fn attach_subgraphs(&mut self, kept: &[(NodeIndex, &CheckpointHeader)]) {
        let mut attached: HashMap<NodeIndex, BTreeSet<String>> = HashMap::new();
        let mut missing: BTreeSet<(String, String, String)> = BTreeSet::new();
        for &(idx, h) in kept {
            if h.checkpoint_ns.is_empty() {
                continue;
            }
            let Some((pns, pid)) = spawn_of(h) else {
                continue;
            };
            let target = self.index.get(&pns).and_then(|m| m.get(&pid)).copied();
            self.graph[idx].spawned_by = Some(SpawnRef {
                ns: pns.clone(),
                checkpoint_id: pid.clone(),
                present: target.is_some(),
            });
            match target {
                Some(t) => {
                    attached
                        .entry(t)
                        .or_default()
                        .insert(h.checkpoint_ns.clone());
                    if self.graph[idx].parent.is_none() {
                        self.graph.add_edge(t, idx, EdgeKind::Subgraph);
                    }
                }
                None => {
                    missing.insert((h.checkpoint_ns.clone(), pns, pid));
                }
            }
        }
        for (t, set) in attached {
            self.graph[t].subgraphs = set.into_iter().collect();
        }
        for (ns, pns, pid) in missing {
            self.warnings.push(format!(
                "namespace {ns:?}: spawning checkpoint {pid:?} in namespace {pns:?} is not in the data"
            ));
        }
    }

    /// Children lists, namespaces, branches and heads.
    fn finish(&mut self) {
        let all: Vec<NodeIndex> = self.graph.node_indices().collect();
        for &idx in &all {
            let mut kids: Vec<String> = self
                .graph
                .edges_directed(idx, Direction::Outgoing)
                .filter(|e| *e.weight() == EdgeKind::Parent)
                .map(|e| self.graph[e.target()].checkpoint_id.clone())
                .collect();
            kids.sort_unstable();
            let node = &mut self.graph[idx];
            node.is_fork_point = kids.len() >= 2;
            node.children = kids;
        }
        let mut names: Vec<String> = self.index.keys().cloned().collect();
        names.sort_by(|a, b| (!a.is_empty(), a).cmp(&(!b.is_empty(), b)));
        for name in names {
            let by_id = &self.index[&name];
            let mut ids: Vec<&String> = by_id.keys().collect();
            ids.sort_unstable_by(|a, b| b.cmp(a));
            let mut roots: Vec<String> = ids
                .iter()
                .filter(|id| self.graph[by_id[**id]].parent.is_none())
                .map(|s| (*s).clone())
                .collect();
            roots.sort_unstable();
            let spawned_by = roots
                .first()
                .and_then(|r| self.graph[by_id[r]].spawned_by.clone());
            let chain = Namespace {
                depth: ns::depth(&name),
                parent_ns: ns::parent_ns(&name),
                checkpoint_ids: ids.iter().map(|s| (*s).clone()).collect(),
                head: ids.first().map(|s| (*s).clone()),
                roots,
                spawned_by,
                ns: name,
            };
            self.assign_branches(&chain);
            self.namespaces.push(chain);
        }
        if let Some(root) = self.namespaces.iter().find(|n| n.ns.is_empty()) {
            self.head = root.head.clone();
            if let Some(h) = &root.head {
                let idx = self.index[""][h];
                self.graph[idx].is_head = true;
            }
        }
    }

    fn assign_branches(&mut self, chain: &Namespace) {
        let by_id = &self.index[&chain.ns];
        let mut queue: std::collections::VecDeque<(NodeIndex, Option<String>)> =
            chain.roots.iter().map(|r| (by_id[r], None)).collect();
        while let Some((start, forked_from)) = queue.pop_front() {
            let id = self.branches.len();
            let mut cur = start;
            let mut len = 0;
            loop {
                len += 1;
                self.graph[cur].branch = id;
                let kids = self.graph[cur].children.clone();
                let Some((first, rest)) = kids.split_first() else {
                    break;
                };
                for k in rest {
                    queue.push_back((by_id[k], Some(self.graph[cur].checkpoint_id.clone())));
                }
                cur = by_id[first];
            }
            self.branches.push(Branch {
                id,
                ns: chain.ns.clone(),
                first: self.graph[start].checkpoint_id.clone(),
                tip: self.graph[cur].checkpoint_id.clone(),
                forked_from,
                len,
            });
        }
    }
}

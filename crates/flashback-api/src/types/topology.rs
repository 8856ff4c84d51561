//! What `thread_topology` takes and returns: the nodes and transitions threads show by what ran.

use flashback_engine::topology::TopoGraph;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use specta::Type;

/// A thread's topology (and optionally other threads' of the same graph, added up).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct TopologyRequest {
    /// Database handle.
    pub db: String,
    /// Thread id.
    pub thread_id: String,
    /// Other threads of the same graph whose runs add to the counts (at most 100); each
    /// checkpoint says its thread.
    #[serde(default)]
    pub thread_ids: Vec<String>,
}

/// The graphs that ran, their nodes and the transitions between them, counted.
#[derive(Debug, Clone, PartialEq, Serialize, Type)]
pub struct ThreadTopology {
    /// The threads counted (the one asked for first).
    pub thread_ids: Vec<String>,
    /// The root graph first, then each sub-agent's graph after the graph whose node ran it.
    pub graphs: Vec<TopoGraph>,
    /// What could not be read or told (the topology stands without it).
    pub warnings: Vec<String>,
}

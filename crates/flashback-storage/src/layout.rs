//! What a location holds ([`Layout`]): the backend, which checkpoint schema, and which
//! library's format. It is detected once when a location is opened (the source's schema
//! detection fills [`crate::SchemaInfo`], which carries it with the schema's facts: migration
//! version, columns present) and every caller branches on it, never on a description's words.
//! Whether values are sealed is read from the rows ([`crate::EncryptionProbe`]), not here.
//!
//! A leaf: it names nothing else in the crate.

use serde::{Deserialize, Serialize};

/// Which database engine a store reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// A `.sqlite` file written by `langgraph-checkpoint-sqlite`.
    Sqlite,
    /// A database written by `langgraph-checkpoint-postgres`.
    Postgres,
    /// The `langgraph dev` server's state folder (`.langgraph_api/` pickles).
    #[serde(rename = "devserver")]
    DevServer,
    /// A running Agent Server's HTTP API (`langgraph dev`, self-hosted, a deployment).
    #[serde(rename = "agentserver")]
    AgentServer,
}

/// Which schema a location holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum SchemaKind {
    /// LangGraph's checkpoint tables (SQLite or Postgres saver).
    #[serde(rename = "langgraph")]
    LangGraph,
    /// The deprecated Postgres shallow saver's tables (one checkpoint per thread).
    Shallow,
    /// Flashback's three-table store (`docs/three-table.md`).
    ThreeTable,
    /// Only LangGraph's memory Store (no checkpoint tables: no threads).
    StoreOnly,
    /// The `langgraph dev` server's state: `InMemorySaver`'s checkpoints, writes and values,
    /// the server's threads and runs, its memory Store ([`crate::devserver`]).
    DevServer,
    /// A running Agent Server, read through its HTTP API: the states `get_state_history`
    /// shows, the server's threads, runs and memory Store ([`crate::agentserver`]).
    AgentServer,
}

/// Which LangGraph library's format a database is in. Writes use the database's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// LangGraph (Python): msgpack values, `"{counter:032}.{random}"` versions.
    #[default]
    Python,
    /// LangGraph.js: `json` values, integer versions.
    Js,
}

/// What a location holds: backend × schema × dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// SQLite or Postgres.
    pub backend: Backend,
    /// Which tables.
    pub schema: SchemaKind,
    /// Python's or JS's format.
    pub dialect: Dialect,
}

impl Layout {
    /// Whether it is Flashback's three-table store.
    pub fn is_three_table(&self) -> bool {
        self.schema == SchemaKind::ThreeTable
    }

    /// Whether its writes carry the task path (LangGraph.js stores none: a task is named
    /// from its id, `flashback_engine::activity::name_js_tasks`).
    pub fn stores_task_paths(&self) -> bool {
        self.dialect == Dialect::Python
    }
}

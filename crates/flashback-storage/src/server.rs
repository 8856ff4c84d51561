//! What an Agent Server knows about its threads beyond their checkpoints: the server's own
//! thread status, metadata, assistant and times, and each thread's runs — what LangSmith
//! Studio's thread list shows. A source that is a server's state (the `langgraph dev`
//! folder, [`crate::devserver`]) answers [`crate::CheckpointStore::server`] with it; a
//! database answers `None`.
//!
//! A leaf: it names nothing else in the crate.

use serde::{Deserialize, Serialize};

/// The server's view of a location, read with its checkpoints.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerState {
    /// Which server wrote it, e.g. `langgraph dev (Python)`.
    pub server: String,
    /// When the server last saved its checkpoints (the checkpoint file's modification time,
    /// RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_at: Option<String>,
    /// Whether a server is running on it now (its files are then a snapshot it rewrites).
    pub running: bool,
    /// The URL of the running server's API (a dev folder whose server runs: what to open to
    /// see its live state; an Agent Server location: its own URL).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// What a reader should know, one line each: a running server, files that disagree
    /// (threads the server lists that its checkpoint file lacks), a file that cannot be read.
    pub notes: Vec<String>,
    /// The server's threads, sorted by thread id.
    pub threads: Vec<ServerThread>,
    /// The assistants the server knows (graph ids and names).
    pub assistants: Vec<ServerAssistant>,
}

/// What a reader of the location should know about its server, without its threads (what
/// opening it answers; each thread's part is in the thread list).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerSummary {
    /// Which server wrote it, e.g. `langgraph dev (Python)`.
    pub server: String,
    /// When the server last saved its checkpoints (RFC 3339), when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_at: Option<String>,
    /// Whether a server is running on it now.
    pub running: bool,
    /// The URL of the running server's API, when one runs (see [`ServerState::api_url`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_url: Option<String>,
    /// What a reader should know, one line each.
    pub notes: Vec<String>,
    /// How many threads the server lists.
    pub threads: u32,
    /// How many of them its saved checkpoints lack.
    pub threads_without_checkpoints: u32,
}

impl ServerState {
    /// The summary.
    pub fn summary(&self) -> ServerSummary {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        ServerSummary {
            server: self.server.clone(),
            saved_at: self.saved_at.clone(),
            running: self.running,
            api_url: self.api_url.clone(),
            notes: self.notes.clone(),
            threads: count(self.threads.len()),
            threads_without_checkpoints: count(
                self.threads.iter().filter(|t| !t.has_checkpoints).count(),
            ),
        }
    }

    /// A thread, by id.
    pub fn thread(&self, thread_id: &str) -> Option<&ServerThread> {
        self.threads
            .binary_search_by(|t| t.thread_id.as_str().cmp(thread_id))
            .ok()
            .map(|i| &self.threads[i])
    }
}

/// A thread as the server lists it (`GET /threads/{id}`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerThread {
    /// The thread id.
    pub thread_id: String,
    /// `idle`, `busy`, `interrupted` or `error`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The thread's metadata (`graph_id`, `assistant_id`, the user's keys).
    pub metadata: serde_json::Value,
    /// When it was created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When it was last updated (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
    /// The assistant that ran it last (from its metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant_id: Option<String>,
    /// The graph it runs (from its metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_id: Option<String>,
    /// Whether the server's checkpoint file holds this thread's checkpoints (a thread the
    /// server created after it last saved has none there yet).
    pub has_checkpoints: bool,
    /// Its runs, oldest first.
    pub runs: Vec<ServerRun>,
}

/// A run as the server lists it (`GET /threads/{id}/runs`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ServerRun {
    /// The run id.
    pub run_id: String,
    /// `pending`, `running`, `success`, `error`, `timeout` or `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<String>,
    /// The assistant it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assistant_id: Option<String>,
    /// When it was created (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<String>,
    /// When it was last updated (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<String>,
}

/// An assistant the server knows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ServerAssistant {
    /// Its id.
    pub assistant_id: String,
    /// The graph it runs.
    pub graph_id: String,
    /// Its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// The tasks of a checkpoint's next step as an Agent Server's API shows them (`tasks` of a
/// `ThreadState`): their writes, errors and interrupts are the tuple's pending writes.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Served {
    /// The tasks, in the API's order.
    pub tasks: Vec<ServedTask>,
}

/// One task of [`Served`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServedTask {
    /// Task id.
    pub id: String,
    /// Node name.
    pub name: String,
    /// `["__pregel_pull", name]` or `["__pregel_push", …]` (`null` when the server gave none).
    pub path: serde_json::Value,
    /// The namespace of the subgraph the task runs, when the server names one.
    pub checkpoint_ns: Option<String>,
}

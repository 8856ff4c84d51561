//! Sessions and connections: hosts, databases, the first screen, recent connections, settings.

use serde::{Deserialize, Serialize};
use specta::Type;

/// Which front end the backend serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum HostMode {
    /// The Tauri desktop app.
    Desktop,
    /// `flashback serve` (a browser).
    Serve,
    /// One `flashback` CLI command.
    Cli,
}

/// SQLite file or Postgres server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DbKind {
    /// A `.sqlite` file.
    Sqlite,
    /// A `postgres://` URL.
    Postgres,
    /// A `langgraph dev` project folder (or its `.langgraph_api/` folder).
    #[serde(rename = "devserver")]
    DevServer,
    /// A running Agent Server's URL (`http://127.0.0.1:2024`, a deployment's `https://…`).
    #[serde(rename = "agentserver")]
    AgentServer,
}

impl DbKind {
    /// The `connections.kind` value.
    pub fn as_str(self) -> &'static str {
        match self {
            DbKind::Sqlite => "sqlite",
            DbKind::Postgres => "postgres",
            DbKind::DevServer => "devserver",
            DbKind::AgentServer => "agentserver",
        }
    }
}

/// An open database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct DbInfo {
    /// The handle the other commands take.
    pub db: String,
    /// SQLite or Postgres.
    pub kind: DbKind,
    /// A short name (file name, or `database @ host`).
    pub display_name: String,
    /// The path, or the URL without its password.
    pub location: String,
    /// The detected LangGraph schema.
    pub schema: String,
    /// Which tables it holds: LangGraph's, the shallow saver's, the three-table store's, or
    /// only a memory Store (what the UI branches on; `schema` is its description).
    pub schema_kind: flashback_storage::SchemaKind,
    /// Whether this is the built-in demo database (a private copy).
    pub demo: bool,
    /// Written with LangGraph's `EncryptedSerializer`: how (absent for a plaintext database).
    pub encryption: Option<super::EncryptionInfo>,
    /// Checkpoints, a memory store, or both.
    pub holds: crate::DbHolds,
    /// The memory store, when the database has one (for the Memory screen).
    pub store: Option<crate::StoreSummary>,
    /// Written by LangGraph (`python`) or LangGraph.js (`js`): how its program resumes a fork.
    pub dialect: flashback_storage::Dialect,
    /// A server's state (the `langgraph dev` folder): which server, when it last saved, whether
    /// it runs now, and what to know (one line each). Absent for a database.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<flashback_storage::server::ServerSummary>,
}

/// What the UI needs at start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct AppInfo {
    /// Flashback's version.
    pub version: String,
    /// Desktop or serve.
    pub host: HostMode,
    /// Whether Postgres passwords can be saved in the OS keyring.
    pub keyring: bool,
    /// Whether re-run may start commands here (`flashback serve` needs `--allow-run`).
    pub can_run: bool,
    /// The database to show first (command line, `--demo`, or the last one opened).
    pub initial: Option<DbInfo>,
    /// Why the initial database could not be opened, if it could not.
    pub initial_error: Option<crate::ApiError>,
    /// Saved settings (`theme`, …).
    pub settings: Vec<Setting>,
}

/// A saved setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct Setting {
    /// `theme`, `runner:<location>`, …
    pub key: String,
    /// Its value.
    pub value: String,
}

/// Open a database.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct OpenRequest {
    /// A path to a SQLite file or a `postgres://` URL.
    pub location: String,
    /// The Postgres password, when not in the URL (never stored in plain files).
    #[serde(default)]
    pub password: Option<String>,
    /// Add it to the recent connections.
    #[serde(default)]
    pub remember: bool,
    /// Keep the Postgres password in the OS keyring.
    #[serde(default)]
    pub save_password: bool,
}

/// Open the built-in demo database.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DemoRequest {
    /// Start again from a fresh copy (drops forks made in the demo).
    #[serde(default)]
    pub reset: bool,
}

/// A remembered connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct RecentConnection {
    /// Row id.
    pub id: i32,
    /// SQLite or Postgres.
    pub kind: DbKind,
    /// A short name.
    pub display_name: String,
    /// Path or URL without password.
    pub location: String,
    /// When it was last opened (UTC ISO 8601).
    pub last_opened_at: Option<String>,
    /// Whether a password for it is in the keyring.
    pub has_saved_password: bool,
    /// For files: whether the file still exists.
    pub missing: bool,
}

/// Open a remembered connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct OpenRecentRequest {
    /// [`RecentConnection::id`].
    pub id: i32,
    /// A password to use (and save again if asked) instead of the saved one.
    #[serde(default)]
    pub password: Option<String>,
    /// Keep `password` in the keyring.
    #[serde(default)]
    pub save_password: bool,
}

/// A connection id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct ConnectionId {
    /// [`RecentConnection::id`].
    pub id: i32,
}

/// A database handle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct DbRequest {
    /// [`DbInfo::db`].
    pub db: String,
}

/// Save a setting.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct SetSettingRequest {
    /// `theme` or `runner:<location>`.
    pub key: String,
    /// Its value (`None` deletes it).
    pub value: Option<String>,
}

//! # flashback-api
//!
//! Everything the Flashback UI can ask of the backend, in one Tauri-free place:
//!
//! ```text
//!   ui (Svelte) ── host.ts ──┬── Tauri IPC ──▶ src-tauri commands (one line each) ──┐
//!                            └── HTTP POST /api/<command> ──▶ flashback serve ───────┤
//!                                                                                    ▼
//!                                            Api::<command>(request) ─▶ engine / storage
//! ```
//!
//! [`Api`] holds the open databases (by handle), Flashback's own state database (recent
//! connections, settings), saved passwords ([`secrets`]) and background [`jobs`]. Every
//! command takes one request struct and returns one response struct from [`types`]; errors are
//! [`ApiError`] `{code, message}`. [`COMMANDS`] lists the command names; [`Api::dispatch`]
//! runs one by name with JSON arguments shaped as Tauri sends them (`{"req": {...}}`), which is
//! what the HTTP transport calls. The desktop app declares the same commands to tauri-specta,
//! and a test there checks both lists agree.
//!
//! Opening a database never writes to it; only fork, merge, delete, prune, copy and the memory
//! Store's put and delete write (each in one transaction, through `flashback-storage`).

#![deny(missing_docs)]

mod appdb;
mod commands;
mod connections;
mod detail;
mod error;
mod find;
mod forks;
mod graph;
pub mod groups;
mod indexes;
mod jobs;
mod liveview;
mod location;
mod outfile;
mod pagedview;
mod paging;
mod policy;
mod rawpage;
mod reads;
pub mod rerun;
mod retention;
mod sealed;
pub mod secrets;
mod serverwrites;
mod settings;
mod store;
mod summaries;
mod topology;
pub mod types;
mod watch;
mod writes;

pub use commands::COMMANDS;
pub use error::{ApiError, ApiResult, ErrorCode};
pub use find::{filter_key_ok, parse_time};
pub use flashback_codec::units;
pub use location::Location;
pub use policy::{ExportWrites, Policy};
pub use reads::MAX_BUNDLE_BYTES;
pub use types::*;
// The engine's and storage's result types that commands return, so that the doors (the app,
// `serve`, the CLI) name `flashback_api` only.
pub use flashback_engine::diff::{
    Change, ChannelDiff, CheckpointDiff, CommonAncestor, DiffSummary, ItemDiff,
};
pub use flashback_engine::export::VerifyReport;
pub use flashback_engine::fork::ForkResult;
pub use flashback_engine::hitl::{Approval, ApprovalAction, ApprovalMode};
pub use flashback_engine::live::AppliedWrites;
pub use flashback_engine::merge::{ChannelRebuild, MergeMode, Reducer, ThreeWay};
pub use flashback_engine::repair::{BlobRepair, RepairReport};
pub use flashback_engine::replay::ReplayStep;
pub use flashback_engine::search::{around as snippet_around, ValueHit};
pub use flashback_engine::topology::{TopoCheckpoint, TopoEdge, TopoGraph, TopoNode};
pub use flashback_engine::watch::clip as clip_line;
pub use flashback_engine::watch::{
    ChangeKind, KeyPath, WatchChange, WatchReport, WatchValue, WatchWrite,
};
pub use flashback_engine::TokenUsage;
pub use flashback_engine::{render_text, GraphRow, StepMark, TaskSet, TaskStatus, ThreadStatus};
pub use flashback_storage::indexes::{
    IndexAction, IndexAdvice, IndexPlan, IndexReport, IndexState, PlanEstimate,
};
pub use flashback_storage::maintenance::{CopyReport, PruneStrategy, SkipReason, VacuumPreview};
/// Timestamps as LangGraph stores them, parsed (for a front end's "3 min ago").
pub use flashback_storage::memory::Stamp;
pub use flashback_storage::report::model as storage_report;
pub use flashback_storage::report::StorageReport;

use appdb::AppDb;
use flashback_storage::CheckpointStore;
use jobs::registry::Jobs;
use secrets::SecretStore;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The built-in demo database: the committed fixture, written by the real Python LangGraph
/// (12 threads: forks, interrupts, a failure, subgraphs, Send fan-out, 300-step history).
pub const DEMO_DATABASE: &[u8] = include_bytes!("../../../tests/fixtures/langgraph.sqlite");

/// The application identifier (data directory and keyring service name).
pub const APP_ID: &str = "dev.flashback.app";

/// Which database to show first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Initial {
    /// None: the open screen.
    None,
    /// This location (command line).
    Location(String),
    /// The demo database.
    Demo,
    /// The last database opened (desktop start).
    Last,
}

/// How the backend is set up.
pub struct ApiConfig {
    /// Desktop or serve.
    pub host: HostMode,
    /// Where Flashback keeps its state database and the demo copy.
    pub data_dir: PathBuf,
    /// What to open first.
    pub initial: Initial,
    /// Where Postgres passwords are saved.
    pub secrets: Box<dyn SecretStore>,
    /// Whether commands may run and where exports may be written ([`Policy::full`] for the
    /// desktop app; `flashback serve` asks for each).
    pub policy: Policy,
}

/// The data directory: `$FLASHBACK_DATA_DIR`, else the platform's data dir + [`APP_ID`]
/// (`~/.local/share/dev.flashback.app` on Linux, as Tauri's `app_data_dir`).
pub fn default_data_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("FLASHBACK_DATA_DIR").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join(APP_ID)
}

struct Session {
    info: DbInfo,
    /// What to connect with (the URL with its password): never shown, never stored.
    connect: String,
    store: Arc<dyn CheckpointStore>,
    /// The AES key of an encrypted database, when one is in use (never shown, never stored
    /// outside the OS keyring).
    key: Option<Arc<flashback_codec::AesKey>>,
    /// Namespaces per thread, learned from the last graph (for task subgraph links).
    namespaces: Mutex<HashMap<String, Vec<String>>>,
    /// A read-only store whose decode budget lets a list take the request's whole allowance,
    /// opened on the first paged read of a list over the per-value budget (`paging.rs`).
    paged: tokio::sync::OnceCell<Arc<dyn CheckpointStore>>,
}

/// The backend behind both transports.
pub struct Api {
    host: HostMode,
    data_dir: PathBuf,
    appdb: AppDb,
    secrets: Box<dyn SecretStore>,
    policy: Policy,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    jobs: Arc<Jobs>,
    /// What to show first: opened on the first `app_info`, then the same answer every time
    /// (a reloaded page shows the same database).
    initial: tokio::sync::Mutex<InitialState>,
}

enum InitialState {
    Pending(Initial),
    Done(Option<Box<DbInfo>>, Option<ApiError>),
}

/// Write a file so that readers see either the old content or the complete new one. Only a
/// regular file (or a new name) is replaced: a directory, FIFO, device or socket at `path` is
/// refused, and a symbolic link is followed to the regular file it names (the rules of every
/// output file, `outfile.rs`).
pub fn write_atomically(path: &Path, bytes: &[u8]) -> ApiResult<()> {
    outfile::write(path, bytes, None)
}

impl Api {
    /// Set up the backend (creates the data directory and the state database).
    pub fn new(config: ApiConfig) -> ApiResult<Api> {
        let appdb = AppDb::open(&config.data_dir)?;
        Ok(Api::with_appdb(config, appdb))
    }

    /// The backend of one CLI command: nothing is remembered (the state database lives in
    /// memory, no data directory is created) and no password is saved.
    pub fn ephemeral() -> ApiResult<Api> {
        let config = ApiConfig {
            host: HostMode::Cli,
            data_dir: std::env::temp_dir().join(APP_ID),
            initial: Initial::None,
            secrets: Box::new(secrets::NoSecrets),
            policy: Policy::full(),
        };
        Ok(Api::with_appdb(config, AppDb::in_memory()?))
    }

    fn with_appdb(config: ApiConfig, appdb: AppDb) -> Api {
        Api {
            host: config.host,
            data_dir: config.data_dir,
            appdb,
            secrets: config.secrets,
            policy: config.policy,
            sessions: Mutex::new(HashMap::new()),
            jobs: Arc::new(Jobs::default()),
            initial: tokio::sync::Mutex::new(InitialState::Pending(config.initial)),
        }
    }
}

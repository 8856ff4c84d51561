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
//! Opening a database never writes to it; only fork, merge, delete and prune write (each in
//! one transaction, through `flashback-storage`'s saver).

#![deny(missing_docs)]

mod appdb;
mod error;
pub mod jobs;
mod location;
pub mod rerun;
pub mod secrets;
pub mod types;
mod views;

pub use error::{ApiError, ApiResult, ErrorCode};
pub use location::Location;
pub use types::*;
pub use views::{checkpoint_not_found, ensure_thread, fork, thread_summaries};

use appdb::AppDb;
use flashback_codec::ViewOptions;
use flashback_engine::diff::CheckpointDiff;
use flashback_engine::export::VerifyReport;
use flashback_engine::fork::ForkResult;
use flashback_engine::merge::ThreeWay;
use flashback_engine::replay::ReplayStep;
use flashback_storage::{CheckpointStore, ListQuery};
use jobs::Jobs;
use secrets::SecretStore;
use serde::de::DeserializeOwned;
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The built-in demo database: the committed fixture, written by the real Python LangGraph
/// (12 threads: forks, interrupts, a failure, subgraphs, Send fan-out, 300-step history).
pub const DEMO_DATABASE: &[u8] = include_bytes!("../../../tests/fixtures/langgraph.sqlite");

/// The application identifier (data directory and keyring service name).
pub const APP_ID: &str = "dev.flashback.app";

/// Every command, by name (the Tauri command names and the HTTP paths `/api/<name>`).
pub const COMMANDS: &[&str] = &[
    "app_info",
    "open_database",
    "open_demo",
    "open_recent",
    "recent_connections",
    "forget_connection",
    "close_database",
    "list_threads",
    "thread_graph",
    "checkpoint_detail",
    "diff_checkpoints",
    "replay_steps",
    "validate_edit",
    "fork_checkpoint",
    "merge_preview",
    "merge_branches",
    "start_export",
    "verify_export",
    "start_rerun",
    "job_poll",
    "job_cancel",
    "delete_thread",
    "prune_threads",
    "set_setting",
];

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
    /// Namespaces per thread, learned from the last graph (for task subgraph links).
    namespaces: Mutex<HashMap<String, Vec<String>>>,
}

/// The backend behind both transports.
pub struct Api {
    host: HostMode,
    data_dir: PathBuf,
    appdb: AppDb,
    secrets: Box<dyn SecretStore>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
    jobs: Arc<Jobs>,
    /// What to show first: opened on the first `app_info`, then the same answer every time
    /// (a reloaded page shows the same database).
    initial: tokio::sync::Mutex<InitialState>,
}

enum InitialState {
    Pending(Initial),
    Done(Option<DbInfo>, Option<ApiError>),
}

fn view_opts(reveal_secrets: bool) -> ViewOptions {
    ViewOptions { reveal_secrets }
}

fn to_json<T: Serialize>(v: T) -> ApiResult<Json> {
    serde_json::to_value(v)
        .map_err(|e| ApiError::new(ErrorCode::Internal, format!("cannot serialise: {e}")))
}

/// Write a file so that readers see either the old content or the complete new one.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> ApiResult<()> {
    let io = |e: std::io::Error| ApiError::io(format!("cannot write {}: {e}", path.display()));
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| ApiError::invalid(format!("{} is not a file name", path.display())))?;
    // A temporary name of its own per call: two exports to the same path at once (two jobs, or
    // the CLI and the app) each rename a complete file, never one the other is still writing.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = dir.join(format!(
        ".{}.{}-{n}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let written = std::fs::File::create(&tmp).and_then(|mut f| {
        std::io::Write::write_all(&mut f, bytes)?;
        // On disk before the rename, so a crash cannot leave the new name with partial content.
        f.sync_all()
    });
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(io(e));
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(e)
    })
}

impl Api {
    /// Set up the backend (creates the data directory and the state database).
    pub fn new(config: ApiConfig) -> ApiResult<Api> {
        let appdb = AppDb::open(&config.data_dir)?;
        Ok(Api {
            host: config.host,
            data_dir: config.data_dir,
            appdb,
            secrets: config.secrets,
            sessions: Mutex::new(HashMap::new()),
            jobs: Arc::new(Jobs::default()),
            initial: tokio::sync::Mutex::new(InitialState::Pending(config.initial)),
        })
    }

    fn session(&self, db: &str) -> ApiResult<Arc<Session>> {
        self.sessions
            .lock()
            .ok()
            .and_then(|s| s.get(db).cloned())
            .ok_or_else(|| {
                ApiError::new(
                    ErrorCode::NotOpen,
                    "this database is not open any more; open it again",
                )
            })
    }

    async fn writable(
        &self,
        db: &str,
    ) -> ApiResult<Box<dyn flashback_storage::maintenance::SaverMaintenance>> {
        let s = self.session(db)?;
        Ok(flashback_storage::open_writable(&s.connect).await?)
    }

    /// Open a location with a password (if any) and register the session.
    async fn open_location(
        &self,
        loc: &Location,
        password: Option<&str>,
        demo: bool,
    ) -> ApiResult<DbInfo> {
        let connect = loc.connect_string(password);
        let store: Arc<dyn CheckpointStore> = match flashback_storage::open(&connect).await {
            Ok(s) => Arc::from(s),
            Err(flashback_storage::StoreError::Auth(m)) if password.is_none() => {
                return Err(ApiError::new(
                    ErrorCode::NeedsPassword,
                    format!("{} needs a password ({m})", loc.display_name()),
                ))
            }
            Err(e) => return Err(e.into()),
        };
        let info = DbInfo {
            db: uuid::Uuid::new_v4().simple().to_string(),
            kind: loc.kind,
            display_name: if demo {
                "Demo database".to_owned()
            } else {
                loc.display_name()
            },
            location: loc.public.clone(),
            schema: store.schema().description.clone(),
            demo,
        };
        let session = Arc::new(Session {
            info: info.clone(),
            connect,
            store,
            namespaces: Mutex::new(HashMap::new()),
        });
        if let Ok(mut s) = self.sessions.lock() {
            s.insert(info.db.clone(), session);
        }
        // The desktop app reopens it at its next start (a `serve` session does not change it).
        if self.host == HostMode::Desktop {
            let last = if demo { "demo" } else { loc.public.as_str() };
            self.appdb.set_setting("last_database", Some(last))?;
        }
        Ok(info)
    }

    // ---- start ------------------------------------------------------------------------------

    /// Version, host, keyring, settings and the database to show first (opened by the first
    /// call; later calls give the same database).
    pub async fn app_info(&self) -> ApiResult<AppInfo> {
        let mut state = self.initial.lock().await;
        if let InitialState::Pending(initial) = &*state {
            let initial = initial.clone();
            *state = match self.open_initial(initial).await {
                Ok(db) => InitialState::Done(db, None),
                Err(e) => InitialState::Done(None, Some(e)),
            };
        }
        let (initial, initial_error) = match &*state {
            InitialState::Done(db, e) => (db.clone(), e.clone()),
            InitialState::Pending(_) => (None, None),
        };
        drop(state);
        Ok(AppInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            host: self.host,
            keyring: self.secrets.available(),
            initial,
            initial_error,
            settings: self
                .appdb
                .settings()?
                .into_iter()
                .filter(|s| s.key != "last_database")
                .collect(),
        })
    }

    async fn open_initial(&self, initial: Initial) -> ApiResult<Option<DbInfo>> {
        let open = |location: String, password: Option<String>| OpenRequest {
            location,
            password,
            remember: true,
            save_password: false,
        };
        match initial {
            Initial::None => Ok(None),
            Initial::Demo => self.open_demo(DemoRequest::default()).await.map(Some),
            Initial::Location(location) => self.open_database(open(location, None)).await.map(Some),
            Initial::Last => match self.appdb.setting("last_database")? {
                Some(l) if l == "demo" => self.open_demo(DemoRequest::default()).await.map(Some),
                Some(l) => {
                    let password = self.secrets.get(&l);
                    self.open_database(open(l, password)).await.map(Some)
                }
                None => Ok(None),
            },
        }
    }

    // ---- connections ------------------------------------------------------------------------

    /// Open a SQLite file or a Postgres URL (read-only: nothing is written to it).
    pub async fn open_database(&self, req: OpenRequest) -> ApiResult<DbInfo> {
        let loc = Location::parse(&req.location)?;
        if loc.kind == DbKind::Sqlite && !Path::new(&loc.public).exists() {
            return Err(ApiError::not_found(format!("no such file: {}", loc.public)));
        }
        let password = req
            .password
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| loc.password.clone());
        let info = self.open_location(&loc, password.as_deref(), false).await?;
        if req.remember {
            self.appdb
                .remember(loc.kind, &info.display_name, &loc.public)?;
        }
        if req.save_password {
            if let Some(pw) = &password {
                self.secrets
                    .set(&loc.public, pw)
                    .map_err(|m| ApiError::new(ErrorCode::Internal, m))?;
            }
        }
        Ok(info)
    }

    /// Open a private copy of the built-in demo database (made on first use, or again with
    /// `reset`), in the data directory.
    pub async fn open_demo(&self, req: DemoRequest) -> ApiResult<DbInfo> {
        let dir = self.data_dir.join("demo");
        let path = dir.join("langgraph-demo.sqlite");
        if req.reset || !path.exists() {
            std::fs::create_dir_all(&dir)
                .map_err(|e| ApiError::io(format!("cannot create {}: {e}", dir.display())))?;
            write_atomically(&path, DEMO_DATABASE)?;
        }
        let loc = Location::parse(&path.to_string_lossy())?;
        self.open_location(&loc, None, true).await
    }

    /// Reopen a remembered connection (password from the request, else the keyring).
    pub async fn open_recent(&self, req: OpenRecentRequest) -> ApiResult<DbInfo> {
        let c = self.appdb.connection(req.id)?;
        let password = req
            .password
            .clone()
            .filter(|p| !p.is_empty())
            .or_else(|| self.secrets.get(&c.location));
        self.open_database(OpenRequest {
            location: c.location,
            password,
            remember: true,
            save_password: req.save_password && req.password.is_some(),
        })
        .await
    }

    /// Remembered connections, most recent first.
    pub async fn recent_connections(&self) -> ApiResult<Vec<RecentConnection>> {
        let mut list = self.appdb.recent()?;
        for c in &mut list {
            match c.kind {
                DbKind::Sqlite => c.missing = !Path::new(&c.location).exists(),
                DbKind::Postgres => c.has_saved_password = self.secrets.get(&c.location).is_some(),
            }
        }
        Ok(list)
    }

    /// Forget a remembered connection and its saved password.
    pub async fn forget_connection(&self, req: ConnectionId) -> ApiResult<()> {
        let c = self.appdb.connection(req.id)?;
        self.secrets.delete(&c.location);
        self.appdb.forget(req.id)
    }

    /// Close a database handle.
    pub async fn close_database(&self, req: DbRequest) -> ApiResult<()> {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(&req.db);
        }
        Ok(())
    }

    // ---- reading ----------------------------------------------------------------------------

    /// Every thread with its status.
    pub async fn list_threads(&self, req: DbRequest) -> ApiResult<Vec<ThreadSummary>> {
        let s = self.session(&req.db)?;
        views::thread_summaries(s.store.as_ref()).await
    }

    /// A thread's checkpoints as branch lanes.
    pub async fn thread_graph(&self, req: GraphRequest) -> ApiResult<ThreadGraph> {
        let s = self.session(&req.db)?;
        let g = views::thread_graph(s.store.as_ref(), &req.thread_id, &req.collapsed).await?;
        if let Ok(mut ns) = s.namespaces.lock() {
            let mut all: Vec<String> = vec![String::new()];
            all.extend(g.namespaces.iter().map(|n| n.ns.clone()));
            ns.insert(req.thread_id.clone(), all);
        }
        Ok(g)
    }

    /// One checkpoint: values, writes, tasks, metadata.
    pub async fn checkpoint_detail(&self, req: CheckpointRequest) -> ApiResult<CheckpointDetail> {
        let s = self.session(&req.db)?;
        let store = s.store.as_ref();
        let tuple = store
            .get_tuple(&req.thread_id, &req.checkpoint_ns, Some(&req.checkpoint_id))
            .await?
            .ok_or_else(|| {
                checkpoint_not_found(&req.thread_id, &req.checkpoint_ns, &req.checkpoint_id)
            })?;
        let latest = store
            .list_headers(&ListQuery {
                checkpoint_ns: Some(req.checkpoint_ns.clone()),
                limit: Some(1),
                ..ListQuery::thread(&req.thread_id)
            })
            .await?;
        let live = latest
            .first()
            .is_some_and(|h| h.checkpoint_id == req.checkpoint_id);
        let cached = s
            .namespaces
            .lock()
            .ok()
            .and_then(|n| n.get(&req.thread_id).cloned());
        let namespaces = match cached {
            Some(n) => n,
            None => {
                let mut n: Vec<String> = store
                    .list_headers(&ListQuery::thread(&req.thread_id))
                    .await?
                    .into_iter()
                    .map(|h| h.checkpoint_ns)
                    .collect();
                n.sort();
                n.dedup();
                n
            }
        };
        Ok(views::checkpoint_detail(
            &tuple,
            live,
            namespaces,
            view_opts(req.reveal_secrets),
        ))
    }

    /// Two checkpoints side by side.
    pub async fn diff_checkpoints(&self, req: DiffRequest) -> ApiResult<CheckpointDiff> {
        let s = self.session(&req.db)?;
        Ok(flashback_engine::diff::diff_checkpoints(
            s.store.as_ref(),
            &req.thread_id,
            (&req.a.checkpoint_ns, &req.a.checkpoint_id),
            (&req.b.checkpoint_ns, &req.b.checkpoint_id),
            ViewOptions::default(),
        )
        .await?)
    }

    /// The steps of a branch, root first (for stepping and the replay animation).
    pub async fn replay_steps(&self, req: ReplayRequest) -> ApiResult<Vec<ReplayStep>> {
        let s = self.session(&req.db)?;
        Ok(flashback_engine::replay::replay(
            s.store.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            req.tip.as_deref(),
        )
        .await?)
    }

    // ---- writing ----------------------------------------------------------------------------

    /// Whether an edited value fits its channel (nothing is written).
    pub async fn validate_edit(&self, req: ValidateEditRequest) -> ApiResult<EditCheck> {
        let s = self.session(&req.db)?;
        let tuple = s
            .store
            .get_tuple(&req.thread_id, &req.checkpoint_ns, Some(&req.checkpoint_id))
            .await?
            .ok_or_else(|| {
                checkpoint_not_found(&req.thread_id, &req.checkpoint_ns, &req.checkpoint_id)
            })?;
        let channel = &req.edit.channel;
        if channel.is_empty() {
            return Ok(EditCheck {
                ok: false,
                message: Some("choose a channel".into()),
                path: None,
            });
        }
        let template = tuple.checkpoint.value(channel).map(Arc::as_ref);
        Ok(
            match flashback_codec::unview::decoded_from_view(
                &req.edit.value,
                template,
                &flashback_engine::edit::channel_path(channel),
            ) {
                Ok(_) => EditCheck {
                    ok: true,
                    message: None,
                    path: None,
                },
                Err(e) => EditCheck {
                    ok: false,
                    path: Some(e.path().to_owned()),
                    message: Some(e.to_string()),
                },
            },
        )
    }

    /// Fork a checkpoint: a copy, or with edited channels. One transaction.
    pub async fn fork_checkpoint(&self, req: ForkRequest) -> ApiResult<ForkResult> {
        let saver = self.writable(&req.db).await?;
        let edits: Vec<(String, Json)> = req
            .edits
            .into_iter()
            .map(|e| (e.channel, e.value))
            .collect();
        fork(
            saver.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            &req.checkpoint_id,
            &edits,
        )
        .await
    }

    /// Fork point / A / B for the channels.
    pub async fn merge_preview(&self, req: MergePreviewRequest) -> ApiResult<Vec<ThreeWay>> {
        let s = self.session(&req.db)?;
        Ok(flashback_engine::merge::three_way(
            s.store.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            &req.into,
            &req.from,
            &req.channels,
        )
        .await?)
    }

    /// Write a merge checkpoint on branch A. One transaction.
    pub async fn merge_branches(&self, req: MergeRequest) -> ApiResult<ForkResult> {
        let saver = self.writable(&req.db).await?;
        let take: Vec<_> = req
            .channels
            .into_iter()
            .map(|c| (c.channel, c.mode))
            .collect();
        Ok(flashback_engine::merge::merge_branches(
            saver.as_ref(),
            &req.thread_id,
            &req.checkpoint_ns,
            &req.into,
            &req.from,
            &take,
        )
        .await?)
    }

    /// Delete a thread (or, with `dry_run`, count what would go). One transaction.
    pub async fn delete_thread(&self, req: DeleteRequest) -> ApiResult<DeleteReport> {
        use flashback_storage::maintenance::PruneStrategy;
        let saver = self.writable(&req.db).await?;
        ensure_thread(saver.as_ref(), &req.thread_id).await?;
        let preview = saver
            .prune(
                std::slice::from_ref(&req.thread_id),
                PruneStrategy::Delete,
                true,
            )
            .await?;
        if !req.dry_run {
            saver.delete_thread(&req.thread_id).await?;
        }
        Ok(DeleteReport {
            thread_id: req.thread_id,
            checkpoints: types::count(preview.checkpoints.len()),
            writes: types::count(preview.writes),
            dry_run: req.dry_run,
        })
    }

    /// Prune threads (or preview it). One transaction.
    pub async fn prune_threads(&self, req: PruneRequest) -> ApiResult<PruneSummary> {
        use flashback_storage::maintenance::PruneStrategy;
        if req.thread_ids.is_empty() {
            return Err(ApiError::invalid("choose at least one thread to prune"));
        }
        let saver = self.writable(&req.db).await?;
        let strategy = match req.strategy {
            PruneMode::KeepLatest => PruneStrategy::KeepLatest,
            PruneMode::Delete => PruneStrategy::Delete,
        };
        let r = saver.prune(&req.thread_ids, strategy, req.dry_run).await?;
        Ok(PruneSummary {
            checkpoints: r
                .checkpoints
                .into_iter()
                .map(|(thread_id, checkpoint_ns, checkpoint_id)| CheckpointKey {
                    thread_id,
                    checkpoint_ns,
                    checkpoint_id,
                })
                .collect(),
            writes: types::count(r.writes),
            blobs: types::count(r.blobs),
            dry_run: r.dry_run,
        })
    }

    // ---- jobs -------------------------------------------------------------------------------

    /// Start an audit export (a job: progress, cancel; the result is an [`ExportResult`]).
    pub async fn start_export(&self, req: ExportRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        if let Some(p) = &req.path {
            let parent = Path::new(p).parent().filter(|d| !d.as_os_str().is_empty());
            if parent.is_some_and(|d| !d.is_dir()) {
                return Err(ApiError::not_found(format!("no such folder for {p}")));
            }
        }
        Ok(self.jobs.spawn(JobKind::Export, move |job| async move {
            to_json(export_job(&s, &req, &job).await?)
        }))
    }

    /// Check an exported bundle (a file, or content).
    pub async fn verify_export(&self, req: VerifyRequest) -> ApiResult<VerifyReport> {
        let text = match (req.content, req.path) {
            (Some(c), _) => c,
            (None, Some(p)) => std::fs::read_to_string(&p)
                .map_err(|e| ApiError::not_found(format!("cannot read {p}: {e}")))?,
            (None, None) => return Err(ApiError::invalid("give a path or the content")),
        };
        Ok(flashback_engine::export::verify(&text))
    }

    /// Start a re-run with a live tail (a job: each new checkpoint and output line is an event;
    /// the result is the fork).
    pub async fn start_rerun(&self, req: RerunRequest) -> ApiResult<String> {
        let s = self.session(&req.db)?;
        if req.runner.trim().is_empty() {
            return Err(ApiError::invalid(
                "enter the command that resumes your graph",
            ));
        }
        if req.timeout_secs == 0 {
            return Err(ApiError::invalid("the timeout must be at least one second"));
        }
        self.appdb.set_setting(
            &format!("runner:{}", s.info.location),
            Some(req.runner.as_str()),
        )?;
        let spec = rerun::RerunSpec {
            location: s.connect.clone(),
            thread_id: req.thread_id,
            checkpoint_ns: req.checkpoint_ns,
            checkpoint_id: req.checkpoint_id,
            runner: req.runner,
            timeout: std::time::Duration::from_secs(u64::from(req.timeout_secs)),
        };
        Ok(self.jobs.spawn(JobKind::Rerun, move |job| async move {
            job.progress(0, 0, "running");
            let mut sink = |e: rerun::RerunEvent<'_>| {
                job.event(match e {
                    rerun::RerunEvent::Checkpoint(h) => JobEvent::Checkpoint {
                        checkpoint_ns: h.checkpoint_ns.clone(),
                        checkpoint_id: h.checkpoint_id.clone(),
                        parent_checkpoint_id: h.parent_checkpoint_id.clone(),
                        step: types::step_of(&h.metadata),
                        source: types::source_of(&h.metadata),
                    },
                    rerun::RerunEvent::Output { stream, line } => JobEvent::Output {
                        stream: stream.to_owned(),
                        line: line.to_owned(),
                    },
                })
            };
            let fork = rerun::rerun(&spec, &mut sink, job.cancelled()).await?;
            to_json(fork)
        }))
    }

    /// A job's state and the events after `cursor`.
    pub async fn job_poll(&self, req: JobPollRequest) -> ApiResult<JobSnapshot> {
        self.jobs.poll(&req.job, req.cursor)
    }

    /// Ask a job to stop.
    pub async fn job_cancel(&self, req: JobRequest) -> ApiResult<()> {
        self.jobs.cancel(&req.job)
    }

    // ---- settings ---------------------------------------------------------------------------

    /// Save a setting: `theme` (`system`, `light`, `dark`) or `runner:<location>`.
    pub async fn set_setting(&self, req: SetSettingRequest) -> ApiResult<()> {
        let ok = match req.key.as_str() {
            "theme" => req
                .value
                .as_deref()
                .is_none_or(|v| matches!(v, "system" | "light" | "dark")),
            k => k.starts_with("runner:") || k.starts_with("ui:"),
        };
        if !ok {
            return Err(ApiError::invalid(format!(
                "unknown setting {:?} = {:?}",
                req.key, req.value
            )));
        }
        self.appdb.set_setting(&req.key, req.value.as_deref())
    }

    // ---- transport --------------------------------------------------------------------------

    /// Run a command by name with Tauri-shaped JSON arguments (`{"req": {...}}`): the HTTP
    /// transport's entry point.
    pub async fn dispatch(&self, command: &str, args: &Json) -> ApiResult<Json> {
        fn req<T: DeserializeOwned>(args: &Json) -> ApiResult<T> {
            let v = args.get("req").cloned().unwrap_or(Json::Null);
            serde_json::from_value(v).map_err(|e| ApiError::invalid(format!("bad arguments: {e}")))
        }
        match command {
            "app_info" => to_json(self.app_info().await?),
            "open_database" => to_json(self.open_database(req(args)?).await?),
            "open_demo" => to_json(self.open_demo(req(args)?).await?),
            "open_recent" => to_json(self.open_recent(req(args)?).await?),
            "recent_connections" => to_json(self.recent_connections().await?),
            "forget_connection" => to_json(self.forget_connection(req(args)?).await?),
            "close_database" => to_json(self.close_database(req(args)?).await?),
            "list_threads" => to_json(self.list_threads(req(args)?).await?),
            "thread_graph" => to_json(self.thread_graph(req(args)?).await?),
            "checkpoint_detail" => to_json(self.checkpoint_detail(req(args)?).await?),
            "diff_checkpoints" => to_json(self.diff_checkpoints(req(args)?).await?),
            "replay_steps" => to_json(self.replay_steps(req(args)?).await?),
            "validate_edit" => to_json(self.validate_edit(req(args)?).await?),
            "fork_checkpoint" => to_json(self.fork_checkpoint(req(args)?).await?),
            "merge_preview" => to_json(self.merge_preview(req(args)?).await?),
            "merge_branches" => to_json(self.merge_branches(req(args)?).await?),
            "start_export" => to_json(self.start_export(req(args)?).await?),
            "verify_export" => to_json(self.verify_export(req(args)?).await?),
            "start_rerun" => to_json(self.start_rerun(req(args)?).await?),
            "job_poll" => to_json(self.job_poll(req(args)?).await?),
            "job_cancel" => to_json(self.job_cancel(req(args)?).await?),
            "delete_thread" => to_json(self.delete_thread(req(args)?).await?),
            "prune_threads" => to_json(self.prune_threads(req(args)?).await?),
            "set_setting" => to_json(self.set_setting(req(args)?).await?),
            other => Err(ApiError::not_found(format!("unknown command {other:?}"))),
        }
    }
}

fn safe_file_part(s: &str) -> String {
    let cleaned: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    if cleaned.is_empty() {
        "thread".into()
    } else {
        cleaned
    }
}

async fn export_job(
    s: &Session,
    req: &ExportRequest,
    job: &jobs::JobHandle,
) -> ApiResult<ExportResult> {
    use flashback_engine::export::{self, ExportProgress};
    let opts = export::ExportOptions {
        checkpoint_id: req.checkpoint_id.clone(),
        redact: req.redact.clone(),
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        ..Default::default()
    };
    let mut observe = |p: ExportProgress| {
        match p {
            ExportProgress::Loading { total } => job.progress(0, total, "reading checkpoints"),
            ExportProgress::Hashing { done, total } => job.progress(done, total, "hashing"),
        }
        !job.is_cancelled()
    };
    let bundle =
        export::build_bundle_observed(s.store.as_ref(), &req.thread_id, &opts, &mut observe)
            .await?;
    let (text, ext) = match req.format {
        ExportFormat::Html => (export::render_html(&bundle), "html"),
        ExportFormat::Json => {
            let mut t = serde_json::to_string_pretty(&bundle).map_err(|e| {
                ApiError::new(ErrorCode::Internal, format!("cannot serialise: {e}"))
            })?;
            t.push('\n');
            (t, "json")
        }
    };
    if job.is_cancelled() {
        return Err(ApiError::new(ErrorCode::Cancelled, "cancelled"));
    }
    let file_name = format!(
        "{}-{}.{ext}",
        safe_file_part(&req.thread_id),
        req.checkpoint_id
            .as_deref()
            .map_or_else(|| "tree".to_owned(), safe_file_part)
    );
    job.progress(bundle.checkpoint_count, bundle.checkpoint_count, "writing");
    let size = types::count(text.len());
    let (path, content) = match &req.path {
        Some(p) => {
            write_atomically(Path::new(p), text.as_bytes())?;
            (Some(p.clone()), None)
        }
        None => (None, Some(text)),
    };
    Ok(ExportResult {
        path,
        file_name,
        content,
        bundle_hash: bundle.bundle_hash,
        checkpoints: types::count(bundle.checkpoint_count),
        size,
    })
}

//! Connections: the first database, opening files, URLs and the demo, recent connections,
//! closing. Opening never writes to the database.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::location::Location;
use crate::types::{
    AppInfo, ConnectionId, DbInfo, DbKind, DbRequest, DemoRequest, HostMode, OpenRecentRequest,
    OpenRequest, RecentConnection,
};
use crate::{write_atomically, Api, Initial, InitialState, Session, DEMO_DATABASE};
use flashback_storage::CheckpointStore;
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

impl Api {
    pub(crate) fn session(&self, db: &str) -> ApiResult<Arc<Session>> {
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

    /// Open a location with a password (if any) and register the session.
    async fn open_location(
        &self,
        loc: &Location,
        password: Option<&str>,
        demo: bool,
    ) -> ApiResult<DbInfo> {
        if loc.kind == DbKind::AgentServer {
            // The API key goes with the server's requests (`x-api-key`), never into its URL.
            if let Some(key) = password {
                flashback_storage::agentserver::set_api_key(&loc.public, key);
            }
        }
        let connect = match loc.kind {
            DbKind::AgentServer => loc.public.clone(),
            _ => loc.connect_string(password),
        };
        let budget = self.decode_budget()?;
        let (store, key, encryption) =
            match crate::sealed::open_sealed(self, &connect, &loc.public, budget).await {
                Ok((s, key, encryption)) => (Arc::<dyn CheckpointStore>::from(s), key, encryption),
                Err(flashback_storage::StoreError::Auth(m))
                    if password.is_none() && loc.kind == DbKind::AgentServer =>
                {
                    return Err(ApiError::new(ErrorCode::NeedsPassword, m))
                }
                Err(flashback_storage::StoreError::Auth(m)) if password.is_none() => {
                    return Err(ApiError::new(
                        ErrorCode::NeedsPassword,
                        format!("{} needs a password ({m})", loc.display_name()),
                    ))
                }
                Err(e) => return Err(e.into()),
            };
        let store_summary = match store.memory() {
            Some(m) => Some(crate::StoreSummary::new(m.schema(), m.summary().await?)),
            None => None,
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
            schema_kind: store.schema().kind,
            demo,
            encryption,
            holds: store.schema().holds.into(),
            store: store_summary,
            dialect: store.schema().dialect,
            server: store.server().await?.map(|s| s.summary()),
        };
        let session = Arc::new(Session {
            info: info.clone(),
            connect,
            store,
            key,
            namespaces: Mutex::new(HashMap::new()),
            paged: Default::default(),
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
                Ok(db) => InitialState::Done(db.map(Box::new), None),
                Err(e) => InitialState::Done(None, Some(e)),
            };
        }
        let (initial, initial_error) = match &*state {
            InitialState::Done(db, e) => (db.as_deref().cloned(), e.clone()),
            InitialState::Pending(_) => (None, None),
        };
        drop(state);
        Ok(AppInfo {
            version: env!("CARGO_PKG_VERSION").to_owned(),
            host: self.host,
            keyring: self.secrets.available(),
            can_run: self.policy.run_commands,
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
        match loc.kind {
            DbKind::Sqlite => {
                crate::location::ensure_regular_file(Path::new(&loc.public))?;
            }
            DbKind::DevServer => crate::location::ensure_dev_folder(Path::new(&loc.public))?,
            DbKind::Postgres | DbKind::AgentServer => {}
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
                DbKind::Sqlite | DbKind::DevServer => c.missing = !Path::new(&c.location).exists(),
                DbKind::Postgres | DbKind::AgentServer => {
                    c.has_saved_password = self.secrets.get(&c.location).is_some()
                }
            }
        }
        Ok(list)
    }

    /// Forget a remembered connection and its saved password.
    pub async fn forget_connection(&self, req: ConnectionId) -> ApiResult<()> {
        let c = self.appdb.connection(req.id)?;
        self.secrets.delete(&c.location);
        self.secrets
            .delete(&crate::sealed::keyring_account(&c.location));
        self.appdb.forget(req.id)
    }

    /// Close a database handle.
    pub async fn close_database(&self, req: DbRequest) -> ApiResult<()> {
        if let Ok(mut s) = self.sessions.lock() {
            s.remove(&req.db);
        }
        Ok(())
    }
}

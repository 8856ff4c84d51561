//! The one way a location is opened: [`open`] detects what it holds once — on SQLite on the
//! read-only connection the store then reads through, on Postgres on the first connection —
//! and opens the source for that [`Layout`](crate::Layout) with the [`Access`] asked for:
//! [`Read`] (never writes), [`Write`] (explicit actions on an existing database) or
//! [`Create`] (a saver that may create the database).
//!
//! Adding a source: a folder of its own, a variant of [`crate::SchemaKind`] its detection
//! returns, and one arm in `detect_sqlite` / the Postgres matches below.

use crate::maintenance::SaverMaintenance;
use crate::sqlite::{Reader, SqliteSaver, SqliteStore};
use crate::three::sqlite::{ThreeTableSaver, ThreeTableStore};
use crate::three::ThreeTableOptions;
use crate::{is_postgres_url, CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::{AesKey, DecodeBudget};
use std::path::Path;
use std::sync::Arc;

/// Read-only access: decoding within `budget` (a stored value over it is read as
/// [`crate::Decoded::TooLarge`], so a database holding a 200 MB value is read in bounded
/// memory; `DecodeBudget::UNLIMITED` decodes everything), decrypting `+aes` values with
/// `key` (a database written with LangGraph's `EncryptedSerializer`; see
/// [`flashback_codec::cipher`]).
#[derive(Clone)]
pub struct Read {
    /// The decode budget.
    pub budget: DecodeBudget,
    /// The AES key, if any.
    pub key: Option<Arc<AesKey>>,
}

impl Default for Read {
    fn default() -> Self {
        Read {
            budget: DecodeBudget::DEFAULT,
            key: None,
        }
    }
}

impl Read {
    /// Read within `budget`, without a key.
    pub fn within(budget: DecodeBudget) -> Self {
        Read { budget, key: None }
    }
}

/// Write access to an existing database (explicit actions only: fork, merge, delete…). It
/// must already hold a LangGraph schema or the three-table store's; nothing is created. With
/// a key, values are decrypted on read and every serde value written is encrypted with it, as
/// Python's `EncryptedSerializer` would.
#[derive(Clone, Default)]
pub struct Write {
    /// The AES key, if any.
    pub key: Option<Arc<AesKey>>,
}

/// A saver for a caller that may create the database (`flashback bridge`, conversions): a
/// SQLite file (with `create`, made and set up — as the three-table store with `three`, else
/// LangGraph's schema; an existing three-table file is opened as one) or a Postgres URL (the
/// same rules: `setup()` run with `create`; a database holding the three-table store opened
/// as one).
#[derive(Clone, Copy, Default)]
pub struct Create {
    /// Make the database (and its tables) when missing.
    pub create: bool,
    /// The three-table store's options, to make or open that schema.
    pub three: Option<ThreeTableOptions>,
}

/// How a location is opened ([`Read`], [`Write`], [`Create`]) and what that gives.
#[async_trait]
pub trait Access: Send + Sized {
    /// What is opened.
    type Store: Send;

    /// Open a SQLite file.
    async fn sqlite(self, path: &str) -> Result<Self::Store, StoreError>;

    /// Open a Postgres database.
    #[cfg(feature = "postgres")]
    async fn postgres(self, url: &str) -> Result<Self::Store, StoreError>;

    /// Open a `langgraph dev` server's state folder ([`crate::devserver`]).
    async fn devserver(self, dir: &Path) -> Result<Self::Store, StoreError>;

    /// Open a running Agent Server through its HTTP API ([`crate::agentserver`]). Only
    /// [`Read`] opens one: its writes are the server's own requests
    /// ([`crate::agentserver::write`]), not a saver's.
    async fn agentserver(self, url: &str) -> Result<Self::Store, StoreError> {
        Err(StoreError::InvalidInput(format!(
            "{}: an Agent Server is written through its API (fork, edit, re-run, resume, copy); \
             this operation writes a database's tables, which a server does not expose",
            crate::agentserver::base_url(url)?
        )))
    }
}

/// Open a location — an Agent Server's `http://`/`https://` URL, a `postgres://` /
/// `postgresql://` URL, a path to a SQLite file, or a `langgraph dev` project (or its
/// `.langgraph_api/` folder) — as `access` says; what it holds is detected once.
pub async fn open<A: Access>(location: &str, access: A) -> Result<A::Store, StoreError> {
    if crate::agentserver::is_server_url(location) {
        return access.agentserver(location).await;
    }
    if is_postgres_url(location) {
        #[cfg(feature = "postgres")]
        {
            return access.postgres(location).await;
        }
        #[cfg(not(feature = "postgres"))]
        {
            return Err(StoreError::InvalidInput(
                "this build of Flashback has no Postgres support (feature `postgres`)".into(),
            ));
        }
    }
    let path = Path::new(location);
    if path.is_dir() {
        return match crate::devserver::files::state_dir(path) {
            Some(dir) => access.devserver(&dir).await,
            None => Err(StoreError::NotADatabase {
                path: location.to_owned(),
                detail: "it is a folder without a .langgraph_api folder: not a langgraph dev \
                         project, or its server has not saved state there yet"
                    .into(),
            }),
        };
    }
    access.sqlite(location).await
}

/// The dev server's folder as a saver: explicit actions write its files while no server runs
/// on it ([`crate::devserver::DevServerSaver`]).
async fn open_devserver_saver(dir: &Path) -> Result<crate::devserver::DevServerSaver, StoreError> {
    if crate::devserver::files::is_js(dir) {
        return Err(StoreError::InvalidInput(format!(
            "{}: writing the LangGraph.js dev server's files is not supported yet: convert it \
             to SQLite (`flashback convert --to langgraph DIR out.sqlite`) and fork there",
            dir.display()
        )));
    }
    let dir = dir.to_path_buf();
    let store = tokio::task::spawn_blocking(move || crate::devserver::DevServerStore::open(&dir))
        .await
        .map_err(|e| StoreError::Query(format!("open task failed: {e}")))??;
    Ok(crate::devserver::DevServerSaver::new(store))
}

/// What a SQLite file holds, detected once on the read-only connection its store keeps.
enum SqliteSource {
    LangGraph(SqliteStore),
    ThreeTable(ThreeTableStore),
}

async fn detect_sqlite(path: &str) -> Result<SqliteSource, StoreError> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let reader = Reader::open(&path)?;
        Ok(match crate::three::sqlite::detect(&reader.conn) {
            Some(schema) => {
                SqliteSource::ThreeTable(ThreeTableStore::from_reader(&path, reader, schema))
            }
            None => SqliteSource::LangGraph(SqliteStore::from_reader(&path, reader)?),
        })
    })
    .await
    .map_err(|e| StoreError::Query(format!("open task failed: {e}")))?
}

/// What a Postgres database holds, detected once on its first connection (`setup`: the
/// connection may create LangGraph's tables afterwards).
#[cfg(feature = "postgres")]
#[allow(clippy::large_enum_variant)] // one short-lived value per open, moved out at once
enum PgSource {
    LangGraph(crate::postgres::PostgresStore),
    ThreeTable(crate::three::postgres::ThreeTablePg),
}

#[cfg(feature = "postgres")]
async fn detect_postgres(url: &str, setup: bool) -> Result<PgSource, StoreError> {
    use crate::postgres::{Detected, PostgresStore};
    Ok(match PostgresStore::detect(url, setup).await? {
        Detected::LangGraph(store) => PgSource::LangGraph(store),
        Detected::ThreeTable {
            connect,
            target,
            schema,
        } => PgSource::ThreeTable(crate::three::postgres::ThreeTablePg::from_detected(
            connect,
            target,
            schema,
            ThreeTableOptions::default(),
        )),
    })
}

#[async_trait]
impl Access for Read {
    type Store = Box<dyn CheckpointStore>;

    async fn sqlite(self, path: &str) -> Result<Self::Store, StoreError> {
        let store: Self::Store = match detect_sqlite(path).await? {
            SqliteSource::LangGraph(s) => Box::new(s.with_budget(self.budget).with_key(self.key)),
            SqliteSource::ThreeTable(s) => Box::new(s.with_budget(self.budget).with_key(self.key)),
        };
        Ok(store)
    }

    #[cfg(feature = "postgres")]
    async fn postgres(self, url: &str) -> Result<Self::Store, StoreError> {
        let store: Self::Store = match detect_postgres(url, false).await? {
            PgSource::LangGraph(s) => Box::new(s.with_budget(self.budget).with_key(self.key)),
            PgSource::ThreeTable(s) => Box::new(s.with_budget(self.budget).with_key(self.key)),
        };
        Ok(store)
    }

    async fn devserver(self, dir: &Path) -> Result<Self::Store, StoreError> {
        let dir = dir.to_path_buf();
        let store =
            tokio::task::spawn_blocking(move || crate::devserver::DevServerStore::open(&dir))
                .await
                .map_err(|e| StoreError::Query(format!("open task failed: {e}")))??;
        Ok(Box::new(store.with_budget(self.budget).with_key(self.key)))
    }

    async fn agentserver(self, url: &str) -> Result<Self::Store, StoreError> {
        let store = crate::agentserver::AgentServerStore::open(url).await?;
        Ok(Box::new(store.with_budget(self.budget)))
    }
}

#[async_trait]
impl Access for Write {
    type Store = Box<dyn SaverMaintenance>;

    async fn sqlite(self, path: &str) -> Result<Self::Store, StoreError> {
        // Made first: its first read rolls back a hot journal the read-only open would refuse.
        let conn = SqliteSaver::writer(path);
        let saver: Self::Store = match detect_sqlite(path).await? {
            SqliteSource::LangGraph(s) => {
                Box::new(SqliteSaver::from_parts(s, conn)?.with_key(self.key))
            }
            SqliteSource::ThreeTable(s) => Box::new(
                ThreeTableSaver::from_parts(s, conn, ThreeTableOptions::default())?
                    .with_key(self.key),
            ),
        };
        Ok(saver)
    }

    #[cfg(feature = "postgres")]
    async fn postgres(self, url: &str) -> Result<Self::Store, StoreError> {
        let saver: Self::Store = match detect_postgres(url, false).await? {
            PgSource::LangGraph(s) => Box::new(s.with_key(self.key)),
            PgSource::ThreeTable(s) => Box::new(s.with_key(self.key)),
        };
        Ok(saver)
    }

    async fn devserver(self, dir: &Path) -> Result<Self::Store, StoreError> {
        Ok(Box::new(
            open_devserver_saver(dir).await?.with_key(self.key),
        ))
    }
}

#[async_trait]
impl Access for Create {
    type Store = Box<dyn SaverMaintenance>;

    async fn sqlite(self, path: &str) -> Result<Self::Store, StoreError> {
        if let Some(saver) = ThreeTableSaver::open_for(path, self.create, self.three).await? {
            return Ok(Box::new(saver));
        }
        Ok(Box::new(if self.create {
            SqliteSaver::create(path).await?
        } else {
            SqliteSaver::open(path).await?
        }))
    }

    #[cfg(feature = "postgres")]
    async fn postgres(self, url: &str) -> Result<Self::Store, StoreError> {
        use crate::three::postgres::ThreeTablePg;
        if self.three.is_some() {
            let saver = ThreeTablePg::open_for(url, self.create, self.three).await?;
            return saver.map(|s| Box::new(s) as _).ok_or_else(|| {
                StoreError::InvalidInput("no three-table store at this URL".into())
            });
        }
        match detect_postgres(url, true).await? {
            PgSource::ThreeTable(saver) => Ok(Box::new(saver)),
            PgSource::LangGraph(store) => {
                if self.create {
                    crate::CheckpointSaver::setup(&store).await?;
                }
                Ok(Box::new(store))
            }
        }
    }

    async fn devserver(self, dir: &Path) -> Result<Self::Store, StoreError> {
        if self.create || self.three.is_some() {
            return Err(StoreError::InvalidInput(format!(
                "{} is a langgraph dev server's state folder: Flashback writes into the one the \
                 server made, it does not make one (name a new SQLite file or a Postgres URL)",
                dir.display()
            )));
        }
        Ok(Box::new(open_devserver_saver(dir).await?))
    }
}

/// Open the memory Store of a database for writing (explicit actions only). The database must
/// hold one: nothing is created.
pub async fn open_memory_writable(
    location: &str,
) -> Result<Box<dyn crate::memory::MemoryWrite>, StoreError> {
    if crate::is_postgres_url(location) {
        #[cfg(feature = "postgres")]
        {
            let store = crate::postgres::PostgresStore::connect(location).await?;
            let memory = store.memory_reader().cloned();
            let memory = memory
                .ok_or_else(|| crate::memory::no_store(&format!("database {}", store.target())))?;
            return Ok(Box::new(memory));
        }
        #[cfg(not(feature = "postgres"))]
        {
            return Err(StoreError::InvalidInput(
                "this build of Flashback has no Postgres support (feature `postgres`)".into(),
            ));
        }
    }
    if crate::agentserver::is_server_url(location) {
        let store = crate::agentserver::AgentServerStore::open(location).await?;
        return Ok(store.into_memory());
    }
    // A `langgraph dev` folder's store.pckl is its server's: read, not written (yet).
    let path = std::path::Path::new(location);
    if path.is_dir() {
        let dir = crate::devserver::files::state_dir(path).unwrap_or_else(|| path.to_path_buf());
        return Err(StoreError::InvalidInput(format!(
            "the memory Store of {} is the langgraph dev server's (store.pckl): Flashback reads \
             it but does not write it — change it through the server (client.store.put_item)",
            dir.display()
        )));
    }
    Ok(Box::new(
        crate::memory::sqlite::write::SqliteMemoryWriter::open(location).await?,
    ))
}

//! PostgreSQL databases written by `langgraph-checkpoint-postgres`, read with sqlx.
//!
//! Every read runs in a `READ ONLY` (and `REPEATABLE READ`, so the few queries of one call see
//! one snapshot) transaction that is rolled back at the end: browsing never writes. Writing
//! is only the explicit [`crate::CheckpointSaver`] operations (`write.rs`), each in
//! its own read-write transaction.
//!
//! ```text
//!  list_tuples(query) / get_tuple(…)            (a fixed number of queries, whatever the rows)
//!   ├─ checkpoint rows: Python's WHERE / ORDER BY checkpoint_id DESC / LIMIT
//!   │     └──▶ blocking thread: parse the JSONB documents (inline values, versions)
//!   ├─ pending writes of all listed checkpoints (one query)
//!   ├─ pre-v4 rows only: the parents' `__pregel_tasks` writes (pending sends)
//!   │     └──▶ blocking thread: decode and group the writes and sends
//!   ├─ rare: exact `jsonb_each_text` texts of non-string, non-integer versions
//!   └─ the distinct (thread, ns, channel, version) blobs the rows reference, in ≤ 4 queries
//!      streamed in batches as they arrive (blobs.rs)
//!         └──▶ one blocking thread: decode each blob ONCE, shared as `Arc<Decoded>`, with
//!              one decode cache (an object in many blobs is decoded once)
//!  then assemble the tuples (blocking thread).
//! ```
//!
//! Channel values follow Python's `_load_checkpoint_tuple`: the inline JSONB
//! `channel_values` (primitives; absent on pre-July-2025 rows) overlaid by the blobs reached
//! through the checkpoint's own `channel_versions`, skipping `empty` blob rows.
//!
//! The deprecated shallow saver's layout (no `checkpoints.checkpoint_id`, blobs keyed without
//! version) is read too: one checkpoint per thread and namespace, id from `checkpoint->>'id'`,
//! no parent, values from the blobs only (as `ShallowPostgresSaver` does).

use crate::model::{Backend, SchemaInfo};
use crate::StoreError;
use limits::Limits;
pub(crate) use schema::THREE_TABLE;
use schema::{detect_schema, UNKNOWN_LAYOUT};
use sqlx::postgres::{PgConnectOptions, PgPool};
use sqlx::Postgres;
use std::str::FromStr as _;
use std::sync::Arc;
use target::{Target, BEGIN_READ_ONLY};
pub(crate) use wait::pool_with;
use wait::{within, Bounded as _};

mod assemble;
pub(crate) mod batches;
mod blobs;
mod docjson;
mod find;
pub(crate) mod limits;
pub(crate) mod maintenance;
mod read;
mod rows;
mod schema;
pub(crate) mod sql;
mod stored;
pub(crate) mod target;
mod threads;
mod tls;
pub(crate) mod wait;
pub(crate) mod write;
pub(crate) mod write_rows;

/// What a Postgres database holds, detected once ([`PostgresStore::detect`]).
pub(crate) enum Detected {
    /// LangGraph's tables (or, detected for setup, none yet).
    LangGraph(PostgresStore),
    /// Flashback's three-table store: its schema, and where and how to connect.
    ThreeTable {
        /// The connection options of the first connection.
        connect: PgConnectOptions,
        /// Where it is, with its time limits.
        target: Target,
        /// What was detected.
        schema: SchemaInfo,
    },
}

/// The blobs of one `list_tuples` call are fetched in up to this many queries (each streamed
/// to the decoding thread as its rows arrive).
const BLOB_QUERIES: usize = 4;
/// ... but never in slices smaller than this.
const MIN_BLOB_SLICE: usize = 256;
/// The channel holding Sends (`langgraph.checkpoint.serde.types.TASKS`).
use flashback_codec::reserved::TASKS;

/// A first, direct connection to `url` (TLS and URL handling as for every Postgres store),
/// with the options that worked and the redacting target: a refused port or a bad password
/// is reported at once and precisely (a pool would retry refused connections until its
/// timeout). It settles libpq's `allow`/`prefer` fallbacks; the pool uses what worked.
/// Connecting, and setting the statement limit, each take at most the connect limit
/// (`limits.rs`, `wait.rs`).
pub(crate) async fn connect_first(
    url: &str,
) -> Result<(sqlx::PgConnection, PgConnectOptions, Target), StoreError> {
    let target = Target::from_url(url);
    let mut options = PgConnectOptions::from_str(url).map_err(|e| {
        StoreError::InvalidInput(target.redact(format!("invalid Postgres URL: {e}")))
    })?;
    if options.get_application_name().is_none() {
        options = options.application_name("flashback");
    }
    let limits =
        Limits::read(url, &options).map_err(|e| StoreError::InvalidInput(target.redact(e)))?;
    let (tls, options) =
        tls::plan(url, options).map_err(|e| StoreError::InvalidInput(target.redact(e)))?;
    let target = target
        .with_options(&options)
        .with_tls(&tls)
        .with_limits(limits);
    let connecting = || "connecting".to_owned();
    let (mut conn, options) = match within(limits.connect, tls.connect(options)).await {
        Some(connected) => connected.map_err(|e| target.error(e, true))?,
        None => {
            let after = limits.connect.unwrap_or_default();
            return Err(target.timed_out(after).during(connecting));
        }
    };
    limits
        .prepare(&mut conn, &target)
        .await
        .map_err(|e| e.during(connecting))?;
    Ok((conn, options, target))
}

/// A LangGraph Postgres checkpoint database, read through a small connection pool.
pub struct PostgresStore {
    pool: PgPool,
    /// The schema detected on connect (a placeholder when [`PostgresStore::connect_for_setup`]
    /// found no checkpoint tables).
    schema: SchemaInfo,
    /// The schema detected after [`CheckpointSaver::setup`](crate::CheckpointSaver::setup)
    /// changed it; it takes precedence over `schema`.
    after_setup: std::sync::OnceLock<SchemaInfo>,
    target: Target,
    /// Values over it are read as their size only (see `flashback_codec::budget`).
    budget: flashback_codec::DecodeBudget,
    /// Decrypts `+aes` values on read and encrypts serde values on write (see
    /// [`flashback_codec::cipher`]).
    key: Option<Arc<flashback_codec::AesKey>>,
    /// The memory Store in the same database, read on the same pool.
    memory: Option<crate::memory::postgres::PgMemory>,
    /// Fetch and decode only the blobs of the channels it accepts (a selecting read); `None`:
    /// all of them.
    only: Option<crate::model::ChannelFilter>,
}

impl std::fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PostgresStore")
            .field("target", &self.target.describe())
            .field("schema", self.info())
            .finish()
    }
}

impl PostgresStore {
    /// The connection pool (maintenance operations run their own statements on it).
    pub(crate) fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Connect to `url` (`postgres://` or `postgresql://`), check that it holds LangGraph
    /// checkpoint tables in the connection's `search_path`, and detect their generation.
    ///
    /// Errors: unreachable server → [`StoreError::Connection`]; bad password or unknown role →
    /// [`StoreError::Auth`]; no such database → [`StoreError::NotFound`]; no (or unknown)
    /// checkpoint tables → [`StoreError::UnsupportedSchema`]. Messages never contain the
    /// password.
    pub async fn connect(url: &str) -> Result<PostgresStore, StoreError> {
        Self::open(url, false).await
    }

    /// Connect for writing to a database that may still be empty: like [`Self::connect`],
    /// except that missing checkpoint tables are not an error (tables of an unknown layout
    /// still are: [`StoreError::UnsupportedSchema`]). Call
    /// [`CheckpointSaver::setup`](crate::CheckpointSaver::setup) next to create (or upgrade)
    /// the schema as Python's `PostgresSaver.setup()` does; the store's [`SchemaInfo`] is
    /// detected again after it.
    pub async fn connect_for_setup(url: &str) -> Result<PostgresStore, StoreError> {
        Self::open(url, true).await
    }

    async fn open(url: &str, for_setup: bool) -> Result<PostgresStore, StoreError> {
        match Self::detect(url, for_setup).await? {
            Detected::LangGraph(store) => Ok(store),
            Detected::ThreeTable { .. } => Err(StoreError::UnsupportedSchema {
                found: THREE_TABLE.into(),
            }),
        }
    }

    /// Connect and detect what the database holds, once, on the first connection: with
    /// `for_setup`, missing checkpoint tables are LangGraph's not set up yet.
    pub(crate) async fn detect(url: &str, for_setup: bool) -> Result<Detected, StoreError> {
        let (mut conn, options, target) = connect_first(url).await?;
        let detected = match crate::memory::postgres::detect(&mut conn, &target).await {
            Ok(memory) => detect_schema(&mut conn, &target, memory.is_some())
                .await
                .map(|schema| (schema, memory)),
            Err(e) => Err(e),
        }
        .map_err(|e| e.during(|| "reading which tables the database holds".into()));
        let healthy = !matches!(&detected, Err(e) if e.is_timeout());
        target.close(conn, healthy).await;
        let (schema, memory) = match detected {
            Ok((schema, memory)) => (Ok(schema), memory),
            Err(e) => (Err(e), None),
        };
        let schema = match schema {
            // Missing tables are what setup() creates; tables of an unknown layout stay an
            // error.
            Err(StoreError::UnsupportedSchema { found })
                if for_setup && !found.starts_with(UNKNOWN_LAYOUT) =>
            {
                SchemaInfo {
                    backend: Backend::Postgres,
                    has_task_path: true,
                    migration_version: None,
                    kind: crate::layout::SchemaKind::LangGraph,
                    description: format!("postgres, not set up yet ({found})"),
                    holds: crate::model::Holds::Checkpoints,
                    dialect: crate::Dialect::Python,
                }
            }
            other => other?,
        };
        if schema.kind == crate::layout::SchemaKind::ThreeTable {
            return Ok(Detected::ThreeTable {
                connect: options,
                target,
                schema,
            });
        }
        let pool = pool_with(options, &target);
        let memory =
            memory.map(|m| crate::memory::postgres::PgMemory::new(pool.clone(), target.clone(), m));
        Ok(Detected::LangGraph(PostgresStore {
            pool,
            schema,
            after_setup: std::sync::OnceLock::new(),
            target,
            budget: flashback_codec::DecodeBudget::UNLIMITED,
            key: None,
            memory,
            only: None,
        }))
    }

    /// The same store reading only the blobs of the channels `keep` accepts (see
    /// [`CheckpointStore::get_tuples_selecting`]): a thread list reads the control channels
    /// of many checkpoints and none of their state.
    pub(crate) fn selecting(&self, keep: crate::model::ChannelFilter) -> PostgresStore {
        PostgresStore {
            pool: self.pool.clone(),
            schema: self.info().clone(),
            after_setup: std::sync::OnceLock::new(),
            target: self.target.clone(),
            budget: self.budget,
            key: self.key.clone(),
            memory: None,
            only: Some(keep),
        }
    }

    /// The same store decoding within `budget` (a connected store has none).
    pub fn with_budget(mut self, budget: flashback_codec::DecodeBudget) -> Self {
        self.budget = budget;
        self
    }

    /// The same store with the AES key of a database written with LangGraph's
    /// `EncryptedSerializer`: `+aes` blobs and writes are decrypted on read, and every serde
    /// value it writes is encrypted as Python's serializer would (`msgpack+aes`, …).
    pub fn with_key(mut self, key: Option<Arc<flashback_codec::AesKey>>) -> Self {
        self.key = key;
        self
    }

    /// `column` (a bytea) as selected under the budget: the value itself only when it fits,
    /// else NULL, its length (`big`) and first bytes (`head`, for its kind). Postgres gives a
    /// TOASTed value's length without reading it.
    pub(crate) fn budgeted(&self, column: &str) -> String {
        match self.budget.max_value_bytes {
            0 => format!("{column} AS blob, NULL::int8 AS big, NULL::bytea AS head"),
            n => format!(
                "CASE WHEN octet_length({column}) > {n} THEN NULL ELSE {column} END AS blob, \
                 CASE WHEN octet_length({column}) > {n} THEN octet_length({column})::int8 END AS big, \
                 CASE WHEN octet_length({column}) > {n} THEN substring({column} from 1 for 96) END AS head"
            ),
        }
    }

    /// The current schema (see [`CheckpointStore::schema`]).
    fn info(&self) -> &SchemaInfo {
        self.after_setup.get().unwrap_or(&self.schema)
    }

    /// The memory Store in the database, if it has one.
    pub(crate) fn memory_reader(&self) -> Option<&crate::memory::postgres::PgMemory> {
        self.memory.as_ref()
    }

    /// Where the store is connected, without the password: `user@host:port/database`.
    pub fn target(&self) -> String {
        self.target.describe()
    }

    /// Close the pool's connections (they also close when the store is dropped).
    pub async fn close(&self) {
        self.target.close_pool(&self.pool).await;
    }

    async fn begin(&self) -> Result<sqlx::Transaction<'static, Postgres>, StoreError> {
        self.target.begin(&self.pool, BEGIN_READ_ONLY).await
    }

    fn err(&self, e: sqlx::Error) -> StoreError {
        self.target.error(e, false)
    }

    /// The id expression of a checkpoint row (a column, or the JSON id for the shallow saver).
    fn id_expr(&self) -> &'static str {
        if self.info().shallow() {
            "(checkpoint->>'id')"
        } else {
            "checkpoint_id"
        }
    }
}

impl PostgresStore {
    /// Whether the store's connections are encrypted: TLS, as the server reports one of them
    /// (`pg_stat_ssl`).
    pub async fn encrypted(&self) -> Result<bool, StoreError> {
        let ssl: Option<bool> =
            sqlx::query_scalar("SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()")
                .fetch_optional(self.pool())
                .bounded(&self.target)
                .await?;
        Ok(ssl.unwrap_or(false))
    }
}

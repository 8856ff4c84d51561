//! The three-table store on Postgres: [`ThreeTablePg`] reads it (every read in a `READ ONLY`
//! `REPEATABLE READ` transaction rolled back at the end, as [`crate::postgres::PostgresStore`])
//! (`store.rs`) and writes it ([`crate::CheckpointSaver`] in `write.rs`, maintenance in
//! `maintenance.rs`). Connecting (URL, TLS, redacted errors) is the LangGraph Postgres
//! store's.

use crate::decode::Decoding;
use crate::model::*;
use crate::postgres::sql::{Arg, Sql};
use crate::postgres::target::Target;
use crate::postgres::target::BEGIN_READ_ONLY;
use crate::postgres::{connect_first, pool_with};
use crate::three::{info, ThreeTableOptions};
use crate::StoreError;
use flashback_codec::{AesKey, DecodeBudget};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool};
use sqlx::{Postgres, Row as _};
use std::sync::Arc;

/// The migrations, `(version, statement)`, applied in order by `setup`.
const MIGRATIONS: [(i64, &str); 4] = [
    (
        1,
        include_str!("../../../../../migrations/three-table/postgres/0001_checkpoints.sql"),
    ),
    (
        2,
        include_str!("../../../../../migrations/three-table/postgres/0002_checkpoint_blobs.sql"),
    ),
    (
        3,
        include_str!("../../../../../migrations/three-table/postgres/0003_checkpoint_writes.sql"),
    ),
    (
        4,
        include_str!("../../../../../migrations/three-table/postgres/0004_thread_id_indexes.sql"),
    ),
];
const VERSION_TABLE: &str =
    include_str!("../../../../../migrations/three-table/postgres/0000_three_table_migrations.sql");

mod maint;
mod maintenance;
mod read;
mod retain;
mod store;
mod thread;
mod write;

/// A three-table Postgres database, read and written through a small connection pool.
pub struct ThreeTablePg {
    pub(super) pool: PgPool,
    pub(super) target: Target,
    schema: SchemaInfo,
    after_setup: std::sync::OnceLock<SchemaInfo>,
    pub(super) decoding: Decoding,
    pub(super) options: ThreeTableOptions,
}

/// Whether `checkpoints` (as the `search_path` resolves it) has a column `column`.
async fn has_column(conn: &mut PgConnection, column: &str) -> Result<bool, sqlx::Error> {
    let r = Sql::new(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute \
         WHERE attrelid = to_regclass('checkpoints') AND attname = $1 \
         AND attnum > 0 AND NOT attisdropped) AS found",
    )
    .with(Arg::Text(column.to_owned()))
    .query()
    .fetch_one(&mut *conn)
    .await?;
    r.try_get("found")
}

/// `(three-table, any checkpoints table)` and the highest migration recorded.
async fn probe(conn: &mut PgConnection) -> Result<(bool, bool, Option<i64>), sqlx::Error> {
    let three = has_column(conn, "checkpoint_ns_hash").await?;
    let any = has_column(conn, "thread_id").await?;
    let version = if three {
        let r = Sql::new(info::PG_VERSION)
            .query()
            .fetch_one(&mut *conn)
            .await;
        // A database whose version table cannot be read is still readable.
        r.ok()
            .and_then(|r| r.try_get::<Option<i64>, _>("v").ok().flatten())
    } else {
        None
    };
    Ok((three, any, version))
}

impl ThreeTablePg {
    /// Connect to a database holding the three-table store (an error when it does not).
    pub async fn connect(url: &str, options: ThreeTableOptions) -> Result<Self, StoreError> {
        Self::open(url, options, false).await
    }

    /// Connect to a database that may hold no checkpoint tables yet (call
    /// [`crate::CheckpointSaver::setup`] next); one holding LangGraph's tables is refused.
    pub async fn connect_for_setup(
        url: &str,
        options: ThreeTableOptions,
    ) -> Result<Self, StoreError> {
        Self::open(url, options, true).await
    }

    /// The store in a database LangGraph's detection found it in
    /// ([`crate::postgres::Detected::ThreeTable`]).
    pub(crate) fn from_detected(
        connect: PgConnectOptions,
        target: Target,
        schema: SchemaInfo,
        options: ThreeTableOptions,
    ) -> Self {
        ThreeTablePg {
            pool: pool_with(connect, &target),
            target,
            schema,
            after_setup: std::sync::OnceLock::new(),
            decoding: Decoding::default(),
            options,
        }
    }

    async fn open(
        url: &str,
        options: ThreeTableOptions,
        for_setup: bool,
    ) -> Result<Self, StoreError> {
        let (mut conn, connect, target) = connect_first(url).await?;
        let probed = target
            .wait(probe(&mut conn))
            .await
            .map_err(|e| e.during(|| "reading which tables the database holds".into()));
        let healthy = !matches!(&probed, Err(e) if e.is_timeout());
        target.close(conn, healthy).await;
        let (three, any, version) = probed?;
        if !three && (any || !for_setup) {
            return Err(if any {
                langgraph_tables()
            } else {
                StoreError::UnsupportedSchema {
                    found: format!(
                        "{} does not hold the three-table store (create it with --create)",
                        target.describe()
                    ),
                }
            });
        }
        Ok(ThreeTablePg {
            pool: pool_with(connect, &target),
            target,
            schema: info::postgres(version, three),
            after_setup: std::sync::OnceLock::new(),
            decoding: Decoding::default(),
            options,
        })
    }

    /// What `flashback bridge` opens on a Postgres URL: with `create` and `three`, the store
    /// created or brought up to date; else this store when the database holds it (`three`
    /// without `create` and without the store is an error); `None`: LangGraph's saver is for
    /// it.
    pub async fn open_for(
        url: &str,
        create: bool,
        three: Option<ThreeTableOptions>,
    ) -> Result<Option<Self>, StoreError> {
        if let (Some(options), true) = (three, create) {
            let saver = Self::connect_for_setup(url, options).await?;
            crate::CheckpointSaver::setup(&saver).await?;
            return Ok(Some(saver));
        }
        match Self::connect(url, three.unwrap_or_default()).await {
            Ok(saver) => Ok(Some(saver)),
            Err(StoreError::UnsupportedSchema { .. }) if three.is_none() => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The same store decoding within `budget`.
    pub fn with_budget(mut self, budget: DecodeBudget) -> Self {
        self.decoding.budget = budget;
        self
    }

    /// The same store decrypting `+aes` values with `key` (and encrypting what it writes).
    pub fn with_key(mut self, key: Option<Arc<AesKey>>) -> Self {
        self.decoding.key = key;
        self
    }

    /// Where the store is connected, without the password.
    pub fn target(&self) -> String {
        self.target.describe()
    }

    pub(super) fn key(&self) -> Option<Arc<AesKey>> {
        self.decoding.key.clone()
    }

    pub(super) fn err(&self, e: sqlx::Error) -> StoreError {
        self.target.error(e, false)
    }

    /// Create the tables (or bring them up to date) in one transaction.
    pub(super) async fn setup_tables(&self) -> Result<(), StoreError> {
        self.migrate()
            .await
            .map_err(|e| e.during(|| "creating the three-table store's tables".into()))
    }

    async fn migrate(&self) -> Result<(), StoreError> {
        let t = &self.target;
        let mut tx = t.begin(&self.pool, "BEGIN").await?;
        let lock =
            Sql::new("SELECT pg_advisory_xact_lock(hashtext('flashback three_table setup'))");
        t.wait(lock.query().execute(&mut *tx)).await?;
        let (three, any, _) = t.wait(probe(&mut tx)).await?;
        if any && !three {
            return Err(langgraph_tables());
        }
        t.wait(exec(&mut tx, VERSION_TABLE)).await?;
        let current = Sql::new("SELECT coalesce(max(v), 0)::int8 AS v FROM three_table_migrations");
        let current: i64 = t
            .wait(current.query().fetch_one(&mut *tx))
            .await
            .and_then(|r| r.try_get("v").map_err(|e| self.err(e)))?;
        let zero = "INSERT INTO three_table_migrations (v) VALUES (0) ON CONFLICT DO NOTHING";
        t.wait(exec(&mut tx, zero)).await?;
        let mut version = current;
        for (v, sql) in MIGRATIONS {
            if v > current {
                t.wait(exec(&mut tx, sql)).await?;
                let record = Sql::new("INSERT INTO three_table_migrations (v) VALUES ($1)")
                    .with(Arg::Int(v));
                t.wait(record.query().execute(&mut *tx)).await?;
                version = v;
            }
        }
        t.wait(tx.commit()).await?;
        let _ = self.after_setup.set(info::postgres(Some(version), true));
        Ok(())
    }

    /// A read-only transaction (one snapshot); roll it back at the end.
    pub(super) async fn begin_read(&self) -> Result<Tx, StoreError> {
        self.target.begin(&self.pool, BEGIN_READ_ONLY).await
    }
}

/// The error for a database holding LangGraph's tables.
fn langgraph_tables() -> StoreError {
    StoreError::InvalidInput(
        "the database holds LangGraph's checkpoint tables; the three-table store needs a \
         database of its own"
            .into(),
    )
}

/// Run one DDL statement unprepared.
async fn exec(conn: &mut PgConnection, sql: &str) -> Result<(), sqlx::Error> {
    sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
        .execute(conn)
        .await
        .map(|_| ())
}

/// `Postgres` is named so that the transaction type reads plainly.
pub(super) type Tx = sqlx::Transaction<'static, Postgres>;

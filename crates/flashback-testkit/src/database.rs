//! The per-test databases: [`TestPg`] (dropped with the database, on a helper thread),
//! creating and dropping `fbtest_…` databases, their names, and the sweep of stale ones.

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection as _, PgConnection, PgPool};

use crate::connect::connect;
use crate::skip::env_flag;
use crate::{url, TestkitError, DB_PREFIX};

const DROP_TIMEOUT: Duration = Duration::from_secs(15);
const STALE_AFTER_SECS: u64 = 3600;

/// A fresh database for one test. Dropping it drops the database (best effort).
#[derive(Debug)]
pub struct TestPg {
    url: String,
    database: String,
    admin_url: String,
    keep: bool,
}

impl TestPg {
    /// The database's URL (`postgresql://…/fbtest_…`).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The database's name.
    pub fn database(&self) -> &str {
        &self.database
    }

    /// Opens a new connection to the database.
    pub async fn connect(&self) -> Result<PgConnection, TestkitError> {
        connect(&self.url).await
    }

    /// Opens a connection pool on the database (sqlx defaults).
    pub async fn pool(&self) -> Result<PgPool, TestkitError> {
        PgPool::connect(&self.url)
            .await
            .map_err(|e| TestkitError::sql(format!("connecting a pool to {}", self.database), e))
    }

    /// Keeps the database after the test (it is not dropped); returns its URL.
    pub fn keep(mut self) -> String {
        self.keep = true;
        self.url.clone()
    }
}

impl Drop for TestPg {
    fn drop(&mut self) {
        if self.keep || env_flag("FLASHBACK_TEST_PG_KEEP") || std::thread::panicking() {
            let _ = writeln!(
                std::io::stderr(),
                "flashback-testkit: kept test database {}",
                url::redact(&self.url)
            );
            return;
        }
        // Dropping needs async I/O but `drop` is sync and may run inside the test's runtime:
        // do it on a helper thread with its own small runtime, waiting a bounded time.
        let admin_url = self.admin_url.clone();
        let database = self.database.clone();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("fbtest-dropdb".into())
            .spawn(move || {
                let result = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime.block_on(drop_database(&admin_url, &database)),
                    Err(e) => Err(TestkitError::Other(format!("no runtime: {e}"))),
                };
                let _ = done_tx.send(result);
            });
        if spawned.is_err() {
            return;
        }
        let problem = match done_rx.recv_timeout(DROP_TIMEOUT) {
            Ok(Ok(())) => return,
            Ok(Err(e)) => e.to_string(),
            Err(_) => format!("timed out after {DROP_TIMEOUT:?}"),
        };
        let _ = writeln!(
            std::io::stderr(),
            "flashback-testkit: could not drop test database {}: {problem}",
            self.database
        );
    }
}

pub(crate) fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

pub(crate) fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

pub(crate) fn new_database_name() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    use std::hash::{BuildHasher as _, Hasher as _};
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(n);
    let random = hasher.finish() & 0xff_ffff;
    format!(
        "{DB_PREFIX}{}_{}_{n}_{random:06x}",
        unix_now(),
        std::process::id()
    )
}

/// The creation time (unix seconds) encoded in a testkit database name.
pub(crate) fn database_created_at(name: &str) -> Option<u64> {
    name.strip_prefix(DB_PREFIX)?
        .split('_')
        .next()?
        .parse()
        .ok()
}

pub(crate) async fn create_database(admin_url: &str) -> Result<TestPg, TestkitError> {
    let database = new_database_name();
    let url = url::with_database(admin_url, &database).map_err(TestkitError::Other)?;
    let mut conn = connect(admin_url).await?;
    let statement = format!(
        "CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'",
        quote_ident(&database)
    );
    sqlx::raw_sql(AssertSqlSafe(statement))
        .execute(&mut conn)
        .await
        .map_err(|e| TestkitError::sql(format!("creating database {database}"), e))?;
    let _ = conn.close().await;
    Ok(TestPg {
        url,
        database,
        admin_url: admin_url.to_owned(),
        keep: false,
    })
}

async fn drop_database(admin_url: &str, database: &str) -> Result<(), TestkitError> {
    let mut conn = connect(admin_url).await?;
    let name = quote_ident(database);
    // WITH (FORCE) needs PostgreSQL 13; older servers get terminate + plain DROP.
    let forced = sqlx::raw_sql(AssertSqlSafe(format!(
        "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
    )))
    .execute(&mut conn)
    .await;
    if forced.is_err() {
        sqlx::query(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> pg_backend_pid()",
        )
        .bind(database)
        .execute(&mut conn)
        .await
        .map_err(|e| TestkitError::sql(format!("disconnecting {database}"), e))?;
        sqlx::raw_sql(AssertSqlSafe(format!("DROP DATABASE IF EXISTS {name}")))
            .execute(&mut conn)
            .await
            .map_err(|e| TestkitError::sql(format!("dropping {database}"), e))?;
    }
    let _ = conn.close().await;
    Ok(())
}

/// Drops `fbtest_…` databases created more than an hour ago (by killed or kept runs).
pub(crate) async fn drop_stale_databases(admin_url: &str) {
    let Ok(mut conn) = connect(admin_url).await else {
        return;
    };
    let names: Vec<String> =
        sqlx::query_scalar("SELECT datname FROM pg_database WHERE datname LIKE 'fbtest\\_%'")
            .fetch_all(&mut conn)
            .await
            .unwrap_or_default();
    let _ = conn.close().await;
    let now = unix_now();
    for name in names {
        let stale = database_created_at(&name)
            .is_some_and(|created| now.saturating_sub(created) > STALE_AFTER_SECS);
        if stale {
            let _ = drop_database(admin_url, &name).await;
        }
    }
}

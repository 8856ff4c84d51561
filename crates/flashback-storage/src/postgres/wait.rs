//! Waiting on a Postgres server within a location's [`Limits`]: the pool, each network step
//! of a [`Target`] ([`Target::wait`], [`Bounded`]) and a new connection's set-up.

use super::limits::{Limits, NO_LIMIT};
use super::target::Target;
use crate::StoreError;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection as _, Executor as _};
use std::future::Future;
use std::time::Duration;

/// Connections in a pool.
const MAX_CONNECTIONS: u32 = 4;

impl Limits {
    /// Set up a new connection (the server's own limit), within the connect limit.
    pub(crate) async fn prepare(
        &self,
        conn: &mut PgConnection,
        target: &Target,
    ) -> Result<(), StoreError> {
        let Some(sql) = self.session_sql() else {
            return Ok(());
        };
        let set = conn.execute(sqlx::AssertSqlSafe(sql));
        match within(self.connect, set).await {
            Some(done) => done.map(|_| ()).map_err(|e| target.error(e, true)),
            None => Err(target.timed_out(self.connect.unwrap_or(NO_LIMIT))),
        }
    }
}

/// `step`'s output, or `None` when `limit` passed first.
pub(super) async fn within<T>(limit: Option<Duration>, step: impl Future<Output = T>) -> Option<T> {
    match limit {
        Some(limit) => tokio::time::timeout(limit, step).await.ok(),
        None => Some(step.await),
    }
}

/// The small lazy pool every Postgres store reads and writes through: connecting (and
/// waiting for a connection) within the connect limit, each new connection given the
/// statement limit, and a released connection pinged within it before it is reused.
pub(crate) fn pool_with(options: PgConnectOptions, target: &Target) -> PgPool {
    let limits = target.limits();
    let session = limits.session_sql();
    let statement = limits.statement;
    PgPoolOptions::new()
        .max_connections(MAX_CONNECTIONS)
        .min_connections(0)
        .acquire_timeout(limits.connect.unwrap_or(NO_LIMIT))
        .idle_timeout(Some(Duration::from_secs(120)))
        .after_connect(move |conn, _| {
            let session = session.clone();
            Box::pin(async move {
                if let Some(sql) = session {
                    conn.execute(sqlx::AssertSqlSafe(sql)).await?;
                }
                Ok(())
            })
        })
        .after_release(move |conn, _| {
            Box::pin(async move {
                // A connection left mid-statement (its wait timed out) answers once the server
                // has finished; one that does not answer is closed, not reused.
                match within(statement, conn.ping()).await {
                    Some(Ok(())) => Ok(true),
                    Some(Err(e)) => Err(e),
                    None => Err(sqlx::Error::PoolTimedOut),
                }
            })
        })
        .connect_lazy_with(options)
}

impl Target {
    /// Await one network step (a query, BEGIN, COMMIT, ROLLBACK, closing) within the
    /// statement limit, its driver error mapped. Past the limit: [`StoreError::Timeout`]
    /// (the step is dropped; a pooled connection is then checked before reuse).
    pub(crate) async fn wait<T>(
        &self,
        step: impl Future<Output = Result<T, sqlx::Error>>,
    ) -> Result<T, StoreError> {
        let limit = self.limits().statement;
        self.wait_for(limit, limit, step).await
    }

    /// A maintenance statement on `bytes` of tables (`VACUUM ANALYZE`), which is slow by
    /// nature, not stalled: run on `conn` with the server's and the client's limit raised to
    /// [`maintenance_limit`] for it (none when the location's statement limit is off), then
    /// set back.
    pub(crate) async fn wait_maintenance(
        &self,
        conn: &mut PgConnection,
        bytes: u64,
        sql: &str,
    ) -> Result<(), StoreError> {
        // The statement is ours (VACUUM, an index of the catalogue in `indexes`).
        let raw = || sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()));
        let Some(limit) = self.limits().statement.map(|s| maintenance_limit(s, bytes)) else {
            return self.wait(raw().execute(&mut *conn)).await.map(drop);
        };
        // Numbers only: the text is ours.
        let set = format!("SET statement_timeout = {}", limit.as_millis());
        self.wait(conn.execute(sqlx::AssertSqlSafe(set))).await?;
        let done = self
            .wait_for(Some(limit), Some(limit), raw().execute(&mut *conn))
            .await;
        // Back to the location's limit (`RESET` gives the startup options' value, if any).
        let back = match self.limits().session_sql() {
            Some(again) => again,
            None => "RESET statement_timeout".to_owned(),
        };
        self.wait(conn.execute(sqlx::AssertSqlSafe(back))).await?;
        done.map(drop)
    }

    /// The next row of a streamed query (`next` polls the stream once through), within the
    /// statement limit.
    pub(crate) async fn wait_row<T>(
        &self,
        next: impl Future<Output = Option<Result<T, sqlx::Error>>>,
    ) -> Result<Option<T>, StoreError> {
        self.wait(async { next.await.transpose() }).await
    }

    /// A pooled connection (opened if need be, within the connect limit) in a transaction
    /// begun with `begin` (`BEGIN`, or a read-only one), BEGIN within the statement limit.
    pub(crate) async fn begin(
        &self,
        pool: &PgPool,
        begin: &'static str,
    ) -> Result<sqlx::Transaction<'static, sqlx::Postgres>, StoreError> {
        // Past the outer limit the connection was had in time (sqlx's own limit did not
        // fire): BEGIN is what did not answer.
        let limits = self.limits();
        self.wait_for(limits.acquiring(), limits.statement, pool.begin_with(begin))
            .await
    }

    /// A pooled connection (opened if need be), within the connect and statement limits.
    pub(crate) async fn acquire(
        &self,
        pool: &PgPool,
    ) -> Result<sqlx::pool::PoolConnection<sqlx::Postgres>, StoreError> {
        let limits = self.limits();
        self.wait_for(limits.acquiring(), limits.connect, pool.acquire())
            .await
    }

    /// End a read: roll its transaction back, within the statement limit. (After an error
    /// drop the transaction instead: it is rolled back before the connection is reused.)
    pub(crate) async fn end_read(&self, tx: sqlx::Transaction<'_, sqlx::Postgres>) {
        let _ = self.wait(tx.rollback()).await;
    }

    /// Close a connection of its own: politely (within the statement limit) when it is
    /// `healthy`, else at once (a stalled server would hold a polite close too).
    pub(crate) async fn close(&self, conn: PgConnection, healthy: bool) {
        if healthy {
            let _ = self.wait(conn.close()).await;
        }
    }

    /// Close a pool: wait for its connections within the statement limit.
    pub(crate) async fn close_pool(&self, pool: &PgPool) {
        let _ = within(self.limits().statement, pool.close()).await;
    }

    /// [`Target::wait`] with `limit` instead of the statement limit; past it, the error
    /// says `reported` passed.
    async fn wait_for<T>(
        &self,
        limit: Option<Duration>,
        reported: Option<Duration>,
        step: impl Future<Output = Result<T, sqlx::Error>>,
    ) -> Result<T, StoreError> {
        match within(limit, step).await {
            Some(done) => done.map_err(|e| self.error(e, false)),
            None => Err(self.timed_out(reported.or(limit).unwrap_or(NO_LIMIT))),
        }
    }

    /// [`StoreError::Timeout`] after `after`, naming the server.
    pub(crate) fn timed_out(&self, after: Duration) -> StoreError {
        StoreError::Timeout {
            server: self.place(),
            after,
            during: None,
        }
    }
}

/// How fast `VACUUM ANALYZE` is assumed to go through its tables at the slowest (a cold,
/// busy server); its limit allows twice the time this gives.
const MAINTENANCE_BYTES_PER_SEC: u64 = 20_000_000;

/// The limit of a maintenance statement on `bytes` of tables: the statement limit, or twice
/// the time [`MAINTENANCE_BYTES_PER_SEC`] gives when that is longer.
pub(crate) fn maintenance_limit(statement: Duration, bytes: u64) -> Duration {
    let slow = Duration::from_secs(2 * bytes.div_ceil(MAINTENANCE_BYTES_PER_SEC));
    statement.max(slow)
}

/// A network step (a sqlx future) awaited within the statement limit: `query.fetch_all(conn)
/// .bounded(&target).await?` is [`Target::wait`].
pub(crate) trait Bounded<T>: Future<Output = Result<T, sqlx::Error>> + Sized {
    fn bounded(self, target: &Target) -> impl Future<Output = Result<T, StoreError>> + Send
    where
        Self: Send,
        T: Send,
    {
        target.wait(self)
    }
}

impl<T, F: Future<Output = Result<T, sqlx::Error>>> Bounded<T> for F {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maintenance_gets_the_time_its_tables_take() {
        let s = Duration::from_secs(30);
        assert_eq!(maintenance_limit(s, 0), s);
        assert_eq!(maintenance_limit(s, 100_000_000), s);
        assert_eq!(
            maintenance_limit(s, 10_000_000_000),
            Duration::from_secs(1_000)
        );
    }

    /// Every connection of a store has the statement limit on the server: the first one and
    /// the pool's (SET by Flashback), or the URL's own (a startup parameter).
    #[tokio::test]
    async fn connections_carry_the_statement_limit() {
        let Some(pg) = flashback_testkit::postgres_or_skip().await else {
            return;
        };
        let sep = if pg.url().contains('?') { '&' } else { '?' };
        let given = format!("{}{sep}options=-c%20statement_timeout%3D2min", pg.url());
        for (url, want) in [(pg.url(), "30s"), (given.as_str(), "2min")] {
            let show = || sqlx::query_scalar::<_, String>("SHOW statement_timeout");
            let (mut first, options, target) = super::super::connect_first(url).await.unwrap();
            assert_eq!(show().fetch_one(&mut first).await.unwrap(), want);
            let pool = pool_with(options, &target);
            let mut pooled = target.acquire(&pool).await.unwrap();
            assert_eq!(show().fetch_one(&mut *pooled).await.unwrap(), want, "{url}");
        }
    }
}

//! How long Flashback waits for a Postgres server: never without end.
//!
//! ```text
//!  connecting        libpq's connect_timeout=<seconds> in the URL (or PGCONNECT_TIMEOUT);
//!                    default 10 s. Also bounds waiting for a pooled connection.
//!  each statement    statement_timeout in libpq's options (options=-c%20statement_timeout%3D5s
//!                    in the URL, or PGOPTIONS); default 30 s, then set on every connection
//!                    with SET (no startup parameter, which poolers may refuse). Two layers:
//!                    the server cancels a slow statement itself, and every network wait of
//!                    Flashback's (a query, a fetched row, BEGIN/COMMIT/ROLLBACK) has the same
//!                    deadline on the client, for a stalled server, network or proxy that
//!                    never delivers the server's answer.
//! ```
//!
//! `0` turns a limit off, as in libpq and Postgres. A wait that passes its limit is
//! [`StoreError::Timeout`]: one line naming the server and what was being read. A pooled
//! connection whose wait timed out is never handed out again mid-protocol: before a released
//! connection goes back to the pool it must answer a ping within the statement limit, else
//! it is closed (`after_release`).

use super::target::Target;
use crate::pgurl::{percent_decode_lossy, PgUrl};
use crate::StoreError;
use sqlx::postgres::{PgConnectOptions, PgConnection, PgPool, PgPoolOptions};
use sqlx::{Connection as _, Executor as _};
use std::future::Future;
use std::time::Duration;

/// Connections in a pool.
const MAX_CONNECTIONS: u32 = 4;
/// How long connecting may take when the URL does not say (`connect_timeout`).
pub(crate) const DEFAULT_CONNECT: Duration = Duration::from_secs(10);
/// How long one statement may take when the URL does not say (`statement_timeout`).
pub(crate) const DEFAULT_STATEMENT: Duration = Duration::from_secs(30);
/// What sqlx is given for a limit that is off (it needs a duration).
pub(super) const NO_LIMIT: Duration = Duration::from_secs(365 * 24 * 3600);

/// The time limits of one location; `None`: off (`0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Limits {
    /// Connecting, and waiting for a pooled connection.
    pub(crate) connect: Option<Duration>,
    /// Each statement, and each network wait on the client.
    pub(crate) statement: Option<Duration>,
    /// The server has `statement_timeout` from the startup `options` already.
    given: bool,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            connect: Some(DEFAULT_CONNECT),
            statement: Some(DEFAULT_STATEMENT),
            given: false,
        }
    }
}

impl Limits {
    /// The limits of `url` as sqlx parsed it into `options` (whose `options` string holds the
    /// URL's and `PGOPTIONS`'s server settings). Errors are one line.
    pub(crate) fn read(url: &str, options: &PgConnectOptions) -> Result<Limits, String> {
        let mut limits = Limits::default();
        let from_url = PgUrl::parse_lenient(url)
            .query_values("connect_timeout")
            .last()
            .map(percent_decode_lossy);
        if let Some(text) = from_url.or_else(|| std::env::var("PGCONNECT_TIMEOUT").ok()) {
            let seconds: i64 = text.trim().parse().map_err(|_| {
                format!("invalid connect_timeout {text:?}: give whole seconds (0: no limit)")
            })?;
            limits.connect = u64::try_from(seconds)
                .ok()
                .filter(|&s| s > 0)
                .map(Duration::from_secs);
        }
        if let Some(text) = options
            .get_options()
            .and_then(|o| setting(o, "statement_timeout"))
        {
            let ms = milliseconds(&text).ok_or_else(|| {
                format!(
                    "invalid statement_timeout {text:?} in the connection options: give a \
                     duration such as 30s, 500ms or 2min (0: no limit)"
                )
            })?;
            limits.statement = (ms > 0).then(|| Duration::from_millis(ms));
            limits.given = true;
        }
        Ok(limits)
    }

    /// Getting a pooled connection and beginning on it: the connect limit (a new connection
    /// is opened and given the statement limit within it) plus the statement limit.
    fn acquiring(&self) -> Option<Duration> {
        Some(self.connect? + self.statement?)
    }

    /// What a new connection runs first: `SET statement_timeout` unless the server has it.
    fn session_sql(&self) -> Option<String> {
        match (self.given, self.statement) {
            (false, Some(limit)) => Some(format!("SET statement_timeout = {}", limit.as_millis())),
            _ => None,
        }
    }

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
        sql: &'static str,
    ) -> Result<(), StoreError> {
        let Some(limit) = self.limits().statement.map(|s| maintenance_limit(s, bytes)) else {
            return self
                .wait(sqlx::raw_sql(sql).execute(&mut *conn))
                .await
                .map(drop);
        };
        // Numbers only: the text is ours.
        let set = format!("SET statement_timeout = {}", limit.as_millis());
        self.wait(conn.execute(sqlx::AssertSqlSafe(set))).await?;
        let done = self
            .wait_for(
                Some(limit),
                Some(limit),
                sqlx::raw_sql(sql).execute(&mut *conn),
            )
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

/// The value of the server setting `name` in a startup `options` string as Postgres reads it
/// (words split at white space, `\` escaping the next character; `-c name=value`,
/// `-cname=value` or `--name=value`, `-` in a name read as `_`; the last one wins).
fn setting(options: &str, name: &str) -> Option<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut chars = options.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => word.extend(chars.next()),
            c if c.is_whitespace() => {
                if !word.is_empty() {
                    words.push(std::mem::take(&mut word));
                }
            }
            c => word.push(c),
        }
    }
    if !word.is_empty() {
        words.push(word);
    }
    let mut found = None;
    let mut words = words.into_iter();
    while let Some(word) = words.next() {
        let assignment = if word == "-c" {
            words.next()
        } else if let Some(rest) = word.strip_prefix("--") {
            Some(rest.to_owned())
        } else {
            word.strip_prefix("-c").map(str::to_owned)
        };
        if let Some((key, value)) = assignment.as_deref().and_then(|a| a.split_once('=')) {
            if key.replace('-', "_").eq_ignore_ascii_case(name) {
                found = Some(value.to_owned());
            }
        }
    }
    found
}

/// A time setting in milliseconds, as Postgres reads `statement_timeout`: a number with an
/// optional unit (`us`, `ms` — the default —, `s`, `min`, `h`, `d`), rounded.
fn milliseconds(text: &str) -> Option<u64> {
    let text = text.trim();
    let end = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(end);
    let number: f64 = number.parse().ok()?;
    let factor = match unit.trim() {
        "" | "ms" => 1.0,
        "us" => 0.001,
        "s" => 1e3,
        "min" => 6e4,
        "h" => 3.6e6,
        "d" => 8.64e7,
        _ => return None,
    };
    let ms = (number * factor).round();
    (ms.is_finite() && (0.0..=f64::from(i32::MAX)).contains(&ms)).then_some(ms as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr as _;

    fn limits(url: &str) -> Result<Limits, String> {
        let options = PgConnectOptions::from_str(url).map_err(|e| e.to_string())?;
        Limits::read(url, &options)
    }

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

    #[test]
    fn defaults_and_libpq_settings() {
        let none = limits("postgres://u@h/db?sslmode=disable").unwrap();
        assert_eq!(none, Limits::default());
        assert_eq!(
            none.session_sql().as_deref(),
            Some("SET statement_timeout = 30000")
        );
        let set = limits("postgres://u@h/db?connect_timeout=1&options=-c%20statement_timeout%3D5s")
            .unwrap();
        assert_eq!(set.connect, Some(Duration::from_secs(1)));
        assert_eq!(set.statement, Some(Duration::from_secs(5)));
        // The server has it from the startup options: no SET.
        assert_eq!(set.session_sql(), None);
        let off =
            limits("postgres://h/db?connect_timeout=0&options=--statement-timeout%3D0").unwrap();
        assert_eq!((off.connect, off.statement), (None, None));
        assert!(limits("postgres://h/db?connect_timeout=ten")
            .unwrap_err()
            .contains("connect_timeout \"ten\""));
        assert!(
            limits("postgres://h/db?options=-c%20statement_timeout%3Dsoon")
                .unwrap_err()
                .contains("statement_timeout \"soon\"")
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

    #[test]
    fn server_options_are_read_as_postgres_reads_them() {
        let get = |o: &str| setting(o, "statement_timeout");
        assert_eq!(get("-c statement_timeout=5s").as_deref(), Some("5s"));
        assert_eq!(get("-cstatement_timeout=5s").as_deref(), Some("5s"));
        assert_eq!(get("--statement-timeout=7").as_deref(), Some("7"));
        assert_eq!(
            get("-c search_path=a\\ b -c Statement_Timeout=1min -c statement_timeout=2min")
                .as_deref(),
            Some("2min")
        );
        assert_eq!(get("-c search_path=statement_timeout=1"), None);
        assert_eq!(get("-c"), None);
        assert_eq!(milliseconds("250"), Some(250));
        assert_eq!(milliseconds("1.5s"), Some(1500));
        assert_eq!(milliseconds("2min"), Some(120_000));
        assert_eq!(milliseconds("1h"), Some(3_600_000));
        assert_eq!(milliseconds("1500us"), Some(2));
        assert_eq!(milliseconds("0"), Some(0));
        assert_eq!(milliseconds("-1"), None);
        assert_eq!(milliseconds("5 years"), None);
        assert_eq!(milliseconds("100d"), None);
    }
}

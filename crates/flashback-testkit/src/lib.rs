//! Test support for Flashback: a fresh PostgreSQL database per test.
//!
//! Use it as a dev-dependency only.
//!
//! ```no_run
//! # async fn example() {
//! // Skips the test (with a line on stderr) when no PostgreSQL can be had, unless
//! // CI=true or FLASHBACK_REQUIRE_PG=1, in which case it panics with the reason.
//! let pg = flashback_testkit::pg_or_skip!();
//! let mut conn = pg.connect().await.unwrap();
//! sqlx::raw_sql("CREATE TABLE t (x int)").execute(&mut conn).await.unwrap();
//! flashback_testkit::load_sql_dump(pg.url(), "INSERT INTO t VALUES (1); INSERT INTO t VALUES (2);")
//!     .await
//!     .unwrap();
//! # }
//! ```
//!
//! # Where the server comes from
//!
//! Found once per test process, by [`postgres`] (the first call), in this order:
//!
//! 1. `FLASHBACK_TEST_PG`, a `postgres://` URL of a server where the role may create
//!    databases. When it is set, nothing else is tried. The special value `throwaway` skips
//!    straight to step 3.
//! 2. `postgresql://postgres@127.0.0.1:5432/postgres`, if it answers and the role may create
//!    databases.
//! 3. A throwaway cluster ([`cluster::Cluster`]) started with `initdb` and `pg_ctl` from
//!    `$FLASHBACK_PG_BINDIR`, `PATH`, `/usr/lib/postgresql/*/bin`, `/usr/local/bin` or
//!    `/usr/local/pgsql/bin`, in a temp dir on a free port; it is stopped and removed when the
//!    test process exits.
//!
//! If none works, [`postgres`] returns [`TestkitError::Unavailable`] naming what was tried
//! (the outcome is cached, so later calls fail fast with the same reason).
//!
//! # Databases
//!
//! Each [`postgres`] call creates a new database named
//! `fbtest_<unix seconds>_<pid>_<counter>_<random>` (UTF-8, locale C, from `template0`) and
//! returns a [`TestPg`] for it. Dropping the [`TestPg`] drops the database (on a helper thread,
//! waiting at most a few seconds). It is kept instead, and its URL printed, when the test is
//! panicking or when `FLASHBACK_TEST_PG_KEEP=1`. Databases named `fbtest_…` that are older
//! than an hour are dropped when a test process first finds the server, so leftovers of
//! killed runs go away on their own.

pub mod cluster;
mod url;

use std::io::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use sqlx::{AssertSqlSafe, Connection as _, PgConnection, PgPool};
use tokio::sync::OnceCell;

/// The server tried second, when `FLASHBACK_TEST_PG` is not set.
pub const DEFAULT_URL: &str = "postgresql://postgres@127.0.0.1:5432/postgres";

/// Prefix of every database the testkit creates.
pub const DB_PREFIX: &str = "fbtest_";

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
const DROP_TIMEOUT: Duration = Duration::from_secs(15);
const STALE_AFTER_SECS: u64 = 3600;

/// Errors of the testkit.
#[derive(Debug, thiserror::Error)]
pub enum TestkitError {
    /// No PostgreSQL server could be found or started; the text says what was tried.
    #[error("no PostgreSQL server for tests: {0}")]
    Unavailable(String),
    /// A server was found, but a statement or connection failed.
    #[error("{context}: {source}")]
    Sql {
        /// What the testkit was doing.
        context: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// Anything else (e.g. a malformed URL or an unsupported dump).
    #[error("{0}")]
    Other(String),
}

impl TestkitError {
    fn sql(context: impl Into<String>, source: sqlx::Error) -> Self {
        TestkitError::Sql {
            context: context.into(),
            source,
        }
    }
}

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

/// Returns a fresh, empty database on a PostgreSQL server found as described in the crate
/// docs. Fails with [`TestkitError::Unavailable`] when there is no server.
pub async fn postgres() -> Result<TestPg, TestkitError> {
    static SERVER: OnceCell<Result<Server, String>> = OnceCell::const_new();
    let server = SERVER
        .get_or_init(|| async {
            let env_url = std::env::var("FLASHBACK_TEST_PG")
                .ok()
                .filter(|v| !v.trim().is_empty());
            find_server(env_url.as_deref()).await
        })
        .await;
    match server {
        Ok(server) => create_database(&server.admin_url).await,
        Err(reason) => Err(TestkitError::Unavailable(reason.clone())),
    }
}

/// Like [`postgres`], but when PostgreSQL is unavailable and not required (see
/// [`require_postgres`]) prints `skipping <test>: no PostgreSQL (…)` to stderr and returns
/// `None`. Panics when it is required, and on any other error.
pub async fn postgres_or_skip() -> Option<TestPg> {
    match postgres().await {
        Ok(pg) => Some(pg),
        Err(err) => match verdict(&err, require_postgres()) {
            Verdict::Skip(line) => {
                // Written to the stderr handle directly so that libtest does not capture it.
                let _ = writeln!(std::io::stderr(), "{line}");
                None
            }
            Verdict::Fail(message) => panic!("{message}"),
        },
    }
}

/// Gets a [`TestPg`] or skips the test: `let pg = pg_or_skip!();` returns from the enclosing
/// function (a test returning `()`) when PostgreSQL is unavailable and not required, and
/// panics when it is required. For tests returning a value, give it: `pg_or_skip!(Ok(()))`.
#[macro_export]
macro_rules! pg_or_skip {
    () => {
        match $crate::postgres_or_skip().await {
            ::std::option::Option::Some(pg) => pg,
            ::std::option::Option::None => return,
        }
    };
    ($ret:expr) => {
        match $crate::postgres_or_skip().await {
            ::std::option::Option::Some(pg) => pg,
            ::std::option::Option::None => return $ret,
        }
    };
}

/// Whether tests must fail rather than skip when PostgreSQL is unavailable: true when `CI`
/// is `true` (or `1`), or `FLASHBACK_REQUIRE_PG` is `1` (or `true`). `FLASHBACK_REQUIRE_PG=0`
/// turns it off even on CI.
pub fn require_postgres() -> bool {
    require_postgres_from(
        std::env::var("CI").ok().as_deref(),
        std::env::var("FLASHBACK_REQUIRE_PG").ok().as_deref(),
    )
}

fn require_postgres_from(ci: Option<&str>, require_pg: Option<&str>) -> bool {
    match require_pg.map(str::trim) {
        Some(v) if is_true(v) => true,
        Some(v) if v == "0" || v.eq_ignore_ascii_case("false") => false,
        _ => ci.map(str::trim).is_some_and(is_true),
    }
}

fn is_true(v: &str) -> bool {
    v == "1" || v.eq_ignore_ascii_case("true")
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| is_true(v.trim()))
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    Skip(String),
    Fail(String),
}

fn verdict(err: &TestkitError, required: bool) -> Verdict {
    match err {
        TestkitError::Unavailable(reason) if !required => {
            let test = std::thread::current()
                .name()
                .map(|n| format!(" {n}"))
                .unwrap_or_default();
            Verdict::Skip(format!("skipping{test}: no PostgreSQL ({reason})"))
        }
        TestkitError::Unavailable(reason) => Verdict::Fail(format!(
            "PostgreSQL is required (CI=true or FLASHBACK_REQUIRE_PG=1) but unavailable: {reason}"
        )),
        other => Verdict::Fail(format!("PostgreSQL test setup failed: {other}")),
    }
}

/// Executes a plain SQL script (e.g. `pg_dump --inserts` output) on `url` as one
/// multi-statement simple query, on its own connection. psql's `\restrict`/`\unrestrict`
/// lines (written by recent pg_dump) are dropped; other backslash meta-commands and
/// `COPY … FROM stdin` data are not supported (dump with `--inserts`).
pub async fn load_sql_dump(url: &str, sql: &str) -> Result<(), TestkitError> {
    let script = prepare_dump(sql)?;
    let mut conn = connect(url).await?;
    sqlx::raw_sql(AssertSqlSafe(script))
        .execute(&mut conn)
        .await
        .map_err(|e| TestkitError::sql("loading SQL dump", e))?;
    let _ = conn.close().await;
    Ok(())
}

fn prepare_dump(sql: &str) -> Result<String, TestkitError> {
    let mut out = String::with_capacity(sql.len());
    for line in sql.lines() {
        let trimmed = line.trim_end();
        if trimmed.starts_with("\\restrict ") || trimmed.starts_with("\\unrestrict ") {
            continue;
        }
        if trimmed.starts_with("\\connect ") || trimmed.starts_with("\\c ") {
            return Err(TestkitError::Other(
                "SQL dump switches databases (\\connect); dump one database without -C".into(),
            ));
        }
        if trimmed.starts_with("COPY ") && trimmed.ends_with("FROM stdin;") {
            return Err(TestkitError::Other(
                "SQL dump uses COPY … FROM stdin; make it with pg_dump --inserts".into(),
            ));
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

/// The server found for this process. The cluster (if any) is kept alive by being here.
struct Server {
    admin_url: String,
    _cluster: Option<cluster::Cluster>,
}

/// Finds a server: `env_url` (the value of `FLASHBACK_TEST_PG`) if given, else the default
/// URL, else a throwaway cluster. The error lists every attempt.
async fn find_server(env_url: Option<&str>) -> Result<Server, String> {
    let mut tried: Vec<String> = Vec::new();
    match env_url {
        Some(v) if v.trim() == "throwaway" => {
            tried.push("FLASHBACK_TEST_PG=throwaway: skipped the default server".into());
        }
        Some(url) => {
            return match probe(url).await {
                Ok(()) => {
                    drop_stale_databases(url).await;
                    Ok(Server {
                        admin_url: url.to_owned(),
                        _cluster: None,
                    })
                }
                Err(e) => Err(format!(
                    "FLASHBACK_TEST_PG={}: {e} (nothing else is tried when FLASHBACK_TEST_PG is set)",
                    url::redact(url)
                )),
            };
        }
        None => match probe(DEFAULT_URL).await {
            Ok(()) => {
                drop_stale_databases(DEFAULT_URL).await;
                return Ok(Server {
                    admin_url: DEFAULT_URL.to_owned(),
                    _cluster: None,
                });
            }
            Err(e) => tried.push(format!("{DEFAULT_URL}: {e}")),
        },
    }
    let started = tokio::task::spawn_blocking(cluster::Cluster::start)
        .await
        .map_err(|e| format!("throwaway cluster: start panicked: {e}"))
        .and_then(|r| r.map_err(|e| format!("throwaway cluster: {e}")));
    match started {
        Ok(cluster) => {
            let admin_url = cluster.admin_url();
            match probe(&admin_url).await {
                Ok(()) => Ok(Server {
                    admin_url,
                    _cluster: Some(cluster),
                }),
                Err(e) => {
                    tried.push(format!("throwaway cluster at {admin_url}: {e}"));
                    Err(tried.join("; "))
                }
            }
        }
        Err(e) => {
            tried.push(e);
            tried.push(
                "set FLASHBACK_TEST_PG to a postgres:// URL, or install PostgreSQL \
                 (Debian: apt-get install postgresql)"
                    .into(),
            );
            Err(tried.join("; "))
        }
    }
}

/// Connects and checks that the role may create databases.
async fn probe(url: &str) -> Result<(), String> {
    let mut conn = connect(url).await.map_err(|e| e.to_string())?;
    let may_create: Option<bool> = sqlx::query_scalar(
        "SELECT rolsuper OR rolcreatedb FROM pg_roles WHERE rolname = current_user",
    )
    .fetch_optional(&mut conn)
    .await
    .map_err(|e| format!("checking the role: {e}"))?;
    let _ = conn.close().await;
    if may_create == Some(true) {
        Ok(())
    } else {
        Err("the role may not create databases (needs CREATEDB or superuser)".into())
    }
}

async fn connect(url: &str) -> Result<PgConnection, TestkitError> {
    let what = url::redact(url);
    match tokio::time::timeout(CONNECT_TIMEOUT, PgConnection::connect(url)).await {
        Ok(Ok(conn)) => Ok(conn),
        Ok(Err(e)) => Err(TestkitError::sql(format!("connecting to {what}"), e)),
        Err(_) => Err(TestkitError::Other(format!(
            "connecting to {what}: timed out after {CONNECT_TIMEOUT:?}"
        ))),
    }
}

fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

fn new_database_name() -> String {
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
fn database_created_at(name: &str) -> Option<u64> {
    name.strip_prefix(DB_PREFIX)?
        .split('_')
        .next()?
        .parse()
        .ok()
}

async fn create_database(admin_url: &str) -> Result<TestPg, TestkitError> {
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
async fn drop_stale_databases(admin_url: &str) {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn require_postgres_reads_ci_and_override() {
        assert!(!require_postgres_from(None, None));
        assert!(require_postgres_from(Some("true"), None));
        assert!(require_postgres_from(Some("TRUE"), None));
        assert!(require_postgres_from(Some("1"), None));
        assert!(!require_postgres_from(Some("false"), None));
        assert!(!require_postgres_from(Some(""), None));
        assert!(require_postgres_from(None, Some("1")));
        assert!(require_postgres_from(Some("false"), Some("1")));
        assert!(!require_postgres_from(Some("true"), Some("0")));
        assert!(require_postgres_from(Some("true"), Some("")));
    }

    #[tokio::test]
    async fn bogus_env_url_is_unavailable_and_skips_or_fails() {
        // Port 1 on loopback refuses connections; nothing else may be tried.
        let bogus = "postgresql://nobody:hunter2@127.0.0.1:1/nowhere";
        let reason = match find_server(Some(bogus)).await {
            Ok(_) => panic!("a server answered on 127.0.0.1:1"),
            Err(reason) => reason,
        };
        assert!(reason.contains("FLASHBACK_TEST_PG="), "{reason}");
        assert!(reason.contains("127.0.0.1:1"), "{reason}");
        assert!(!reason.contains("hunter2"), "password leaked: {reason}");
        assert!(!reason.contains(DEFAULT_URL), "{reason}");

        let err = TestkitError::Unavailable(reason);
        match verdict(&err, false) {
            Verdict::Skip(line) => {
                assert!(line.starts_with("skipping"), "{line}");
                assert!(line.contains("no PostgreSQL ("), "{line}");
                assert!(line.contains("127.0.0.1:1"), "{line}");
            }
            other => panic!("expected a skip, got {other:?}"),
        }
        match verdict(&err, true) {
            Verdict::Fail(message) => {
                assert!(message.contains("required"), "{message}");
                assert!(message.contains("127.0.0.1:1"), "{message}");
            }
            other => panic!("expected a failure, got {other:?}"),
        }
        // Errors other than "unavailable" always fail.
        let other = TestkitError::Other("boom".into());
        assert!(matches!(verdict(&other, false), Verdict::Fail(_)));
    }

    #[test]
    fn database_names_are_unique_and_dated() {
        let a = new_database_name();
        let b = new_database_name();
        assert_ne!(a, b);
        assert!(a.starts_with(DB_PREFIX));
        assert!(a.len() < 63, "{a}");
        assert!(a
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        let created = database_created_at(&a).unwrap();
        assert!(unix_now().abs_diff(created) < 5);
        assert_eq!(database_created_at("fbtest_12_3_4_abcdef"), Some(12));
        assert_eq!(database_created_at("other_12"), None);
        assert_eq!(database_created_at("fbtest_x"), None);
    }

    #[test]
    fn dump_preparation() {
        let dump = "\\restrict abc\nSET x = 1;\nINSERT INTO t VALUES ('a');\n\\unrestrict abc\n";
        assert_eq!(
            prepare_dump(dump).unwrap(),
            "SET x = 1;\nINSERT INTO t VALUES ('a');\n"
        );
        assert!(prepare_dump("COPY public.t (x) FROM stdin;\n1\n\\.\n").is_err());
        assert!(prepare_dump("\\connect other\n").is_err());
    }

    #[test]
    fn idents_are_quoted() {
        assert_eq!(quote_ident("a"), "\"a\"");
        assert_eq!(quote_ident("a\"b"), "\"a\"\"b\"");
    }
}

//! Test support for Flashback: a fresh PostgreSQL database per test, and behaviours written
//! once and run on every backend ([`backends`]).
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

pub mod backends;
pub mod bigvalue;
pub mod cluster;
mod connect;
mod database;
mod dump;
pub mod http;
mod server;
mod skip;
pub mod stall;
#[cfg(test)]
mod tests;
mod url;

pub use database::TestPg;
pub use dump::{load_sql_dump, postgres_fixture_or_skip};
pub use server::postgres;
pub use skip::{postgres_or_skip, require_postgres};

/// The server tried second, when `FLASHBACK_TEST_PG` is not set.
pub const DEFAULT_URL: &str = "postgresql://postgres@127.0.0.1:5432/postgres";

/// Prefix of every database the testkit creates.
pub const DB_PREFIX: &str = "fbtest_";

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

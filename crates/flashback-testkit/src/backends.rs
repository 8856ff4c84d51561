//! One behaviour written once, run on every backend it applies to (like atuin's
//! `run_the_test::<DB>`): [`for_each_backend!`](crate::for_each_backend) makes one test per
//! backend (so a failure names its backend), each handing the behaviour a [`Backend`] from
//! which it takes as many empty [`Scratch`] databases as it needs.
//!
//! ```text
//! async fn damage_stays_local(backend: Backend) {
//!     let db = backend.scratch().await;
//!     let saver = my_saver(&db).await; // the behaviour's own `match db.backend()`
//!     db.execute("DELETE FROM checkpoint_blobs WHERE version = '10'").await;
//!     assert_eq!(db.query_i64("SELECT count(*) FROM checkpoints").await, 30);
//! }
//! for_each_backend!(damage_stays_local: sqlite, postgres);
//! // tests `damage_stays_local::sqlite` and `damage_stays_local::postgres`
//! ```
//!
//! The Postgres case keeps the testkit's rules: it skips (one line on stderr) when no server
//! can be had, and fails instead under `CI=true` or `FLASHBACK_REQUIRE_PG=1`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sqlx::AssertSqlSafe;

use crate::TestPg;

/// Where a behaviour's databases live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// A file in a temporary directory (removed with the [`Scratch`]).
    Sqlite,
    /// A fresh database on the test server (dropped with the [`Scratch`]).
    Postgres,
}

impl Backend {
    /// The SQLite backend (the constructor [`for_each_backend!`](crate::for_each_backend)
    /// names by its test's name).
    pub fn sqlite() -> Self {
        Backend::Sqlite
    }

    /// The Postgres backend.
    pub fn postgres() -> Self {
        Backend::Postgres
    }

    /// Whether this backend's test runs: always for SQLite; for Postgres, whether a server can
    /// be had (when it cannot, a skip line is printed, or the test panics where Postgres is
    /// required: see [`crate::postgres_or_skip`]).
    pub async fn available(self) -> bool {
        match self {
            Backend::Sqlite => true,
            Backend::Postgres => crate::postgres_or_skip().await.is_some(),
        }
    }

    /// A new empty database of this backend. Panics when none can be made (call
    /// [`Backend::available`] first, as the macro does).
    pub async fn scratch(self) -> Scratch {
        match self {
            Backend::Sqlite => {
                static N: AtomicU64 = AtomicU64::new(0);
                let dir = tempfile::tempdir().expect("a temporary directory");
                let n = N.fetch_add(1, Ordering::Relaxed);
                let path = dir.path().join(format!("scratch-{n}.sqlite"));
                Scratch {
                    location: path.to_str().expect("a UTF-8 temporary path").to_owned(),
                    place: Place::Sqlite { _dir: dir, path },
                }
            }
            Backend::Postgres => {
                let pg = crate::postgres()
                    .await
                    .unwrap_or_else(|e| panic!("a Postgres database: {e}"));
                Scratch {
                    location: pg.url().to_owned(),
                    place: Place::Postgres(pg),
                }
            }
        }
    }
}

/// An empty database of one backend: its location (a file path or a `postgresql://` URL) and
/// plain SQL on it, for the checks a behaviour makes below the API it tests.
#[derive(Debug)]
pub struct Scratch {
    location: String,
    place: Place,
}

#[derive(Debug)]
enum Place {
    Sqlite {
        _dir: tempfile::TempDir,
        path: PathBuf,
    },
    Postgres(TestPg),
}

impl Scratch {
    /// What Flashback opens: the file's path, or the database's URL.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The backend it is on.
    pub fn backend(&self) -> Backend {
        match self.place {
            Place::Sqlite { .. } => Backend::Sqlite,
            Place::Postgres(_) => Backend::Postgres,
        }
    }

    /// The SQLite file (`None` on Postgres).
    pub fn path(&self) -> Option<&Path> {
        match &self.place {
            Place::Sqlite { path, .. } => Some(path),
            Place::Postgres(_) => None,
        }
    }

    /// The first column of the first row of `sql`, as an integer (on Postgres it is cast to
    /// `int8`, so `count(*)` and `sum(length(…))` read the same on both). Panics on failure.
    pub async fn query_i64(&self, sql: &str) -> i64 {
        match &self.place {
            Place::Sqlite { path, .. } => rusqlite::Connection::open(path)
                .and_then(|c| c.query_row(sql, [], |r| r.get(0)))
                .unwrap_or_else(|e| panic!("{sql}: {e}")),
            Place::Postgres(pg) => {
                let pool = pg.pool().await.expect("a pool");
                let value = sqlx::query_scalar(AssertSqlSafe(format!("SELECT ({sql})::int8")))
                    .fetch_one(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                pool.close().await;
                value
            }
        }
    }

    /// Runs `sql` (one statement). Panics on failure.
    pub async fn execute(&self, sql: &str) {
        match &self.place {
            Place::Sqlite { path, .. } => {
                rusqlite::Connection::open(path)
                    .and_then(|c| c.execute(sql, []))
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
            }
            Place::Postgres(pg) => {
                let pool = pg.pool().await.expect("a pool");
                sqlx::raw_sql(AssertSqlSafe(sql.to_owned()))
                    .execute(&pool)
                    .await
                    .unwrap_or_else(|e| panic!("{sql}: {e}"));
                pool.close().await;
            }
        }
    }
}

/// One `#[tokio::test]` per backend for a behaviour written once: `for_each_backend!(name:
/// sqlite, postgres);` where `async fn name(backend: Backend)` is in scope makes the module
/// `name` with the tests `name::sqlite` and `name::postgres`. A backend that cannot be had
/// skips its test (see [`Backend::available`]).
#[macro_export]
macro_rules! for_each_backend {
    ($behaviour:ident: $($backend:ident),+ $(,)?) => {
        mod $behaviour {
            $(
                #[tokio::test]
                async fn $backend() {
                    let backend = $crate::backends::Backend::$backend();
                    if backend.available().await {
                        super::$behaviour(backend).await;
                    }
                }
            )+
        }
    };
}

//! Flashback's own state database (`migrations/app`): recent connections and settings.
//!
//! A small SQLite file in the data directory, never a user's LangGraph database. Migrations are
//! the numbered files of `migrations/app`, applied in order, each in its own transaction, with
//! the number of the last one kept in `PRAGMA user_version`.

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::types::{DbKind, RecentConnection, Setting};
use rusqlite::{params, Connection, OptionalExtension};
use std::path::Path;
use std::sync::Mutex;

/// `(number, sql)` of every file in `migrations/app`, in order.
const MIGRATIONS: &[(u32, &str)] = &[
    (1, include_str!("../../../migrations/app/0001_init.sql")),
    (
        2,
        include_str!("../../../migrations/app/0002_devserver_connections.sql"),
    ),
    (
        3,
        include_str!("../../../migrations/app/0003_agentserver_connections.sql"),
    ),
];

/// The state database.
pub struct AppDb {
    conn: Mutex<Connection>,
}

impl AppDb {
    /// Open (creating and migrating) `dir/flashback.db`.
    pub fn open(dir: &Path) -> ApiResult<AppDb> {
        std::fs::create_dir_all(dir).map_err(|e| {
            ApiError::io(format!(
                "cannot create the data directory {}: {e}",
                dir.display()
            ))
        })?;
        AppDb::set_up(Connection::open(dir.join("flashback.db"))?)
    }

    /// A state database in memory (the CLI's: nothing outlives the command).
    pub fn in_memory() -> ApiResult<AppDb> {
        AppDb::set_up(Connection::open_in_memory()?)
    }

    fn set_up(mut conn: Connection) -> ApiResult<AppDb> {
        conn.pragma_update(None, "foreign_keys", true)?;
        conn.busy_timeout(std::time::Duration::from_secs(5))?;
        migrate(&mut conn)?;
        Ok(AppDb {
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> ApiResult<T> {
        let conn = self
            .conn
            .lock()
            .map_err(|_| ApiError::new(ErrorCode::Internal, "state database lock poisoned"))?;
        Ok(f(&conn)?)
    }

    /// Remember a connection (or refresh it) and return its id.
    pub fn remember(&self, kind: DbKind, display_name: &str, location: &str) -> ApiResult<i32> {
        self.with(|c| {
            c.query_row(
                "INSERT INTO connections (kind, display_name, location, last_opened_at)
                 VALUES (?1, ?2, ?3, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
                 ON CONFLICT (kind, location) DO UPDATE SET
                   display_name = excluded.display_name,
                   last_opened_at = excluded.last_opened_at
                 RETURNING id",
                params![kind.as_str(), display_name, location],
                |r| r.get(0),
            )
        })
    }

    /// Recent connections, most recently opened first (without keyring/file checks).
    pub fn recent(&self) -> ApiResult<Vec<RecentConnection>> {
        self.with(|c| {
            let mut st = c.prepare(
                "SELECT id, kind, display_name, location, last_opened_at FROM connections
                 ORDER BY last_opened_at DESC NULLS LAST, id DESC",
            )?;
            let rows = st.query_map([], |r| {
                let kind: String = r.get(1)?;
                Ok(RecentConnection {
                    id: r.get(0)?,
                    kind: match kind.as_str() {
                        "postgres" => DbKind::Postgres,
                        "devserver" => DbKind::DevServer,
                        "agentserver" => DbKind::AgentServer,
                        _ => DbKind::Sqlite,
                    },
                    display_name: r.get(2)?,
                    location: r.get(3)?,
                    last_opened_at: r.get(4)?,
                    has_saved_password: false,
                    missing: false,
                })
            })?;
            rows.collect()
        })
    }

    /// One connection.
    pub fn connection(&self, id: i32) -> ApiResult<RecentConnection> {
        self.recent()?
            .into_iter()
            .find(|c| c.id == id)
            .ok_or_else(|| ApiError::not_found(format!("no saved connection {id}")))
    }

    /// Forget a connection (its bookmarks and notes go with it).
    pub fn forget(&self, id: i32) -> ApiResult<()> {
        self.with(|c| c.execute("DELETE FROM connections WHERE id = ?1", [id]))?;
        Ok(())
    }

    /// Every setting.
    pub fn settings(&self) -> ApiResult<Vec<Setting>> {
        self.with(|c| {
            let mut st = c.prepare("SELECT key, value FROM settings ORDER BY key")?;
            let rows = st.query_map([], |r| {
                Ok(Setting {
                    key: r.get(0)?,
                    value: r.get(1)?,
                })
            })?;
            rows.collect()
        })
    }

    /// One setting.
    pub fn setting(&self, key: &str) -> ApiResult<Option<String>> {
        self.with(|c| {
            c.query_row("SELECT value FROM settings WHERE key = ?1", [key], |r| {
                r.get(0)
            })
            .optional()
        })
    }

    /// Save (or with `None` delete) a setting.
    pub fn set_setting(&self, key: &str, value: Option<&str>) -> ApiResult<()> {
        self.with(|c| match value {
            Some(v) => c.execute(
                "INSERT INTO settings (key, value) VALUES (?1, ?2)
                 ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                params![key, v],
            ),
            None => c.execute("DELETE FROM settings WHERE key = ?1", [key]),
        })?;
        Ok(())
    }
}

fn migrate(conn: &mut Connection) -> ApiResult<()> {
    let current: u32 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    let newest = MIGRATIONS.last().map_or(0, |(n, _)| *n);
    if current > newest {
        return Err(ApiError::new(
            ErrorCode::Internal,
            format!(
                "Flashback's state database is at version {current}, newer than this Flashback knows ({newest}); update Flashback"
            ),
        ));
    }
    // Off while tables are rebuilt (a DROP would cascade to bookmarks and notes); checked
    // before each commit, on again after.
    conn.pragma_update(None, "foreign_keys", false)?;
    let migrated = (|| -> ApiResult<()> {
        for (n, sql) in MIGRATIONS.iter().filter(|(n, _)| *n > current) {
            let tx = conn.transaction()?;
            tx.execute_batch(sql)?;
            let broken: i64 =
                tx.query_row("SELECT count(*) FROM pragma_foreign_key_check", [], |r| {
                    r.get(0)
                })?;
            if broken > 0 {
                return Err(ApiError::new(
                    ErrorCode::Internal,
                    format!(
                        "migration {n} of Flashback's state database broke {broken} references"
                    ),
                ));
            }
            tx.pragma_update(None, "user_version", n)?;
            tx.commit()?;
        }
        Ok(())
    })();
    conn.pragma_update(None, "foreign_keys", true)?;
    migrated
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn migrates_once_and_remembers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = AppDb::open(dir.path()).expect("open");
        let a = db
            .remember(DbKind::Sqlite, "a.sqlite", "/x/a.sqlite")
            .expect("a");
        let b = db
            .remember(DbKind::Postgres, "db @ h", "postgres://u@h/db")
            .expect("b");
        // Timestamps have millisecond resolution.
        std::thread::sleep(std::time::Duration::from_millis(5));
        let again = db
            .remember(DbKind::Sqlite, "a.sqlite", "/x/a.sqlite")
            .expect("a again");
        assert_eq!(a, again, "the same location is one row");
        assert_ne!(a, b);
        assert_eq!(db.recent().expect("recent")[0].id, a, "most recent first");
        db.set_setting("theme", Some("dark")).expect("set");
        drop(db);
        let db = AppDb::open(dir.path()).expect("reopen runs no migration twice");
        assert_eq!(db.setting("theme").expect("get").as_deref(), Some("dark"));
        db.forget(a).expect("forget");
        assert_eq!(db.recent().expect("recent").len(), 1);
        db.set_setting("theme", None).expect("delete");
        assert_eq!(db.setting("theme").expect("get"), None);
    }

    #[test]
    fn a_version_1_database_is_migrated_keeping_its_rows() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let c = Connection::open(dir.path().join("flashback.db")).expect("create");
            c.execute_batch(MIGRATIONS[0].1).expect("v1");
            c.execute_batch(
                "INSERT INTO connections (id, kind, display_name, location) \
                 VALUES (7, 'sqlite', 'a.sqlite', '/x/a.sqlite'); \
                 INSERT INTO bookmarks (connection_id, thread_id, checkpoint_id) \
                 VALUES (7, 't', 'c'); \
                 PRAGMA user_version = 1;",
            )
            .expect("rows");
        }
        let db = AppDb::open(dir.path()).expect("migrated");
        let kept: i64 = db
            .with(|c| c.query_row("SELECT count(*) FROM bookmarks", [], |r| r.get(0)))
            .expect("bookmarks");
        assert_eq!(kept, 1, "bookmarks survive the rebuild");
        assert_eq!(db.recent().expect("recent")[0].id, 7);
        let dev = db
            .remember(DbKind::DevServer, "agent (langgraph dev)", "/x/agent")
            .expect("a folder is remembered");
        assert_eq!(db.recent().expect("recent")[0].id, dev);
        assert_eq!(db.recent().expect("recent")[0].kind, DbKind::DevServer);
        // Deleting a connection still cascades to its bookmarks.
        db.forget(7).expect("forget");
        let left: i64 = db
            .with(|c| c.query_row("SELECT count(*) FROM bookmarks", [], |r| r.get(0)))
            .expect("bookmarks");
        assert_eq!(left, 0);
    }

    #[test]
    fn refuses_a_newer_state_database() {
        let dir = tempfile::tempdir().expect("tempdir");
        {
            let c = Connection::open(dir.path().join("flashback.db")).expect("create");
            c.pragma_update(None, "user_version", 99).expect("version");
        }
        let err = AppDb::open(dir.path()).err().expect("refused");
        assert!(err.message.contains("newer"), "{err}");
    }
}

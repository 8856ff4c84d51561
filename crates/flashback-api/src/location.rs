//! Database locations: SQLite paths and Postgres URLs, with the password kept apart.

use crate::error::{ApiError, ApiResult};
use crate::types::DbKind;
use flashback_storage::pgurl::PgUrl;

/// A location split into what may be shown and stored, and the password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    /// SQLite or Postgres.
    pub kind: DbKind,
    /// The path, or the URL without a password (safe to store and show).
    pub public: String,
    /// The password found in the URL, if any.
    pub password: Option<String>,
}

impl Location {
    /// Parse a user-typed location (trimmed; `~/` expanded for files).
    pub fn parse(input: &str) -> ApiResult<Location> {
        let input = input.trim();
        if input.is_empty() {
            return Err(ApiError::invalid(
                "enter a path to a .sqlite file or a postgres:// URL",
            ));
        }
        if flashback_storage::is_postgres_url(input) {
            let url = pg_url(input)?;
            if names_nothing(input) {
                return Err(ApiError::invalid(format!(
                    "{input:?} names no server and no database: use postgres://USER@HOST/DATABASE"
                )));
            }
            return Ok(Location {
                kind: DbKind::Postgres,
                public: url.without_password(),
                password: url
                    .password()
                    .map_err(|e| ApiError::invalid(e.to_string()))?,
            });
        }
        if flashback_storage::agentserver::is_server_url(input) {
            return Ok(Location {
                kind: DbKind::AgentServer,
                public: flashback_storage::agentserver::base_url(input)
                    .map_err(|e| ApiError::invalid(e.to_string()))?,
                password: None,
            });
        }
        if input.contains("://") {
            return Err(ApiError::invalid(format!(
                "{input:?} is not a file path, a postgres:// URL or an Agent Server's http:// URL"
            )));
        }
        let path = match input.strip_prefix("~/") {
            Some(rest) => dirs::home_dir().map_or_else(|| input.into(), |h| h.join(rest)),
            None => std::path::PathBuf::from(input),
        };
        let path = std::path::absolute(&path).unwrap_or(path);
        Ok(Location {
            kind: if path.is_dir() {
                DbKind::DevServer
            } else {
                DbKind::Sqlite
            },
            public: path.to_string_lossy().into_owned(),
            password: None,
        })
    }

    /// The location to connect with: the URL with `password` put back in.
    pub fn connect_string(&self, password: Option<&str>) -> String {
        match (self.kind, password) {
            (DbKind::Postgres, Some(pw)) => {
                pg_url(&self.public).map_or_else(|_| self.public.clone(), |u| u.with_password(pw))
            }
            _ => self.public.clone(),
        }
    }

    /// A short name: the file name, or `database @ host`.
    pub fn display_name(&self) -> String {
        match self.kind {
            DbKind::Sqlite => std::path::Path::new(&self.public)
                .file_name()
                .map_or_else(|| self.public.clone(), |n| n.to_string_lossy().into_owned()),
            DbKind::DevServer => {
                // The project's name: the folder holding `.langgraph_api/`.
                let path = std::path::Path::new(&self.public);
                let project = match path.file_name() {
                    Some(n) if n == flashback_storage::devserver::files::STATE_DIR => {
                        path.parent().unwrap_or(path)
                    }
                    _ => path,
                };
                let name = project
                    .file_name()
                    .map_or_else(|| self.public.clone(), |n| n.to_string_lossy().into_owned());
                format!("{name} (langgraph dev)")
            }
            DbKind::Postgres => {
                pg_url(&self.public).map_or_else(|_| self.public.clone(), |u| u.display_name())
            }
            DbKind::AgentServer => {
                let host = self
                    .public
                    .split_once("://")
                    .map_or(self.public.as_str(), |(_, h)| h);
                format!("{host} (Agent Server)")
            }
        }
    }
}

/// `postgres://` with nothing after it (or only `/`), and no `host=` or `dbname=` in the query:
/// a slip, not a request for every default.
fn names_nothing(url: &str) -> bool {
    let rest = url.split_once("://").map_or("", |(_, rest)| rest);
    let (target, query) = rest.split_once('?').unwrap_or((rest, ""));
    target.trim_matches('/').is_empty()
        && !query
            .split('&')
            .any(|kv| kv.starts_with("host=") || kv.starts_with("dbname="))
}

/// Refuse what cannot be a database file before anything opens it: a FIFO would block the
/// open forever, a device or a directory is never a database.
pub(crate) fn ensure_regular_file(path: &std::path::Path) -> ApiResult<std::fs::Metadata> {
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            ApiError::not_found(format!("no such file: {}", path.display()))
        } else {
            ApiError::io(format!("cannot read {}: {e}", path.display()))
        }
    })?;
    if meta.is_file() {
        return Ok(meta);
    }
    Err(ApiError::invalid(format!(
        "{} is {}, not a regular file",
        path.display(),
        file_kind(&meta)
    )))
}

/// A folder that holds a `langgraph dev` server's state (the project or its `.langgraph_api/`
/// folder), or a clear refusal.
pub(crate) fn ensure_dev_folder(path: &std::path::Path) -> ApiResult<()> {
    match flashback_storage::devserver::files::state_dir(path) {
        Some(_) => Ok(()),
        None => Err(ApiError::invalid(format!(
            "{} is a folder without a .langgraph_api folder: not a langgraph dev project, or \
             its server has not saved state there yet (open a .sqlite file, a postgres:// URL \
             or a langgraph dev project)",
            path.display()
        ))),
    }
}

/// What a path that is not a regular file is, in words ("a directory", "a FIFO (named pipe)"…).
pub(crate) fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    if meta.is_dir() {
        "a directory"
    } else if meta.file_type().is_symlink() {
        "a symbolic link"
    } else {
        special_kind(&meta.file_type())
    }
}

#[cfg(unix)]
fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO (named pipe)"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_block_device() || t.is_char_device() {
        "a device"
    } else {
        "not a file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "not a file"
}

fn pg_url(url: &str) -> ApiResult<PgUrl> {
    PgUrl::parse(url).map_err(|e| ApiError::invalid(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_split_off_and_put_back() {
        let l = Location::parse("postgres://bob:s%40cr%3At@db.example:5433/agents?sslmode=disable")
            .expect("parse");
        assert_eq!(l.kind, DbKind::Postgres);
        assert_eq!(
            l.public,
            "postgres://bob@db.example:5433/agents?sslmode=disable"
        );
        assert_eq!(l.password.as_deref(), Some("s@cr:t"));
        assert_eq!(l.display_name(), "agents @ db.example:5433");
        let url = l.connect_string(l.password.as_deref());
        assert_eq!(
            url,
            "postgres://bob:s%40cr%3At@db.example:5433/agents?sslmode=disable"
        );
        let l = Location::parse("postgresql://h/x?password=pw&application_name=a").expect("q");
        assert_eq!(l.public, "postgresql://h/x?application_name=a");
        assert_eq!(l.password.as_deref(), Some("pw"));
        assert_eq!(
            l.connect_string(Some("p w")),
            "postgresql://:p%20w@h/x?application_name=a"
        );
        assert_eq!(
            Location::parse("postgres://u@h")
                .expect("bare")
                .display_name(),
            "postgres @ h"
        );
    }

    #[test]
    fn files_become_absolute_and_bad_input_is_refused() {
        let l = Location::parse("  some/dir/agent.sqlite ").expect("file");
        assert_eq!(l.kind, DbKind::Sqlite);
        assert!(
            std::path::Path::new(&l.public).is_absolute(),
            "{}",
            l.public
        );
        assert_eq!(l.display_name(), "agent.sqlite");
        assert!(Location::parse("").is_err());
        assert!(Location::parse("mysql://x/y").is_err());
        assert!(Location::parse("postgres://u:%zz@h/d").is_err());
        for nothing in [
            "postgres://",
            "postgresql:///",
            "postgres://?sslmode=disable",
        ] {
            let e = Location::parse(nothing).expect_err(nothing);
            assert_eq!(e.code, crate::ErrorCode::InvalidInput, "{nothing}");
        }
        for something in [
            "postgres:///agents",
            "postgres://?host=/tmp&dbname=x",
            "postgres://h",
        ] {
            assert!(Location::parse(something).is_ok(), "{something}");
        }
    }
}

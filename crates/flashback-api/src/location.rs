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
            return Ok(Location {
                kind: DbKind::Postgres,
                public: url.without_password(),
                password: url
                    .password()
                    .map_err(|e| ApiError::invalid(e.to_string()))?,
            });
        }
        if input.contains("://") {
            return Err(ApiError::invalid(format!(
                "{input:?} is not a file path or a postgres:// URL"
            )));
        }
        let path = match input.strip_prefix("~/") {
            Some(rest) => dirs::home_dir().map_or_else(|| input.into(), |h| h.join(rest)),
            None => std::path::PathBuf::from(input),
        };
        let path = std::path::absolute(&path).unwrap_or(path);
        Ok(Location {
            kind: DbKind::Sqlite,
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
            DbKind::Postgres => {
                pg_url(&self.public).map_or_else(|_| self.public.clone(), |u| u.display_name())
            }
        }
    }
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
    }
}

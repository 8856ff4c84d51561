//! Database locations: SQLite paths and Postgres URLs, with the password kept apart.

use crate::error::{ApiError, ApiResult};
use crate::types::DbKind;

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
            let (public, password) = split_password(input)?;
            return Ok(Location {
                kind: DbKind::Postgres,
                public,
                password,
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
            (DbKind::Postgres, Some(pw)) => with_password(&self.public, pw),
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
                let rest = after_scheme(&self.public).1;
                let (authority, path) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
                let host = authority.rsplit('@').next().unwrap_or(authority);
                let db = path
                    .strip_prefix('/')
                    .unwrap_or("")
                    .split('?')
                    .next()
                    .unwrap_or("");
                let db = if db.is_empty() { "postgres" } else { db };
                format!("{db} @ {host}")
            }
        }
    }
}

fn after_scheme(url: &str) -> (&str, &str) {
    match url.find("://") {
        Some(i) => (&url[..i + 3], &url[i + 3..]),
        None => ("", url),
    }
}

/// Split `postgres://user:pw@host/db?password=…` into the URL without the password and the
/// password (percent-decoded).
fn split_password(url: &str) -> ApiResult<(String, Option<String>)> {
    let (scheme, rest) = after_scheme(url);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let mut password = None;
    let authority = match authority.rfind('@') {
        Some(at) => {
            let (userinfo, host) = (&authority[..at], &authority[at..]);
            match userinfo.split_once(':') {
                Some((user, pw)) => {
                    password = Some(percent_decode(pw)?);
                    format!("{user}{host}")
                }
                None => authority.to_owned(),
            }
        }
        None => authority.to_owned(),
    };
    // A `password=` query parameter goes too.
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let mut kept = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        match pair.split_once('=') {
            Some(("password", v)) => password = Some(percent_decode(v)?),
            _ => kept.push(pair),
        }
    }
    let mut public = format!("{scheme}{authority}{path}");
    if !kept.is_empty() {
        public.push('?');
        public.push_str(&kept.join("&"));
    }
    Ok((public, password))
}

fn with_password(public: &str, password: &str) -> String {
    let (scheme, rest) = after_scheme(public);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let encoded = percent_encode(password);
    match authority.rfind('@') {
        Some(at) => format!(
            "{scheme}{}:{encoded}{}{tail}",
            &authority[..at],
            &authority[at..]
        ),
        // No user: libpq's default user, with a password.
        None => format!("{scheme}:{encoded}@{authority}{tail}"),
    }
}

fn percent_encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn percent_decode(s: &str) -> ApiResult<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| ApiError::invalid("the URL has a malformed %-escape"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| ApiError::invalid("the URL's password is not UTF-8"))
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

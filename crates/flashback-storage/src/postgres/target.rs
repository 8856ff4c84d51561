//! The connection target (for messages, never the password) and driver error mapping.

use super::CONNECT_TIMEOUT;
use crate::pgurl::{percent_decode_lossy, PgUrl};
use crate::StoreError;
use sqlx::postgres::PgConnectOptions;

/// What the user connected to, for messages (never the password).
#[derive(Clone)]
pub(super) struct Target {
    /// `host:port` or `socket <path>`.
    pub(super) server: String,
    database: String,
    user: String,
    /// Forms of the password to scrub from messages (raw and percent-decoded).
    secrets: Vec<String>,
}

impl Target {
    /// A best-effort parse before sqlx validates the URL (for scrubbing its error).
    pub(super) fn from_url(url: &str) -> Target {
        let mut secrets = Vec::new();
        let mut add = |raw: &str| {
            if !raw.is_empty() {
                secrets.push(raw.to_owned());
                let decoded = percent_decode_lossy(raw);
                if decoded != raw {
                    secrets.push(decoded);
                }
            }
        };
        // `?password=…` is accepted too.
        let parsed = PgUrl::parse_lenient(url);
        for value in parsed.query_values("password") {
            add(value);
        }
        if let Some(password) = parsed.raw_password() {
            add(password);
        }
        Target {
            server: String::new(),
            database: String::new(),
            user: String::new(),
            secrets,
        }
    }

    pub(super) fn with_options(mut self, options: &PgConnectOptions) -> Target {
        self.server = match options.get_socket() {
            Some(path) => format!("socket {}", path.display()),
            None => format!("{}:{}", options.get_host(), options.get_port()),
        };
        self.database = options
            .get_database()
            .unwrap_or(options.get_username())
            .to_owned();
        self.user = options.get_username().to_owned();
        self
    }

    pub(super) fn describe(&self) -> String {
        format!("{}@{}/{}", self.user, self.server, self.database)
    }

    pub(super) fn redact(&self, mut message: String) -> String {
        for secret in &self.secrets {
            // Very short passwords are only scrubbed where they sit in a URL, so that messages
            // stay readable; longer ones everywhere.
            if secret.chars().count() >= 4 {
                message = message.replace(secret.as_str(), "***");
            } else {
                message = message.replace(&format!(":{secret}@"), ":***@");
            }
        }
        message
    }

    /// Map a driver error; `connecting` marks errors of the first connection.
    pub(super) fn error(&self, e: sqlx::Error, connecting: bool) -> StoreError {
        let server = &self.server;
        let mapped = match e {
            sqlx::Error::Database(db) => {
                let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
                let message = db.message().to_owned();
                match code.as_str() {
                    "28P01" | "28000" => StoreError::Auth(format!(
                        "{server} rejected user {:?} for database {:?}: {message}",
                        self.user, self.database
                    )),
                    "42501" if connecting => StoreError::Auth(format!("{server}: {message}")),
                    "3D000" => StoreError::NotFound(format!(
                        "database {:?} does not exist on {server}",
                        self.database
                    )),
                    c if c.starts_with("08") || c == "57P03" || c == "53300" => {
                        StoreError::Connection(format!("{server}: {message} (SQLSTATE {c})"))
                    }
                    c => StoreError::Query(format!("{message} (SQLSTATE {c})")),
                }
            }
            sqlx::Error::Io(io) => StoreError::Connection(format!("{server}: {io}")),
            sqlx::Error::Tls(tls) => StoreError::Connection(format!("{server}: TLS: {tls}")),
            sqlx::Error::PoolTimedOut => StoreError::Connection(format!(
                "timed out after {}s waiting for a connection to {server}",
                CONNECT_TIMEOUT.as_secs()
            )),
            sqlx::Error::PoolClosed => {
                StoreError::Connection(format!("the connection pool to {server} is closed"))
            }
            sqlx::Error::Configuration(c) => {
                StoreError::InvalidInput(format!("invalid Postgres connection settings: {c}"))
            }
            other if connecting => StoreError::Connection(format!("{server}: {other}")),
            other => StoreError::Query(other.to_string()),
        };
        match mapped {
            StoreError::Auth(m) => StoreError::Auth(self.redact(m)),
            StoreError::NotFound(m) => StoreError::NotFound(self.redact(m)),
            StoreError::Connection(m) => StoreError::Connection(self.redact(m)),
            StoreError::Query(m) => StoreError::Query(self.redact(m)),
            StoreError::InvalidInput(m) => StoreError::InvalidInput(self.redact(m)),
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::str::FromStr as _;

    #[test]
    fn passwords_are_scrubbed() {
        let t = Target::from_url("postgresql://bob:s3cr%40t@db.example:5433/app");
        assert_eq!(t.secrets, vec!["s3cr%40t".to_owned(), "s3cr@t".to_owned()]);
        assert_eq!(t.redact("x s3cr@t y s3cr%40t".into()), "x *** y ***");
        let opts =
            PgConnectOptions::from_str("postgresql://bob:s3cr%40t@db.example:5433/app").unwrap();
        let t = t.with_options(&opts);
        assert_eq!(t.describe(), "bob@db.example:5433/app");
        // `?password=` too (scrubbed first), and outside a URL only the query is read.
        let t = Target::from_url("postgres://u:abcd@h/d?sslmode=disable&password=wx%79z");
        assert_eq!(t.secrets, ["wx%79z", "wxyz", "abcd"]);
        assert_eq!(Target::from_url("u:abcd@h?password=q").secrets, ["q"]);
    }
}

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
//! [`crate::StoreError::Timeout`]: one line naming the server and what was being read. A pooled
//! connection whose wait timed out is never handed out again mid-protocol: before a released
//! connection goes back to the pool it must answer a ping within the statement limit, else
//! it is closed (`after_release`).

use crate::pgurl::{percent_decode_lossy, PgUrl};
use sqlx::postgres::PgConnectOptions;
use std::time::Duration;

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
    pub(super) fn acquiring(&self) -> Option<Duration> {
        Some(self.connect? + self.statement?)
    }

    /// What a new connection runs first: `SET statement_timeout` unless the server has it.
    pub(super) fn session_sql(&self) -> Option<String> {
        match (self.given, self.statement) {
            (false, Some(limit)) => Some(format!("SET statement_timeout = {}", limit.as_millis())),
            _ => None,
        }
    }
}

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

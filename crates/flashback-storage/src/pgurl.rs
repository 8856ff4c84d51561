//! The one parser of `postgres://` / `postgresql://` URLs (no URL crate: libpq's URLs are not
//! quite WHATWG URLs, and what Flashback does with them is small).
//!
//! ```text
//!  postgresql://bob:s%40cr%3At@db.example:5433/agents?sslmode=disable&password=…
//!  └─ scheme ─┘ └user┘└password┘└─── host ───┘└ path ┘└────────── query ──────────┘
//! ```
//!
//! Every part is kept as written (percent-encoded); [`PgUrl::password`] decodes. The
//! authority ends at the first `/` or `?`; the user info is what stands before its last `@`,
//! split at its first `:`; the query follows the first `?`.

use std::fmt;

/// Why a Postgres URL, or a part of it, cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PgUrlError {
    /// The text has no `://` (its first 40 characters are kept).
    #[error("not a postgres:// URL (no \"://\"): {0}")]
    NoScheme(String),
    /// The scheme is neither `postgres` nor `postgresql`.
    #[error("not a postgres:// or postgresql:// URL (scheme {0:?})")]
    Scheme(String),
    /// A `%` not followed by two hex digits.
    #[error("the URL has a malformed %-escape")]
    MalformedEscape,
    /// The percent-decoded bytes are not UTF-8.
    #[error("the URL's password is not UTF-8")]
    NotUtf8,
}

/// Whether a location names a Postgres database rather than a SQLite file.
pub fn is_postgres_url(location: &str) -> bool {
    location.starts_with("postgres://") || location.starts_with("postgresql://")
}

/// A Postgres URL split into its parts, each as written.
///
/// `Debug` shows the password as `***`.
#[derive(Clone, PartialEq, Eq)]
pub struct PgUrl {
    /// What stands before `://`; `None` when there is none ([`PgUrl::parse_lenient`] only).
    scheme: Option<String>,
    /// The user info before its first `:`; `None` when the authority has no `@`.
    user: Option<String>,
    /// The user info after its first `:`, percent-encoded.
    password: Option<String>,
    /// The authority after its last `@`: `host[:port]`, possibly empty or a list.
    host: String,
    /// From the end of the authority to the `?`: empty or starting with `/`.
    path: String,
    /// After the first `?`; `None` without a `?`.
    query: Option<String>,
}

impl fmt::Debug for PgUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PgUrl")
            .field("scheme", &self.scheme)
            .field("user", &self.user)
            .field("password", &self.password.as_ref().map(|_| "***"))
            .field("host", &self.host)
            .field("path", &self.path)
            .field("query", &self.query)
            .finish()
    }
}

impl PgUrl {
    /// Parse a `postgres://` or `postgresql://` URL. Fails only on the scheme: the parts are
    /// not validated (the driver does that when connecting).
    pub fn parse(url: &str) -> Result<PgUrl, PgUrlError> {
        let Some(scheme_end) = url.find("://") else {
            return Err(PgUrlError::NoScheme(url.chars().take(40).collect()));
        };
        let scheme = &url[..scheme_end];
        if scheme != "postgres" && scheme != "postgresql" {
            return Err(PgUrlError::Scheme(scheme.to_owned()));
        }
        Ok(Self::split(Some(scheme), &url[scheme_end + 3..]))
    }

    /// A best-effort parse that never fails, for scrubbing secrets out of messages about a
    /// text that may not even be a URL: any scheme is accepted, and a text without `://` has
    /// no authority (only its query is read).
    pub fn parse_lenient(url: &str) -> PgUrl {
        match url.split_once("://") {
            Some((scheme, rest)) => Self::split(Some(scheme), rest),
            None => {
                let (path, query) = match url.split_once('?') {
                    Some((path, query)) => (path, Some(query)),
                    None => (url, None),
                };
                PgUrl {
                    scheme: None,
                    user: None,
                    password: None,
                    host: String::new(),
                    path: path.to_owned(),
                    query: query.map(str::to_owned),
                }
            }
        }
    }

    /// Split what follows `://`.
    fn split(scheme: Option<&str>, rest: &str) -> PgUrl {
        let end = rest.find(['/', '?']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (user, password, host) = match authority.rfind('@') {
            Some(at) => {
                let userinfo = &authority[..at];
                let host = &authority[at + 1..];
                match userinfo.split_once(':') {
                    Some((user, password)) => (Some(user), Some(password), host),
                    None => (Some(userinfo), None, host),
                }
            }
            None => (None, None, authority),
        };
        let (path, query) = match tail.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (tail, None),
        };
        PgUrl {
            scheme: scheme.map(str::to_owned),
            user: user.map(str::to_owned),
            password: password.map(str::to_owned),
            host: host.to_owned(),
            path: path.to_owned(),
            query: query.map(str::to_owned),
        }
    }

    /// The scheme (`postgres` or `postgresql` for [`PgUrl::parse`]).
    pub fn scheme(&self) -> Option<&str> {
        self.scheme.as_deref()
    }

    /// The user as written (percent-encoded); `None` when the authority has no `@`.
    pub fn user(&self) -> Option<&str> {
        self.user.as_deref()
    }

    /// The password of the user info as written (percent-encoded); `None` without a `:` in
    /// the user info. See [`PgUrl::password`] for the decoded password.
    pub fn raw_password(&self) -> Option<&str> {
        self.password.as_deref()
    }

    /// The authority after its last `@` (`host`, `host:port`, …), as written.
    pub fn host(&self) -> &str {
        &self.host
    }

    /// The path as written: empty, or starting with `/`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The database: the path without its leading `/` (empty when there is none).
    pub fn database(&self) -> &str {
        self.path.strip_prefix('/').unwrap_or("")
    }

    /// The query as written, without its `?`; `None` without a `?`.
    pub fn query(&self) -> Option<&str> {
        self.query.as_deref()
    }

    /// The query's `&`-separated pairs as written, each split at its first `=` (`None` for a
    /// pair without `=`); empty pairs are skipped.
    pub fn query_pairs(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.query
            .as_deref()
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.is_empty())
            .map(|pair| match pair.split_once('=') {
                Some((key, value)) => (key, Some(value)),
                None => (pair, None),
            })
    }

    /// The values of the query parameter `key` (`key=value` pairs), as written, in order.
    pub fn query_values<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.query_pairs()
            .filter_map(move |(k, v)| if k == key { v } else { None })
    }

    /// The password, percent-decoded: the user info's, unless a `password=` query parameter
    /// follows (the last one wins). Errors on a malformed escape in any of them.
    pub fn password(&self) -> Result<Option<String>, PgUrlError> {
        let mut password = self.password.as_deref().map(percent_decode).transpose()?;
        for value in self.query_values("password") {
            password = Some(percent_decode(value)?);
        }
        Ok(password)
    }

    /// The URL without any password: none in the user info, no `password=` query parameter
    /// (the other parameters are kept in order; empty pairs and a bare `?` go).
    pub fn without_password(&self) -> String {
        let mut out = self.prefix();
        out.push_str(&self.authority(None));
        out.push_str(&self.path);
        let kept: Vec<&str> = self
            .query
            .as_deref()
            .unwrap_or("")
            .split('&')
            .filter(|pair| !pair.is_empty())
            .filter(|pair| !matches!(pair.split_once('='), Some(("password", _))))
            .collect();
        if !kept.is_empty() {
            out.push('?');
            out.push_str(&kept.join("&"));
        }
        out
    }

    /// The URL with `password` (percent-encoded) as the user info's password, replacing any;
    /// without a user, `:password@host` (libpq's default user). The path and query are kept
    /// as written.
    pub fn with_password(&self, password: &str) -> String {
        let encoded = percent_encode(password);
        self.render(&self.authority(Some(&encoded)), &self.path)
    }

    /// The URL with its database (the path) replaced by `database`; the scheme, the authority
    /// (user, password, host, port) and the query are kept.
    pub fn with_database(&self, database: &str) -> String {
        let authority = self.authority(self.password.as_deref());
        self.render(&authority, &format!("/{database}"))
    }

    /// The URL with its host (`host` or `host:port`) replaced; the user info, path and query
    /// are kept as written.
    pub fn with_host(&self, host: &str) -> String {
        let mut url = self.clone();
        url.host = host.to_owned();
        url.render(&url.authority(url.password.as_deref()), &url.path)
    }

    /// The URL with its user info's password shown as `***` (`user:***@host`), for messages.
    /// (A `password=` query parameter is left as is.)
    pub fn redacted(&self) -> String {
        let authority = self.authority(self.password.as_ref().map(|_| "***"));
        self.render(&authority, &self.path)
    }

    /// A short name: `database @ host` (`postgres` when the URL names no database).
    pub fn display_name(&self) -> String {
        let db = self.database();
        let db = if db.is_empty() { "postgres" } else { db };
        format!("{db} @ {}", self.host)
    }

    /// `scheme://`, or nothing.
    fn prefix(&self) -> String {
        match &self.scheme {
            Some(scheme) => format!("{scheme}://"),
            None => String::new(),
        }
    }

    /// The user info (with `password` as given) and host.
    fn authority(&self, password: Option<&str>) -> String {
        let mut out = String::new();
        if self.user.is_some() || password.is_some() {
            out.push_str(self.user.as_deref().unwrap_or(""));
            if let Some(password) = password {
                out.push(':');
                out.push_str(password);
            }
            out.push('@');
        }
        out.push_str(&self.host);
        out
    }

    /// `scheme://authority path ?query`.
    fn render(&self, authority: &str, path: &str) -> String {
        let mut out = self.prefix();
        out.push_str(authority);
        out.push_str(path);
        if let Some(query) = &self.query {
            out.push('?');
            out.push_str(query);
        }
        out
    }
}

/// Percent-encode everything but RFC 3986's unreserved characters.
pub fn percent_encode(s: &str) -> String {
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

/// Percent-decode; a `%` not followed by two hex digits ([`PgUrlError::MalformedEscape`]) and
/// bytes that are not UTF-8 ([`PgUrlError::NotUtf8`]) are errors.
pub fn percent_decode(s: &str) -> Result<String, PgUrlError> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or(PgUrlError::MalformedEscape)?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| PgUrlError::NotUtf8)
}

/// Percent-decode what can be: a malformed escape stays as written, bytes that are not UTF-8
/// become U+FFFD. For scrubbing secrets, where nothing may fail.
pub fn percent_decode_lossy(s: &str) -> String {
    let hex = |b: u8| (b as char).to_digit(16);
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(s: &str) -> PgUrl {
        PgUrl::parse(s).expect(s)
    }

    #[test]
    fn parts() {
        let u = url("postgresql://bob:s3cr%40t@db.example:5433/app?sslmode=disable&password=x");
        assert_eq!(u.scheme(), Some("postgresql"));
        assert_eq!(u.user(), Some("bob"));
        assert_eq!(u.raw_password(), Some("s3cr%40t"));
        assert_eq!(u.host(), "db.example:5433");
        assert_eq!(u.path(), "/app");
        assert_eq!(u.database(), "app");
        assert_eq!(u.query(), Some("sslmode=disable&password=x"));
        let pairs: Vec<_> = u.query_pairs().collect();
        assert_eq!(
            pairs,
            [("sslmode", Some("disable")), ("password", Some("x"))]
        );
        assert_eq!(u.query_values("password").collect::<Vec<_>>(), ["x"]);
        assert!(!format!("{u:?}").contains("s3cr"), "{u:?}");

        let u = url("postgres://h");
        assert_eq!((u.user(), u.raw_password(), u.host()), (None, None, "h"));
        assert_eq!((u.path(), u.database(), u.query()), ("", "", None));
        let u = url("postgres://a:b@c@h:1?x");
        assert_eq!((u.user(), u.raw_password()), (Some("a"), Some("b@c")));
        assert_eq!(u.query_pairs().collect::<Vec<_>>(), [("x", None)]);
    }

    #[test]
    fn only_postgres_schemes() {
        assert!(is_postgres_url("postgres://h/db"));
        assert!(is_postgres_url("postgresql://h/db"));
        assert!(!is_postgres_url("mysql://h/db"));
        assert!(!is_postgres_url("/tmp/x.sqlite"));
        assert_eq!(
            PgUrl::parse("mysql://h/db").unwrap_err().to_string(),
            "not a postgres:// or postgresql:// URL (scheme \"mysql\")"
        );
        assert_eq!(
            PgUrl::parse("nonsense").unwrap_err(),
            PgUrlError::NoScheme("nonsense".into())
        );
    }

    // From flashback-testkit's url.rs.
    #[test]
    fn replaces_database() {
        let with_database = |u: &str, db: &str| PgUrl::parse(u).map(|u| u.with_database(db));
        assert_eq!(
            with_database("postgresql://postgres@127.0.0.1:5432/postgres", "x").unwrap(),
            "postgresql://postgres@127.0.0.1:5432/x"
        );
        assert_eq!(
            with_database("postgres://u:p@h/db?sslmode=disable", "x").unwrap(),
            "postgres://u:p@h/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgres://h:1", "x").unwrap(),
            "postgres://h:1/x"
        );
        assert_eq!(
            with_database("postgres://h?sslmode=disable", "x").unwrap(),
            "postgres://h/x?sslmode=disable"
        );
        assert_eq!(
            with_database("postgresql:///postgres?host=/run/postgresql", "x").unwrap(),
            "postgresql:///x?host=/run/postgresql"
        );
        assert!(with_database("mysql://h/db", "x").is_err());
        assert!(with_database("nonsense", "x").is_err());
    }

    #[test]
    fn replaces_host() {
        assert_eq!(
            url("postgresql://u:p%40@db:5432/app?sslmode=require").with_host("127.0.0.1:6543"),
            "postgresql://u:p%40@127.0.0.1:6543/app?sslmode=require"
        );
        assert_eq!(url("postgres://h").with_host("x:1"), "postgres://x:1");
    }

    // From flashback-testkit's url.rs.
    #[test]
    fn redacts_password() {
        let redacted = |u: &str| PgUrl::parse(u).map(|u| u.redacted());
        assert_eq!(
            redacted("postgres://user:secret@host:5/db?a=b").unwrap(),
            "postgres://user:***@host:5/db?a=b"
        );
        assert_eq!(
            redacted("postgres://user@host/db").unwrap(),
            "postgres://user@host/db"
        );
        assert_eq!(redacted("postgres://host").unwrap(), "postgres://host");
        assert!(redacted("garbage:secret").is_err());
    }

    // From flashback-api's location.rs.
    #[test]
    fn passwords_are_split_off_and_put_back() {
        let u = url("postgres://bob:s%40cr%3At@db.example:5433/agents?sslmode=disable");
        let public = u.without_password();
        assert_eq!(
            public,
            "postgres://bob@db.example:5433/agents?sslmode=disable"
        );
        let password = u.password().unwrap();
        assert_eq!(password.as_deref(), Some("s@cr:t"));
        assert_eq!(url(&public).display_name(), "agents @ db.example:5433");
        assert_eq!(
            url(&public).with_password("s@cr:t"),
            "postgres://bob:s%40cr%3At@db.example:5433/agents?sslmode=disable"
        );

        let u = url("postgresql://h/x?password=pw&application_name=a");
        let public = u.without_password();
        assert_eq!(public, "postgresql://h/x?application_name=a");
        assert_eq!(u.password().unwrap().as_deref(), Some("pw"));
        assert_eq!(
            url(&public).with_password("p w"),
            "postgresql://:p%20w@h/x?application_name=a"
        );
        assert_eq!(url("postgres://u@h").display_name(), "postgres @ h");
        assert_eq!(
            url("postgres://u:%zz@h/d").password(),
            Err(PgUrlError::MalformedEscape)
        );
    }

    #[test]
    fn password_details() {
        // The query parameter wins; a bare `?` and empty pairs go with it.
        let u = url("postgres://u:a@h/d?password=b&&");
        assert_eq!(u.password().unwrap().as_deref(), Some("b"));
        assert_eq!(u.without_password(), "postgres://u@h/d");
        assert_eq!(
            url("postgres://u@h/d?").without_password(),
            "postgres://u@h/d"
        );
        assert_eq!(url("postgres://u@h").password(), Ok(None));
        assert_eq!(
            url("postgres://u:@h").password().unwrap().as_deref(),
            Some("")
        );
        // A pair without `=` is not a password.
        assert_eq!(url("postgres://h/d?password").password(), Ok(None));
        assert_eq!(
            url("postgres://u:%FF@h").password(),
            Err(PgUrlError::NotUtf8)
        );
        assert_eq!(
            url("postgres://u:old@h").with_password("new"),
            "postgres://u:new@h"
        );
    }

    #[test]
    fn percent_coding() {
        assert_eq!(
            percent_encode("a-b_c.d~e f/@:%"),
            "a-b_c.d~e%20f%2F%40%3A%25"
        );
        assert_eq!(percent_decode("%41%42c").unwrap(), "ABc");
        assert_eq!(percent_decode("%zz"), Err(PgUrlError::MalformedEscape));
        assert_eq!(percent_decode("%4"), Err(PgUrlError::MalformedEscape));
        assert_eq!(
            percent_decode(&percent_encode("s@cr:t é")).unwrap(),
            "s@cr:t é"
        );
    }

    // From flashback-storage's postgres.rs.
    #[test]
    fn lossy_percent_decoding() {
        assert_eq!(percent_decode_lossy("a%20b%"), "a b%");
        assert_eq!(percent_decode_lossy("%4"), "%4");
        assert_eq!(percent_decode_lossy("%41%42"), "AB");
    }

    #[test]
    fn lenient_parsing() {
        let u = PgUrl::parse_lenient("mysql://u:pw@h/db?password=q");
        assert_eq!(u.scheme(), Some("mysql"));
        assert_eq!(u.raw_password(), Some("pw"));
        assert_eq!(u.query_values("password").collect::<Vec<_>>(), ["q"]);
        let u = PgUrl::parse_lenient("u:pw@h?password=q");
        assert_eq!((u.scheme(), u.raw_password()), (None, None));
        assert_eq!(u.query_values("password").collect::<Vec<_>>(), ["q"]);
    }
}

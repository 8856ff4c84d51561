//! The connection target (for messages, never the password) and driver error mapping.

use super::limits::{Limits, NO_LIMIT};
use super::tls::{rustls_error, Roots, SslMode, TlsPlan};
use crate::pgurl::{percent_decode_lossy, PgUrl};
use crate::StoreError;
use sqlx::postgres::PgConnectOptions;

/// How every read starts.
pub(crate) const BEGIN_READ_ONLY: &str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";

/// What the user connected to, for messages (never the password).
#[derive(Clone)]
pub(crate) struct Target {
    /// `host:port` or `socket <path>`.
    pub(super) server: String,
    database: String,
    user: String,
    /// Forms of the password to scrub from messages (raw and percent-decoded).
    secrets: Vec<String>,
    /// The `sslmode` asked for and the trusted roots, for messages about TLS.
    sslmode: SslMode,
    roots: Roots,
    /// How long connecting and each statement may take.
    limits: Limits,
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
            sslmode: SslMode::Prefer,
            roots: Roots::None,
            limits: Limits::default(),
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

    pub(super) fn with_tls(mut self, tls: &TlsPlan) -> Target {
        self.sslmode = tls.asked;
        self.roots = tls.roots.clone();
        self
    }

    pub(super) fn with_limits(mut self, limits: Limits) -> Target {
        self.limits = limits;
        self
    }

    pub(crate) fn limits(&self) -> Limits {
        self.limits
    }

    pub(crate) fn describe(&self) -> String {
        format!("{}@{}/{}", self.user, self.server, self.database)
    }

    /// `host:port/database` (or `socket <path>/database`), for messages about the server.
    pub(crate) fn place(&self) -> String {
        format!("{}/{}", self.server, self.database)
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
    pub(crate) fn error(&self, e: sqlx::Error, connecting: bool) -> StoreError {
        let server = &self.server;
        let mapped = match e {
            sqlx::Error::Database(db) => {
                let code = db.code().map(|c| c.into_owned()).unwrap_or_default();
                let message = db.message().to_owned();
                match code.as_str() {
                    "28P01" | "28000" => StoreError::Auth(format!(
                        "{server} rejected user {:?} for database {:?}: {message}{}",
                        self.user,
                        self.database,
                        self.encryption_hint(&message)
                    )),
                    "42501" if connecting => StoreError::Auth(format!("{server}: {message}")),
                    "3D000" => StoreError::NotFound(format!(
                        "database {:?} does not exist on {server}",
                        self.database
                    )),
                    // The server's own `statement_timeout`, the one Flashback set (the text is
                    // the only difference from a cancel asked for by hand).
                    "57014" if message.contains("statement timeout") => match self.limits.statement
                    {
                        Some(limit) => self.timed_out(limit),
                        None => StoreError::Query(format!("{message} (SQLSTATE 57014)")),
                    },
                    c if c.starts_with("08") || c == "57P03" || c == "53300" => {
                        StoreError::Connection(format!("{server}: {message} (SQLSTATE {c})"))
                    }
                    c => StoreError::Query(format!("{message} (SQLSTATE {c})")),
                }
            }
            sqlx::Error::Io(io) => match rustls_error(&io) {
                Some(tls) => StoreError::Connection(format!("{server}: {}", self.tls_error(tls))),
                None => StoreError::Connection(format!("{server}: {io}")),
            },
            sqlx::Error::Tls(tls) if tls.to_string().contains("does not support TLS") => {
                StoreError::Connection(format!(
                    "{server}: the server does not support TLS but sslmode={}",
                    self.sslmode.name()
                ))
            }
            sqlx::Error::Tls(tls) => {
                StoreError::Connection(format!("{server}: TLS: {tls} ({})", self.tls_context()))
            }
            // Connecting, or every pooled connection busy, past the connect limit.
            sqlx::Error::PoolTimedOut => self.timed_out(self.limits.connect.unwrap_or(NO_LIMIT)),
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

impl Target {
    /// `sslmode=…` and the trusted roots, for messages about TLS.
    fn tls_context(&self) -> String {
        let mode = self.sslmode.name();
        match &self.roots {
            Roots::None => format!("sslmode={mode}"),
            Roots::System => format!("sslmode={mode}, sslrootcert=system"),
            Roots::File(path) => format!("sslmode={mode}, sslrootcert={}", path.display()),
        }
    }

    /// One line for a failed TLS handshake.
    fn tls_error(&self, e: &rustls::Error) -> String {
        use rustls::{AlertDescription as Alert, CertificateError as Cert, Error as E};
        let context = self.tls_context();
        match e {
            // BadSignature: a trusted root bears the issuer's name but did not sign it.
            E::InvalidCertificate(Cert::UnknownIssuer | Cert::BadSignature) => {
                let hint = match self.roots {
                    Roots::System => "; give sslrootcert=<the server's CA certificate file>",
                    _ => "",
                };
                format!(
                    "certificate verify failed: the server's certificate is self-signed or \
                     issued by an unknown CA ({context}{hint})"
                )
            }
            E::InvalidCertificate(Cert::NotValidForNameContext {
                expected,
                presented,
            }) => format!(
                "certificate verify failed: the server's certificate is for {}, not {} \
                 ({context}; connect by a name it lists, or use sslmode=verify-ca)",
                if presented.is_empty() {
                    "no host name".to_owned()
                } else {
                    presented
                        .iter()
                        .map(|n| san(n))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
                expected.to_str()
            ),
            E::InvalidCertificate(Cert::NotValidForName) => format!(
                "certificate verify failed: the server's certificate is not for this host name \
                 ({context}; connect by a name it lists, or use sslmode=verify-ca)"
            ),
            E::InvalidCertificate(other) => {
                format!("certificate verify failed: {other} ({context})")
            }
            E::AlertReceived(Alert::CertificateRequired) => format!(
                "TLS handshake failed: the server requires a client certificate \
                 (give sslcert=… and sslkey=…; {context})"
            ),
            E::AlertReceived(
                alert @ (Alert::UnknownCA
                | Alert::BadCertificate
                | Alert::CertificateUnknown
                | Alert::CertificateExpired
                | Alert::CertificateRevoked
                | Alert::UnsupportedCertificate),
            ) => format!(
                "TLS handshake failed: the server rejected the client certificate \
                 ({alert:?}; {context})"
            ),
            E::AlertReceived(Alert::ProtocolVersion) => format!(
                "TLS handshake failed: the server speaks neither TLS 1.2 nor TLS 1.3 ({context})"
            ),
            other => format!("TLS handshake failed: {other} ({context})"),
        }
    }

    /// A hint for pg_hba.conf refusing a connection for its encryption.
    fn encryption_hint(&self, message: &str) -> String {
        let plaintext_refused = message.ends_with("no encryption") || message.ends_with("SSL off");
        if plaintext_refused && matches!(self.sslmode, SslMode::Disable) {
            " (sslmode=disable, but the server requires TLS here: use sslmode=require or \
             stronger)"
                .to_owned()
        } else {
            String::new()
        }
    }
}

/// A subject alternative name as rustls shows it (`DnsName("db.example")`, `IpAddress(…)`),
/// without the wrapping.
fn san(name: &str) -> &str {
    let inner = |prefix: &str, suffix: &str| name.strip_prefix(prefix)?.strip_suffix(suffix);
    inner("DnsName(\"", "\")")
        .or_else(|| inner("IpAddress(", ")"))
        .unwrap_or(name)
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

    #[test]
    fn tls_failures_are_one_clear_line() {
        use rustls::{AlertDescription, CertificateError, Error as TlsError};
        let plan = |mode: &str, root: Option<&str>| {
            let settings = super::super::tls::Settings {
                mode: Some(mode.to_owned()),
                root_cert: root.map(str::to_owned),
                ..Default::default()
            };
            TlsPlan::resolve(&settings, &|_| true).unwrap()
        };
        let target = |tls: &TlsPlan| {
            let opts = PgConnectOptions::from_str("postgres://u:Secret-pw-99@db:5433/app").unwrap();
            Target::from_url("postgres://u:Secret-pw-99@db:5433/app")
                .with_options(&opts)
                .with_tls(tls)
        };
        let handshake = |t: &Target, e: TlsError| {
            let io = std::io::Error::new(std::io::ErrorKind::InvalidData, e);
            t.error(sqlx::Error::Io(io), true).to_string()
        };
        let full = target(&plan("verify-full", Some("/ca.pem")));
        assert_eq!(
            handshake(
                &full,
                TlsError::InvalidCertificate(CertificateError::UnknownIssuer)
            ),
            "cannot connect: db:5433: certificate verify failed: the server's certificate is \
             self-signed or issued by an unknown CA (sslmode=verify-full, sslrootcert=/ca.pem)"
        );
        let system = target(&plan("verify-full", Some("system")));
        assert!(handshake(&system, TlsError::InvalidCertificate(CertificateError::BadSignature))
            .ends_with("(sslmode=verify-full, sslrootcert=system; give sslrootcert=<the server's CA certificate file>)"));
        let expired = handshake(
            &full,
            TlsError::InvalidCertificate(CertificateError::Expired),
        );
        assert!(expired.contains("certificate verify failed: "), "{expired}");
        let name = TlsError::InvalidCertificate(CertificateError::NotValidForNameContext {
            expected: rustls::pki_types::ServerName::try_from("db").unwrap(),
            presented: vec![
                "DnsName(\"db.example\")".into(),
                "IpAddress(10.0.0.1)".into(),
            ],
        });
        assert_eq!(
            handshake(&full, name),
            "cannot connect: db:5433: certificate verify failed: the server's certificate is for \
             db.example, 10.0.0.1, not db (sslmode=verify-full, sslrootcert=/ca.pem; connect by \
             a name it lists, or use sslmode=verify-ca)"
        );
        let require = target(&plan("require", None));
        let alert = handshake(
            &require,
            TlsError::AlertReceived(AlertDescription::CertificateRequired),
        );
        assert_eq!(
            alert,
            "cannot connect: db:5433: TLS handshake failed: the server requires a client \
             certificate (give sslcert=… and sslkey=…; sslmode=require)"
        );
        let refused = require.error(sqlx::Error::Tls("server does not support TLS".into()), true);
        assert_eq!(
            refused.to_string(),
            "cannot connect: db:5433: the server does not support TLS but sslmode=require"
        );
        // Not a TLS failure: an I/O error as before.
        let io = std::io::Error::new(std::io::ErrorKind::ConnectionRefused, "refused");
        assert_eq!(
            require.error(sqlx::Error::Io(io), true).to_string(),
            "cannot connect: db:5433: refused"
        );
        let disable = target(&plan("disable", None));
        assert!(disable
            .encryption_hint("…, no encryption")
            .starts_with(" (sslmode=disable, but the server requires TLS here"));
        assert_eq!(require.encryption_hint("…, no encryption"), "");
        assert_eq!(
            disable.encryption_hint("password authentication failed"),
            ""
        );
    }
}

//! TLS with libpq's `sslmode` meanings, on top of sqlx's rustls backend (OS trust store).
//!
//! ```text
//!  sslmode       libpq                                   Flashback (sqlx told)
//!  disable       plaintext                               same (Disable)
//!  allow         plaintext; TLS if the server refuses it same (Disable, then Require)
//!  prefer        TLS if offered, else plaintext; also    same, no certificate check (Prefer,
//!   (default)    plaintext when the TLS session fails     then Disable)
//!  require       TLS, no check, unless a root cert file  same (Require, or VerifyCa)
//!                exists: then as verify-ca
//!  verify-ca     TLS, chain checked against sslrootcert  same (VerifyCa), but the OS trust
//!  verify-full   ... and the host name                    store is trusted too (VerifyFull)
//! ```
//!
//! `sslrootcert` is a PEM file (default `~/.postgresql/root.crt`, used when it exists) or
//! `system` (the OS trust store; needs `verify-full`, libpq 16's rule). `sslcert`/`sslkey`
//! (default `~/.postgresql/postgresql.crt`/`.key`) give a client certificate. Each may come
//! from the URL's query or, like libpq, from `PGSSLMODE`, `PGSSLROOTCERT`, `PGSSLCERT`,
//! `PGSSLKEY`. Over a Unix socket TLS is never used (as libpq). The files are read here, once,
//! and handed to sqlx as PEM, so that a missing or unreadable file is a clear error before
//! connecting. Where sqlx cannot follow libpq: it adds the OS trust store to a `sslrootcert`
//! file, so verify-ca/verify-full also accept certificates the OS trusts.

use crate::pgurl::{percent_decode_lossy, PgUrl};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use sqlx::postgres::{PgConnectOptions, PgConnection, PgSslMode};
use sqlx::Connection as _;
use std::path::{Path, PathBuf};

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(text: &str) -> Option<SslMode> {
        Some(match text {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }

    fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyFull)
    }
}

/// The TLS settings as written: the URL's query (the last of each wins), else the
/// environment.
#[derive(Debug, Default, Clone)]
pub(super) struct Settings {
    pub(super) mode: Option<String>,
    pub(super) root_cert: Option<String>,
    pub(super) cert: Option<String>,
    pub(super) key: Option<String>,
    /// `~/.postgresql` (`%APPDATA%\postgresql` on Windows), for the default files.
    pub(super) dir: Option<PathBuf>,
    /// The connection goes through a Unix socket.
    pub(super) socket: bool,
    /// A libpq TLS parameter Flashback cannot honour, as `name` or `name=value`.
    pub(super) unsupported: Option<String>,
}

impl Settings {
    pub(super) fn read(url: &str, socket: bool) -> Settings {
        let url = PgUrl::parse_lenient(url);
        let get = |keys: &[&str], env: &str| {
            let from_url = url
                .query_pairs()
                .filter(|(k, _)| keys.contains(k))
                .filter_map(|(_, v)| v)
                .last()
                .map(|v| percent_decode_lossy(&v.replace('+', " ")));
            from_url.or_else(|| std::env::var(env).ok())
        };
        let home = if cfg!(windows) {
            std::env::var_os("APPDATA").map(|d| PathBuf::from(d).join("postgresql"))
        } else {
            std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".postgresql"))
        };
        // Revocation lists and encrypted keys would be silently ignored by sqlx.
        let unsupported = [
            ("sslcrl", "PGSSLCRL"),
            ("sslcrldir", "PGSSLCRLDIR"),
            ("sslpassword", ""), // (no variable)
            ("sslnegotiation", "PGSSLNEGOTIATION"),
        ]
        .into_iter()
        .find_map(|(name, env)| match get(&[name], env)? {
            value if name == "sslnegotiation" && value == "postgres" => None,
            value if name == "sslnegotiation" => Some(format!("{name}={value}")),
            _ => Some(name.to_owned()),
        });
        Settings {
            mode: get(&["sslmode", "ssl-mode"], "PGSSLMODE"),
            root_cert: get(&["sslrootcert", "ssl-root-cert", "ssl-ca"], "PGSSLROOTCERT"),
            cert: get(&["sslcert", "ssl-cert"], "PGSSLCERT"),
            key: get(&["sslkey", "ssl-key"], "PGSSLKEY"),
            dir: home,
            socket,
            unsupported,
        }
    }
}

/// Where the trusted roots come from when certificates are checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Roots {
    /// No check.
    None,
    /// `sslrootcert=system`: the OS trust store.
    System,
    /// A PEM file (with the OS trust store: sqlx adds it).
    File(PathBuf),
}

/// Read the TLS settings of `url` (and the environment) and apply them to its options.
pub(super) fn plan(
    url: &str,
    options: PgConnectOptions,
) -> Result<(TlsPlan, PgConnectOptions), String> {
    let settings = Settings::read(url, options.get_socket().is_some());
    let plan = TlsPlan::resolve(&settings, &|path| path.is_file())?;
    let options = plan.apply(options)?;
    Ok((plan, options))
}

/// How to connect: what sqlx is told, and the files it is given.
#[derive(Debug, Clone)]
pub(super) struct TlsPlan {
    /// The `sslmode` asked for, for messages.
    pub(super) asked: SslMode,
    /// The mode of the first attempt.
    first: PgSslMode,
    /// The mode of a second attempt (libpq's `allow` and `prefer`).
    fallback: Option<PgSslMode>,
    pub(super) roots: Roots,
    /// Client certificate and key files.
    client: Option<(PathBuf, PathBuf)>,
}

impl TlsPlan {
    /// Decide as libpq would; `exists` tells which files are there. Errors are one line.
    pub(super) fn resolve(s: &Settings, exists: &dyn Fn(&Path) -> bool) -> Result<Self, String> {
        let system = s.root_cert.as_deref() == Some("system");
        let asked = match s.mode.as_deref().map(str::to_ascii_lowercase) {
            Some(text) => SslMode::parse(&text).ok_or_else(|| {
                format!(
                    "invalid sslmode {text:?}: use disable, allow, prefer, require, verify-ca or \
                     verify-full"
                )
            })?,
            None if system => SslMode::VerifyFull,
            None => SslMode::Prefer,
        };
        if system && asked != SslMode::VerifyFull {
            return Err(format!(
                "sslrootcert=system needs sslmode=verify-full, not {} (any certificate the OS \
                 trusts would do)",
                asked.name()
            ));
        }
        let mut plan = TlsPlan {
            asked,
            first: PgSslMode::Disable,
            fallback: None,
            roots: Roots::None,
            client: None,
        };
        if s.socket || asked == SslMode::Disable {
            return Ok(plan);
        }
        if let Some(what) = &s.unsupported {
            return Err(format!(
                "{what} is not supported (Flashback takes sslmode, sslrootcert, sslcert and an \
                 unencrypted sslkey)"
            ));
        }
        let default = |name: &str| s.dir.as_ref().map(|d| d.join(name));
        fn given(value: &Option<String>) -> Option<&str> {
            value.as_deref().filter(|v| !v.is_empty())
        }
        let must_exist = |path: &Path, what: &str| {
            if exists(path) {
                Ok(())
            } else {
                Err(format!("{what} file {:?} does not exist", path.display()))
            }
        };

        // Trusted roots: only for the modes that may check certificates.
        if matches!(
            asked,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull
        ) {
            plan.roots = if system {
                Roots::System
            } else if let Some(path) = given(&s.root_cert) {
                let path = PathBuf::from(path);
                must_exist(&path, "sslrootcert")?;
                Roots::File(path)
            } else {
                match default("root.crt") {
                    Some(path) if exists(&path) => Roots::File(path),
                    path if asked.verifies() => {
                        let looked = path.map_or("no home directory".to_owned(), |p| {
                            format!("{} does not exist", p.display())
                        });
                        return Err(format!(
                            "sslmode={} needs the server's root certificate: give \
                             sslrootcert=<CA file> (or sslrootcert=system for the OS trust \
                             store); {looked}",
                            asked.name()
                        ));
                    }
                    _ => Roots::None,
                }
            };
        }
        (plan.first, plan.fallback) = match asked {
            SslMode::Allow => (PgSslMode::Disable, Some(PgSslMode::Require)),
            SslMode::Prefer => (PgSslMode::Prefer, Some(PgSslMode::Disable)),
            // libpq: `require` with a root certificate checks the chain.
            SslMode::Require if plan.roots == Roots::None => (PgSslMode::Require, None),
            SslMode::Require | SslMode::VerifyCa => (PgSslMode::VerifyCa, None),
            _ => (PgSslMode::VerifyFull, None),
        };

        // A client certificate, when one is given or the default one exists.
        let cert = match given(&s.cert) {
            Some(path) => {
                let path = PathBuf::from(path);
                must_exist(&path, "sslcert")?;
                Some(path)
            }
            None => default("postgresql.crt").filter(|p| exists(p)),
        };
        let key = given(&s.key).map(PathBuf::from);
        plan.client = match (cert, key) {
            (Some(cert), key) => {
                let key = key.or_else(|| default("postgresql.key")).ok_or_else(|| {
                    format!("client certificate {:?} needs sslkey", cert.display())
                })?;
                must_exist(&key, "sslkey")?;
                Some((cert, key))
            }
            (None, Some(key)) => {
                return Err(format!(
                    "sslkey={:?} is given without sslcert (the client certificate)",
                    key.display()
                ))
            }
            (None, None) => None,
        };
        Ok(plan)
    }

    /// Tell sqlx: the mode of the first attempt, and the files' contents as PEM.
    pub(super) fn apply(&self, mut options: PgConnectOptions) -> Result<PgConnectOptions, String> {
        options = options.ssl_mode(self.first);
        match &self.roots {
            Roots::None => {}
            // No extra roots: sqlx trusts the OS store.
            Roots::System => options = options.ssl_root_cert_from_pem(Vec::new()),
            Roots::File(path) => {
                let pem = read(path, "sslrootcert")?;
                let certs = CertificateDer::pem_slice_iter(&pem).collect::<Result<Vec<_>, _>>();
                match certs {
                    Ok(certs) if !certs.is_empty() => {}
                    _ => {
                        return Err(format!(
                            "sslrootcert file {:?} holds no PEM certificate",
                            path.display()
                        ))
                    }
                }
                options = options.ssl_root_cert_from_pem(pem);
            }
        }
        if let Some((cert, key)) = &self.client {
            let cert_pem = read(cert, "sslcert")?;
            if !matches!(
                CertificateDer::pem_slice_iter(&cert_pem).next(),
                Some(Ok(_))
            ) {
                return Err(format!(
                    "sslcert file {:?} holds no PEM certificate",
                    cert.display()
                ));
            }
            let key_pem = read(key, "sslkey")?;
            if PrivateKeyDer::from_pem_slice(&key_pem).is_err() {
                return Err(format!(
                    "sslkey file {:?} holds no unencrypted PEM private key",
                    key.display()
                ));
            }
            options = options
                .ssl_client_cert_from_pem(cert_pem)
                .ssl_client_key_from_pem(key_pem);
        }
        Ok(options)
    }

    /// Open the first connection. `allow` retries with TLS when the server refuses plaintext;
    /// `prefer` retries in plaintext when the TLS session fails or is refused, as libpq does.
    /// Returns the options that worked (for the pool); when both attempts fail, the error of
    /// the TLS attempt.
    pub(super) async fn connect(
        &self,
        options: PgConnectOptions,
    ) -> Result<(PgConnection, PgConnectOptions), sqlx::Error> {
        let first = PgConnection::connect_with(&options).await;
        let (Some(fallback), Err(e)) = (self.fallback, &first) else {
            return first.map(|conn| (conn, options));
        };
        if !(refused(e) || (matches!(self.first, PgSslMode::Prefer) && handshake_failed(e))) {
            return first.map(|conn| (conn, options));
        }
        let retry = options.ssl_mode(fallback);
        match PgConnection::connect_with(&retry).await {
            Ok(conn) => Ok((conn, retry)),
            Err(e) if matches!(fallback, PgSslMode::Disable) => Err(first.err().unwrap_or(e)),
            Err(e) => Err(e),
        }
    }
}

/// The server refused the connection for its encryption (pg_hba.conf: `hostssl`/`hostnossl`).
fn refused(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::Database(db) if db.code().as_deref() == Some("28000"))
}

/// The TLS handshake failed (or the server would not speak TLS).
fn handshake_failed(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Tls(_) => true,
        sqlx::Error::Io(io) => rustls_error(io).is_some(),
        _ => false,
    }
}

/// The rustls error inside an I/O error, as rustls reports handshake failures.
pub(super) fn rustls_error(io: &std::io::Error) -> Option<&rustls::Error> {
    io.get_ref()?.downcast_ref::<rustls::Error>()
}

fn read(path: &Path, what: &str) -> Result<Vec<u8>, String> {
    std::fs::read(path).map_err(|e| format!("cannot read {what} file {:?}: {e}", path.display()))
}

#[cfg(test)]
#[path = "tls_tests.rs"]
mod tests;

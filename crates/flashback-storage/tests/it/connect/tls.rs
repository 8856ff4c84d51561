//! PostgresStore over TLS with libpq's `sslmode` meanings, against throwaway clusters
//! (flashback-testkit) with certificates made here (rcgen):
//!
//! * `tls`: `ssl=on`, a self-signed certificate for 127.0.0.1 and localhost; a role that may
//!   only connect in plaintext and one that may only connect over TLS (pg_hba.conf);
//! * `plain`: no TLS at all;
//! * `ca`: TLS only, a certificate for another host name issued by a CA of its own, and
//!   client certificates of that CA required (`cert` authentication).
//!
//! Skipped when initdb/pg_ctl are not installed, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_storage::postgres::PostgresStore;
use flashback_storage::StoreError;
use flashback_testkit::cluster::{Cluster, ClusterConfig};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use sqlx::Connection as _;
use std::path::{Path, PathBuf};

/// Given in every URL: the trust clusters never ask for it, and no message may show it.
const PASSWORD: &str = "Tls-Secret-pw-4711";

/// Starts a cluster with `config`, or returns `None` (after saying why) where the testkit's
/// rules skip.
async fn cluster_or_skip(test: &str, config: ClusterConfig) -> Option<Cluster> {
    if let Some(reason) = Cluster::unavailable_reason() {
        if flashback_testkit::require_postgres() {
            panic!("PostgreSQL is required, but no throwaway cluster can be started: {reason}");
        }
        eprintln!("skipping {test}: {reason}");
        return None;
    }
    let cluster = tokio::task::spawn_blocking(move || Cluster::start_configured(&config))
        .await
        .unwrap()
        .unwrap_or_else(|reason| panic!("{test}: the throwaway cluster failed: {reason}"));
    Some(cluster)
}

async fn stop(mut cluster: Cluster) {
    tokio::task::spawn_blocking(move || cluster.stop())
        .await
        .unwrap();
}

/// `postgresql://user:PASSWORD@host:port/postgres?query`.
fn url(cluster: &Cluster, user: &str, host: &str, query: &str) -> String {
    let port = cluster.port();
    format!("postgresql://{user}:{PASSWORD}@{host}:{port}/postgres?{query}")
}

/// `url` for messages: without the password.
fn shown(url: &str) -> String {
    url.replace(PASSWORD, "***")
}

/// Connects (to a database without checkpoint tables, hence `connect_for_setup`) and tells
/// whether the session is encrypted, as the server sees a connection of the store's pool.
async fn encrypted(url: &str) -> bool {
    let store = PostgresStore::connect_for_setup(url)
        .await
        .unwrap_or_else(|e| panic!("{}: {e}", shown(url)));
    let encrypted = store.encrypted().await.unwrap();
    store.close().await;
    encrypted
}

/// Expects `url` to fail; checks that the message is one line without the password.
async fn error(url: &str) -> StoreError {
    match PostgresStore::connect_for_setup(url).await {
        Ok(store) => panic!("{} connected to {}", shown(url), store.target()),
        Err(e) => {
            for text in [e.to_string(), format!("{e:?}")] {
                assert!(!text.contains(PASSWORD), "the password leaked: {text}");
            }
            assert!(!e.to_string().contains('\n'), "not one line: {e}");
            e
        }
    }
}

/// Expects a connection error whose message contains `needle`.
async fn connection_error(url: &str, needle: &str) -> String {
    match error(url).await {
        StoreError::Connection(m) if m.contains(needle) => m,
        other => panic!(
            "{}: expected a connection error with {needle:?}, got {other:?}",
            shown(url)
        ),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

/// A self-signed certificate for 127.0.0.1 and localhost: (certificate, key) as PEM.
fn self_signed() -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let names = vec!["127.0.0.1".to_owned(), "localhost".to_owned()];
    let cert = CertificateParams::new(names)
        .unwrap()
        .self_signed(&key)
        .unwrap();
    (cert.pem(), key.serialize_pem())
}

/// Whether libpq's default root certificate exists here (it would stand in for a missing
/// `sslrootcert`).
fn default_root_exists() -> bool {
    std::env::var_os("HOME")
        .is_some_and(|home| Path::new(&home).join(".postgresql/root.crt").exists())
}

#[tokio::test]
async fn tls_server_follows_each_sslmode() {
    let (cert, key) = self_signed();
    let hba = "local all all trust\n\
               hostnossl all plain_only 127.0.0.1/32 trust\n\
               hostssl all tls_only 127.0.0.1/32 trust\n\
               host all postgres 127.0.0.1/32 trust\n\
               host all postgres ::1/128 trust";
    let config = ClusterConfig {
        data_files: vec![
            ("server.crt".into(), cert.clone()),
            ("server.key".into(), key),
            ("pg_hba.conf".into(), hba.into()),
        ],
        settings: vec![("ssl".into(), "on".into())],
    };
    let Some(cluster) = cluster_or_skip("tls_server_follows_each_sslmode", config).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = write(dir.path(), "server.pem", &cert);
    let root = root.display();
    let other = write(dir.path(), "other.pem", &self_signed().0);
    let other = other.display();
    let pg = |query: &str| url(&cluster, "postgres", "127.0.0.1", query);

    let mut admin = sqlx::PgConnection::connect(&cluster.url_as("postgres", None))
        .await
        .unwrap();
    sqlx::raw_sql("CREATE ROLE plain_only LOGIN; CREATE ROLE tls_only LOGIN")
        .execute(&mut admin)
        .await
        .unwrap();

    // prefer (the default) and require: encrypted, whatever the certificate.
    assert!(encrypted(&pg("")).await);
    assert!(encrypted(&pg("sslmode=prefer")).await);
    assert!(encrypted(&pg("sslmode=require")).await);
    // disable, and allow (plaintext first): not encrypted.
    assert!(!encrypted(&pg("sslmode=disable")).await);
    assert!(!encrypted(&pg("sslmode=allow")).await);

    // verify-ca / verify-full need the root certificate...
    if !default_root_exists() {
        for mode in ["verify-ca", "verify-full"] {
            match error(&pg(&format!("sslmode={mode}"))).await {
                StoreError::InvalidInput(m) => assert!(
                    m.starts_with(&format!(
                        "sslmode={mode} needs the server's root certificate: give sslrootcert="
                    )),
                    "{m}"
                ),
                other => panic!("sslmode={mode} without a root: {other:?}"),
            }
        }
    }
    // ... and connect with it, verify-full by either name the certificate lists.
    assert!(encrypted(&pg(&format!("sslmode=verify-ca&sslrootcert={root}"))).await);
    assert!(encrypted(&pg(&format!("sslmode=verify-full&sslrootcert={root}"))).await);
    let localhost = url(&cluster, "postgres", "localhost", "");
    assert!(
        encrypted(&format!(
            "{localhost}sslmode=verify-full&sslrootcert={root}"
        ))
        .await
    );

    // Another root: the certificate is not trusted (require with a root = verify-ca).
    for mode in ["verify-full", "verify-ca", "require"] {
        let m = connection_error(
            &pg(&format!("sslmode={mode}&sslrootcert={other}")),
            "certificate verify failed: the server's certificate is self-signed or issued by an \
             unknown CA",
        )
        .await;
        assert!(m.contains(&format!("sslrootcert={other}")), "{m}");
    }
    // The OS trust store does not know a self-signed certificate either.
    let m = connection_error(&pg("sslrootcert=system"), "certificate verify failed").await;
    assert!(m.ends_with("(sslmode=verify-full, sslrootcert=system; give sslrootcert=<the server's CA certificate file>)"), "{m}");
    assert!(matches!(
        error(&pg("sslmode=require&sslrootcert=system")).await,
        StoreError::InvalidInput(m) if m.starts_with("sslrootcert=system needs sslmode=verify-full")
    ));

    // libpq's fallbacks: prefer goes plaintext when the server refuses TLS for the role (and the
    // pool keeps to it), allow goes TLS when it refuses plaintext.
    let as_user = |user: &str, query: &str| url(&cluster, user, "127.0.0.1", query);
    assert!(!encrypted(&as_user("plain_only", "sslmode=prefer")).await);
    assert!(encrypted(&as_user("tls_only", "sslmode=allow")).await);
    match error(&as_user("plain_only", "sslmode=require")).await {
        StoreError::Auth(m) => assert!(m.contains("SSL encryption"), "{m}"),
        other => panic!("plain_only over TLS: {other:?}"),
    }
    match error(&as_user("tls_only", "sslmode=disable")).await {
        StoreError::Auth(m) => assert!(
            m.ends_with("no encryption (sslmode=disable, but the server requires TLS here: use sslmode=require or stronger)"),
            "{m}"
        ),
        other => panic!("tls_only in plaintext: {other:?}"),
    }

    // No TLS over a Unix socket, whatever sslmode says (as libpq).
    let socket = format!(
        "postgresql:///postgres?host={}&port={}&user=postgres&sslmode=verify-full",
        cluster.dir().display(),
        cluster.port()
    );
    assert!(!encrypted(&socket).await);

    drop(admin);
    stop(cluster).await;
}

#[tokio::test]
async fn server_without_tls() {
    let Some(cluster) = cluster_or_skip("server_without_tls", ClusterConfig::default()).await
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = write(dir.path(), "root.pem", &self_signed().0);
    let pg = |query: &str| url(&cluster, "postgres", "127.0.0.1", query);

    assert!(!encrypted(&pg("")).await);
    assert!(!encrypted(&pg("sslmode=prefer")).await);
    assert!(!encrypted(&pg("sslmode=allow")).await);
    assert!(!encrypted(&pg("sslmode=disable")).await);
    let m = connection_error(&pg("sslmode=require"), "").await;
    assert_eq!(
        m,
        format!(
            "127.0.0.1:{}: the server does not support TLS but sslmode=require",
            cluster.port()
        )
    );
    let query = format!("sslmode=verify-full&sslrootcert={}", root.display());
    connection_error(
        &pg(&query),
        "the server does not support TLS but sslmode=verify-full",
    )
    .await;
    stop(cluster).await;
}

#[tokio::test]
async fn tls_handshake_failure() {
    // A server that offers TLS but only versions Flashback does not speak (1.0, 1.1).
    let (cert, key) = self_signed();
    let config = ClusterConfig {
        data_files: vec![("server.crt".into(), cert), ("server.key".into(), key)],
        settings: vec![
            ("ssl".into(), "on".into()),
            ("ssl_min_protocol_version".into(), "TLSv1".into()),
            ("ssl_max_protocol_version".into(), "TLSv1.1".into()),
        ],
    };
    let Some(cluster) = cluster_or_skip("tls_handshake_failure", config).await else {
        return;
    };
    let pg = |query: &str| url(&cluster, "postgres", "127.0.0.1", query);
    // prefer goes plaintext when the TLS session fails, as libpq does; require does not.
    assert!(!encrypted(&pg("sslmode=prefer")).await);
    connection_error(
        &pg("sslmode=require"),
        "TLS handshake failed: the server speaks neither TLS 1.2 nor TLS 1.3 (sslmode=require)",
    )
    .await;
    stop(cluster).await;
}

/// A CA, and (certificate, key) PEM pairs it issued.
struct Ca {
    cert: String,
    issuer: Issuer<'static, KeyPair>,
}

impl Ca {
    fn new(name: &str) -> Ca {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign];
        let cert = params.self_signed(&key).unwrap().pem();
        Ca {
            cert,
            issuer: Issuer::new(params, key),
        }
    }

    /// A certificate for `names` (subject alternative names) with common name `cn`.
    fn issue(&self, names: &[&str], cn: &str) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, cn);
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

#[tokio::test]
async fn ca_issued_certificates_and_client_certificates() {
    let ca = Ca::new("Flashback test CA");
    let (server_cert, server_key) = ca.issue(&["db.flashback.test"], "db.flashback.test");
    let config = ClusterConfig {
        data_files: vec![
            ("server.crt".into(), server_cert),
            ("server.key".into(), server_key),
            ("root.crt".into(), ca.cert.clone()),
            (
                "pg_hba.conf".into(),
                "local all all trust\nhostssl all postgres 127.0.0.1/32 cert".into(),
            ),
        ],
        settings: vec![
            ("ssl".into(), "on".into()),
            ("ssl_ca_file".into(), "root.crt".into()),
        ],
    };
    let test = "ca_issued_certificates_and_client_certificates";
    let Some(cluster) = cluster_or_skip(test, config).await else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = write(dir.path(), "ca.pem", &ca.cert);
    let (client_cert, client_key) = ca.issue(&[], "postgres");
    let cert = write(dir.path(), "client.crt", &client_cert);
    let key = write(dir.path(), "client.key", &client_key);
    let (stranger_cert, stranger_key) = Ca::new("Another CA").issue(&[], "postgres");
    let stranger_cert = write(dir.path(), "stranger.crt", &stranger_cert);
    let stranger_key = write(dir.path(), "stranger.key", &stranger_key);
    let client = format!("sslcert={}&sslkey={}", cert.display(), key.display());
    let pg = |query: &str| {
        let query = format!("sslrootcert={}&{query}", root.display());
        url(&cluster, "postgres", "127.0.0.1", &query)
    };

    // The chain checks out against the CA; the client certificate gets the role in.
    assert!(encrypted(&pg(&format!("sslmode=verify-ca&{client}"))).await);
    // verify-full: the certificate is for another host name.
    let m = connection_error(
        &pg(&format!("sslmode=verify-full&{client}")),
        "certificate verify failed: the server's certificate is for db.flashback.test, not \
         127.0.0.1",
    )
    .await;
    assert!(m.contains("use sslmode=verify-ca"), "{m}");

    // Without a client certificate, or with one of another CA, the server says no.
    match error(&pg("sslmode=verify-ca")).await {
        StoreError::Auth(m) => assert!(m.contains("certificate"), "{m}"),
        other => panic!("no client certificate: {other:?}"),
    }
    let stranger = format!(
        "sslmode=verify-ca&sslcert={}&sslkey={}",
        stranger_cert.display(),
        stranger_key.display()
    );
    connection_error(
        &pg(&stranger),
        "TLS handshake failed: the server rejected the client certificate",
    )
    .await;
    // Plaintext is refused; allow then tries TLS (with the client certificate).
    match error(&pg("sslmode=disable")).await {
        StoreError::Auth(m) => assert!(m.contains("use sslmode=require"), "{m}"),
        other => panic!("plaintext: {other:?}"),
    }
    assert!(encrypted(&pg(&format!("sslmode=allow&{client}"))).await);

    // Files that are not there are named before connecting.
    match error(&pg(
        "sslmode=require&sslcert=/nonexistent/c.crt&sslkey=/x.key",
    ))
    .await
    {
        StoreError::InvalidInput(m) => {
            assert_eq!(m, "sslcert file \"/nonexistent/c.crt\" does not exist")
        }
        other => panic!("missing sslcert: {other:?}"),
    }
    stop(cluster).await;
}

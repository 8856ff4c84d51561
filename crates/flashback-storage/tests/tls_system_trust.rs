//! `sslrootcert=system` (the OS trust store) against a throwaway cluster whose self-signed
//! certificate the "OS" trusts: `SSL_CERT_FILE`, which the trust store loader
//! (rustls-native-certs) reads instead of the system's store. A binary of its own, because
//! it sets that variable for the whole process, before any other thread runs.
//!
//! Skipped when initdb/pg_ctl are not installed, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_storage::postgres::PostgresStore;
use flashback_testkit::cluster::{Cluster, ClusterConfig};
use rcgen::{CertificateParams, DnType, KeyPair};

/// A self-signed certificate for 127.0.0.1 and localhost named `cn`: (certificate, key).
fn self_signed(cn: &str) -> (String, String) {
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["127.0.0.1".into(), "localhost".into()]).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    (params.self_signed(&key).unwrap().pem(), key.serialize_pem())
}

async fn encrypted(url: &str) -> Result<bool, String> {
    let store = PostgresStore::connect_for_setup(url)
        .await
        .map_err(|e| e.to_string())?;
    let encrypted = store.encrypted().await.map_err(|e| e.to_string())?;
    store.close().await;
    Ok(encrypted)
}

#[test]
fn system_trust_store() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key) = self_signed("Flashback test server");
    let trusted = dir.path().join("os-trust-store.pem");
    std::fs::write(&trusted, &cert).unwrap();
    // Before the runtime and any other thread exist.
    std::env::set_var("SSL_CERT_FILE", &trusted);
    std::env::remove_var("SSL_CERT_DIR");

    if let Some(reason) = Cluster::unavailable_reason() {
        if flashback_testkit::require_postgres() {
            panic!("PostgreSQL is required, but no throwaway cluster can be started: {reason}");
        }
        eprintln!("skipping system_trust_store: {reason}");
        return;
    }
    let config = ClusterConfig {
        data_files: vec![("server.crt".into(), cert), ("server.key".into(), key)],
        settings: vec![("ssl".into(), "on".into())],
    };
    let mut cluster = Cluster::start_configured(&config)
        .unwrap_or_else(|reason| panic!("the throwaway cluster failed: {reason}"));
    let other = dir.path().join("other.pem");
    std::fs::write(&other, self_signed("Another server").0).unwrap();
    let base = format!(
        "postgresql://postgres@127.0.0.1:{}/postgres",
        cluster.port()
    );

    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        // sslrootcert=system means verify-full against the OS trust store.
        assert_eq!(
            encrypted(&format!("{base}?sslrootcert=system")).await,
            Ok(true)
        );
        let localhost = base.replace("127.0.0.1", "localhost");
        let url = format!("{localhost}?sslmode=verify-full&sslrootcert=system");
        assert_eq!(encrypted(&url).await, Ok(true));

        // Where sqlx differs from libpq (README): the OS trust store is trusted on top of a
        // sslrootcert file, so a root that did not sign the certificate does not stop it. If
        // this starts failing, the gap is closed: update README and postgres/tls.rs.
        let url = format!("{base}?sslmode=verify-full&sslrootcert={}", other.display());
        assert_eq!(encrypted(&url).await, Ok(true));
    });
    cluster.stop();
}

//! PostgresStore against a server that requires passwords: a throwaway cluster with
//! `scram-sha-256` auth (flashback-testkit), since the usual test server trusts every local
//! connection and so can never reject a password. Skipped when initdb/pg_ctl are not
//! installed, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_storage::postgres::PostgresStore;
use flashback_storage::StoreError;
use flashback_testkit::cluster::Cluster;

const PASSWORD: &str = "Right-Pw-4-flashback-test";
const WRONG_PASSWORD: &str = "Wr0ng-Pw-zq81";
const UNKNOWN_USER: &str = "fb_no_such_role";

/// Connects and expects `StoreError::Auth`; returns its message after checking that neither
/// it nor the error's `Display`/`Debug` forms leak `password`.
async fn expect_auth(url: &str, password: &str) -> String {
    match PostgresStore::connect(url).await {
        Err(err @ StoreError::Auth(_)) => {
            for text in [err.to_string(), format!("{err:?}")] {
                assert!(
                    !text.contains(password),
                    "the password leaked into the error: {text}"
                );
            }
            assert!(
                err.to_string().starts_with("authentication failed: "),
                "{err}"
            );
            let StoreError::Auth(msg) = err else {
                unreachable!()
            };
            msg
        }
        Err(other) => panic!("expected StoreError::Auth, got {:?}: {other}", other.code()),
        Ok(store) => panic!("connected to {} despite bad credentials", store.target()),
    }
}

#[tokio::test]
async fn wrong_credentials_are_auth_errors_without_the_password() {
    if let Some(reason) = Cluster::unavailable_reason() {
        if flashback_testkit::require_postgres() {
            panic!("PostgreSQL is required, but no throwaway cluster can be started: {reason}");
        }
        eprintln!("skipping wrong_credentials_are_auth_errors_without_the_password: {reason}");
        return;
    }
    let mut cluster = tokio::task::spawn_blocking(|| Cluster::start_with_password(PASSWORD))
        .await
        .unwrap()
        .unwrap_or_else(|reason| panic!("password-protected throwaway cluster failed: {reason}"));
    assert_eq!(cluster.password(), Some(PASSWORD));
    let port = cluster.port();

    // Wrong password for an existing user.
    let msg = expect_auth(
        &cluster.url_as("postgres", Some(WRONG_PASSWORD)),
        WRONG_PASSWORD,
    )
    .await;
    assert!(msg.contains("authentication"), "{msg}");
    assert!(msg.contains("\"postgres\""), "the user is not named: {msg}");
    assert!(msg.contains(&format!("127.0.0.1:{port}")), "{msg}");

    // A user that does not exist (with some password): the server answers the same way.
    let msg = expect_auth(
        &cluster.url_as(UNKNOWN_USER, Some(WRONG_PASSWORD)),
        WRONG_PASSWORD,
    )
    .await;
    assert!(msg.contains("authentication"), "{msg}");
    assert!(msg.contains(UNKNOWN_USER), "the user is not named: {msg}");

    // The right password gets past authentication; the empty database then has no LangGraph
    // tables.
    match PostgresStore::connect(&cluster.admin_url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(!found.contains(PASSWORD), "{found}");
        }
        Err(other) => panic!(
            "expected UnsupportedSchema with the right password, got {:?}: {other}",
            other.code()
        ),
        Ok(store) => panic!("an empty database was accepted: {}", store.target()),
    }

    tokio::task::spawn_blocking(move || cluster.stop())
        .await
        .unwrap();
}

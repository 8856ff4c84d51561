//! PostgresStore against hand-built databases: connecting and read-only access. Connection
//! errors are classified without revealing the password, and reading never writes.
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/store.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::store::*;
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, ListQuery, StoreError};
use flashback_testkit::TestPg;
use sqlx::postgres::PgConnectOptions;
use sqlx::{AssertSqlSafe, PgConnection};
use std::str::FromStr as _;

fn url_for(pg: &TestPg, user: &str, password: Option<&str>, database: &str) -> String {
    let o = PgConnectOptions::from_str(pg.url()).unwrap();
    let auth = match password {
        Some(p) => format!("{user}:{p}"),
        None => user.to_owned(),
    };
    format!(
        "postgresql://{auth}@{}:{}/{database}",
        o.get_host(),
        o.get_port()
    )
}

#[tokio::test]
async fn connection_errors_are_classified_without_the_password() {
    // Nothing listens on port 1: refused, reported at once (no pool retry loop).
    let started = std::time::Instant::now();
    match PostgresStore::connect("postgresql://someone:hunter2-secret@127.0.0.1:1/db").await {
        Err(StoreError::Connection(m)) => {
            assert!(m.contains("127.0.0.1:1"), "{m}");
            assert!(!m.contains("hunter2"), "{m}");
        }
        other => panic!("expected Connection, got {other:?}"),
    }
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    match PostgresStore::connect("not a url").await {
        Err(StoreError::InvalidInput(_)) => {}
        other => panic!("expected InvalidInput, got {other:?}"),
    }

    let Some(pg) = flashback_testkit::postgres_or_skip().await else {
        return;
    };
    let admin = PgConnectOptions::from_str(pg.url()).unwrap();
    let admin_user = admin.get_username().to_owned();

    match PostgresStore::connect(&url_for(
        &pg,
        &admin_user,
        Some("pw-1234"),
        "fb_no_such_database_xyz",
    ))
    .await
    {
        Err(StoreError::NotFound(m)) => {
            assert!(m.contains("fb_no_such_database_xyz"), "{m}");
            assert!(!m.contains("pw-1234"), "{m}");
        }
        other => panic!("expected NotFound, got {other:?}"),
    }

    // A role that does not exist is refused even under trust authentication (28000).
    match PostgresStore::connect(&url_for(
        &pg,
        "fb_no_such_role_xyz",
        Some("pw-5678"),
        pg.database(),
    ))
    .await
    {
        Err(StoreError::Auth(m)) => {
            assert!(m.contains("fb_no_such_role_xyz"), "{m}");
            assert!(!m.contains("pw-5678"), "{m}");
        }
        other => panic!("expected Auth, got {other:?}"),
    }

    // A wrong password (28P01): only testable when the server checks passwords; the local
    // test server may trust 127.0.0.1, in which case the connection simply succeeds.
    let role = format!("fb_pw_{}", std::process::id());
    let mut conn = pg.connect().await.unwrap();
    exec(&mut conn, &format!("DROP ROLE IF EXISTS {role}")).await;
    exec(
        &mut conn,
        &format!("CREATE ROLE {role} LOGIN PASSWORD 'right-password'"),
    )
    .await;
    let result =
        PostgresStore::connect(&url_for(&pg, &role, Some("wrong-password"), pg.database())).await;
    exec(&mut conn, &format!("DROP ROLE IF EXISTS {role}")).await;
    match result {
        Err(StoreError::Auth(m)) => assert!(!m.contains("wrong-password"), "{m}"),
        // Trust authentication: connected, then found no checkpoint tables.
        Err(StoreError::UnsupportedSchema { .. }) => {
            eprintln!(
                "note: the test server accepted a wrong password (trust auth); 28P01 not exercised"
            )
        }
        other => panic!("expected Auth (or trust), got {other:?}"),
    }
}

async fn fingerprint(conn: &mut PgConnection) -> Vec<(String, i64, String)> {
    let mut out = Vec::new();
    for table in [
        "checkpoints",
        "checkpoint_blobs",
        "checkpoint_writes",
        "checkpoint_migrations",
    ] {
        let row: (i64, Option<String>) = sqlx::query_as(AssertSqlSafe(format!(
            "SELECT count(*), md5(string_agg(t::text, '|' ORDER BY t::text)) FROM {table} AS t"
        )))
        .fetch_one(&mut *conn)
        .await
        .unwrap();
        out.push((table.to_owned(), row.0, row.1.unwrap_or_default()));
    }
    let tables: (i64,) =
        sqlx::query_as("SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace")
            .fetch_one(&mut *conn)
            .await
            .unwrap();
    out.push(("relations".into(), tables.0, String::new()));
    out
}

#[tokio::test]
async fn reading_never_writes() {
    let Some((pg, mut conn)) = full_db(9).await else {
        return;
    };
    build_basic(&mut conn).await;
    let before = fingerprint(&mut conn).await;

    let store = PostgresStore::connect(pg.url()).await.unwrap();
    let threads = store.list_threads().await.unwrap();
    for t in &threads {
        store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .unwrap();
        store
            .list_headers(&ListQuery::thread(&t.thread_id))
            .await
            .unwrap();
        for ns in &t.namespaces {
            store.get_tuple(&t.thread_id, ns, None).await.unwrap();
        }
    }
    store.list_tuples(&ListQuery::default()).await.unwrap();
    store.close().await;

    assert_eq!(fingerprint(&mut conn).await, before);
    // No session of ours is left idle in a transaction.
    let open: (i64,) = sqlx::query_as(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() \
         AND application_name = 'flashback' AND state LIKE 'idle in transaction%'",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(open.0, 0);
}

//! Starts and stops a throwaway cluster directly (the fallback used when no server is
//! configured or listening on 127.0.0.1:5432). Skips when initdb/pg_ctl are not installed.

use flashback_testkit::cluster::Cluster;
use sqlx::Connection as _;

#[tokio::test]
async fn throwaway_cluster_starts_serves_and_cleans_up() {
    let mut cluster = match tokio::task::spawn_blocking(Cluster::start).await.unwrap() {
        Ok(cluster) => cluster,
        Err(reason) if reason.contains("not found") => {
            eprintln!("skipping: {reason}");
            return;
        }
        Err(reason) => panic!("throwaway cluster failed: {reason}"),
    };
    let dir = cluster.dir().to_owned();
    assert!(dir.join("data").join("PG_VERSION").exists());
    assert!(dir.join(format!(".s.PGSQL.{}", cluster.port())).exists());

    let mut conn = sqlx::PgConnection::connect(&cluster.admin_url())
        .await
        .expect("connect to the throwaway cluster");
    let listen: String = sqlx::query_scalar("SHOW listen_addresses")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(listen, "127.0.0.1");
    let encoding: String = sqlx::query_scalar("SHOW server_encoding")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(encoding, "UTF8");
    drop(conn);

    let url = cluster.admin_url();
    tokio::task::spawn_blocking(move || cluster.stop())
        .await
        .unwrap();
    assert!(!dir.exists(), "{} left behind", dir.display());
    assert!(sqlx::PgConnection::connect(&url).await.is_err());
}

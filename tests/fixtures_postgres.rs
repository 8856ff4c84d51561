//! Flashback reads the Python-generated Postgres fixture exactly as Python's `PostgresSaver` does.

mod common;

use common::*;
use flashback_codec::{decode_typed, encode_typed};
use flashback_storage::postgres::PostgresStore;
use flashback_storage::{CheckpointStore, Decoded, ListQuery};
use sqlx::Row;

async fn fixture_db() -> Option<flashback_testkit::TestPg> {
    let pg = flashback_testkit::postgres_or_skip().await?;
    let dump = std::fs::read_to_string(fixtures_dir().join("postgres.sql")).expect("read dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load dump");
    Some(pg)
}

#[tokio::test]
async fn every_checkpoint_matches_python() {
    let Some(pg) = fixture_db().await else { return };
    let store = PostgresStore::connect(pg.url()).await.expect("connect");
    assert_eq!(
        store.schema().migration_version,
        Some(9),
        "{:?}",
        store.schema()
    );
    let n = compare_with_python(&store, &expected("postgres")).await;
    assert!(n > 300, "compared only {n} checkpoints");
}

#[tokio::test]
async fn a_thread_lists_reads_derive_what_full_reads_derive() {
    let Some(pg) = fixture_db().await else { return };
    let store = PostgresStore::connect(pg.url()).await.expect("connect");
    let n = compare_selecting_reads(&store).await;
    assert!(n > 300, "compared only {n} checkpoints");
}

#[tokio::test]
async fn next_tasks_match_python_get_state() {
    let Some(pg) = fixture_db().await else { return };
    let store = PostgresStore::connect(pg.url()).await.expect("connect");
    let n = compare_tasks_with_python(&store, &expected("postgres")).await;
    assert!(n > 50, "compared tasks of only {n} checkpoints");
}

#[tokio::test]
async fn every_blob_round_trips_byte_identically() {
    let Some(pg) = fixture_db().await else { return };
    let pool = pg.pool().await.expect("pool");
    let mut count = 0;
    for sql in [
        "SELECT type, blob FROM checkpoint_blobs WHERE blob IS NOT NULL",
        "SELECT type, blob FROM checkpoint_writes",
    ] {
        for row in sqlx::query(sql).fetch_all(&pool).await.expect("query") {
            let tag: String = row.get(0);
            let data: Vec<u8> = row.get(1);
            let decoded = decode_typed(&tag, Some(&data));
            assert!(
                !matches!(decoded, Decoded::Error { .. }),
                "{sql}: {decoded:?}"
            );
            assert_eq!(encode_typed(&decoded), (tag, data), "{sql}: round trip");
            count += 1;
        }
    }
    assert!(count > 1000, "only {count} blobs");
}

#[tokio::test]
async fn browsing_never_writes() {
    let Some(pg) = fixture_db().await else { return };
    let pool = pg.pool().await.expect("pool");
    let digest = "SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM \
                  (SELECT c::text AS t FROM checkpoints c UNION ALL SELECT b::text FROM checkpoint_blobs b \
                   UNION ALL SELECT w::text FROM checkpoint_writes w UNION ALL SELECT m::text FROM checkpoint_migrations m) s";
    let before: String = sqlx::query_scalar(digest)
        .fetch_one(&pool)
        .await
        .expect("digest");
    let store = PostgresStore::connect(pg.url()).await.expect("connect");
    for t in store.list_threads().await.expect("threads") {
        store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .expect("list");
    }
    drop(store);
    let after: String = sqlx::query_scalar(digest)
        .fetch_one(&pool)
        .await
        .expect("digest");
    assert_eq!(before, after, "reading changed the database");
}

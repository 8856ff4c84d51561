//! `start_storage_report` on Postgres: the fixture's dump (LangGraph's schema) and its
//! three-table copy, every figure cross-checked against the SQL of `docs/storage.md` run here
//! with sqlx; orphans inserted are found; the tables' sizes are Postgres's.

use crate::common;
use common::space::report;
use common::three::converted_to_pg;
use common::*;
use flashback_api::storage_report::*;
use flashback_api::*;
use sqlx::{PgPool, Row as _};
use std::collections::BTreeMap;

async fn grouped(pool: &PgPool, sql: &str) -> BTreeMap<String, (u64, u64)> {
    sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_all(pool)
        .await
        .expect(sql)
        .iter()
        .map(|r| {
            let n: i64 = r.get(1);
            let b: Option<i64> = r.get(2);
            (r.get::<String, _>(0), (n as u64, b.unwrap_or(0) as u64))
        })
        .collect()
}

async fn one(pool: &PgPool, sql: &str) -> (u64, u64) {
    let r = sqlx::query(sqlx::AssertSqlSafe(sql.to_owned()))
        .fetch_one(pool)
        .await
        .expect(sql);
    let n: i64 = r.get(0);
    let b: Option<i64> = r.get(1);
    (n as u64, b.unwrap_or(0) as u64)
}

fn tallies(r: &StorageReport, f: fn(&ChannelUsage) -> Tally) -> BTreeMap<String, (u64, u64)> {
    r.by_channel
        .iter()
        .map(|c| (c.channel.clone(), f(c)))
        .filter(|(_, t)| t.count > 0)
        .map(|(k, t)| (k, (t.count, t.bytes)))
        .collect()
}

fn threads(r: &StorageReport) -> BTreeMap<String, (u64, u64)> {
    r.by_thread
        .iter()
        .map(|k| {
            (
                k.key.clone(),
                (k.usage.checkpoints.count, k.usage.total_bytes),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_postgres_fixture_is_measured_as_sql_measures_it() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixtures().join("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let pool = pg.pool().await.expect("pool");
    sqlx::raw_sql(
        "INSERT INTO checkpoint_blobs VALUES ('chat-tools', '', 'messages', 'nobody', 'msgpack', \
           '\\x010203'::bytea); \
         INSERT INTO checkpoint_writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, \
           channel, type, blob, task_path) VALUES ('chat-tools', '', 'gone', 't', 0, 'messages', \
           'msgpack', '\\x0102030405'::bytea, '')",
    )
    .execute(&pool)
    .await
    .expect("orphans");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    let r = report(&api, &db.db, None, 1000).await;
    assert_eq!(r.layout, "langgraph-postgres");

    let t = &r.totals;
    let docs = one(
        &pool,
        "SELECT count(*), sum(octet_length(checkpoint::text))::int8 FROM checkpoints",
    )
    .await;
    let meta = one(
        &pool,
        "SELECT count(*), sum(octet_length(metadata::text))::int8 FROM checkpoints",
    )
    .await;
    let blobs = one(
        &pool,
        "SELECT count(*), sum(octet_length(blob))::int8 FROM checkpoint_blobs",
    )
    .await;
    let writes = one(
        &pool,
        "SELECT count(*), sum(octet_length(blob))::int8 FROM checkpoint_writes",
    )
    .await;
    assert_eq!((t.checkpoints.count, t.checkpoints.bytes), docs);
    assert_eq!(t.metadata_bytes, meta.1);
    assert_eq!((t.blobs.count, t.blobs.bytes), blobs);
    assert_eq!((t.writes.count, t.writes.bytes), writes);

    let per_thread = grouped(
        &pool,
        "SELECT thread_id, sum(c)::int8, sum(b)::int8 FROM ( \
           SELECT thread_id, 1 AS c, octet_length(checkpoint::text) + octet_length(metadata::text) AS b FROM checkpoints \
           UNION ALL SELECT thread_id, 0, coalesce(octet_length(blob), 0) FROM checkpoint_blobs \
           UNION ALL SELECT thread_id, 0, coalesce(octet_length(blob), 0) FROM checkpoint_writes) u \
         GROUP BY thread_id",
    )
    .await;
    assert_eq!(threads(&r), per_thread);

    let inline = grouped(
        &pool,
        "SELECT e.key, count(*), sum(octet_length(e.value::text))::int8 FROM checkpoints c \
         CROSS JOIN LATERAL jsonb_each(c.checkpoint -> 'channel_values') e GROUP BY e.key",
    )
    .await;
    assert_eq!(tallies(&r, |c| c.inline), inline);
    let by_blob = grouped(
        &pool,
        "SELECT channel, count(*), sum(octet_length(blob))::int8 FROM checkpoint_blobs GROUP BY channel",
    )
    .await;
    assert_eq!(tallies(&r, |c| c.blobs), by_blob);
    let by_write = grouped(
        &pool,
        "SELECT channel, count(*), sum(octet_length(blob))::int8 FROM checkpoint_writes GROUP BY channel",
    )
    .await;
    assert_eq!(tallies(&r, |c| c.writes), by_write);

    let orphan_blobs = one(
        &pool,
        "SELECT count(*), sum(octet_length(b.blob))::int8 FROM checkpoint_blobs b WHERE NOT EXISTS \
         (SELECT 1 FROM checkpoints c WHERE c.thread_id = b.thread_id \
          AND c.checkpoint_ns = b.checkpoint_ns \
          AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version)",
    )
    .await;
    assert_eq!((r.orphans.blobs.count, r.orphans.blobs.bytes), orphan_blobs);
    assert_eq!(orphan_blobs, (1, 3));
    assert_eq!(r.orphans.writes, Tally { count: 1, bytes: 5 });

    let q = r
        .quadratic
        .iter()
        .find(|q| q.thread_id == "chat-tools" && q.channel == "messages")
        .expect("messages flagged");
    let versions = one(
        &pool,
        "SELECT count(*), sum(octet_length(blob))::int8 FROM checkpoint_blobs \
         WHERE thread_id = 'chat-tools' AND channel = 'messages' AND version <> 'nobody'",
    )
    .await;
    assert_eq!((q.stores, q.stored_bytes), versions);

    // Each checkpoint's blobs are the versions it introduced, as docs/storage.md's SQL says.
    let introduced = grouped(
        &pool,
        "SELECT c.checkpoint_id, count(*), sum(octet_length(b.blob))::int8 FROM checkpoint_blobs b \
         JOIN LATERAL (SELECT min(checkpoint_id) AS checkpoint_id FROM checkpoints c \
           WHERE c.thread_id = b.thread_id AND c.checkpoint_ns = b.checkpoint_ns \
           AND c.checkpoint -> 'channel_versions' ->> b.channel = b.version) c ON true \
         WHERE b.thread_id = 'chat-tools' AND c.checkpoint_id IS NOT NULL GROUP BY 1",
    )
    .await;
    let t = report(&api, &db.db, Some("chat-tools"), 20).await;
    let got: BTreeMap<String, (u64, u64)> = t
        .growth
        .iter()
        .filter(|g| g.blobs.count > 0)
        .map(|g| (g.checkpoint_id.clone(), (g.blobs.count, g.blobs.bytes)))
        .collect();
    assert_eq!(got, introduced);
    assert_eq!(t.orphans.blobs, Tally { count: 1, bytes: 3 });

    let main = one(
        &pool,
        "SELECT 0::int8, pg_relation_size('checkpoint_blobs')::int8",
    )
    .await;
    let rel = r
        .space
        .relations
        .iter()
        .find(|t| t.table == "checkpoint_blobs")
        .expect("blobs table");
    assert_eq!(rel.table_bytes, main.1);
    assert!(rel.total_bytes >= rel.table_bytes + rel.index_bytes);
    assert_eq!(r.unmeasured.count, 0);
}

#[tokio::test]
async fn a_postgres_three_table_copy_is_measured_by_its_blob_rows() {
    let pg = flashback_testkit::pg_or_skip!();
    let f = opened_fixture().await;
    let three = converted_to_pg(&f, pg.url()).await;
    let OpenedFixture { dir: _dir, api, .. } = f;
    let r = report(&api, &three.db, None, 1000).await;
    assert_eq!(r.layout, "three-table-postgres");
    let pool = pg.pool().await.expect("pool");
    let blobs = one(
        &pool,
        "SELECT count(*), sum(octet_length(blob_data))::int8 FROM checkpoint_blobs",
    )
    .await;
    assert_eq!((r.totals.blobs.count, r.totals.blobs.bytes), blobs);
    let per_thread = grouped(
        &pool,
        "SELECT thread_id, sum(c)::int8, sum(b)::int8 FROM ( \
           SELECT thread_id, 1 AS c, octet_length(checkpoint) + octet_length(metadata::text) AS b FROM checkpoints \
           UNION ALL SELECT thread_id, 0, coalesce(octet_length(blob_data), 0) FROM checkpoint_blobs \
           UNION ALL SELECT thread_id, 0, coalesce(octet_length(blob_data), 0) FROM checkpoint_writes) u \
         GROUP BY thread_id",
    )
    .await;
    assert_eq!(threads(&r), per_thread);
    let namespaces = grouped(
        &pool,
        "SELECT (SELECT checkpoint_ns FROM checkpoints c WHERE c.checkpoint_ns_hash = b.checkpoint_ns_hash LIMIT 1), \
         count(*), sum(octet_length(blob_data))::int8 FROM checkpoint_blobs b GROUP BY checkpoint_ns_hash",
    )
    .await;
    let got: BTreeMap<String, (u64, u64)> = r
        .by_namespace
        .iter()
        .map(|k| (k.key.clone(), (k.usage.blobs.count, k.usage.blobs.bytes)))
        .collect();
    assert_eq!(got, namespaces);
    assert_eq!(r.orphans, Orphans::default());
    let t = report(&api, &three.db, Some("chat-tools"), 20).await;
    let introduced = t
        .growth
        .iter()
        .fold((0, 0), |(n, b), g| (n + g.blobs.count, b + g.blobs.bytes));
    let thread_blobs = one(
        &pool,
        "SELECT count(*), sum(octet_length(blob_data))::int8 FROM checkpoint_blobs \
         WHERE thread_id = 'chat-tools'",
    )
    .await;
    assert_eq!(introduced, thread_blobs);
    assert!(t.quadratic.is_empty(), "deltas: {:?}", t.quadratic);
}

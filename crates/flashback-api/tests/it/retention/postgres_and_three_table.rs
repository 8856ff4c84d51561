//! `prune_database` on LangGraph's Postgres schema (the fixture's dump) and on the three-table
//! store (Postgres and SQLite copies of the fixture): keep_last 3 along the head's lineage with
//! the head's state unchanged, delete by status, a dry run that changes no row, the bytes
//! checked against SQL of our own (`docs/storage.md`), and VACUUM ANALYZE.

use crate::common;
use common::three::{convert, converted_to_pg};
use common::*;
use flashback_api::*;
use sqlx::{PgPool, Row as _};
use std::collections::HashMap;
use std::path::PathBuf;

/// Per thread: checkpoint rows, write rows, blob rows, bytes as stored.
type Usage = HashMap<String, [u64; 4]>;

enum Layout {
    LangGraphPg(PgPool),
    ThreePg(PgPool),
    ThreeSqlite(PathBuf),
}

/// `(table, count column index, bytes expression)` per layout, as `docs/storage.md` measures.
fn measures(l: &Layout) -> [(&'static str, usize, &'static str); 3] {
    match l {
        Layout::LangGraphPg(_) => [
            (
                "checkpoints",
                0,
                "octet_length(checkpoint::text) + octet_length(metadata::text)",
            ),
            ("checkpoint_writes", 1, "octet_length(blob)"),
            ("checkpoint_blobs", 2, "coalesce(octet_length(blob), 0)"),
        ],
        Layout::ThreePg(_) => [
            (
                "checkpoints",
                0,
                "octet_length(checkpoint) + octet_length(metadata::text)",
            ),
            (
                "checkpoint_writes",
                1,
                "coalesce(octet_length(blob_data), 0)",
            ),
            (
                "checkpoint_blobs",
                2,
                "coalesce(octet_length(blob_data), 0)",
            ),
        ],
        Layout::ThreeSqlite(_) => [
            (
                "checkpoints",
                0,
                "length(CAST(checkpoint AS BLOB)) + coalesce(length(CAST(metadata AS BLOB)), 0)",
            ),
            (
                "checkpoint_writes",
                1,
                "coalesce(length(CAST(blob_data AS BLOB)), 0)",
            ),
            (
                "checkpoint_blobs",
                2,
                "coalesce(length(CAST(blob_data AS BLOB)), 0)",
            ),
        ],
    }
}

async fn usage(l: &Layout) -> Usage {
    let mut out = Usage::new();
    for (table, i, bytes) in measures(l) {
        let sql =
            format!("SELECT thread_id, count(*), sum({bytes}) FROM {table} GROUP BY thread_id");
        let rows: Vec<(String, i64, i64)> = match l {
            Layout::LangGraphPg(pool) | Layout::ThreePg(pool) => {
                let sql = sql
                    .replace("sum(", "coalesce(sum(")
                    .replace(") FROM", "), 0)::int8 FROM");
                sqlx::query(sqlx::AssertSqlSafe(sql.clone()))
                    .fetch_all(pool)
                    .await
                    .expect(&sql)
                    .iter()
                    .map(|r| (r.get(0), r.get(1), r.get(2)))
                    .collect()
            }
            Layout::ThreeSqlite(path) => {
                let conn = rusqlite::Connection::open(path).expect("open");
                let mut stmt = conn.prepare(&sql).expect("sql");
                stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                    .expect("query")
                    .map(|r| r.expect("row"))
                    .collect()
            }
        };
        for (t, n, b) in rows {
            let e = out.entry(t).or_default();
            e[i] += n as u64;
            e[3] += b as u64;
        }
    }
    out
}

fn request(db: &DbInfo) -> RetentionRequest {
    RetentionRequest {
        db: db.db.clone(),
        thread_ids: vec![],
        older_than: None,
        statuses: vec![],
        strategy: PruneStrategy::KeepLatest,
        keep_last: None,
        vacuum: false,
        force_vacuum: false,
        dry_run: true,
    }
}

/// What went from a thread, by SQL: before minus after.
fn gone(before: &Usage, after: &Usage, t: &str) -> [u64; 4] {
    let (b, a) = (before[t], after.get(t).copied().unwrap_or_default());
    [b[0] - a[0], b[1] - a[1], b[2] - a[2], b[3] - a[3]]
}

fn row(r: &RetentionThread) -> [u64; 4] {
    [r.checkpoints, r.writes, r.blobs, r.bytes]
}

/// The core checks on one database holding the fixture's threads.
async fn exercise(api: &Api, db: &DbInfo, layout: &Layout) {
    let line: Vec<String> = root_history(api, db, "long")
        .await
        .iter()
        .map(|e| e.checkpoint_id.clone())
        .collect();
    let head = line[0].clone();
    let values = detail(api, db, "long", "", &head).await.values;
    let start = usage(layout).await;

    // Previews change no row.
    let mut req = request(db);
    req.older_than = Some("1h".into());
    let all = api.prune_database(req).await.expect("older than 1h");
    assert_eq!(
        all.threads.len(),
        start.len(),
        "every fixture thread is old"
    );
    let mut req = request(db);
    req.statuses = vec![StatusFilter::Failed];
    req.strategy = PruneStrategy::Delete;
    let failed = api
        .prune_database(req.clone())
        .await
        .expect("failed preview");
    assert_eq!(failed.threads.len(), 1);
    assert_eq!(failed.threads[0].thread_id, "parallel-failure");
    assert_eq!(usage(layout).await, start, "a dry run writes nothing");

    // keep_last 3 on "long": the head's three stay, its state reads the same.
    let mut req = request(db);
    req.thread_ids = vec!["long".into()];
    req.keep_last = Some(3);
    req.dry_run = false;
    let r = api.prune_database(req).await.expect("keep 3");
    let after = usage(layout).await;
    assert_eq!(row(&r.threads[0]), gone(&start, &after, "long"));
    assert!(r.threads[0].bytes > 0);
    assert_eq!(r.threads[0].kept, 3);
    let kept: Vec<String> = root_history(api, db, "long")
        .await
        .iter()
        .map(|e| e.checkpoint_id.clone())
        .collect();
    assert_eq!(kept, line[..3].to_vec());
    assert_eq!(detail(api, db, "long", "", &head).await.values, values);

    // Delete by status, with VACUUM.
    let mut req = request(db);
    req.statuses = vec![StatusFilter::Failed];
    req.strategy = PruneStrategy::Delete;
    req.vacuum = true;
    req.dry_run = false;
    let r = api.prune_database(req).await.expect("delete failed");
    let end = usage(layout).await;
    assert_eq!(row(&r.threads[0]), gone(&after, &end, "parallel-failure"));
    assert_eq!(row(&r.threads[0]), row(&failed.threads[0]), "as previewed");
    assert!(!end.contains_key("parallel-failure"));
    let v = r.vacuum.expect("vacuum");
    assert!(v.bytes_before > 0 && v.bytes_after > 0, "{v:?}");
    assert_eq!(
        v.bytes_returned,
        v.bytes_before.saturating_sub(v.bytes_after)
    );
}

#[tokio::test]
async fn retention_on_langgraphs_postgres_schema() {
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixtures().join("postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let pool = pg.pool().await.expect("pool");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    exercise(&api, &db, &Layout::LangGraphPg(pool)).await;
}

#[tokio::test]
async fn retention_on_the_three_table_store_on_postgres() {
    let pg = flashback_testkit::pg_or_skip!();
    let f = opened_fixture().await;
    let three = converted_to_pg(&f, pg.url()).await;
    let pool = pg.pool().await.expect("pool");
    exercise(&f.api, &three, &Layout::ThreePg(pool)).await;
}

#[tokio::test]
async fn retention_on_the_three_table_store_on_sqlite() {
    let f = opened_fixture().await;
    let target = f.dir.path().join("three.sqlite");
    let done = convert(&f.api, &f.db.db, &target, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let three = open(&f.api, target.to_str().expect("utf-8")).await;
    exercise(&f.api, &three, &Layout::ThreeSqlite(target)).await;
}

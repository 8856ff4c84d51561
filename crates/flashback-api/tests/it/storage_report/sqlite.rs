//! `start_storage_report` on SQLite: every figure cross-checked against the SQL of
//! `docs/storage.md` run here with rusqlite, on the fixture (LangGraph's schema) and on its
//! three-table copy; damaged rows are counted, orphans found, free pages measured.

use crate::common;
use common::space::{inline_lengths, node_of, report};
use common::three::convert;
use common::*;
use flashback_api::storage_report::*;
use flashback_api::*;
use rusqlite::Connection;
use std::collections::BTreeMap;

/// `key → (count, bytes)` of a grouping query.
fn grouped(c: &Connection, sql: &str) -> BTreeMap<String, (u64, u64)> {
    let mut stmt = c.prepare(sql).expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                (
                    r.get::<_, i64>(1)? as u64,
                    r.get::<_, Option<i64>>(2)?.unwrap_or(0) as u64,
                ),
            ))
        })
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

fn one(c: &Connection, sql: &str) -> (u64, u64) {
    c.query_row(sql, [], |r| {
        Ok((
            r.get::<_, i64>(0)? as u64,
            r.get::<_, Option<i64>>(1)?.unwrap_or(0) as u64,
        ))
    })
    .expect("one row")
}

fn usage_rows(list: &[KeyedUsage]) -> BTreeMap<String, (u64, u64, u64, u64, u64)> {
    list.iter()
        .map(|k| {
            let u = &k.usage;
            let row = (
                u.checkpoints.count,
                u.checkpoints.bytes,
                u.metadata_bytes,
                u.blobs.bytes,
                u.writes.bytes,
            );
            (k.key.clone(), row)
        })
        .collect()
}

/// The usage per `key` (thread_id or checkpoint_ns) as SQL gives it.
fn sql_usage(
    c: &Connection,
    key: &str,
    three: bool,
) -> BTreeMap<String, (u64, u64, u64, u64, u64)> {
    let (writes, value) = if three {
        ("checkpoint_writes", "blob_data")
    } else {
        ("writes", "value")
    };
    let hash = |k: &str| {
        if three && k == "checkpoint_ns" {
            "checkpoint_ns_hash".to_owned()
        } else {
            k.to_owned()
        }
    };
    let mut out: BTreeMap<String, (u64, u64, u64, u64, u64)> = BTreeMap::new();
    let names: BTreeMap<String, String> = if three {
        let mut s = c
            .prepare("SELECT DISTINCT checkpoint_ns_hash, checkpoint_ns FROM checkpoints")
            .expect("names");
        let r = s
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .expect("names");
        r.map(|r| r.expect("row")).collect()
    } else {
        BTreeMap::new()
    };
    let name = |k: String| names.get(&k).cloned().unwrap_or(k);
    let sql = format!(
        "SELECT {}, count(*), sum(length(checkpoint)), sum(length(CAST(metadata AS BLOB))) \
         FROM checkpoints GROUP BY 1",
        hash(key)
    );
    let mut stmt = c.prepare(&sql).expect("prepare");
    let mut rows = stmt.query([]).expect("query");
    while let Some(r) = rows.next().expect("row") {
        let e = out.entry(name(r.get(0).expect("k"))).or_default();
        e.0 = r.get::<_, i64>(1).expect("n") as u64;
        e.1 = r.get::<_, i64>(2).expect("d") as u64;
        e.2 = r.get::<_, i64>(3).expect("m") as u64;
    }
    if three {
        let sql = format!(
            "SELECT {}, count(*), sum(length(blob_data)) FROM checkpoint_blobs GROUP BY 1",
            hash(key)
        );
        for (k, (_, b)) in grouped(c, &sql) {
            out.entry(name(k)).or_default().3 = b;
        }
    }
    let sql = format!(
        "SELECT {}, count(*), sum(length({value})) FROM {writes} GROUP BY 1",
        hash(key)
    );
    for (k, (_, b)) in grouped(c, &sql) {
        out.entry(name(k)).or_default().4 = b;
    }
    out
}

#[tokio::test]
async fn every_figure_of_the_langgraph_fixture_is_what_sql_says() {
    let OpenedFixture {
        dir: _dir,
        api,
        db,
        path,
    } = opened_fixture().await;
    let r = report(&api, &db.db, None, 1000).await;
    let c = Connection::open(&path).expect("sqlite");
    assert_eq!(r.layout, "langgraph-sqlite");

    let (n, docs) = one(
        &c,
        "SELECT count(*), sum(length(checkpoint)) FROM checkpoints",
    );
    let (_, meta) = one(
        &c,
        "SELECT count(*), sum(length(metadata)) FROM checkpoints",
    );
    let (w, wb) = one(&c, "SELECT count(*), sum(length(value)) FROM writes");
    let t = &r.totals;
    assert_eq!((t.checkpoints.count, t.checkpoints.bytes), (n, docs));
    assert_eq!(t.metadata_bytes, meta);
    assert_eq!((t.writes.count, t.writes.bytes), (w, wb));
    assert_eq!(t.blobs, Tally::default());
    assert_eq!(t.total_bytes, docs + meta + wb);
    assert_eq!((n, w, r.thread_count), (381, 1093, 12));

    assert_eq!(usage_rows(&r.by_thread), sql_usage(&c, "thread_id", false));
    assert_eq!(
        usage_rows(&r.by_namespace),
        sql_usage(&c, "checkpoint_ns", false)
    );
    // Largest first.
    let totals: Vec<u64> = r.by_thread.iter().map(|k| k.usage.total_bytes).collect();
    assert!(totals.windows(2).all(|p| p[0] >= p[1]), "{totals:?}");

    // Channels: writes by SQL; inline values measured inside each document, independently.
    let writes = grouped(
        &c,
        "SELECT channel, count(*), sum(length(value)) FROM writes GROUP BY channel",
    );
    let mut inline: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut stmt = c
        .prepare("SELECT checkpoint FROM checkpoints")
        .expect("docs");
    let mut rows = stmt.query([]).expect("docs");
    while let Some(row) = rows.next().expect("row") {
        for (ch, len) in inline_lengths(&row.get::<_, Vec<u8>>(0).expect("doc")) {
            let e = inline.entry(ch).or_default();
            e.0 += 1;
            e.1 += len;
        }
    }
    let by = |f: fn(&ChannelUsage) -> Tally| -> BTreeMap<String, (u64, u64)> {
        r.by_channel
            .iter()
            .map(|c| (c.channel.clone(), f(c)))
            .filter(|(_, t)| t.count > 0)
            .map(|(k, t)| (k, (t.count, t.bytes)))
            .collect()
    };
    assert_eq!(by(|c| c.writes), writes);
    assert_eq!(by(|c| c.inline), inline);
    assert_eq!(
        inline["big_text"],
        (2, 200_014),
        "two copies of the 100 kB text"
    );

    // Nodes: task_path grouped by SQL, named as docs/storage.md says.
    let mut nodes: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let paths = grouped(
        &c,
        "SELECT task_path, count(*), sum(length(value)) FROM writes GROUP BY task_path",
    );
    for (path, (n, b)) in paths {
        let e = nodes.entry(node_of(&path)).or_default();
        e.0 += n;
        e.1 += b;
    }
    let got: BTreeMap<String, (u64, u64)> = r
        .by_node
        .iter()
        .map(|n| (n.node.clone(), (n.writes.count, n.writes.bytes)))
        .collect();
    assert_eq!(got, nodes);
    assert_eq!(got["Send"].0, 6, "the fan-out's Send tasks");

    // The largest values: the 100 kB text, inline twice and once as a write.
    let (_, big_bytes) = one(
        &c,
        "SELECT 0, length(value) FROM writes ORDER BY length(value) DESC LIMIT 1",
    );
    let top3: Vec<(ValueKind, u64)> = r.largest_values[..3]
        .iter()
        .map(|v| (v.kind, v.bytes))
        .collect();
    assert!(top3.contains(&(ValueKind::Write, big_bytes)), "{top3:?}");
    assert_eq!(
        top3.iter().filter(|(k, _)| *k == ValueKind::Inline).count(),
        2
    );
    // The largest checkpoint: document + metadata + its writes, as SQL adds them up.
    let l = &r.largest_checkpoints[0];
    let (_, own) = one(
        &c,
        &format!(
            "SELECT 0, length(checkpoint) + length(metadata) + coalesce((SELECT sum(length(value)) \
             FROM writes w WHERE w.thread_id = c.thread_id AND w.checkpoint_ns = c.checkpoint_ns \
             AND w.checkpoint_id = c.checkpoint_id), 0) FROM checkpoints c \
             WHERE checkpoint_id = '{}'",
            l.checkpoint_id
        ),
    );
    assert_eq!(l.total_bytes, own);
    assert_eq!(r.orphans, Orphans::default());
    let f = r.space.sqlite.expect("pages");
    let (pages, size) = one(
        &c,
        "SELECT (SELECT page_count FROM pragma_page_count), (SELECT page_size FROM pragma_page_size)",
    );
    assert_eq!((f.page_count, f.page_size, f.free_pages), (pages, size, 0));
    assert_eq!(r.unmeasured.count, 0);
}

#[tokio::test]
async fn a_thread_report_gives_each_checkpoints_size_and_flags_the_growing_messages() {
    let OpenedFixture {
        dir: _dir,
        api,
        db,
        path,
    } = opened_fixture().await;
    let r = report(&api, &db.db, Some("chat-tools"), 20).await;
    let c = Connection::open(&path).expect("sqlite");
    assert_eq!(r.thread_count, 1);
    let mut stmt = c
        .prepare(
            "SELECT c.checkpoint_id, length(c.checkpoint), length(c.metadata), \
             (SELECT count(*) FROM writes w WHERE w.thread_id = c.thread_id \
               AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id), \
             coalesce((SELECT sum(length(value)) FROM writes w WHERE w.thread_id = c.thread_id \
               AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id), 0) \
             FROM checkpoints c WHERE thread_id = 'chat-tools' \
             ORDER BY checkpoint_ns, checkpoint_id",
        )
        .expect("growth");
    let want: Vec<(String, u64, u64, u64, u64)> = stmt
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get::<_, i64>(1)? as u64,
                r.get::<_, i64>(2)? as u64,
                r.get::<_, i64>(3)? as u64,
                r.get::<_, i64>(4)? as u64,
            ))
        })
        .expect("rows")
        .map(|r| r.expect("row"))
        .collect();
    let got: Vec<(String, u64, u64, u64, u64)> = r
        .growth
        .iter()
        .map(|g| {
            (
                g.checkpoint_id.clone(),
                g.document_bytes,
                g.metadata_bytes,
                g.writes.count,
                g.writes.bytes,
            )
        })
        .collect();
    assert_eq!(got, want);
    let sum: u64 = r.growth.iter().map(|g| g.total_bytes).sum();
    assert_eq!(sum, r.totals.total_bytes, "the curve adds up to the thread");

    // `messages` is stored whole in every checkpoint, growing: flagged, with its bytes.
    let q = r
        .quadratic
        .iter()
        .find(|q| q.channel == "messages")
        .expect("messages flagged");
    let mut stores = Vec::new();
    let mut docs = c
        .prepare("SELECT checkpoint FROM checkpoints WHERE thread_id = 'chat-tools' ORDER BY checkpoint_id")
        .expect("docs");
    let mut rows = docs.query([]).expect("docs");
    while let Some(row) = rows.next().expect("row") {
        if let Some(n) = inline_lengths(&row.get::<_, Vec<u8>>(0).expect("doc")).get("messages") {
            stores.push(*n);
        }
    }
    assert_eq!(
        (q.stores, q.stored_bytes, q.last_bytes),
        (
            stores.len() as u64,
            stores.iter().sum(),
            *stores.last().expect("a store")
        )
    );
    assert!(r.largest_checkpoints.len() <= 20 && r.by_channel.len() <= 20);
}

#[tokio::test]
async fn the_three_table_copy_is_measured_by_its_blobs_without_a_growth_flag() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;
    let three = dir.path().join("three.sqlite");
    let done = convert(&api, &db.db, &three, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let three_db = open(&api, three.to_str().expect("utf-8")).await;
    let r = report(&api, &three_db.db, None, 1000).await;
    assert_eq!(r.layout, "three-table-sqlite");
    let c = Connection::open(&three).expect("sqlite");
    let (b, bb) = one(
        &c,
        "SELECT count(*), sum(length(blob_data)) FROM checkpoint_blobs",
    );
    assert_eq!((r.totals.blobs.count, r.totals.blobs.bytes), (b, bb));
    assert_eq!(usage_rows(&r.by_thread), sql_usage(&c, "thread_id", true));
    assert_eq!(
        usage_rows(&r.by_namespace),
        sql_usage(&c, "checkpoint_ns", true)
    );
    let blobs = grouped(
        &c,
        "SELECT channel, count(*), sum(length(blob_data)) FROM checkpoint_blobs GROUP BY channel",
    );
    let got: BTreeMap<String, (u64, u64)> = r
        .by_channel
        .iter()
        .filter(|c| c.blobs.count > 0)
        .map(|c| (c.channel.clone(), (c.blobs.count, c.blobs.bytes)))
        .collect();
    assert_eq!(got, blobs);
    assert_eq!(r.orphans, Orphans::default());
    assert!(
        r.quadratic.iter().all(|q| q.channel != "messages"),
        "stored as deltas: {:?}",
        r.quadratic
    );

    // One thread: every blob row is introduced by exactly one of its checkpoints.
    let t = report(&api, &three_db.db, Some("chat-tools"), 20).await;
    let (n, bytes) = one(
        &c,
        "SELECT count(*), sum(length(blob_data)) FROM checkpoint_blobs WHERE thread_id = 'chat-tools'",
    );
    let introduced = t
        .growth
        .iter()
        .fold((0, 0), |(n, b), g| (n + g.blobs.count, b + g.blobs.bytes));
    assert_eq!(introduced, (n, bytes));
}

#[tokio::test]
async fn orphans_damaged_documents_and_free_pages_are_counted_and_the_rest_reported() {
    let OpenedFixture { dir, api, db, path } = opened_fixture().await;
    let three = dir.path().join("three.sqlite");
    let done = convert(&api, &db.db, &three, ConvertTo::ThreeTable, false).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    {
        let c = Connection::open(&path).expect("sqlite");
        c.execute_batch(
            "INSERT INTO writes VALUES ('chat-tools', '', 'no-such-checkpoint', 't', '', 0, \
               'messages', 'msgpack', X'0102030405'); \
             UPDATE checkpoints SET checkpoint = X'c1c1' WHERE thread_id = 'forked' \
               AND checkpoint_id = (SELECT min(checkpoint_id) FROM checkpoints \
               WHERE thread_id = 'forked'); \
             DELETE FROM checkpoints WHERE thread_id = 'long';",
        )
        .expect("damage");
        let c = Connection::open(&three).expect("sqlite");
        c.execute_batch(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns_hash, channel, version, type, \
               kind, base_version, depth, blob_data, gmt_create) VALUES ('chat-tools', \
               'd41d8cd98f00b204e9800998ecf8427e', 'messages', 'nobody', 'msgpack', 'full', NULL, \
               0, X'010203', '2026-01-01')",
        )
        .expect("orphan blob");
    }
    let r = report(&api, &db.db, None, 5).await;
    let c = Connection::open(&path).expect("sqlite");
    let orphans = one(
        &c,
        "SELECT count(*), sum(length(value)) FROM writes w WHERE NOT EXISTS (SELECT 1 FROM \
         checkpoints c WHERE c.thread_id = w.thread_id AND c.checkpoint_ns = w.checkpoint_ns \
         AND c.checkpoint_id = w.checkpoint_id)",
    );
    assert_eq!((r.orphans.writes.count, r.orphans.writes.bytes), orphans);
    assert_eq!(
        orphans.0, 897,
        "the deleted thread's writes and the one inserted"
    );
    assert_eq!(r.unmeasured.count, 1, "{:?}", r.unmeasured);
    assert!(
        r.unmeasured.examples[0].starts_with("forked//"),
        "{:?}",
        r.unmeasured
    );
    assert_eq!(r.totals.checkpoints.count, 81);
    let free = one(
        &c,
        "SELECT (SELECT freelist_count FROM pragma_freelist_count), \
         (SELECT page_size FROM pragma_page_size)",
    );
    let f = r.space.sqlite.expect("pages");
    assert!(f.free_pages > 0, "the deleted thread's pages are free");
    assert_eq!((f.free_pages, f.free_bytes), (free.0, free.0 * free.1));

    let three_db = open(&api, three.to_str().expect("utf-8")).await;
    let t = report(&api, &three_db.db, Some("chat-tools"), 5).await;
    assert_eq!(t.orphans.blobs, Tally { count: 1, bytes: 3 });

    let e = api
        .start_storage_report(StorageRequest {
            db: db.db.clone(),
            thread_id: None,
            top: Some(0),
        })
        .await
        .expect_err("top 0");
    assert_eq!(e.code, ErrorCode::InvalidInput);
    let job = api
        .start_storage_report(StorageRequest {
            db: db.db.clone(),
            thread_id: Some("no such thread".into()),
            top: None,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    assert_eq!(done.error.expect("an error").code, ErrorCode::NotFound);
}

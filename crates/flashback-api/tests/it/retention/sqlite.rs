//! `prune_database` (retention across the database) on copies of the SQLite fixture: choosing
//! threads by age and status, keep_last 1 vs 3 along the head's lineage, delete, a dry run that
//! writes nothing, the bytes checked against SQL of our own, and VACUUM.

use crate::common;
use common::*;
use flashback_api::*;
use std::collections::HashMap;
use std::path::Path;

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

fn ids(r: &RetentionReport) -> Vec<&str> {
    r.threads.iter().map(|t| t.thread_id.as_str()).collect()
}

/// Per thread: (checkpoint rows, write rows, bytes as stored), by SQL of our own
/// (`docs/storage.md`: `length(CAST(col AS BLOB))` of the document, metadata and write values).
fn usage(path: &Path) -> HashMap<String, (u64, u64, u64)> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let mut out: HashMap<String, (u64, u64, u64)> = HashMap::new();
    // (sql, whether its count is of checkpoints): per thread, rows and their stored bytes.
    for (sql, checkpoints) in [
        (
            "SELECT thread_id, count(*), coalesce(sum(length(CAST(checkpoint AS BLOB)) \
             + length(CAST(metadata AS BLOB))), 0) FROM checkpoints GROUP BY thread_id",
            true,
        ),
        (
            "SELECT thread_id, count(*), coalesce(sum(length(CAST(value AS BLOB))), 0) \
             FROM writes GROUP BY thread_id",
            false,
        ),
    ] {
        let mut stmt = conn.prepare(sql).expect("sql");
        let rows = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                ))
            })
            .expect("query");
        for r in rows {
            let (t, n, b) = r.expect("row");
            let e = out.entry(t).or_default();
            if checkpoints {
                e.0 += n as u64;
            } else {
                e.1 += n as u64;
            }
            e.2 += b as u64;
        }
    }
    out
}

/// The head and its ancestors, newest first.
fn lineage(h: &[HistoryEntry]) -> Vec<String> {
    let by_id: HashMap<&str, &HistoryEntry> =
        h.iter().map(|e| (e.checkpoint_id.as_str(), e)).collect();
    let mut out = Vec::new();
    let mut cur = h.first();
    while let Some(e) = cur {
        out.push(e.checkpoint_id.clone());
        cur = e
            .parent_checkpoint_id
            .as_deref()
            .and_then(|p| by_id.get(p).copied());
    }
    out
}

#[tokio::test]
async fn chooses_by_age_and_status_and_a_dry_run_writes_nothing() {
    let OpenedFixture {
        dir: _dir,
        path,
        api,
        db,
    } = opened_fixture().await;
    // No selector: refused, never "everything".
    let e = api
        .prune_database(request(&db))
        .await
        .expect_err("no selector");
    assert_eq!(e.code, ErrorCode::InvalidInput, "{}", e.message);
    let mut bad = request(&db);
    bad.older_than = Some("30x".into());
    let e = api.prune_database(bad).await.expect_err("bad age");
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(!e.message.contains('\n'), "{}", e.message);

    // Give "forked" a fresh head: the only thread written in the last hour.
    let head = root_history(&api, &db, "forked").await[0]
        .checkpoint_id
        .clone();
    api.fork_checkpoint(ForkRequest {
        as_node: None,
        db: db.db.clone(),
        thread_id: "forked".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: head,
        edits: vec![],
    })
    .await
    .expect("fork");
    let all = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads");
    let before = std::fs::read(&path).expect("bytes");

    let mut req = request(&db);
    req.older_than = Some("1h".into());
    let r = api.prune_database(req).await.expect("older than 1h");
    let cutoff = r.cutoff.clone().expect("cutoff");
    let stamp = |ts: &str| match Stamp::parse(ts) {
        Stamp::At { micros } => micros,
        Stamp::Unreadable(s) => panic!("not a time: {s}"),
    };
    let expected: Vec<&str> = all
        .iter()
        .filter(|t| {
            t.latest_ts
                .as_deref()
                .is_some_and(|ts| stamp(ts) < stamp(&cutoff))
        })
        .map(|t| t.thread_id.as_str())
        .collect();
    assert_eq!(ids(&r), expected);
    assert_eq!(
        expected.len(),
        all.len() - 1,
        "every thread but the fresh one"
    );
    assert!(!ids(&r).contains(&"forked"));
    assert!(r.dry_run && r.vacuum.is_none());
    assert_eq!(r.totals.threads, expected.len() as u64);
    let long = r
        .threads
        .iter()
        .find(|t| t.thread_id == "long")
        .expect("long");
    assert_eq!((long.checkpoints, long.kept), (299, 1));
    assert_eq!(
        r.totals.checkpoints,
        r.threads.iter().map(|t| t.checkpoints).sum::<u64>()
    );
    // Ages far older than the fixture choose nothing.
    let mut req = request(&db);
    req.older_than = Some("5200w".into());
    assert!(api
        .prune_database(req)
        .await
        .expect("old")
        .threads
        .is_empty());

    // By status, with the status the thread list shows.
    let mut req = request(&db);
    req.statuses = vec![StatusFilter::Failed];
    let r = api.prune_database(req).await.expect("failed");
    assert_eq!(ids(&r), ["parallel-failure"]);
    assert_eq!(r.threads[0].status, Some(ThreadStatus::Failed));
    let mut req = request(&db);
    req.statuses = vec![StatusFilter::Failed, StatusFilter::Interrupted];
    req.older_than = Some("1h".into());
    let r = api
        .prune_database(req)
        .await
        .expect("failed or interrupted");
    assert_eq!(ids(&r), ["interrupt-waiting", "parallel-failure"]);
    // Thread ids narrow the choice; an unknown one is an error.
    let mut req = request(&db);
    req.statuses = vec![StatusFilter::Finished];
    req.thread_ids = vec!["long".into(), "parallel-failure".into()];
    let r = api.prune_database(req).await.expect("named");
    assert_eq!(ids(&r), ["long"]);
    let mut req = request(&db);
    req.thread_ids = vec!["nope".into()];
    let e = api.prune_database(req).await.expect_err("unknown");
    assert_eq!(e.code, ErrorCode::NotFound);

    // None of the previews wrote a byte.
    assert_eq!(std::fs::read(&path).expect("bytes"), before);
}

#[tokio::test]
async fn keep_last_keeps_the_heads_lineage_and_the_bytes_match_sql() {
    let OpenedFixture {
        dir: _dir,
        path,
        api,
        db,
    } = opened_fixture().await;
    let threads = ["long".to_owned(), "forked".to_owned()];
    let mut lines = HashMap::new();
    let mut heads = HashMap::new();
    for t in &threads {
        let h = root_history(&api, &db, t).await;
        let d = detail(&api, &db, t, "", &h[0].checkpoint_id).await;
        heads.insert(t.clone(), (h[0].checkpoint_id.clone(), d.values));
        lines.insert(t.clone(), lineage(&h));
    }
    let sql_before = usage(&path);

    let mut req = request(&db);
    req.thread_ids = threads.to_vec();
    req.keep_last = Some(3);
    let preview = api.prune_database(req.clone()).await.expect("preview");
    req.dry_run = false;
    let done = api.prune_database(req).await.expect("keep 3");
    assert!(!done.dry_run);
    assert_eq!(
        preview.threads, done.threads,
        "the preview says what the run does"
    );
    let sql_after = usage(&path);
    for row in &done.threads {
        let t = &row.thread_id;
        let h = root_history(&api, &db, t).await;
        let kept: Vec<String> = h.iter().map(|e| e.checkpoint_id.clone()).collect();
        assert_eq!(kept, lines[t][..3].to_vec(), "{t}: the head's three");
        assert_eq!(row.kept, 3, "{t}");
        let (head, values) = &heads[t];
        assert_eq!(&kept[0], head);
        assert_eq!(
            &detail(&api, &db, t, "", head).await.values,
            values,
            "{t}: head"
        );
        // What went, by SQL: rows and bytes before minus after.
        let (b, a) = (sql_before[t], sql_after.get(t).copied().unwrap_or_default());
        assert_eq!(row.checkpoints, b.0 - a.0, "{t} checkpoints");
        assert_eq!(row.writes, b.1 - a.1, "{t} writes");
        assert_eq!(row.bytes, b.2 - a.2, "{t} bytes");
        assert!(row.bytes > 0);
    }
    assert_eq!(done.filters.keep_last, 3);

    // keep_last 1 then: the head alone (its state unchanged).
    let mut req = request(&db);
    req.thread_ids = vec!["long".into()];
    req.dry_run = false;
    let r = api.prune_database(req).await.expect("keep 1");
    assert_eq!((r.threads[0].checkpoints, r.threads[0].kept), (2, 1));
    let h = root_history(&api, &db, "long").await;
    assert_eq!(h.len(), 1);
    let (head, values) = &heads["long"];
    assert_eq!(&h[0].checkpoint_id, head);
    assert_eq!(&detail(&api, &db, "long", "", head).await.values, values);
}

#[tokio::test]
async fn delete_removes_whole_threads_and_vacuum_gives_bytes_back() {
    let OpenedFixture {
        dir: _dir,
        path,
        api,
        db,
    } = opened_fixture().await;
    let sql_before = usage(&path);
    let mut req = request(&db);
    req.statuses = vec![StatusFilter::Failed];
    req.strategy = PruneStrategy::Delete;
    req.keep_last = Some(2);
    let e = api
        .prune_database(req.clone())
        .await
        .expect_err("keep_last with delete");
    assert_eq!(e.code, ErrorCode::InvalidInput);
    req.keep_last = None;
    req.vacuum = true;
    // The preview says how long the VACUUM stops writers; nothing is written.
    let p = api.prune_database(req.clone()).await.expect("preview");
    let v = p.vacuum_preview.expect("a vacuum preview");
    let file = std::fs::metadata(&path).expect("size").len();
    assert!(
        v.blocks_writers && v.seconds >= 1 && v.bytes == file,
        "{v:?}"
    );
    assert_eq!(
        v.open_elsewhere.as_deref().unwrap_or_default(),
        [] as [u32; 0]
    );
    assert!(p.vacuum.is_none() && p.vacuum_error.is_none() && p.transactions == 0);
    assert_eq!(usage(&path), sql_before);
    req.dry_run = false;
    let r = api.prune_database(req).await.expect("delete");
    assert_eq!(ids(&r), ["parallel-failure"]);
    assert_eq!((r.transactions, r.totals.skipped), (1, 0));
    assert!(r.threads[0].skipped.is_none());
    let (c, w, b) = sql_before["parallel-failure"];
    let row = &r.threads[0];
    assert_eq!(
        (row.checkpoints, row.kept, row.writes, row.bytes),
        (c, 0, w, b)
    );
    assert!(!usage(&path).contains_key("parallel-failure"));
    let threads = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads");
    assert!(threads.iter().all(|t| t.thread_id != "parallel-failure"));
    let v = r.vacuum.expect("vacuum ran");
    assert!(v.bytes_before >= v.bytes_after);

    // Most of "long" goes; VACUUM then returns pages to the file system.
    let size_before = std::fs::metadata(&path).expect("size").len();
    let mut req = request(&db);
    req.thread_ids = vec!["long".into()];
    req.vacuum = true;
    req.dry_run = false;
    let r = api.prune_database(req).await.expect("keep latest + vacuum");
    let v = r.vacuum.expect("vacuum ran");
    assert!(v.bytes_returned > 0, "{v:?}");
    assert_eq!(v.bytes_returned, v.bytes_before - v.bytes_after);
    let size_after = std::fs::metadata(&path).expect("size").len();
    assert_eq!(
        size_after, v.bytes_after,
        "the file is page_count × page_size"
    );
    assert!(size_after < size_before);
}

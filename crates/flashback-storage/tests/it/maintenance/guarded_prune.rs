//! Issue 28: a prune decides inside its writing transaction. Each chosen thread carries the
//! mark it had when it was judged (`SaverMaintenance::thread_marks`); a thread LangGraph wrote
//! to afterwards (a resumed run's new checkpoint, a pending write) or that went meanwhile is
//! skipped and reported, in a dry run and a real one alike, on all four layouts: LangGraph's
//! schema and the three-table store, each on SQLite and on Postgres. A branch delete
//! judged with the preview's count leaves a branch that grew since alone.

use crate::common;

use common::three::{copy_fixture, fixture, opts, put_tuple};
use flashback_storage::maintenance::{Guarded, PruneStrategy, SaverMaintenance, SkipReason};
use flashback_storage::three::{Blobs, ThreeTableOptions};
use flashback_storage::ListQuery;

/// A new database at `location` holding the fixture's threads, and four of its threads with
/// at least two checkpoints.
async fn filled(
    location: &str,
    three: Option<ThreeTableOptions>,
) -> (Box<dyn SaverMaintenance>, Vec<String>) {
    let source = flashback_storage::open(
        fixture().to_str().expect("path"),
        flashback_storage::Read::default(),
    )
    .await
    .expect("fixture");
    let saver = flashback_storage::open(
        location,
        flashback_storage::Create {
            create: true,
            three,
        },
    )
    .await
    .expect("saver");
    copy_fixture(source.as_ref(), saver.as_ref()).await;
    let threads: Vec<String> = source
        .list_threads()
        .await
        .expect("threads")
        .into_iter()
        .filter(|t| t.checkpoint_count >= 2 && t.namespaces == [""])
        .map(|t| t.thread_id)
        .take(4)
        .collect();
    assert_eq!(threads.len(), 4, "the fixture has four such threads");
    (saver, threads)
}

/// What LangGraph does when it resumes a thread: a new checkpoint whose parent is the head.
async fn resume(saver: &dyn SaverMaintenance, thread: &str) -> String {
    let mut t = saver
        .get_tuple(thread, "", None)
        .await
        .expect("head")
        .expect("a head");
    let parent = t.header.checkpoint_id.clone();
    // A newer id: the first digit of the time-ordered uuid6 one up.
    let first = parent
        .chars()
        .next()
        .and_then(|c| c.to_digit(16))
        .expect("hex");
    let id = format!("{:x}{}", first + 1, &parent[1..]);
    t.header.parent_checkpoint_id = Some(parent);
    t.header.checkpoint_id = id.clone();
    t.checkpoint.id = id.clone();
    t.pending_writes.clear();
    put_tuple(saver, &t).await;
    id
}

async fn rows(saver: &dyn SaverMaintenance, thread: &str) -> usize {
    saver
        .list_headers(&ListQuery::thread(thread))
        .await
        .expect("headers")
        .len()
}

async fn scenario(location: &str, three: Option<ThreeTableOptions>) {
    let (saver, ids) = filled(location, three).await;
    let saver = saver.as_ref();
    let (a, b, c, d) = (&ids[0], &ids[1], &ids[2], &ids[3]);
    let marks = saver.thread_marks(&ids).await.expect("marks");
    assert!(ids.iter().all(|t| !marks[t].is_gone()));
    // Judged; then LangGraph resumes b, writes to d's head, and c goes.
    let before_b = rows(saver, b).await;
    let child = resume(saver, b).await;
    let head_d = saver
        .get_tuple(d, "", None)
        .await
        .expect("d")
        .expect("d's head")
        .header
        .checkpoint_id;
    let value = [("note".to_owned(), common::saver::s("hi"))];
    saver
        .put_writes(d, "", &head_d, "task-after-judging", "", &value)
        .await
        .expect("put_writes");
    saver
        .prune(std::slice::from_ref(c), PruneStrategy::Delete, false)
        .await
        .expect("c goes");
    let guards: Vec<Guarded> = ids
        .iter()
        .map(|t| Guarded {
            thread_id: t.clone(),
            mark: Some(marks[t].clone()),
        })
        .collect();
    let want = [
        None,
        Some(SkipReason::Changed),
        Some(SkipReason::Gone),
        Some(SkipReason::Changed),
    ];
    for dry_run in [true, false] {
        let run = saver
            .prune_measured(&guards, PruneStrategy::Delete, 0, dry_run)
            .await
            .expect("prune");
        let got: Vec<_> = run.threads.iter().map(|t| t.skipped).collect();
        assert_eq!(got, want, "{location} dry_run={dry_run}");
        assert_eq!(run.threads[0].thread_id, *a);
        assert!(run.threads[0].checkpoints >= 2);
        assert!(run.threads[1..].iter().all(|t| t.checkpoints == 0));
        assert_eq!(run.transactions, u32::from(!dry_run), "{location}");
    }
    let now = saver.thread_marks(&ids).await.expect("marks");
    assert!(now[a].is_gone(), "a was pruned");
    assert_eq!(rows(saver, b).await, before_b + 1, "b keeps every row");
    assert!(!now[d].is_gone());

    // Judged afresh, b prunes (keep_latest keeps the resumed head).
    let fresh = saver
        .thread_marks(std::slice::from_ref(b))
        .await
        .expect("mark");
    let guard = [Guarded {
        thread_id: b.clone(),
        mark: Some(fresh[b].clone()),
    }];
    let run = saver
        .prune_measured(&guard, PruneStrategy::KeepLatest, 1, false)
        .await
        .expect("keep latest");
    assert_eq!(run.threads[0].skipped, None);
    assert_eq!(run.threads[0].kept, 1);
    let head = saver
        .get_tuple(b, "", None)
        .await
        .expect("b")
        .expect("head");
    assert_eq!(head.header.checkpoint_id, child);

    // A branch delete judged with a count it no longer has deletes nothing.
    let grandchild = resume(saver, b).await;
    let stale = saver
        .delete_branch_as_judged(b, "", &child, 1)
        .await
        .expect("stale branch");
    assert_eq!(stale.skipped, Some(SkipReason::Changed));
    assert!(stale.checkpoints.is_empty());
    assert_eq!(rows(saver, b).await, 2);
    let done = saver
        .delete_branch_as_judged(b, "", &grandchild, 1)
        .await
        .expect("branch as previewed");
    assert_eq!((done.skipped, done.checkpoints.len()), (None, 1));
}

#[tokio::test]
async fn sqlite_langgraph_schema_skips_threads_written_after_judging() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("lg.sqlite");
    scenario(path.to_str().expect("path"), None).await;
}

#[tokio::test]
async fn sqlite_three_table_store_skips_threads_written_after_judging() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("three.sqlite");
    scenario(path.to_str().expect("path"), Some(opts(Blobs::Incremental))).await;
}

#[tokio::test]
async fn postgres_langgraph_schema_skips_threads_written_after_judging() {
    let pg = flashback_testkit::pg_or_skip!();
    scenario(pg.url(), None).await;
}

#[tokio::test]
async fn postgres_three_table_store_skips_threads_written_after_judging() {
    let pg = flashback_testkit::pg_or_skip!();
    scenario(pg.url(), Some(opts(Blobs::Incremental))).await;
}

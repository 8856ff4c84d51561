//! The Postgres write side (`CheckpointSaver for PostgresStore`) against real databases:
//! re-putting every checkpoint and write of the Python-written fixture
//! (`tests/fixtures/postgres.sql`) into a database of our own gives identical tables.
//!
//! One fresh database per test, from flashback-testkit (helpers in `common/saver.rs`). Skipped
//! when no PostgreSQL is available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use crate::common;

use common::saver::*;
use flashback_codec::Decoded;
use flashback_storage::postgres::PostgresStore;
use flashback_storage::saver::{write_idx, WRITES_IDX_MAP};
use flashback_storage::{
    CheckpointSaver, CheckpointStore, CheckpointTuple, ListQuery, PendingWrite, PutRequest,
};
use sqlx::PgPool;
use std::collections::BTreeMap;

/// Every table, one whole-row text per row, in primary-key order.
async fn dump_tables(pool: &PgPool) -> Vec<(&'static str, Vec<String>)> {
    let mut out = Vec::new();
    for (table, sql) in [
        (
            "checkpoints",
            "SELECT t::text FROM checkpoints t ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        ),
        (
            "checkpoint_blobs",
            "SELECT t::text FROM checkpoint_blobs t ORDER BY thread_id, checkpoint_ns, channel, version",
        ),
        (
            "checkpoint_writes",
            "SELECT t::text FROM checkpoint_writes t \
             ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
        ),
        (
            "checkpoint_migrations",
            "SELECT t::text FROM checkpoint_migrations t ORDER BY v",
        ),
    ] {
        out.push((table, texts(pool, sql).await));
    }
    out
}

fn short(s: &str) -> String {
    if s.len() > 600 {
        let mut end = 600;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}… ({} chars)", &s[..end], s.len())
    } else {
        s.to_owned()
    }
}

fn is_special(channel: &str) -> bool {
    WRITES_IDX_MAP.iter().any(|(c, _)| *c == channel)
}

/// `(task_id, task_path, writes)` of one `put_writes` call.
type Batch = (String, String, Vec<(String, Decoded)>);

/// The `put_writes` batches that reproduce one checkpoint's stored writes.
///
/// Writes are grouped by `(task_id, task_path)`. A regular write must sit at the position
/// equal to its stored idx (`write_idx`), so gaps (left by special writes in Python's batch)
/// are filled with the task's special writes: they get their fixed negative idx wherever they
/// stand, and a duplicate of one is harmless (the batch keeps one row per idx). Returns the
/// batches and the number of gaps filled.
fn batches(writes: &[PendingWrite]) -> (Vec<Batch>, usize) {
    let mut groups: Vec<((String, String), Vec<&PendingWrite>)> = Vec::new();
    for w in writes {
        let key = (w.task_id.clone(), w.task_path.clone());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(w),
            None => groups.push((key, vec![w])),
        }
    }
    let mut gaps = 0;
    let mut out = Vec::new();
    for ((task_id, task_path), group) in groups {
        let specials: Vec<&PendingWrite> = group
            .iter()
            .copied()
            .filter(|w| is_special(&w.channel))
            .collect();
        let mut regular: BTreeMap<i64, &PendingWrite> = BTreeMap::new();
        for w in &group {
            if is_special(&w.channel) {
                assert_eq!(w.idx, write_idx(&w.channel, 0), "special idx of {w:?}");
            } else {
                assert!(w.idx >= 0, "regular write with a negative idx: {w:?}");
                assert!(regular.insert(w.idx, w).is_none());
            }
        }
        let len = regular.keys().next_back().map_or(0, |m| *m as usize + 1);
        let mut batch: Vec<(String, Decoded)> = Vec::new();
        let mut used = vec![false; specials.len()];
        for position in 0..len {
            let w = match regular.get(&(position as i64)) {
                Some(w) => *w,
                None => {
                    let filler = specials.first().copied().unwrap_or_else(|| {
                        panic!("task {task_id}: idx gap at {position} without a special write")
                    });
                    gaps += 1;
                    used[0] = true;
                    filler
                }
            };
            batch.push((w.channel.clone(), w.value.clone()));
        }
        for (w, used) in specials.iter().zip(used) {
            if !used {
                batch.push((w.channel.clone(), w.value.clone()));
            }
        }
        // The rule the batch relies on.
        for (position, (channel, _)) in batch.iter().enumerate() {
            let idx = write_idx(channel, position);
            assert!(group.iter().any(|w| w.idx == idx && &w.channel == channel));
        }
        out.push((task_id, task_path, batch));
    }
    (out, gaps)
}

#[tokio::test]
async fn re_put_of_the_python_fixture_is_byte_identical() {
    let a = flashback_testkit::pg_or_skip!();
    let b = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(repo_root().join("tests/fixtures/postgres.sql"))
        .expect("read tests/fixtures/postgres.sql");
    flashback_testkit::load_sql_dump(a.url(), &dump)
        .await
        .expect("load dump");
    let source = PostgresStore::connect(a.url()).await.expect("connect A");
    let target = new_store(&b).await;

    let (mut checkpoints, mut writes, mut gaps) = (0, 0, 0);
    for thread in source.list_threads().await.expect("threads") {
        let tuples: Vec<CheckpointTuple> = source
            .list_tuples(&ListQuery::thread(&thread.thread_id))
            .await
            .expect("list");
        // The namespaces of one thread, from the index, are those of its checkpoints.
        let mut namespaces: Vec<String> = tuples
            .iter()
            .map(|t| t.header.checkpoint_ns.clone())
            .collect();
        namespaces.sort();
        namespaces.dedup();
        assert_eq!(
            source
                .thread_namespaces(&thread.thread_id)
                .await
                .expect("ns"),
            namespaces,
            "{}",
            thread.thread_id
        );
        // Oldest first.
        for t in tuples.iter().rev() {
            let h = &t.header;
            let metadata = h.metadata.as_object().cloned().unwrap_or_default();
            target
                .put(PutRequest {
                    thread_id: &h.thread_id,
                    checkpoint_ns: &h.checkpoint_ns,
                    parent_checkpoint_id: h.parent_checkpoint_id.as_deref(),
                    checkpoint: &t.checkpoint,
                    metadata: &metadata,
                    new_versions: &t.checkpoint.channel_versions,
                })
                .await
                .unwrap_or_else(|e| panic!("put {}: {e}", h.checkpoint_id));
            checkpoints += 1;
        }
        for t in tuples.iter().rev() {
            let h = &t.header;
            let (list, filled) = batches(&t.pending_writes);
            gaps += filled;
            for (task_id, task_path, batch) in list {
                target
                    .put_writes(
                        &h.thread_id,
                        &h.checkpoint_ns,
                        &h.checkpoint_id,
                        &task_id,
                        &task_path,
                        &batch,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("put_writes {}: {e}", h.checkpoint_id));
            }
            writes += t.pending_writes.len();
        }
    }
    assert!(checkpoints > 300, "re-put only {checkpoints} checkpoints");
    assert!(writes > 1000, "re-put only {writes} writes");
    eprintln!("re-put {checkpoints} checkpoints and {writes} writes ({gaps} idx gaps filled)");

    let pool_a = a.pool().await.expect("pool A");
    let pool_b = b.pool().await.expect("pool B");
    let (ta, tb) = (dump_tables(&pool_a).await, dump_tables(&pool_b).await);
    for ((table, rows_a), (_, rows_b)) in ta.iter().zip(&tb) {
        if rows_a != rows_b {
            let only_a: Vec<_> = rows_a.iter().filter(|r| !rows_b.contains(r)).collect();
            let only_b: Vec<_> = rows_b.iter().filter(|r| !rows_a.contains(r)).collect();
            panic!(
                "{table} differs: {} rows in A (Python), {} in B (ours)\nfirst only in A: {}\nfirst only in B: {}",
                rows_a.len(),
                rows_b.len(),
                only_a.first().map_or("-".into(), |r| short(r)),
                only_b.first().map_or("-".into(), |r| short(r)),
            );
        }
        assert!(!rows_a.is_empty(), "{table} is empty");
    }
    source.close().await;
    target.close().await;
}

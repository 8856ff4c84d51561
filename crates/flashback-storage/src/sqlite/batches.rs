//! Guarded prunes on SQLite in short transactions (`maintenance/guard.rs`), shared by
//! LangGraph's schema and the three-table store: each batch is `BEGIN IMMEDIATE` (the write
//! lock), the chosen threads' marks read again, the threads still as judged planned and
//! deleted, `COMMIT`; then a passive WAL checkpoint (no lock) and a pause that lets a waiting
//! program in.

use super::connect::write_err as err;
use crate::maintenance::guard::{Batches, Guarded, Mark, PruneRun, SQLITE_PAUSE};
use crate::maintenance::{retain, ThreadPrune};
use crate::StoreError;
use rusqlite::{Connection, Transaction, TransactionBehavior};
use std::collections::HashMap;

/// Threads planned at a time inside a writing batch (the budget is checked between groups).
const GROUP: usize = 4;

/// Each thread's [`Mark`]: its rows in `checkpoints` and in `writes` (the pending-writes
/// table's name in the layout), counted, with the newest checkpoint id and `rowid`s (every
/// insert and `INSERT OR REPLACE` takes a new one). Index range scans of the primary keys.
pub(crate) fn marks(
    conn: &Connection,
    writes: &str,
    threads: &[String],
) -> Result<HashMap<String, Mark>, StoreError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT count(*), coalesce(max(checkpoint_id), ''), coalesce(max(rowid), 0), \
             (SELECT count(*) FROM {writes} WHERE thread_id = ?1), \
             (SELECT coalesce(max(rowid), 0) FROM {writes} WHERE thread_id = ?1) \
             FROM checkpoints WHERE thread_id = ?1"
        ))
        .map_err(err)?;
    let mut out = HashMap::with_capacity(threads.len());
    for t in threads {
        let mark = stmt
            .query_row([t], |r| {
                Ok(Mark {
                    checkpoints: r.get(0)?,
                    newest: r.get(1)?,
                    version: (r.get(2)?, r.get(4)?),
                    writes: r.get(3)?,
                })
            })
            .map_err(err)?;
        out.insert(t.clone(), mark);
    }
    Ok(out)
}

/// Run a guarded prune of `guards` on `conn`: `step` plans and (unless `dry_run`) deletes a
/// group of threads still as judged inside the open transaction, returning what it removed
/// from each. A dry run reads everything in one deferred transaction, rolled back.
pub(crate) fn prune_in_batches(
    conn: &mut Connection,
    guards: &[Guarded],
    writes: &str,
    dry_run: bool,
    mut step: impl FnMut(&Transaction<'_>, &[String]) -> Result<Vec<ThreadPrune>, StoreError>,
) -> Result<PruneRun, StoreError> {
    let mut b = Batches::new(guards, dry_run);
    if !dry_run {
        // The WAL is checkpointed after each batch, outside the lock (below), rather than
        // inside a commit by SQLite's automatic checkpoint.
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .map_err(err)?;
    }
    let (behavior, group) = if dry_run {
        (TransactionBehavior::Deferred, retain::RETAIN_CHUNK)
    } else {
        (TransactionBehavior::Immediate, GROUP)
    };
    while b.more() {
        let tx = conn
            .transaction_with_behavior(behavior)
            .map_err(|e| b.failed(err(e)))?;
        b.begin();
        if let Err(e) = batch(&tx, &mut b, writes, group, &mut step) {
            return Err(b.failed(e)); // the transaction rolls back as it drops
        }
        if dry_run {
            drop(tx); // rolled back: it only read
        } else {
            tx.commit().map_err(|e| b.failed(err(e)))?;
        }
        b.committed();
        if !dry_run {
            // Copy the batch's pages into the file without waiting for anyone (PASSIVE takes
            // no writer lock), so the WAL stays small for the program's own checkpoints. A
            // checkpoint that cannot finish now is only later work: not a failure.
            let _ = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
        }
        if b.more() {
            std::thread::sleep(SQLITE_PAUSE);
        }
    }
    Ok(b.finish())
}

fn batch(
    tx: &Transaction<'_>,
    b: &mut Batches<'_>,
    writes: &str,
    group: usize,
    step: &mut impl FnMut(&Transaction<'_>, &[String]) -> Result<Vec<ThreadPrune>, StoreError>,
) -> Result<(), StoreError> {
    while let Some(guards) = b.group(group) {
        let ids: Vec<String> = guards.iter().map(|g| g.thread_id.clone()).collect();
        let now = marks(tx, writes, &ids)?;
        let go = b.judge(guards, &now);
        if !go.is_empty() {
            b.pruned(step(tx, &go)?);
        }
    }
    Ok(())
}

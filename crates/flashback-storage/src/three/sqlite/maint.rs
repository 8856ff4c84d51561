//! [`SaverMaintenance`] for [`ThreeTableSaver`]: `copy_thread`, `delete_for_runs`, `prune`
//! and `delete_branch`, planned by the backend-neutral [`crate::maintenance::plan`]; blob
//! rows go when no remaining checkpoint references them and no remaining delta is based on
//! them (`docs/three-table.md`, "Forks and rollback").

use super::ThreeTableSaver;
use crate::maintenance::plan::{check_guards, copy_args, not_empty, plan, Job, Plan, Snapshot};
use crate::maintenance::{
    retain, Guarded, Mark, PruneRun, PruneStrategy, VacuumPreview, VacuumReport,
};
use crate::maintenance::{BlobFix, CopyReport, DamagedBlob, PruneReport, SaverMaintenance, TASKS};
use crate::sqlite::batches;
use crate::sqlite::maintenance::run_threads;
use crate::sqlite::write_err as err;
use crate::three::repair::{damaged, fix_row, BlobMap};
use crate::three::rows::{
    now_iso, ns_hash, plan_row, unversioned, PlanColumns, StoredBlob, TABLE_COLUMNS,
};
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::AesKey;
use rusqlite::{params, Transaction};
use std::collections::{HashMap, HashSet};

fn copy(tx: &Transaction<'_>, source: &str, target: &str) -> Result<CopyReport, StoreError> {
    let busy: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1) \
             OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = ?1) \
             OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = ?1)",
            [target],
            |r| r.get(0),
        )
        .map_err(err)?;
    if busy {
        return Err(not_empty(target));
    }
    let mut n = [0u64; 3];
    for (i, (table, cols)) in TABLE_COLUMNS.into_iter().enumerate() {
        n[i] = tx
            .execute(
                &format!(
                    "INSERT INTO {table} (thread_id, {cols}) SELECT ?2, {cols} FROM {table} \
                     WHERE thread_id = ?1 ORDER BY rowid"
                ),
                params![source, target],
            )
            .map_err(err)? as u64;
    }
    Ok(CopyReport {
        checkpoints: n[0],
        writes: n[1],
        blobs: n[2],
        thread_id: None,
    })
}

/// The checkpoint rows of `threads` as planning needs them.
fn snapshot(
    tx: &Transaction<'_>,
    threads: &[String],
    key: Option<&AesKey>,
) -> Result<Snapshot, StoreError> {
    let mut snap = Snapshot::default();
    let mut cps = tx
        .prepare(
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata, \
             coalesce(length(CAST(checkpoint AS BLOB)), 0) + coalesce(length(CAST(metadata AS BLOB)), 0) \
             FROM checkpoints WHERE thread_id = ?",
        )
        .map_err(err)?;
    let mut writes = tx
        .prepare(
            "SELECT checkpoint_ns_hash, checkpoint_id, count(*), max(channel = ?2), \
             coalesce(sum(length(CAST(blob_data AS BLOB))), 0) \
             FROM checkpoint_writes WHERE thread_id = ?1 GROUP BY checkpoint_ns_hash, checkpoint_id",
        )
        .map_err(err)?;
    let mut valued = tx
        .prepare(
            "SELECT checkpoint_ns_hash, channel, version FROM checkpoint_blobs \
             WHERE thread_id = ? AND type <> 'empty'",
        )
        .map_err(err)?;
    for thread in threads {
        let mut has_value: HashSet<(String, String, String)> = HashSet::new();
        let mut rows = valued.query([thread]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            has_value.insert((
                r.get(0).map_err(err)?,
                r.get(1).map_err(err)?,
                r.get(2).map_err(err)?,
            ));
        }
        let mut names: HashMap<String, String> = HashMap::new();
        let mut rows = cps.query([thread]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let metadata: Option<Vec<u8>> = r.get(5).map_err(err)?;
            let columns = PlanColumns {
                ns: r.get(0).map_err(err)?,
                id: r.get(1).map_err(err)?,
                parent: r.get(2).map_err(err)?,
                tag: r.get(3).map_err(err)?,
                doc: r.get(4).map_err(err)?,
                metadata: metadata
                    .and_then(|m| serde_json::from_slice(&m).ok())
                    .unwrap_or(serde_json::Value::Null),
            };
            let bytes: i64 = r.get(6).map_err(err)?;
            let row = plan_row(thread, columns, key, &has_value, &mut names);
            let cp_key = (row.thread.clone(), row.ns.clone(), row.id.clone());
            snap.cp_bytes.insert(cp_key, bytes.max(0) as u64);
            snap.rows.push(row);
        }
        let mut rows = writes.query(params![thread, TASKS]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let hash: String = r.get(0).map_err(err)?;
            let ns = names.get(&hash).cloned().unwrap_or(hash);
            let n: i64 = r.get(2).map_err(err)?;
            let sends: Option<i64> = r.get(3).map_err(err)?;
            let bytes: i64 = r.get(4).map_err(err)?;
            let key = (thread.clone(), ns, r.get(1).map_err(err)?);
            snap.write_bytes.insert(key.clone(), bytes.max(0) as u64);
            snap.writes
                .insert(key, (n.max(0) as u64, sends.unwrap_or(0) != 0));
        }
    }
    Ok(snap)
}

/// A blob row that goes: its rowid, thread and stored bytes.
type Orphan = (i64, String, u64);

/// The blob rows of `threads` that the checkpoints left after `plan` no longer reach,
/// directly or as the base of a delta they reach.
fn orphan_blobs(
    tx: &Transaction<'_>,
    snap: &Snapshot,
    plan: &Plan,
    threads: &[String],
) -> Result<Vec<Orphan>, StoreError> {
    let gone_threads: HashSet<&String> = plan.threads.iter().collect();
    let gone_ns: HashSet<(&String, &String)> =
        plan.namespaces.iter().map(|(t, n)| (t, n)).collect();
    let gone: HashSet<(&String, &String, &String)> =
        plan.checkpoints.iter().map(|(t, n, i)| (t, n, i)).collect();
    let mut out = Vec::new();
    let mut stmt = tx
        .prepare(
            "SELECT rowid, checkpoint_ns_hash, channel, version, base_version, \
             coalesce(length(CAST(blob_data AS BLOB)), 0) FROM checkpoint_blobs WHERE thread_id = ?",
        )
        .map_err(err)?;
    for thread in threads {
        let mut reached: Vec<(String, String, String)> = Vec::new();
        let mut own: HashSet<(String, String)> = HashSet::new();
        for r in snap.rows.iter().filter(|r| &r.thread == thread) {
            if gone_threads.contains(&r.thread)
                || gone_ns.contains(&(&r.thread, &r.ns))
                || gone.contains(&(&r.thread, &r.ns, &r.id))
            {
                continue;
            }
            let hash = ns_hash(&r.ns);
            own.insert((hash.clone(), unversioned(&r.id)));
            for (c, v) in &r.versions {
                reached.push((hash.clone(), c.clone(), v.clone()));
            }
        }
        type Blob = (i64, Option<String>, i64);
        let mut blobs: HashMap<(String, String, String), Blob> = HashMap::new();
        let mut rows = stmt.query([thread]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let k = (
                r.get(1).map_err(err)?,
                r.get(2).map_err(err)?,
                r.get(3).map_err(err)?,
            );
            let blob = (
                r.get(0).map_err(err)?,
                r.get(4).map_err(err)?,
                r.get(5).map_err(err)?,
            );
            blobs.insert(k, blob);
        }
        let mut kept: HashSet<(String, String, String)> = HashSet::new();
        while let Some(k) = reached.pop() {
            if !kept.insert(k.clone()) {
                continue;
            }
            if let Some((_, Some(base), _)) = blobs.get(&k) {
                reached.push((k.0.clone(), k.1.clone(), base.clone()));
            }
        }
        for (k, (rowid, _, bytes)) in &blobs {
            if !kept.contains(k) && !own.contains(&(k.0.clone(), k.2.clone())) {
                out.push((*rowid, thread.clone(), (*bytes).max(0) as u64));
            }
        }
    }
    Ok(out)
}

fn apply(tx: &Transaction<'_>, plan: &Plan, orphans: &[Orphan]) -> Result<PruneReport, StoreError> {
    let mut report = PruneReport {
        checkpoints: plan.report.checkpoints.clone(),
        blobs: orphans.len() as u64,
        ..Default::default()
    };
    for t in &plan.threads {
        tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [t])
            .map_err(err)?;
        report.writes += tx
            .execute("DELETE FROM checkpoint_writes WHERE thread_id = ?", [t])
            .map_err(err)? as u64;
    }
    for (t, ns) in &plan.namespaces {
        let h = ns_hash(ns);
        tx.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns_hash = ?",
            [t, &h],
        )
        .map_err(err)?;
        report.writes += tx
            .execute(
                "DELETE FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns_hash = ?",
                [t, &h],
            )
            .map_err(err)? as u64;
    }
    for (t, ns, id) in &plan.checkpoints {
        let h = ns_hash(ns);
        report.writes += tx
            .execute(
                "DELETE FROM checkpoint_writes WHERE thread_id = ? AND checkpoint_ns_hash = ? \
                 AND checkpoint_id = ?",
                [t, &h, id],
            )
            .map_err(err)? as u64;
        tx.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns_hash = ? AND checkpoint_id = ?",
            [t, &h, id],
        )
        .map_err(err)?;
    }
    for (t, ns, id) in &plan.parents {
        report.parents_cleared += tx
            .execute(
                "UPDATE checkpoints SET parent_checkpoint_id = NULL \
                 WHERE thread_id = ? AND checkpoint_ns_hash = ? AND checkpoint_id = ?",
                [t, &ns_hash(ns), id],
            )
            .map_err(err)? as u64;
    }
    for (rowid, ..) in orphans {
        tx.execute("DELETE FROM checkpoint_blobs WHERE rowid = ?", [rowid])
            .map_err(err)?;
    }
    Ok(report)
}

/// Every blob row of a thread, by key.
fn thread_blobs(tx: &Transaction<'_>, thread: &str) -> Result<BlobMap, StoreError> {
    let mut stmt = tx
        .prepare(
            "SELECT checkpoint_ns_hash, channel, version, type, kind, base_version, depth, \
             blob_data FROM checkpoint_blobs WHERE thread_id = ?",
        )
        .map_err(err)?;
    let mut rows = stmt.query([thread]).map_err(err)?;
    let mut out = BlobMap::new();
    while let Some(r) = rows.next().map_err(err)? {
        let text = |i: usize| -> Result<String, StoreError> {
            Ok(r.get::<_, Option<String>>(i)
                .map_err(err)?
                .unwrap_or_default())
        };
        let blob = StoredBlob {
            type_tag: text(3)?,
            kind: text(4)?,
            base_version: r.get(5).map_err(err)?,
            depth: r.get::<_, Option<i64>>(6).map_err(err)?.unwrap_or(0),
            data: r.get(7).unwrap_or(None),
        };
        out.insert((text(0)?, text(1)?, text(2)?), blob);
    }
    Ok(out)
}

/// Replace each fix's blob row with the value whole, `gmt_create` the time of the repair.
fn replace(
    tx: &Transaction<'_>,
    thread: &str,
    fixes: &[BlobFix],
    key: Option<&AesKey>,
) -> Result<u64, StoreError> {
    let now = now_iso();
    let mut n = 0;
    for fix in fixes {
        let (hash, row) = fix_row(fix, key)?;
        tx.execute(
            "DELETE FROM checkpoint_blobs WHERE thread_id = ? AND checkpoint_ns_hash = ? \
             AND channel = ? AND version = ?",
            params![thread, hash, row.channel, row.version],
        )
        .map_err(err)?;
        n += tx
            .execute(
                "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns_hash, channel, version, \
                 type, kind, base_version, depth, blob_data, gmt_create) \
                 VALUES (?, ?, ?, ?, ?, ?, NULL, 0, ?, ?)",
                params![
                    thread,
                    hash,
                    row.channel,
                    row.version,
                    row.type_tag,
                    row.kind.as_str(),
                    row.data,
                    now
                ],
            )
            .map_err(err)? as u64;
    }
    Ok(n)
}

async fn maintain(
    saver: &ThreeTableSaver,
    job: Job,
    dry_run: bool,
) -> Result<PruneReport, StoreError> {
    let key = saver.key();
    // A dry run writes nothing: its transaction is rolled back.
    saver
        .write_or_rollback(!dry_run, move |tx| {
            let threads = match (job.threads(), &job) {
                (Some(t), _) => t,
                (None, Job::Runs(r)) => run_threads(tx, r)?,
                (None, _) => Vec::new(),
            };
            if threads.is_empty() {
                return Ok(PruneReport {
                    dry_run,
                    ..Default::default()
                });
            }
            let snap = snapshot(tx, &threads, key.as_deref())?;
            let plan = plan(&snap, &threads, &job.select());
            if let Some(report) = job.stale(&plan, dry_run) {
                return Ok(report);
            }
            let orphans = orphan_blobs(tx, &snap, &plan, &threads)?;
            if dry_run || (plan.is_empty() && orphans.is_empty()) {
                return Ok(PruneReport {
                    dry_run,
                    blobs: orphans.len() as u64,
                    ..plan.report
                });
            }
            apply(tx, &plan, &orphans)
        })
        .await
}

/// [`SaverMaintenance::prune_measured`]: guarded, in short transactions
/// (`crate::sqlite::batches`).
async fn retain_measured(
    saver: &ThreeTableSaver,
    threads: Vec<Guarded>,
    strategy: PruneStrategy,
    keep_last: usize,
    dry_run: bool,
) -> Result<PruneRun, StoreError> {
    let key = saver.key();
    saver
        .with_connection(move |conn| {
            let select = retain::select(strategy, keep_last);
            batches::prune_in_batches(conn, &threads, WRITES, dry_run, |tx, ids| {
                let snap = snapshot(tx, ids, key.as_deref())?;
                let plan = plan(&snap, ids, &select);
                let orphans = orphan_blobs(tx, &snap, &plan, ids)?;
                let mut tally = retain::tally(&snap, &plan, ids);
                let at: HashMap<&str, usize> = ids
                    .iter()
                    .enumerate()
                    .map(|(i, t)| (t.as_str(), i))
                    .collect();
                for (_, thread, bytes) in &orphans {
                    if let Some(e) = at.get(thread.as_str()).and_then(|i| tally.get_mut(*i)) {
                        e.blobs += 1;
                        e.bytes += bytes;
                    }
                }
                if !dry_run && (!plan.is_empty() || !orphans.is_empty()) {
                    apply(tx, &plan, &orphans)?;
                }
                Ok(tally)
            })
        })
        .await
}

/// The three-table store's pending-writes table.
const WRITES: &str = "checkpoint_writes";

#[async_trait]
impl SaverMaintenance for ThreeTableSaver {
    async fn prune_measured(
        &self,
        threads: &[Guarded],
        strategy: PruneStrategy,
        keep_last: usize,
        dry_run: bool,
    ) -> Result<PruneRun, StoreError> {
        let threads = check_guards(threads);
        retain_measured(self, threads, strategy, keep_last, dry_run).await
    }

    async fn thread_marks(
        &self,
        thread_ids: &[String],
    ) -> Result<HashMap<String, Mark>, StoreError> {
        let ids = thread_ids.to_vec();
        self.write_or_rollback(false, move |tx| batches::marks(tx, WRITES, &ids))
            .await
    }

    async fn vacuum(&self, force: bool) -> Result<VacuumReport, StoreError> {
        crate::sqlite::maintenance::vacuum_file(self.path(), force).await
    }

    async fn vacuum_preview(&self) -> Result<VacuumPreview, StoreError> {
        crate::sqlite::maintenance::vacuum_preview_file(self.path()).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError> {
        copy_args(source, target)?;
        let (source, target) = (source.to_owned(), target.to_owned());
        self.write(move |tx| copy(tx, &source, &target)).await
    }

    async fn run_job(&self, job: Job, dry_run: bool) -> Result<PruneReport, StoreError> {
        maintain(self, job, dry_run).await
    }

    async fn damaged_blobs(&self, thread_id: &str) -> Result<Vec<DamagedBlob>, StoreError> {
        let (thread, key) = (thread_id.to_owned(), self.key());
        // Read in one (rolled back) transaction: one snapshot of both tables.
        self.write_or_rollback(false, move |tx| {
            let snap = snapshot(tx, std::slice::from_ref(&thread), key.as_deref())?;
            let blobs = thread_blobs(tx, &thread)?;
            Ok(damaged(&snap.rows, &blobs, key.as_deref()))
        })
        .await
    }

    async fn replace_blobs(&self, thread_id: &str, fixes: &[BlobFix]) -> Result<u64, StoreError> {
        let (thread, key, fixes) = (thread_id.to_owned(), self.key(), fixes.to_vec());
        self.write(move |tx| replace(tx, &thread, &fixes, key.as_deref()))
            .await
    }
}

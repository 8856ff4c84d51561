//! [`SaverMaintenance`] for [`SqliteSaver`]: `copy_thread`, `delete_for_runs` and `prune` on a
//! connection of their own.

use super::access::Source;
use super::batches;
use super::connect::write_err as err;
use super::SqliteSaver;
use crate::maintenance::plan::{
    check_guards, copy_args, delta_counters, metadata_fields, not_empty, plan, CpRow, Job, Plan,
    Select, Snapshot,
};
use crate::maintenance::{retain, Guarded, Mark, PruneRun, VacuumPreview, VacuumReport};
use crate::maintenance::{CopyReport, PruneReport, PruneStrategy, SaverMaintenance, TASKS};
use crate::{CheckpointStore, StoreError};
use async_trait::async_trait;
use flashback_codec::{Decoded, Value};
use rusqlite::{params, Connection, Transaction, TransactionBehavior};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// A connection of our own to the saver's file: read-write, or for dry runs read-only the way
/// the store reads (nothing created beside the file; the [`Source`] must outlive the
/// connection).
fn open(path: &str, write: bool) -> Result<(Connection, Option<Source>), StoreError> {
    let (conn, source) = if write {
        (super::connect::read_write(path)?, None)
    } else {
        let (source, conn) = super::connect::read_only(path)?;
        (conn, Some(source))
    };
    conn.busy_timeout(Duration::from_secs(10)).map_err(err)?;
    Ok((conn, source))
}

async fn run<T, F>(path: &str, write: bool, f: F) -> Result<T, StoreError>
where
    T: Send + 'static,
    F: FnOnce(&Transaction<'_>) -> Result<T, StoreError> + Send + 'static,
{
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let (mut conn, _source) = open(&path, write)?;
        let behavior = if write {
            TransactionBehavior::Immediate
        } else {
            TransactionBehavior::Deferred
        };
        let tx = conn.transaction_with_behavior(behavior).map_err(err)?;
        let out = f(&tx)?;
        if write {
            tx.commit().map_err(err)?;
        }
        Ok(out)
    })
    .await
    .map_err(|e| StoreError::Query(format!("maintenance task failed: {e}")))?
}

fn copy(
    tx: &Transaction<'_>,
    source: &str,
    target: &str,
    task_path: bool,
) -> Result<CopyReport, StoreError> {
    let busy: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = ?1) \
             OR EXISTS (SELECT 1 FROM writes WHERE thread_id = ?1)",
            [target],
            |r| r.get(0),
        )
        .map_err(err)?;
    if busy {
        return Err(not_empty(target));
    }
    let checkpoints = tx
        .execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata) \
             SELECT ?2, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata \
             FROM checkpoints WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id",
            params![source, target],
        )
        .map_err(err)?;
    let cols = if task_path {
        "checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
    } else {
        "checkpoint_ns, checkpoint_id, task_id, idx, channel, type, value"
    };
    let writes = tx
        .execute(
            &format!(
                "INSERT INTO writes (thread_id, {cols}) SELECT ?2, {cols} FROM writes \
                 WHERE thread_id = ?1 ORDER BY checkpoint_ns, checkpoint_id, task_id, idx"
            ),
            params![source, target],
        )
        .map_err(err)?;
    Ok(CopyReport {
        checkpoints: checkpoints as u64,
        writes: writes as u64,
        blobs: 0,
        thread_id: None,
    })
}

/// The checkpoint rows and write counts of `threads`; with `facts`, what planning a partial
/// prune needs of each document and metadata (`Delete` needs only the keys: nothing decoded).
fn snapshot(
    tx: &Transaction<'_>,
    threads: &[String],
    key: Option<&flashback_codec::AesKey>,
    facts: bool,
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
            "SELECT checkpoint_ns, checkpoint_id, count(*), max(channel = ?2), \
             coalesce(sum(length(CAST(value AS BLOB))), 0) \
             FROM writes WHERE thread_id = ?1 GROUP BY checkpoint_ns, checkpoint_id",
        )
        .map_err(err)?;
    for thread in threads {
        let mut rows = cps.query([thread]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let ns: String = r.get(0).map_err(err)?;
            let id: String = r.get(1).map_err(err)?;
            let parent: Option<String> = r.get(2).map_err(err)?;
            let tag: Option<String> = r.get(3).map_err(err)?;
            let doc: Option<Vec<u8>> = r.get(4).map_err(err)?;
            let metadata: Option<Vec<u8>> = r.get(5).map_err(err)?;
            let bytes: i64 = r.get(6).map_err(err)?;
            let cp_key = (thread.clone(), ns.clone(), id.clone());
            snap.cp_bytes.insert(cp_key, bytes.max(0) as u64);
            if !facts {
                snap.rows.push(CpRow::keys(thread, ns, id, parent));
                continue;
            }
            let metadata = metadata
                .and_then(|m| serde_json::from_slice::<serde_json::Value>(&m).ok())
                .unwrap_or(serde_json::Value::Null);
            let (root, run_id) = metadata_fields(&metadata);
            let (v, stored, mut delta) = document_facts(tag.as_deref(), doc.as_deref(), key);
            delta.extend(delta_counters(&metadata));
            snap.rows.push(CpRow {
                thread: thread.clone(),
                ns,
                id,
                parent,
                v,
                root,
                run_id,
                versions: Vec::new(),
                stored,
                delta,
            });
        }
        let mut rows = writes.query(params![thread, TASKS]).map_err(err)?;
        while let Some(r) = rows.next().map_err(err)? {
            let ns: String = r.get(0).map_err(err)?;
            let id: String = r.get(1).map_err(err)?;
            let n: i64 = r.get(2).map_err(err)?;
            let sends: Option<i64> = r.get(3).map_err(err)?;
            let bytes: i64 = r.get(4).map_err(err)?;
            let key = (thread.clone(), ns, id);
            snap.write_bytes.insert(key.clone(), bytes.max(0) as u64);
            snap.writes
                .insert(key, (n.max(0) as u64, sends.unwrap_or(0) != 0));
        }
    }
    Ok(snap)
}

/// `checkpoint["v"]` and whether a channel value is a `_DeltaSnapshot`.
fn document_facts(
    tag: Option<&str>,
    doc: Option<&[u8]>,
    key: Option<&flashback_codec::AesKey>,
) -> (Option<i64>, Vec<String>, Vec<String>) {
    let mut stored = Vec::new();
    let mut snapshots = Vec::new();
    match flashback_codec::decode_typed_keyed(tag.unwrap_or("msgpack"), doc, key) {
        Decoded::Msgpack(Value::Map(entries)) => {
            let mut v = None;
            for (k, val) in &entries {
                match k.as_str() {
                    Some("v") => v = val.as_i64(),
                    Some("channel_values") => {
                        if let Value::Map(values) = val {
                            for (c, x) in values {
                                let Some(c) = c.as_str() else { continue };
                                stored.push(c.to_owned());
                                if matches!(x, Value::DeltaSnapshot(_)) {
                                    snapshots.push(c.to_owned());
                                }
                            }
                        }
                    }
                    _ => {}
                }
            }
            (v, stored, snapshots)
        }
        _ => (None, stored, snapshots),
    }
}

/// The threads holding a checkpoint of one of `runs` (`checkpoints.metadata` is the same
/// column in LangGraph's schema and the three-table store's).
pub(crate) fn run_threads(
    tx: &Transaction<'_>,
    runs: &HashSet<String>,
) -> Result<Vec<String>, StoreError> {
    let mut stmt = tx
        .prepare(
            "SELECT DISTINCT thread_id, CAST(metadata AS TEXT) FROM checkpoints \
             WHERE instr(CAST(metadata AS TEXT), '\"run_id\"') > 0 ORDER BY thread_id",
        )
        .map_err(err)?;
    let mut rows = stmt.query([]).map_err(err)?;
    let mut out: Vec<String> = Vec::new();
    while let Some(r) = rows.next().map_err(err)? {
        let thread: String = r.get(0).map_err(err)?;
        let metadata: Option<String> = r.get(1).map_err(err)?;
        let metadata = metadata
            .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
            .unwrap_or(serde_json::Value::Null);
        let (_, run_id) = metadata_fields(&metadata);
        if run_id.is_some_and(|r| runs.contains(&r)) && out.last() != Some(&thread) {
            out.push(thread);
        }
    }
    Ok(out)
}

fn apply(tx: &Transaction<'_>, plan: &Plan) -> Result<PruneReport, StoreError> {
    let mut report = PruneReport {
        checkpoints: plan.report.checkpoints.clone(),
        ..Default::default()
    };
    for t in &plan.threads {
        tx.execute("DELETE FROM checkpoints WHERE thread_id = ?", [t])
            .map_err(err)?;
        report.writes += tx
            .execute("DELETE FROM writes WHERE thread_id = ?", [t])
            .map_err(err)? as u64;
    }
    for (t, ns) in &plan.namespaces {
        tx.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
            [t, ns],
        )
        .map_err(err)?;
        report.writes += tx
            .execute(
                "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?",
                [t, ns],
            )
            .map_err(err)? as u64;
    }
    {
        let mut del_writes = tx
            .prepare(
                "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            )
            .map_err(err)?;
        let mut del_cp = tx
            .prepare(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            )
            .map_err(err)?;
        for (t, ns, id) in &plan.checkpoints {
            report.writes += del_writes.execute([t, ns, id]).map_err(err)? as u64;
            del_cp.execute([t, ns, id]).map_err(err)?;
        }
        let mut clear = tx
            .prepare(
                "UPDATE checkpoints SET parent_checkpoint_id = NULL \
                 WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            )
            .map_err(err)?;
        for (t, ns, id) in &plan.parents {
            report.parents_cleared += clear.execute([t, ns, id]).map_err(err)? as u64;
        }
    }
    Ok(report)
}

async fn sqlite_maintain(
    saver: &SqliteSaver,
    job: Job,
    dry_run: bool,
) -> Result<PruneReport, StoreError> {
    let key = saver.key();
    run(saver.path(), !dry_run, move |tx| {
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
        let select = job.select();
        let facts = !matches!(select, Select::Delete);
        let snap = snapshot(tx, &threads, key.as_deref(), facts)?;
        let plan = plan(&snap, &threads, &select);
        if let Some(report) = job.stale(&plan, dry_run) {
            return Ok(report);
        }
        if dry_run || plan.is_empty() {
            return Ok(PruneReport {
                dry_run,
                ..plan.report
            });
        }
        apply(tx, &plan)
    })
    .await
}

/// [`SaverMaintenance::prune_measured`]: guarded, in short transactions (`batches.rs`).
async fn sqlite_retain(
    saver: &SqliteSaver,
    threads: Vec<Guarded>,
    strategy: PruneStrategy,
    keep_last: usize,
    dry_run: bool,
) -> Result<PruneRun, StoreError> {
    let key = saver.key();
    let path = saver.path().to_owned();
    tokio::task::spawn_blocking(move || {
        let (mut conn, _source) = open(&path, !dry_run)?;
        let select = retain::select(strategy, keep_last);
        let facts = !matches!(select, Select::Delete);
        batches::prune_in_batches(&mut conn, &threads, "writes", dry_run, |tx, ids| {
            let snap = snapshot(tx, ids, key.as_deref(), facts)?;
            let plan = plan(&snap, ids, &select);
            if !dry_run && !plan.is_empty() {
                apply(tx, &plan)?;
            }
            Ok(retain::tally(&snap, &plan, ids))
        })
    })
    .await
    .map_err(|e| StoreError::Query(format!("maintenance task failed: {e}")))?
}

/// `page_count × page_size`: the file's size as SQLite counts it.
fn file_bytes(conn: &Connection) -> Result<u64, StoreError> {
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .map_err(err)?;
    let page: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .map_err(err)?;
    Ok((pages.max(0) as u64) * (page.max(0) as u64))
}

/// What `VACUUM` of the file would do (read-only). Shared with the three-table store.
pub(crate) async fn vacuum_preview_file(path: &str) -> Result<VacuumPreview, StoreError> {
    let bytes = run(path, false, |tx| file_bytes(tx)).await?;
    Ok(VacuumPreview::sqlite(bytes, holders(path)))
}

fn holders(path: &str) -> Option<Vec<u32>> {
    super::holders::other_holders(std::path::Path::new(path))
}

/// `VACUUM` on a connection of its own (no transaction), with `page_count × page_size`
/// before and after; unless `force`, refused ([`StoreError::InUse`]) while another program
/// has the file open: its writes would wait for the whole VACUUM.
/// Shared with the three-table store on SQLite.
pub(crate) async fn vacuum_file(path: &str, force: bool) -> Result<VacuumReport, StoreError> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let (conn, _source) = open(&path, true)?;
        let bytes_before = file_bytes(&conn)?;
        let preview = VacuumPreview::sqlite(bytes_before, holders(&path));
        if let Some(why) = preview.refusal().filter(|_| !force) {
            return Err(StoreError::InUse(why));
        }
        conn.execute_batch("VACUUM").map_err(err)?;
        Ok(VacuumReport {
            bytes_before,
            bytes_after: file_bytes(&conn)?,
        })
    })
    .await
    .map_err(|e| StoreError::Query(format!("vacuum task failed: {e}")))?
}

#[async_trait]
impl SaverMaintenance for SqliteSaver {
    async fn prune_measured(
        &self,
        threads: &[Guarded],
        strategy: PruneStrategy,
        keep_last: usize,
        dry_run: bool,
    ) -> Result<PruneRun, StoreError> {
        let threads = check_guards(threads);
        sqlite_retain(self, threads, strategy, keep_last, dry_run).await
    }

    async fn thread_marks(
        &self,
        thread_ids: &[String],
    ) -> Result<HashMap<String, Mark>, StoreError> {
        let ids = thread_ids.to_vec();
        run(self.path(), false, move |tx| {
            batches::marks(tx, "writes", &ids)
        })
        .await
    }

    async fn vacuum(&self, force: bool) -> Result<VacuumReport, StoreError> {
        vacuum_file(self.path(), force).await
    }

    async fn vacuum_preview(&self) -> Result<VacuumPreview, StoreError> {
        vacuum_preview_file(self.path()).await
    }

    async fn copy_thread(&self, source: &str, target: &str) -> Result<CopyReport, StoreError> {
        copy_args(source, target)?;
        let (source, target) = (source.to_owned(), target.to_owned());
        let task_path = self.schema().has_task_path;
        run(self.path(), true, move |tx| {
            copy(tx, &source, &target, task_path)
        })
        .await
    }

    async fn run_job(&self, job: Job, dry_run: bool) -> Result<PruneReport, StoreError> {
        sqlite_maintain(self, job, dry_run).await
    }
}

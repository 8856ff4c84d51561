//! The maintenance steps of [`ThreeTablePg`] (run by `maintenance.rs`): copying a thread and
//! the jobs (`delete_for_runs`, `prune` and `delete_branch` are provided over them), planned by the backend-neutral
//! [`crate::maintenance::plan`]; blob rows go when no remaining checkpoint references them and
//! no remaining delta is based on them (`docs/three-table.md`, "Forks and rollback").

use super::ThreeTablePg;
use crate::maintenance::plan::{metadata_fields, not_empty, plan, Job, Plan, Snapshot};
use crate::maintenance::{BlobFix, CopyReport, PruneReport, TASKS};
use crate::postgres::sql::{Arg, Sql};
use crate::postgres::wait::Bounded as _;
use crate::three::repair::{fix_row, BlobMap};
use crate::three::rows::{ns_hash, plan_row, unversioned, PlanColumns, StoredBlob, TABLE_COLUMNS};
use crate::StoreError;
use flashback_codec::AesKey;
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::Row as _;
use std::collections::{HashMap, HashSet};

type Key3 = (String, String, String);

fn text(r: &PgRow, i: usize) -> Option<String> {
    r.try_get::<Option<String>, _>(i).ok().flatten()
}

async fn fetch(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    sql: &str,
    args: Vec<Arg>,
) -> Result<Vec<PgRow>, StoreError> {
    let mut q = Sql::new(sql);
    for a in args {
        q = q.with(a);
    }
    q.query().fetch_all(&mut *conn).bounded(&s.target).await
}

async fn exec(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    sql: &str,
    args: Vec<Arg>,
) -> Result<u64, StoreError> {
    let mut q = Sql::new(sql);
    for a in args {
        q = q.with(a);
    }
    let done = q.query().execute(&mut *conn).bounded(&s.target).await?;
    Ok(done.rows_affected())
}

fn t(s: &str) -> Arg {
    Arg::Text(s.to_owned())
}

pub(super) async fn copy(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    source: &str,
    target: &str,
) -> Result<CopyReport, StoreError> {
    let busy = fetch(
        conn,
        s,
        "SELECT EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1) \
         OR EXISTS (SELECT 1 FROM checkpoint_writes WHERE thread_id = $1) \
         OR EXISTS (SELECT 1 FROM checkpoint_blobs WHERE thread_id = $1)",
        vec![t(target)],
    )
    .await?;
    if busy.first().and_then(|r| r.try_get::<bool, _>(0).ok()) != Some(false) {
        return Err(not_empty(target));
    }
    let mut n = [0u64; 3];
    for (i, (table, cols)) in TABLE_COLUMNS.into_iter().enumerate() {
        n[i] = exec(
            conn,
            s,
            &format!(
                "INSERT INTO {table} (thread_id, {cols}) SELECT $2, {cols} FROM {table} \
                 WHERE thread_id = $1"
            ),
            vec![t(source), t(target)],
        )
        .await?;
    }
    Ok(CopyReport {
        checkpoints: n[0],
        writes: n[1],
        blobs: n[2],
        thread_id: None,
    })
}

/// The checkpoint rows of `threads` as planning needs them.
pub(super) async fn snapshot(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    threads: &[String],
    key: Option<&AesKey>,
) -> Result<Snapshot, StoreError> {
    let mut snap = Snapshot::default();
    for thread in threads {
        let valued: HashSet<Key3> = fetch(
            conn,
            s,
            "SELECT checkpoint_ns_hash, channel, version FROM checkpoint_blobs \
             WHERE thread_id = $1 AND type <> 'empty'",
            vec![t(thread)],
        )
        .await?
        .iter()
        .map(|r| {
            (
                text(r, 0).unwrap_or_default(),
                text(r, 1).unwrap_or_default(),
                text(r, 2).unwrap_or_default(),
            )
        })
        .collect();
        let mut names: HashMap<String, String> = HashMap::new();
        let cps = fetch(
            conn,
            s,
            "SELECT checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, \
             metadata::text, (coalesce(octet_length(checkpoint), 0) \
             + coalesce(octet_length(metadata::text), 0))::int8 \
             FROM checkpoints WHERE thread_id = $1",
            vec![t(thread)],
        )
        .await?;
        for r in &cps {
            let columns = PlanColumns {
                ns: text(r, 0).unwrap_or_default(),
                id: text(r, 1).unwrap_or_default(),
                parent: text(r, 2),
                tag: text(r, 3),
                doc: r.try_get(4).ok().flatten(),
                metadata: text(r, 5)
                    .and_then(|m| serde_json::from_str(&m).ok())
                    .unwrap_or(serde_json::Value::Null),
            };
            let bytes = r.try_get::<Option<i64>, _>(6).ok().flatten().unwrap_or(0);
            let row = plan_row(thread, columns, key, &valued, &mut names);
            let cp_key = (row.thread.clone(), row.ns.clone(), row.id.clone());
            snap.cp_bytes.insert(cp_key, bytes.max(0) as u64);
            snap.rows.push(row);
        }
        let writes = fetch(
            conn,
            s,
            "SELECT checkpoint_ns_hash, checkpoint_id, count(*)::int8, bool_or(channel = $2), \
             coalesce(sum(octet_length(blob_data)), 0)::int8 FROM checkpoint_writes WHERE thread_id = $1 GROUP BY checkpoint_ns_hash, checkpoint_id",
            vec![t(thread), t(TASKS)],
        )
        .await?;
        for r in &writes {
            let hash = text(r, 0).unwrap_or_default();
            let ns = names.get(&hash).cloned().unwrap_or(hash);
            let n: i64 = r.try_get::<Option<i64>, _>(2).ok().flatten().unwrap_or(0);
            let sends: bool = r
                .try_get::<Option<bool>, _>(3)
                .ok()
                .flatten()
                .unwrap_or(false);
            let bytes = r.try_get::<Option<i64>, _>(4).ok().flatten().unwrap_or(0);
            let key = (thread.clone(), ns, text(r, 1).unwrap_or_default());
            snap.write_bytes.insert(key.clone(), bytes.max(0) as u64);
            snap.writes.insert(key, (n.max(0) as u64, sends));
        }
    }
    Ok(snap)
}

/// A blob row that goes: its thread, `(hash, channel, version)` and stored bytes.
pub(super) type Orphan = (String, Key3, u64);

/// The blob rows of `threads` that the checkpoints left after `plan` no longer reach,
/// directly or as the base of a delta they reach.
pub(super) async fn orphan_blobs(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
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
    for thread in threads {
        let mut reached: Vec<Key3> = Vec::new();
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
        let rows = fetch(
            conn,
            s,
            "SELECT checkpoint_ns_hash, channel, version, base_version, \
             coalesce(octet_length(blob_data), 0)::int8 FROM checkpoint_blobs WHERE thread_id = $1",
            vec![t(thread)],
        )
        .await?;
        let blobs: HashMap<Key3, (Option<String>, i64)> = rows
            .iter()
            .map(|r| {
                (
                    (
                        text(r, 0).unwrap_or_default(),
                        text(r, 1).unwrap_or_default(),
                        text(r, 2).unwrap_or_default(),
                    ),
                    (
                        text(r, 3),
                        r.try_get::<Option<i64>, _>(4).ok().flatten().unwrap_or(0),
                    ),
                )
            })
            .collect();
        let mut kept: HashSet<Key3> = HashSet::new();
        while let Some(k) = reached.pop() {
            if !kept.insert(k.clone()) {
                continue;
            }
            if let Some((Some(base), _)) = blobs.get(&k) {
                reached.push((k.0.clone(), k.1.clone(), base.clone()));
            }
        }
        for (k, (_, bytes)) in &blobs {
            if !kept.contains(k) && !own.contains(&(k.0.clone(), k.2.clone())) {
                out.push((thread.clone(), k.clone(), (*bytes).max(0) as u64));
            }
        }
    }
    Ok(out)
}

pub(super) async fn apply(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    plan: &Plan,
    orphans: &[Orphan],
) -> Result<PruneReport, StoreError> {
    let mut report = PruneReport {
        checkpoints: plan.report.checkpoints.clone(),
        blobs: orphans.len() as u64,
        ..Default::default()
    };
    for th in &plan.threads {
        exec(
            conn,
            s,
            "DELETE FROM checkpoints WHERE thread_id = $1",
            vec![t(th)],
        )
        .await?;
        report.writes += exec(
            conn,
            s,
            "DELETE FROM checkpoint_writes WHERE thread_id = $1",
            vec![t(th)],
        )
        .await?;
    }
    for (th, ns) in &plan.namespaces {
        let h = ns_hash(ns);
        exec(
            conn,
            s,
            "DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns_hash = $2",
            vec![t(th), t(&h)],
        )
        .await?;
        report.writes += exec(
            conn,
            s,
            "DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns_hash = $2",
            vec![t(th), t(&h)],
        )
        .await?;
    }
    for (th, ns, id) in &plan.checkpoints {
        let h = ns_hash(ns);
        report.writes += exec(
            conn,
            s,
            "DELETE FROM checkpoint_writes WHERE thread_id = $1 AND checkpoint_ns_hash = $2 \
             AND checkpoint_id = $3",
            vec![t(th), t(&h), t(id)],
        )
        .await?;
        exec(
            conn,
            s,
            "DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_ns_hash = $2 \
             AND checkpoint_id = $3",
            vec![t(th), t(&h), t(id)],
        )
        .await?;
    }
    for (th, ns, id) in &plan.parents {
        report.parents_cleared += exec(
            conn,
            s,
            "UPDATE checkpoints SET parent_checkpoint_id = NULL, gmt_modified = now() \
             WHERE thread_id = $1 AND checkpoint_ns_hash = $2 AND checkpoint_id = $3",
            vec![t(th), t(&ns_hash(ns)), t(id)],
        )
        .await?;
    }
    if !orphans.is_empty() {
        let col = |f: fn(&Orphan) -> &String| {
            Arg::TextArray(orphans.iter().map(|o| f(o).clone()).collect())
        };
        exec(
            conn,
            s,
            "DELETE FROM checkpoint_blobs b USING unnest($1::text[], $2::text[], $3::text[], \
             $4::text[]) AS k(t, h, c, v) WHERE b.thread_id = k.t AND b.checkpoint_ns_hash = k.h \
             AND b.channel = k.c AND b.version = k.v",
            vec![
                col(|o| &o.0),
                col(|o| &o.1 .0),
                col(|o| &o.1 .1),
                col(|o| &o.1 .2),
            ],
        )
        .await?;
    }
    Ok(report)
}

/// The threads holding a checkpoint of one of `runs`.
async fn run_threads(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    runs: &HashSet<String>,
) -> Result<Vec<String>, StoreError> {
    let rows = fetch(
        conn,
        s,
        "SELECT DISTINCT thread_id, metadata::text FROM checkpoints \
         WHERE strpos(metadata::text, '\"run_id\"') > 0",
        Vec::new(),
    )
    .await?;
    let mut out: Vec<String> = Vec::new();
    for r in &rows {
        let Some(thread) = text(r, 0) else { continue };
        let metadata = text(r, 1)
            .and_then(|m| serde_json::from_str::<serde_json::Value>(&m).ok())
            .unwrap_or(serde_json::Value::Null);
        let (_, run_id) = metadata_fields(&metadata);
        if run_id.is_some_and(|r| runs.contains(&r)) {
            out.push(thread);
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Every blob row of a thread, by key.
pub(super) async fn thread_blobs(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    thread: &str,
) -> Result<BlobMap, StoreError> {
    let rows = fetch(
        conn,
        s,
        "SELECT checkpoint_ns_hash, channel, version, type, kind, base_version, depth::int8, \
         blob_data FROM checkpoint_blobs WHERE thread_id = $1",
        vec![t(thread)],
    )
    .await?;
    Ok(rows
        .iter()
        .map(|r| {
            let blob = StoredBlob {
                type_tag: text(r, 3).unwrap_or_default(),
                kind: text(r, 4).unwrap_or_default(),
                base_version: text(r, 5),
                depth: r.try_get::<Option<i64>, _>(6).ok().flatten().unwrap_or(0),
                data: r.try_get(7).ok().flatten(),
            };
            let key = (
                text(r, 0).unwrap_or_default(),
                text(r, 1).unwrap_or_default(),
                text(r, 2).unwrap_or_default(),
            );
            (key, blob)
        })
        .collect())
}

/// Replace each fix's blob row with the value whole (`gmt_create`: the time of the repair).
pub(super) async fn replace(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    thread: &str,
    fixes: &[BlobFix],
) -> Result<u64, StoreError> {
    let key = s.key();
    let mut n = 0;
    for fix in fixes {
        let (hash, row) = fix_row(fix, key.as_deref())?;
        let args = || vec![t(thread), t(&hash), t(&row.channel), t(&row.version)];
        exec(
            conn,
            s,
            "DELETE FROM checkpoint_blobs WHERE thread_id = $1 AND checkpoint_ns_hash = $2 \
             AND channel = $3 AND version = $4",
            args(),
        )
        .await?;
        let mut q = Sql::new(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns_hash, channel, version, \
             type, kind, base_version, depth, blob_data) \
             VALUES ($1, $2, $3, $4, $5, $6, NULL, 0, $7)",
        );
        for a in args() {
            q = q.with(a);
        }
        n += q
            .with(t(&row.type_tag))
            .with(t(row.kind.as_str()))
            .query()
            .bind(row.data.clone())
            .execute(&mut *conn)
            .bounded(&s.target)
            .await?
            .rows_affected();
    }
    Ok(n)
}

pub(super) async fn maintain(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    job: Job,
    dry_run: bool,
) -> Result<PruneReport, StoreError> {
    let key = s.key();
    let threads = match (job.threads(), &job) {
        (Some(t), _) => t,
        (None, Job::Runs(r)) => run_threads(conn, s, r).await?,
        (None, _) => Vec::new(),
    };
    if threads.is_empty() {
        return Ok(PruneReport {
            dry_run,
            ..Default::default()
        });
    }
    let snap = snapshot(conn, s, &threads, key.as_deref()).await?;
    let plan = plan(&snap, &threads, &job.select());
    if let Some(report) = job.stale(&plan, dry_run) {
        return Ok(report);
    }
    let orphans = orphan_blobs(conn, s, &snap, &plan, &threads).await?;
    if dry_run || (plan.is_empty() && orphans.is_empty()) {
        return Ok(PruneReport {
            dry_run,
            blobs: orphans.len() as u64,
            ..plan.report
        });
    }
    apply(conn, s, &plan, &orphans).await
}

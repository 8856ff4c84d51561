//! The index advisor on LangGraph's SQLite schema: `sqlite_master` for what is there, `EXPLAIN
//! QUERY PLAN` for how the reads run today, the largest rowid and the page count for sizes
//! (never a scan); creating and dropping in one `BEGIN IMMEDIATE` transaction.

use super::{
    build_seconds, cancelled, report, sqlite_metadata_expr, sqlite_metadata_index, step_label,
    IndexAdvice, IndexPlan, IndexReport, IndexState, PlanEstimate, Progress, METADATA_KEYS, PAGE,
    PREFIX, RECENT, SMALL,
};
use crate::sqlite::connect::{query_err, read_only, read_write, write_err};
use crate::StoreError;
use rusqlite::Connection;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Newest checkpoints whose metadata keys are sampled.
const SAMPLE: usize = 200;

/// The newest-first index's statement.
pub(super) fn recent_definition() -> String {
    format!("CREATE INDEX IF NOT EXISTS {RECENT} ON checkpoints (checkpoint_id, thread_id DESC, checkpoint_ns)")
}

/// A metadata key's expression index: the filter's expression, then the columns the thread
/// query groups by, so it reads the index alone.
pub(super) fn metadata_definition(key: &str) -> String {
    format!(
        "CREATE INDEX IF NOT EXISTS {} ON checkpoints (({}), thread_id, checkpoint_id)",
        sqlite_metadata_index(key),
        sqlite_metadata_expr(key)
    )
}

/// The advice for the SQLite file at `path`.
pub(super) fn advise(path: &str) -> Result<IndexReport, StoreError> {
    let (_, conn) = read_only(path)?;
    let err = query_err(path);
    let int = |sql: &str| -> Result<u64, StoreError> {
        let v: Option<i64> = conn.query_row(sql, [], |r| r.get(0)).map_err(&err)?;
        Ok(u64::try_from(v.unwrap_or(0)).unwrap_or(0))
    };
    // The largest rowid: the rows ever inserted (an upper bound after deletes), in O(log n).
    let rows = int("SELECT max(rowid) FROM checkpoints").unwrap_or(0);
    let bytes = int("PRAGMA page_count")? * int("PRAGMA page_size")?;
    let there = ours(&conn).map_err(&err)?;
    let keys = sampled_keys(&conn, &there).map_err(&err)?;

    let mut indexes = Vec::new();
    let present = |name: &str| there.contains_key(name);
    let state = |name: &str| match present(name) {
        true => IndexState::Present,
        false => IndexState::Missing,
    };
    // The newest-first page, as the reader runs it today.
    let walk = format!(
        "SELECT thread_id FROM checkpoints INDEXED BY {RECENT} WHERE checkpoint_ns = '' \
         ORDER BY checkpoint_id DESC, thread_id"
    );
    let primary = "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id \
                   ORDER BY MAX(checkpoint_id) DESC, thread_id LIMIT 200";
    let sql = if present(RECENT) {
        walk.as_str()
    } else {
        primary
    };
    let plan = explain(&conn, sql).map_err(&err)?;
    let scans = plan.contains("SCAN checkpoints") && !plan.contains(RECENT);
    let per_page = (PAGE as u64 * 8).min(rows);
    indexes.push(IndexAdvice {
        name: RECENT.into(),
        table: "checkpoints".into(),
        definition: recent_definition(),
        speeds: vec![
            "newest-first page (the thread list's first page)".into(),
            "time range (threads --since/--until)".into(),
        ],
        state: state(RECENT),
        size_bytes: None,
        estimated_bytes: rows * 70,
        estimated_seconds: build_seconds(rows),
        estimate: Some(PlanEstimate {
            read: format!("the {PAGE} most recently active threads"),
            uses_index: plan.contains(RECENT),
            plan,
            scans,
            rows_now: if scans { rows } else { per_page },
            rows_with_index: Some(per_page),
            cost_now: None,
        }),
        recommended: !present(RECENT) && rows >= SMALL,
    });
    for key in keys {
        let name = sqlite_metadata_index(&key);
        let sql = format!(
            "SELECT thread_id, MAX(checkpoint_id) AS m FROM checkpoints WHERE {} = ? \
             GROUP BY thread_id ORDER BY m DESC, thread_id DESC LIMIT 50",
            sqlite_metadata_expr(&key)
        );
        let plan = explain(&conn, &sql).map_err(&err)?;
        let scans = plan.contains("SCAN checkpoints");
        indexes.push(IndexAdvice {
            definition: metadata_definition(&key),
            table: "checkpoints".into(),
            speeds: vec![format!("metadata filter: {key} (threads --where {key}=…)")],
            state: state(&name),
            size_bytes: None,
            estimated_bytes: rows * 60,
            estimated_seconds: build_seconds(rows) * 3.0,
            estimate: Some(PlanEstimate {
                read: format!("threads whose metadata has {key} = a value"),
                uses_index: plan.contains(&name),
                plan,
                scans,
                rows_now: if scans { rows } else { 0 },
                rows_with_index: None,
                cost_now: None,
            }),
            recommended: !present(&name) && rows >= SMALL,
            name,
        });
    }
    Ok(report(rows, bytes, indexes, &there))
}

/// Flashback's indexes on `checkpoints`: name → statement.
fn ours(conn: &Connection) -> rusqlite::Result<BTreeMap<String, String>> {
    let mut stmt = conn.prepare(
        "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'index' \
         AND tbl_name = 'checkpoints' AND substr(name, 1, length(?1)) = ?1",
    )?;
    let rows = stmt.query_map([PREFIX], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

/// The [`METADATA_KEYS`] the newest checkpoints carry (by rowid: the latest inserted), and
/// those an index of ours is already built for.
fn sampled_keys(
    conn: &Connection,
    there: &BTreeMap<String, String>,
) -> rusqlite::Result<Vec<String>> {
    let mut stmt = conn.prepare(&format!(
        "SELECT CAST(metadata AS TEXT) FROM checkpoints ORDER BY rowid DESC LIMIT {SAMPLE}"
    ))?;
    // Bytes, not text: a damaged row is skipped, not an error.
    let texts = stmt.query_map([], |r| {
        Ok(r.get_ref(0)?.as_bytes().ok().map(<[u8]>::to_vec))
    })?;
    let mut found = Vec::new();
    for text in texts {
        let Some(text) = text? else { continue };
        let Ok(serde_json::Value::Object(map)) = serde_json::from_slice(&text) else {
            continue;
        };
        for key in METADATA_KEYS {
            if map.contains_key(key) && !found.iter().any(|k: &String| k == key) {
                found.push(key.to_owned());
            }
        }
    }
    for key in METADATA_KEYS {
        if there.contains_key(&sqlite_metadata_index(key)) && !found.iter().any(|k| k == key) {
            found.push(key.to_owned());
        }
    }
    found.sort_by_key(|k| METADATA_KEYS.iter().position(|m| m == k));
    Ok(found)
}

/// `EXPLAIN QUERY PLAN` of `sql`, its lines joined with `; ` (parameters unbound: NULL).
pub(crate) fn explain(conn: &Connection, sql: &str) -> rusqlite::Result<String> {
    let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}"))?;
    let nulls = vec![rusqlite::types::Value::Null; stmt.parameter_count()];
    let lines = stmt.query_map(rusqlite::params_from_iter(nulls), |r| r.get::<_, String>(3))?;
    Ok(lines.collect::<rusqlite::Result<Vec<_>>>()?.join("; "))
}

/// Run a plan's statements in one `BEGIN IMMEDIATE` transaction (waiting for another writer's
/// lock as every write does).
pub(super) fn apply(
    path: &str,
    plan: &IndexPlan,
    progress: &dyn Progress,
) -> Result<(), StoreError> {
    let mut conn = read_write(path)?;
    // A stop asked for while a statement runs interrupts it (the transaction rolls back).
    let interrupt = conn.get_interrupt_handle();
    let finished = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !finished.load(Ordering::Acquire) {
                if progress.cancelled() {
                    interrupt.interrupt();
                    return;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
        });
        let result = run(&mut conn, plan, progress);
        finished.store(true, Ordering::Release);
        result
    })
}

/// The plan's statements in one `BEGIN IMMEDIATE` transaction, saying each before it runs.
fn run(conn: &mut Connection, plan: &IndexPlan, progress: &dyn Progress) -> Result<(), StoreError> {
    let stopped = || cancelled(" (nothing was changed)");
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(write_err)?;
    let total = plan.statements.len() as u64;
    for (i, s) in plan.statements.iter().enumerate() {
        progress.step(i as u64, total, &step_label(plan, s));
        if progress.cancelled() {
            return Err(stopped());
        }
        if let Err(e) = tx.execute_batch(s) {
            return Err(if progress.cancelled() {
                stopped()
            } else {
                write_err(e)
            });
        }
    }
    progress.step(total, total, "committing");
    tx.commit().map_err(write_err)
}

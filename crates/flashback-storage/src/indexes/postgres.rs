//! The index advisor on LangGraph's Postgres schema: `pg_index` for what is there (valid or
//! left `INVALID`), `EXPLAIN (FORMAT JSON)` for how the reads run today and what they would
//! read, `reltuples` and `pg_stats` for the sizes; `CREATE INDEX CONCURRENTLY` and `DROP
//! INDEX CONCURRENTLY`, one statement at a time outside a transaction, so the savers are never
//! blocked.

use super::{
    build_seconds, cancelled, cancelled_text, report, step_label, IndexAdvice, IndexPlan,
    IndexReport, IndexState, PlanEstimate, Progress, METADATA_GIN, METADATA_KEYS, PAGE, PREFIX,
    RECENT, SMALL,
};
use crate::postgres::connect_first;
use crate::postgres::target::{Target, BEGIN_READ_ONLY};
use crate::postgres::wait::Bounded as _;
use crate::StoreError;
use serde_json::Value as Json;
use sqlx::{AssertSqlSafe, PgConnection, Row as _};
use std::collections::BTreeMap;

/// The newest-first index's statement.
fn recent_definition() -> String {
    format!(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {RECENT} ON checkpoints \
         (checkpoint_id, thread_id DESC, checkpoint_ns)"
    )
}

/// The metadata index's statement.
fn metadata_definition() -> String {
    format!(
        "CREATE INDEX CONCURRENTLY IF NOT EXISTS {METADATA_GIN} ON checkpoints \
         USING gin (metadata jsonb_path_ops)"
    )
}

/// Our index: valid, size.
struct Ours {
    valid: bool,
    bytes: u64,
}

/// The advice for the Postgres database at `url`: one read-only transaction.
pub(super) async fn advise(url: &str) -> Result<IndexReport, StoreError> {
    let (mut conn, _, target) = connect_first(url).await?;
    let t = &target;
    sqlx::raw_sql(BEGIN_READ_ONLY)
        .execute(&mut conn)
        .bounded(t)
        .await?;
    let out = advise_on(&mut conn, t).await;
    let _ = sqlx::raw_sql("ROLLBACK")
        .execute(&mut conn)
        .bounded(t)
        .await;
    target.close(conn, true).await;
    out.map_err(|e| e.during(|| "reading the index advice".into()))
}

async fn advise_on(conn: &mut PgConnection, t: &Target) -> Result<IndexReport, StoreError> {
    let row = sqlx::query(
        "SELECT greatest(c.reltuples, 0)::int8, pg_table_size(c.oid)::int8, \
         (SELECT s.n_distinct::float8 FROM pg_stats s WHERE s.tablename = 'checkpoints' \
            AND s.attname = 'thread_id' AND s.schemaname = n.nspname LIMIT 1) \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
         WHERE c.oid = 'checkpoints'::regclass",
    )
    .fetch_one(&mut *conn)
    .bounded(t)
    .await?;
    let rows = u64::try_from(row.try_get::<i64, _>(0).unwrap_or(0)).unwrap_or(0);
    let bytes = u64::try_from(row.try_get::<i64, _>(1).unwrap_or(0)).unwrap_or(0);
    // pg_stats: n_distinct < 0 is a fraction of the rows.
    let threads = match row.try_get::<Option<f64>, _>(2).ok().flatten() {
        Some(d) if d < 0.0 => (-d * rows as f64) as u64,
        Some(d) => d as u64,
        None => 0,
    };
    let per_thread = if threads > 0 {
        rows.div_ceil(threads).max(1)
    } else {
        8
    };

    let mut there: BTreeMap<String, Ours> = BTreeMap::new();
    let found = sqlx::query(
        "SELECT c.relname::text, i.indisvalid AND i.indisready, pg_relation_size(c.oid)::int8 \
         FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
         WHERE i.indrelid = 'checkpoints'::regclass AND starts_with(c.relname::text, $1)",
    )
    .bind(PREFIX)
    .fetch_all(&mut *conn)
    .bounded(t)
    .await?;
    for r in found {
        let name: String = r.try_get(0).unwrap_or_default();
        let valid: bool = r.try_get(1).unwrap_or(false);
        let size: i64 = r.try_get(2).unwrap_or(0);
        let bytes = u64::try_from(size).unwrap_or(0);
        there.insert(name, Ours { valid, bytes });
    }
    let state = |name: &str| match there.get(name) {
        Some(o) if o.valid => IndexState::Present,
        Some(_) => IndexState::Invalid,
        None => IndexState::Missing,
    };
    let size = |name: &str| there.get(name).map(|o| o.bytes);
    let worth = |name: &str| match state(name) {
        IndexState::Present => false,
        IndexState::Invalid => true,
        IndexState::Missing => rows >= SMALL,
    };

    // The newest-first page, as the reader runs it today.
    let sql = if state(RECENT) == IndexState::Present {
        format!(
            "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
             ORDER BY checkpoint_id DESC, thread_id LIMIT {}",
            PAGE * 8
        )
    } else {
        format!(
            "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' GROUP BY thread_id \
             ORDER BY max(checkpoint_id) DESC, thread_id LIMIT {PAGE}"
        )
    };
    let recent_plan = explain(conn, t, &sql, None).await?;
    let per_page = (PAGE as u64 * per_thread).min(rows);
    let mut indexes = vec![IndexAdvice {
        name: RECENT.into(),
        table: "checkpoints".into(),
        definition: recent_definition(),
        speeds: vec![
            "newest-first page (the thread list's first page)".into(),
            "time range (threads --since/--until)".into(),
        ],
        state: state(RECENT),
        size_bytes: size(RECENT),
        estimated_bytes: rows * 80,
        estimated_seconds: build_seconds(rows),
        estimate: Some(recent_plan.estimate(
            format!("the {PAGE} most recently active threads"),
            RECENT,
            rows,
            Some(per_page),
        )),
        recommended: worth(RECENT),
    }];

    // The metadata filter, with a key and value the table holds (or `source`, every
    // checkpoint's).
    let filter = sample_filter(conn, t).await?;
    let sql = "SELECT thread_id, max(checkpoint_id) AS m FROM checkpoints \
               WHERE metadata @> $1::jsonb GROUP BY thread_id \
               ORDER BY m DESC, thread_id DESC LIMIT 50";
    let plan = explain(conn, t, sql, Some(filter.clone())).await?;
    let matched = plan.matched;
    let key = filter
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap_or_default();
    indexes.push(IndexAdvice {
        name: METADATA_GIN.into(),
        table: "checkpoints".into(),
        definition: metadata_definition(),
        speeds: vec!["metadata filter: any key (threads --where KEY=VALUE)".into()],
        state: state(METADATA_GIN),
        size_bytes: size(METADATA_GIN),
        estimated_bytes: rows * 40,
        estimated_seconds: build_seconds(rows) * 4.0,
        estimate: Some(plan.estimate(
            format!("threads whose metadata has {key} = {}", filter[&key]),
            METADATA_GIN,
            rows,
            Some(matched),
        )),
        recommended: worth(METADATA_GIN),
    });
    Ok(report(rows, bytes, indexes, &there))
}

/// A one-key filter the newest rows of the table hold (a cheap sample: the first rows the
/// server returns): one of [`METADATA_KEYS`] when present, else `source`.
async fn sample_filter(conn: &mut PgConnection, t: &Target) -> Result<Json, StoreError> {
    let rows = sqlx::query("SELECT metadata FROM checkpoints LIMIT 200")
        .fetch_all(&mut *conn)
        .bounded(t)
        .await?;
    let mut fallback = None;
    for r in rows {
        let Ok(Json::Object(m)) = r.try_get::<Json, _>(0) else {
            continue;
        };
        for key in METADATA_KEYS {
            if let Some(v) = m.get(key).filter(|v| !v.is_null()) {
                return Ok(serde_json::json!({ key: v }));
            }
        }
        if fallback.is_none() {
            fallback = m.get("source").map(|v| serde_json::json!({ "source": v }));
        }
    }
    Ok(fallback.unwrap_or_else(|| serde_json::json!({ "source": "loop" })))
}

/// What `EXPLAIN (FORMAT JSON)` says of a read.
struct Explained {
    /// The nodes, outermost first (`Limit > Sort > Seq Scan on checkpoints`).
    nodes: Vec<String>,
    cost: Option<f64>,
    /// Whether a node reads every row of `checkpoints`.
    scans: bool,
    /// The rows the scan of `checkpoints` is estimated to give (its matches).
    matched: u64,
}

impl Explained {
    fn estimate(&self, read: String, index: &str, rows: u64, with: Option<u64>) -> PlanEstimate {
        let uses = self.nodes.iter().any(|n| n.contains(index));
        PlanEstimate {
            read,
            plan: self.nodes.join(" > "),
            scans: self.scans && !uses,
            uses_index: uses,
            rows_now: if self.scans && !uses {
                rows
            } else {
                with.unwrap_or(0)
            },
            rows_with_index: with,
            cost_now: self.cost,
        }
    }
}

async fn explain(
    conn: &mut PgConnection,
    t: &Target,
    sql: &str,
    filter: Option<Json>,
) -> Result<Explained, StoreError> {
    let text = format!("EXPLAIN (FORMAT JSON) {sql}");
    let mut q = sqlx::query(AssertSqlSafe(text)).persistent(false);
    if let Some(f) = filter {
        q = q.bind(f);
    }
    let row = q.fetch_one(&mut *conn).bounded(t).await?;
    let plan: Json = row
        .try_get::<Json, _>(0)
        .or_else(|_| {
            row.try_get::<String, _>(0)
                .map(|s| serde_json::from_str(&s).unwrap_or(Json::Null))
        })
        .unwrap_or(Json::Null);
    let top = &plan[0]["Plan"];
    let mut out = Explained {
        nodes: Vec::new(),
        cost: top["Total Cost"].as_f64(),
        scans: false,
        matched: 0,
    };
    walk(top, &mut out);
    Ok(out)
}

/// Depth first, outermost first.
fn walk(node: &Json, out: &mut Explained) {
    let kind = node["Node Type"].as_str().unwrap_or("?");
    let on_checkpoints = node["Relation Name"].as_str() == Some("checkpoints");
    let mut line = kind.to_owned();
    if let Some(i) = node["Index Name"].as_str() {
        line.push_str(&format!(" using {i}"));
    }
    if on_checkpoints {
        line.push_str(" on checkpoints");
        let rows = node["Plan Rows"].as_f64().unwrap_or(0.0) as u64;
        out.matched = out.matched.max(rows);
        // A sequential scan, or an index walked whole (no condition to start from).
        let whole = kind == "Seq Scan"
            || (kind.contains("Index")
                && node.get("Index Cond").is_none()
                && !kind.contains("Bitmap"));
        out.scans |= whole;
    }
    out.nodes.push(line);
    if let Some(children) = node["Plans"].as_array() {
        for c in children {
            walk(c, out);
        }
    }
}

/// Run a plan's statements one at a time outside a transaction (`CONCURRENTLY` needs that),
/// each with the time its table takes. A build that fails leaves its index `INVALID`: it is
/// dropped again (best effort) and the error says so.
pub(super) async fn apply(
    url: &str,
    plan: &IndexPlan,
    progress: &dyn Progress,
) -> Result<(), StoreError> {
    let (mut conn, _, target) = connect_first(url).await?;
    let bytes: i64 = sqlx::query_scalar("SELECT pg_table_size('checkpoints'::regclass)::int8")
        .fetch_one(&mut conn)
        .bounded(&target)
        .await?;
    let bytes = u64::try_from(bytes).unwrap_or(0);
    let pid: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut conn)
        .bounded(&target)
        .await?;
    let mut result = Ok(());
    let total = plan.statements.len() as u64;
    for (i, s) in plan.statements.iter().enumerate() {
        progress.step(i as u64, total, &step_label(plan, s));
        if progress.cancelled() {
            result = Err(cancelled(""));
            break;
        }
        let ran = stoppable(
            url,
            pid,
            progress,
            target.wait_maintenance(&mut conn, bytes, s),
        )
        .await;
        if let Err(e) = ran {
            let name = plan.names.iter().find(|n| s.contains(n.as_str()));
            let stopped = progress.cancelled();
            let mut line = match stopped {
                true => cancelled_text(""),
                false => format!("{e}"),
            };
            if let (Some(n), true) = (name, s.starts_with("CREATE")) {
                let drop = format!("DROP INDEX CONCURRENTLY IF EXISTS {n}");
                let cleaned = target.wait_maintenance(&mut conn, 0, &drop).await.is_ok();
                line = match (cleaned, stopped) {
                    (true, true) => {
                        cancelled_text(&format!(": {n}'s unfinished index was dropped"))
                    }
                    (true, false) => {
                        format!("building {n} failed ({e}); its unfinished index was dropped")
                    }
                    (false, _) => format!(
                        "building {n} {} ({e}); it is left INVALID (never used): create it \
                         again to rebuild it, or drop it",
                        if stopped { "was cancelled" } else { "failed" }
                    ),
                };
            }
            result = Err(StoreError::Query(line));
            break;
        }
    }
    progress.step(total, total, "done");
    target.close(conn, result.is_ok()).await;
    result
}

/// `statement` running on the backend `pid`, cancelled there (`pg_cancel_backend`, from a
/// connection of its own) when `progress` says stop: the statement then ends with its error.
async fn stoppable<F: std::future::Future<Output = Result<(), StoreError>>>(
    url: &str,
    pid: i32,
    progress: &dyn Progress,
    statement: F,
) -> Result<(), StoreError> {
    tokio::pin!(statement);
    let asked = async {
        while !progress.cancelled() {
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
    };
    tokio::select! {
        done = &mut statement => return done,
        () = asked => {}
    }
    if let Ok((mut other, _, target)) = connect_first(url).await {
        let _ = sqlx::query("SELECT pg_cancel_backend($1)")
            .bind(pid)
            .execute(&mut other)
            .bounded(&target)
            .await;
        target.close(other, true).await;
    }
    statement.await
}

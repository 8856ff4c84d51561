//! [`crate::CheckpointStore::find_threads`] on Postgres: the checkpoints the metadata filter
//! matches (`metadata @> filter`, as the Python saver's `list(filter=)`) within the time range
//! (ids compared as text), grouped by thread, newest match first, and those threads described
//! as the thread list describes them — one statement, so one snapshot.

use super::sql::{Arg, Sql};
use super::PostgresStore;
use crate::find::{FoundThread, ThreadQuery};
use crate::model::ThreadInfo;
use crate::StoreError;
use sqlx::Row as _;

impl PostgresStore {
    /// The threads a query finds.
    pub(super) async fn find(&self, q: &ThreadQuery) -> Result<Vec<FoundThread>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let id = self.id_expr();
        let mut sql = Sql::new("");
        let mut wheres = Vec::new();
        if !q.filter.is_empty() {
            let filter = serde_json::Value::Object(q.filter.clone());
            wheres.push(format!("metadata @> {}::jsonb", sql.arg(Arg::Json(filter))));
        }
        if q.since.is_some() || q.until.is_some() {
            // A time only a version-6 id carries (`xxxxxxxx-xxxx-6xxx-…`).
            wheres.push(format!("length({id}) = 36 AND substr({id}, 15, 1) = '6'"));
        }
        if let Some(s) = &q.since {
            wheres.push(format!("{id} >= {}", sql.arg(Arg::Text(s.clone()))));
        }
        if let Some(u) = &q.until {
            wheres.push(format!("{id} < {}", sql.arg(Arg::Text(u.clone()))));
        }
        let where_sql = match wheres.is_empty() {
            true => String::new(),
            false => format!("WHERE {}", wheres.join(" AND ")),
        };
        let having = match &q.after {
            Some((m, t)) => {
                let (m, t) = (sql.arg(Arg::Text(m.clone())), sql.arg(Arg::Text(t.clone())));
                format!("HAVING (max({id}), thread_id) < ({m}, {t})")
            }
            None => String::new(),
        };
        let limit = sql.arg(Arg::Int(i64::try_from(q.limit).unwrap_or(i64::MAX)));
        sql.text = format!(
            "WITH found AS (SELECT thread_id, max({id}) AS matched FROM checkpoints {where_sql} \
               GROUP BY thread_id {having} ORDER BY matched DESC, thread_id DESC LIMIT {limit}) \
             SELECT c.thread_id, f.matched, array_agg(DISTINCT c.checkpoint_ns) AS namespaces, \
               count(*) AS n, max({id}) FILTER (WHERE c.checkpoint_ns = '') AS latest \
             FROM checkpoints c JOIN found f ON f.thread_id = c.thread_id \
             GROUP BY c.thread_id, f.matched"
        );
        let rows = self.read_rows(sql).await?;
        let found = rows
            .iter()
            .map(|r| {
                let mut namespaces: Vec<String> = r.try_get("namespaces")?;
                namespaces.sort_by(|a, b| (!a.is_empty(), a).cmp(&(!b.is_empty(), b)));
                let n: i64 = r.try_get("n")?;
                let info = ThreadInfo {
                    thread_id: r.try_get("thread_id")?,
                    namespaces,
                    checkpoint_count: u64::try_from(n).unwrap_or(0),
                    latest_checkpoint_id: r.try_get("latest")?,
                    problem: None,
                };
                Ok(FoundThread {
                    info,
                    matched_checkpoint_id: r.try_get("matched")?,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))?;
        Ok(crate::find::page(found, q))
    }
}

//! [`crate::CheckpointStore::find_threads`] on LangGraph's SQLite schema: the checkpoints the
//! metadata filter matches (`json_extract`, as Python's `search_where`) within the time range
//! (ids compared as text), grouped by thread, newest match first; then those threads described
//! as the thread list describes them. Both reads in one snapshot.

use super::ctx::Ctx;
use super::query::search_where;
use super::threads::threads_of;
use crate::escape::key_or_note;
use crate::find::{FoundThread, ThreadQuery};
use crate::StoreError;
use rusqlite::types::Value as SqlValue;
use std::collections::HashMap;

/// The `WHERE` clauses of a thread query over `checkpoints` (shared with the three-table
/// store's, whose `checkpoints` table has the same key and metadata columns).
pub(crate) fn find_where(q: &ThreadQuery) -> Result<(String, Vec<SqlValue>), StoreError> {
    let (filter_sql, mut params) = search_where(&q.list_query())?;
    let mut clauses: Vec<String> = Vec::new();
    if let Some(f) = filter_sql.strip_prefix("WHERE ") {
        clauses.push(f.to_owned());
    }
    if q.since.is_some() || q.until.is_some() {
        // A time only a version-6 id carries (`xxxxxxxx-xxxx-6xxx-…`).
        clauses.push("length(checkpoint_id) = 36 AND substr(checkpoint_id, 15, 1) = '6'".into());
    }
    if let Some(s) = &q.since {
        clauses.push("checkpoint_id >= ?".into());
        params.push(SqlValue::Text(s.clone()));
    }
    if let Some(u) = &q.until {
        clauses.push("checkpoint_id < ?".into());
        params.push(SqlValue::Text(u.clone()));
    }
    let sql = match clauses.is_empty() {
        true => String::new(),
        false => format!("WHERE {}", clauses.join(" AND ")),
    };
    Ok((sql, params))
}

/// The threads a query finds.
pub(super) fn find_threads_blocking(
    cx: Ctx<'_>,
    q: &ThreadQuery,
) -> Result<Vec<FoundThread>, StoreError> {
    let err = cx.err();
    let (where_sql, mut params) = find_where(q)?;
    let mut sql = format!(
        "SELECT thread_id, MAX(checkpoint_id) AS m FROM checkpoints {where_sql} GROUP BY thread_id"
    );
    if let Some((m, t)) = &q.after {
        sql.push_str(" HAVING m < ? OR (m = ? AND thread_id < ?)");
        params.extend([m, m, t].map(|s| SqlValue::Text(s.clone())));
    }
    sql.push_str(" ORDER BY m DESC, thread_id DESC LIMIT ?");
    params.push(SqlValue::Integer(
        i64::try_from(q.limit).unwrap_or(i64::MAX),
    ));

    let snapshot = match cx.conn.is_autocommit() {
        true => Some(cx.conn.unchecked_transaction().map_err(&err)?),
        false => None,
    };
    // (the thread id as stored, as shown, its newest match)
    let mut matched: Vec<(SqlValue, String, String)> = Vec::new();
    {
        let mut stmt = cx.conn.prepare(&sql).map_err(&err)?;
        let mut rows = stmt
            .query(rusqlite::params_from_iter(params.iter()))
            .map_err(&err)?;
        while let Some(r) = rows.next().map_err(&err)? {
            let raw = r.get_ref(0).map_err(&err)?;
            let shown = key_or_note("thread_id", raw.into(), &mut Vec::new());
            let Ok(Some(m)) = r.get::<_, Option<String>>(1) else {
                continue;
            };
            matched.push((raw.into(), shown, m));
        }
    }
    let ids: Vec<SqlValue> = matched.iter().map(|m| m.0.clone()).collect();
    let infos = threads_of(&cx, &ids, &err)?;
    if let Some(tx) = snapshot {
        tx.finish().map_err(&err)?;
    }
    let mut by_id: HashMap<String, _> = infos
        .into_iter()
        .map(|t| (t.thread_id.clone(), t))
        .collect();
    Ok(matched
        .into_iter()
        .filter_map(|(_, shown, m)| {
            Some(FoundThread {
                info: by_id.remove(&shown)?,
                matched_checkpoint_id: m,
            })
        })
        .collect())
}

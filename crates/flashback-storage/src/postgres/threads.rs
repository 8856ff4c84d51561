//! The thread list: every thread, or the most recently active ones, in one query — or, with
//! Flashback's newest-first index ([`crate::indexes`]), the most recent ones found by walking it.

use super::sql::{Arg, Sql};
use super::PostgresStore;
use crate::indexes::RECENT;
use crate::model::{ThreadInfo, WriteInfo};
use crate::StoreError;
use sqlx::Row as _;

impl PostgresStore {
    /// Every thread, sorted by id (`recent: None`), or the `recent` most recently active ones,
    /// newest first.
    pub(super) async fn threads_where(
        &self,
        recent: Option<usize>,
    ) -> Result<Vec<ThreadInfo>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let id = self.id_expr();
        let mut sql = Sql::new(&format!(
            "SELECT thread_id, array_agg(DISTINCT checkpoint_ns) AS namespaces, count(*) AS n, \
             max({id}) FILTER (WHERE checkpoint_ns = '') AS latest FROM checkpoints"
        ));
        let walk = match recent {
            Some(_) if !self.info().shallow() => self.has_valid_index(RECENT).await?,
            _ => false,
        };
        match recent {
            // Flashback's newest-first index: the threads found by walking it.
            Some(n) if walk => {
                let ids = self.recent_by_index(n).await?;
                if ids.is_empty() {
                    return Ok(Vec::new());
                }
                let ids = sql.arg(Arg::TextArray(ids));
                sql.text.push_str(&format!(" WHERE thread_id = ANY({ids})"));
            }
            // The newest threads (ties by id, as `newest_first` shows them) from the primary
            // key's index.
            Some(n) => {
                let n = sql.arg(Arg::Int(i64::try_from(n).unwrap_or(i64::MAX)));
                sql.text.push_str(&format!(
                    " WHERE thread_id IN (SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
                     GROUP BY thread_id ORDER BY max({id}) DESC, thread_id LIMIT {n})"
                ));
            }
            None => {}
        }
        sql.text.push_str(" GROUP BY thread_id");
        let rows = self.read_rows(sql).await?;
        let mut threads = rows
            .iter()
            .map(|r| {
                let mut namespaces: Vec<String> = r.try_get("namespaces")?;
                namespaces.sort_by(|a, b| (!a.is_empty(), a).cmp(&(!b.is_empty(), b)));
                let n: i64 = r.try_get("n")?;
                Ok(ThreadInfo {
                    thread_id: r.try_get("thread_id")?,
                    namespaces,
                    checkpoint_count: u64::try_from(n).unwrap_or(0),
                    latest_checkpoint_id: r.try_get("latest")?,
                    problem: None,
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))?;
        match recent {
            Some(_) => crate::newest_first(&mut threads),
            None => threads.sort_by(|a, b| a.thread_id.cmp(&b.thread_id)),
        }
        Ok(threads)
    }

    /// Whether the database has a valid index of this name on `checkpoints` (a catalog
    /// query per call, so an index created or dropped while the database is open is seen at
    /// once; an `INVALID` one, left by a failed `CREATE INDEX CONCURRENTLY`, is not used).
    pub(crate) async fn has_valid_index(&self, name: &str) -> Result<bool, StoreError> {
        let sql = Sql::new(
            "SELECT EXISTS (SELECT 1 FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid \
             WHERE c.relname = $1 AND i.indrelid = 'checkpoints'::regclass \
             AND i.indisvalid AND i.indisready)",
        )
        .with(Arg::Text(name.to_owned()));
        let rows = self.read_rows(sql).await?;
        rows.first()
            .map(|r| r.try_get::<bool, _>(0))
            .transpose()
            .map(|b| b.unwrap_or(false))
            .map_err(|e| self.err(e))
    }

    /// The ids of the `n` most recently active threads through [`RECENT`]: its entries read
    /// newest id first (ties by thread id, as the primary key's query orders them), a thread
    /// first met at its newest root checkpoint; `LIMIT k` rows, `k` growing until `n` distinct
    /// threads are among them or the entries end.
    async fn recent_by_index(&self, n: usize) -> Result<Vec<String>, StoreError> {
        let mut k = n.saturating_mul(8).max(64);
        loop {
            let limit = i64::try_from(k).unwrap_or(i64::MAX);
            let sql = Sql::new(
                "SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
                 ORDER BY checkpoint_id DESC, thread_id LIMIT $1",
            )
            .with(Arg::Int(limit));
            let rows = self.read_rows(sql).await?;
            let mut seen = std::collections::HashSet::new();
            let mut ids = Vec::new();
            for r in &rows {
                let t: String = r.try_get(0).map_err(|e| self.err(e))?;
                if seen.insert(t.clone()) {
                    ids.push(t);
                    if ids.len() == n {
                        return Ok(ids);
                    }
                }
            }
            if rows.len() < k {
                return Ok(ids);
            }
            k = k.saturating_mul(8);
        }
    }

    /// `SELECT <the key columns of a write><more> FROM checkpoint_writes WHERE thread_id = $1`.
    fn writes_sql(&self, thread_id: &str, more: &str) -> Sql {
        let task_path = if self.info().has_task_path {
            "task_path"
        } else {
            "''::text AS task_path"
        };
        let mut sql = Sql::new(&format!(
            "SELECT checkpoint_ns, checkpoint_id, task_id, {task_path}, channel{more} \
             FROM checkpoint_writes WHERE thread_id = "
        ));
        let t = sql.arg(Arg::Text(thread_id.to_owned()));
        sql.text.push_str(&t);
        sql
    }

    /// Every pending write of a thread without its value (key columns only).
    pub(super) async fn writes_of_thread(
        &self,
        thread_id: &str,
    ) -> Result<Vec<WriteInfo>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let rows = self.read_rows(self.writes_sql(thread_id, "")).await?;
        rows.iter()
            .map(write_info)
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))
    }

    /// The pending writes of a thread whose stored value holds `needle`, decoded (the bytes
    /// are searched by the server: only matching values are fetched).
    pub(super) async fn writes_mentioning(
        &self,
        thread_id: &str,
        needle: &str,
    ) -> Result<Vec<(WriteInfo, flashback_codec::Decoded)>, StoreError> {
        if !self.info().holds.checkpoints() {
            return Ok(Vec::new());
        }
        let mut sql = self.writes_sql(thread_id, ", type, blob");
        sql.text.push_str(" AND length(blob) <= ");
        let max = sql.arg(Arg::Int(crate::MENTION_MAX_BYTES as i64));
        sql.text.push_str(&max);
        sql.text.push_str(" AND position(convert_to(");
        let n = sql.arg(Arg::Text(needle.to_owned()));
        sql.text.push_str(&n);
        sql.text.push_str(", 'UTF8') in blob) > 0");
        let rows = self.read_rows(sql).await?;
        let mut cache = flashback_codec::DecodeCache::new().with_key(self.key.clone());
        rows.iter()
            .map(|r| {
                let tag: String = r.try_get("type")?;
                let data: Option<&[u8]> = r.try_get("blob")?;
                let value = flashback_codec::decode_typed_cached(&tag, data, &mut cache);
                Ok((write_info(r)?, value))
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))
    }
}

/// A write's key columns.
fn write_info(r: &sqlx::postgres::PgRow) -> Result<WriteInfo, sqlx::Error> {
    Ok(WriteInfo {
        checkpoint_ns: r.try_get("checkpoint_ns")?,
        checkpoint_id: r.try_get("checkpoint_id")?,
        task_id: r.try_get("task_id")?,
        task_path: r.try_get("task_path")?,
        channel: r.try_get("channel")?,
    })
}

//! The thread list: every thread, or the most recently active ones, in one query.

use super::sql::{Arg, Sql};
use super::PostgresStore;
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
        if let Some(n) = recent {
            let n = sql.arg(Arg::Int(i64::try_from(n).unwrap_or(i64::MAX)));
            sql.text.push_str(&format!(
                " WHERE thread_id IN (SELECT thread_id FROM checkpoints WHERE checkpoint_ns = '' \
                 GROUP BY thread_id ORDER BY max({id}) DESC LIMIT {n})"
            ));
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

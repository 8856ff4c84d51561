//! Every row of a checkpoint database as text, per backend: what a dry run must leave as it was.

use sqlx::{AssertSqlSafe, PgPool};
use std::path::Path;

/// Every row of both tables, as text, in key order.
pub(super) fn sqlite(path: &Path) -> Vec<String> {
    let conn =
        rusqlite::Connection::open_with_flags(path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open");
    let mut out = Vec::new();
    for sql in [
        "SELECT thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || \
         ifnull(parent_checkpoint_id, '<null>') || '|' || hex(checkpoint) || '|' || hex(metadata) \
         FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        "SELECT thread_id || '|' || checkpoint_ns || '|' || checkpoint_id || '|' || task_id || '|' || \
         task_path || '|' || idx || '|' || channel || '|' || ifnull(type, '') || '|' || hex(value) \
         FROM writes ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    ] {
        let mut stmt = conn.prepare(sql).expect("prepare");
        let rows = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .expect("query")
            .collect::<Result<Vec<_>, _>>()
            .expect("rows");
        out.extend(rows);
    }
    out
}

/// Every row of the three tables as text (thread id first), in key order.
pub(super) async fn postgres(pool: &PgPool) -> Vec<String> {
    let mut out = Vec::new();
    for sql in [
        "SELECT t::text FROM checkpoints t ORDER BY thread_id, checkpoint_ns, checkpoint_id",
        "SELECT t::text FROM checkpoint_blobs t ORDER BY thread_id, checkpoint_ns, channel, version",
        "SELECT t::text FROM checkpoint_writes t \
         ORDER BY thread_id, checkpoint_ns, checkpoint_id, task_id, idx",
    ] {
        out.extend(
            sqlx::query_scalar::<_, String>(AssertSqlSafe(sql.to_owned()))
                .fetch_all(pool)
                .await
                .expect(sql),
        );
    }
    out
}

//! Thread-wide reads of a three-table Postgres database that need no channel value: the
//! thread list, a thread's write keys, and the writes whose stored bytes hold a needle
//! (searched by the server, as the LangGraph store does). Namespaces come from the thread's
//! checkpoints (`checkpoint_writes` holds only their hash).

use super::read::{bytes, text};
use super::ThreeTablePg;
use crate::escape::joined;
use crate::model::*;
use crate::postgres::sql::{Arg, Sql};
use crate::postgres::wait::Bounded as _;
use crate::StoreError;
use flashback_codec::{decode_typed_cached, Decoded};
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::Row as _;
use std::collections::HashMap;

/// Every thread: its namespaces, checkpoint count and latest root checkpoint.
pub(super) async fn threads(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
) -> Result<Vec<ThreadInfo>, StoreError> {
    let rows = Sql::new(
        "SELECT thread_id, checkpoint_ns, COUNT(*)::int8, MAX(checkpoint_id) FROM checkpoints \
         GROUP BY thread_id, checkpoint_ns",
    )
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    let mut groups: Vec<(String, String, i64, Option<String>)> = rows
        .iter()
        .map(|r| {
            (
                text(r, 0).unwrap_or_default(),
                text(r, 1).unwrap_or_default(),
                r.try_get::<Option<i64>, _>(2).ok().flatten().unwrap_or(0),
                text(r, 3),
            )
        })
        .collect();
    // Byte order, as the SQLite store gives them (not the database's collation).
    groups.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    let mut out: Vec<ThreadInfo> = Vec::new();
    for (thread_id, ns, count, latest) in groups {
        if out.last().map(|t| &t.thread_id) != Some(&thread_id) {
            out.push(ThreadInfo {
                thread_id,
                namespaces: Vec::new(),
                checkpoint_count: 0,
                latest_checkpoint_id: None,
                problem: joined(Vec::new()),
            });
        }
        if let Some(t) = out.last_mut() {
            t.checkpoint_count += u64::try_from(count).unwrap_or(0);
            if ns.is_empty() {
                t.latest_checkpoint_id = latest;
            }
            t.namespaces.push(ns);
        }
    }
    Ok(out)
}

/// The namespace of each hash in a thread (from its checkpoints).
async fn namespaces(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    thread: &str,
) -> Result<HashMap<String, String>, StoreError> {
    let names = Sql::new(
        "SELECT DISTINCT checkpoint_ns_hash, checkpoint_ns FROM checkpoints WHERE thread_id = $1",
    )
    .with(Arg::Text(thread.to_owned()))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    Ok(names
        .iter()
        .map(|r| {
            (
                text(r, 0).unwrap_or_default(),
                text(r, 1).unwrap_or_default(),
            )
        })
        .collect())
}

/// A write's key columns (the first five: hash, checkpoint id, task id, task path, channel).
fn write_info(r: &PgRow, names: &HashMap<String, String>) -> WriteInfo {
    let hash = text(r, 0).unwrap_or_default();
    WriteInfo {
        checkpoint_ns: names.get(&hash).cloned().unwrap_or(hash),
        checkpoint_id: text(r, 1).unwrap_or_default(),
        task_id: text(r, 2).unwrap_or_default(),
        task_path: text(r, 3).unwrap_or_default(),
        channel: text(r, 4).unwrap_or_default(),
    }
}

/// Every pending write of a thread, without values.
pub(super) async fn thread_writes(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    thread: &str,
) -> Result<Vec<WriteInfo>, StoreError> {
    let names = namespaces(conn, s, thread).await?;
    let rows = Sql::new(
        "SELECT checkpoint_ns_hash, checkpoint_id, task_id, task_path, channel \
         FROM checkpoint_writes WHERE thread_id = $1 \
         ORDER BY checkpoint_ns_hash, checkpoint_id, task_id, idx",
    )
    .with(Arg::Text(thread.to_owned()))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    Ok(rows.iter().map(|r| write_info(r, &names)).collect())
}

/// [`crate::CheckpointStore::thread_writes_mentioning`]: the writes of a thread whose stored
/// bytes hold `needle` (searched by the server with `position`, values of at most
/// [`crate::MENTION_MAX_BYTES`]: only those are fetched), decoded.
pub(super) async fn thread_writes_mentioning(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    thread: &str,
    needle: &str,
) -> Result<Vec<(WriteInfo, Decoded)>, StoreError> {
    let names = namespaces(conn, s, thread).await?;
    let rows = Sql::new(
        "SELECT checkpoint_ns_hash, checkpoint_id, task_id, task_path, channel, type, blob_data \
         FROM checkpoint_writes WHERE thread_id = $1 AND length(blob_data) <= $3 \
         AND position(convert_to($2, 'UTF8') in blob_data) > 0",
    )
    .with(Arg::Text(thread.to_owned()))
    .with(Arg::Text(needle.to_owned()))
    .with(Arg::Int(crate::MENTION_MAX_BYTES as i64))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    let mut cache = s.decoding.cache();
    Ok(rows
        .iter()
        .map(|r| {
            let tag = text(r, 5)
                .filter(|t| !t.is_empty())
                .unwrap_or_else(|| "msgpack".into());
            let value = decode_typed_cached(&tag, bytes(r, 6).as_deref(), &mut cache);
            (write_info(r, &names), value)
        })
        .collect())
}

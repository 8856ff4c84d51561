//! Reads of a three-table Postgres database: checkpoint rows chosen as LangGraph's Postgres
//! saver chooses them (`metadata @>` filters in SQL), the blob rows they reach fetched in a
//! few batched queries (following delta chains), materialised and assembled by the
//! backend-neutral code the SQLite store uses. Anything unreadable damages only its
//! checkpoint (or channel), noted in the header's `problem`.

use super::ThreeTablePg;
use crate::model::*;
use crate::postgres::sql::{Arg, Sql};
use crate::postgres::wait::Bounded as _;
use crate::three::assemble::{assemble, Row};
use crate::three::rows::{unversioned, version_text, StoredBlob};
use crate::three::values::{values_from, ReadMemo, Unversioned};
use crate::StoreError;
use flashback_codec::{decode_typed_cached, Decoded};
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::Row as _;
use std::collections::HashMap;

/// A blob row's key: `(thread, ns hash, channel, version)`.
pub(super) type BlobKey = (String, String, String, String);

pub(super) fn text(r: &PgRow, i: usize) -> Option<String> {
    r.try_get::<Option<String>, _>(i).ok().flatten()
}

pub(super) fn bytes(r: &PgRow, i: usize) -> Option<Vec<u8>> {
    r.try_get::<Option<Vec<u8>>, _>(i).ok().flatten()
}

/// The checkpoint rows of `q`, newest first (LangGraph's Postgres `list()` semantics).
pub(super) async fn rows(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    q: &ListQuery,
) -> Result<Vec<Row>, StoreError> {
    let mut sql = Sql::new(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, \
         metadata::text, checkpoint_ns_hash FROM checkpoints",
    );
    let mut wheres = Vec::new();
    if let Some(t) = &q.thread_id {
        wheres.push(format!("thread_id = {}", sql.arg(Arg::Text(t.clone()))));
    }
    if let Some(ns) = &q.checkpoint_ns {
        let h = sql.arg(Arg::Text(crate::three::rows::ns_hash(ns)));
        let n = sql.arg(Arg::Text(ns.clone()));
        wheres.push(format!("checkpoint_ns_hash = {h} AND checkpoint_ns = {n}"));
    }
    if let Some(cid) = &q.checkpoint_id {
        wheres.push(format!(
            "checkpoint_id = {}",
            sql.arg(Arg::Text(cid.clone()))
        ));
    }
    if !q.checkpoint_ids.is_empty() {
        let ids = sql.arg(Arg::TextArray(q.checkpoint_ids.clone()));
        wheres.push(format!("checkpoint_id = ANY({ids}::text[])"));
    }
    if !q.filter.is_empty() {
        let filter = serde_json::Value::Object(q.filter.clone());
        wheres.push(format!("metadata @> {}::jsonb", sql.arg(Arg::Json(filter))));
    }
    if let Some(before) = &q.before {
        wheres.push(format!(
            "checkpoint_id < {}",
            sql.arg(Arg::Text(before.clone()))
        ));
    }
    if !wheres.is_empty() {
        sql.text.push_str(" WHERE ");
        sql.text.push_str(&wheres.join(" AND "));
    }
    sql.text.push_str(" ORDER BY checkpoint_id DESC");
    if let Some(limit) = q.limit {
        let p = sql.arg(Arg::Int(i64::try_from(limit).unwrap_or(i64::MAX)));
        sql.text.push_str(&format!(" LIMIT {p}"));
    }
    let rows = sql.query().fetch_all(&mut *conn).bounded(&s.target).await?;
    Ok(rows
        .iter()
        .map(|r| {
            let ns = text(r, 1).unwrap_or_default();
            Row {
                thread_id: text(r, 0).unwrap_or_default(),
                hash: text(r, 7).unwrap_or_else(|| crate::three::rows::ns_hash(&ns)),
                ns,
                id: text(r, 2).unwrap_or_default(),
                parent: text(r, 3),
                type_tag: text(r, 4),
                doc: bytes(r, 5),
                metadata: text(r, 6).map(String::into_bytes),
                problems: Vec::new(),
            }
        })
        .collect())
}

/// The blob rows `wanted` names and every row their delta chains reach, in one query: a
/// recursive walk along `base_version` over the key columns (`UNION` keeps each row once, so
/// a damaged chain that loops ends), then the rows it found.
pub(super) async fn load_blobs(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    wanted: impl IntoIterator<Item = BlobKey>,
) -> Result<HashMap<BlobKey, StoredBlob>, StoreError> {
    let mut cols: [Vec<String>; 4] = Default::default();
    for (t, h, c, v) in wanted {
        cols[0].push(t);
        cols[1].push(h);
        cols[2].push(c);
        cols[3].push(v);
    }
    if cols[0].is_empty() {
        return Ok(HashMap::new());
    }
    let [t, h, c, v] = cols;
    let rows = Sql::new(
        "WITH RECURSIVE chain(t, h, c, v, base) AS ( \
           SELECT b.thread_id, b.checkpoint_ns_hash, b.channel, b.version, b.base_version \
           FROM checkpoint_blobs b \
           JOIN unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS k(t, h, c, v) \
           ON b.thread_id = k.t AND b.checkpoint_ns_hash = k.h AND b.channel = k.c \
           AND b.version = k.v \
         UNION \
           SELECT b.thread_id, b.checkpoint_ns_hash, b.channel, b.version, b.base_version \
           FROM chain JOIN checkpoint_blobs b ON b.thread_id = chain.t \
           AND b.checkpoint_ns_hash = chain.h AND b.channel = chain.c AND b.version = chain.base) \
         SELECT b.thread_id, b.checkpoint_ns_hash, b.channel, b.version, b.type, b.kind, \
         b.base_version, b.depth::int8, b.blob_data FROM chain JOIN checkpoint_blobs b \
         ON b.thread_id = chain.t AND b.checkpoint_ns_hash = chain.h AND b.channel = chain.c \
         AND b.version = chain.v",
    )
    .with(Arg::TextArray(t))
    .with(Arg::TextArray(h))
    .with(Arg::TextArray(c))
    .with(Arg::TextArray(v))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    let mut found = HashMap::with_capacity(rows.len());
    for r in &rows {
        let key: BlobKey = (
            text(r, 0).unwrap_or_default(),
            text(r, 1).unwrap_or_default(),
            text(r, 2).unwrap_or_default(),
            text(r, 3).unwrap_or_default(),
        );
        let blob = StoredBlob {
            type_tag: text(r, 4).unwrap_or_else(|| "msgpack".into()),
            kind: text(r, 5).unwrap_or_else(|| "full".into()),
            base_version: text(r, 6),
            depth: r.try_get::<Option<i64>, _>(7).ok().flatten().unwrap_or(0),
            data: bytes(r, 8),
        };
        found.insert(key, blob);
    }
    Ok(found)
}

/// Decode each row's document once for its `channel_versions` (undecodable: none).
fn versions_of(row: &Row, dec: &crate::decode::Decoding) -> Vec<(String, String)> {
    match crate::three::assemble::document(row, &mut dec.cache()) {
        Ok(Some(cp)) => cp
            .channel_versions
            .iter()
            .map(|(c, v)| (c.clone(), version_text(v)))
            .collect(),
        _ => Vec::new(),
    }
}

/// The full tuples of `rows`: their blobs and writes fetched in batches, then assembled.
pub(super) async fn tuples(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    rows: Vec<Row>,
    memo: &mut ReadMemo,
) -> Result<Vec<CheckpointTuple>, StoreError> {
    if rows.is_empty() {
        return Ok(Vec::new());
    }
    let mut wanted = Vec::new();
    for row in &rows {
        for (c, v) in versions_of(row, &s.decoding) {
            wanted.push((row.thread_id.clone(), row.hash.clone(), c, v));
        }
    }
    let blobs = load_blobs(conn, s, wanted).await?;
    let keys: [Vec<String>; 3] = [
        rows.iter().map(|r| r.thread_id.clone()).collect(),
        rows.iter().map(|r| r.hash.clone()).collect(),
        rows.iter().map(|r| r.id.clone()).collect(),
    ];
    let extra = Sql::new(
        "SELECT b.thread_id, b.checkpoint_ns_hash, b.version, b.channel, b.type, b.blob_data \
         FROM checkpoint_blobs b JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(t, h, v) \
         ON b.thread_id = k.t AND b.checkpoint_ns_hash = k.h AND b.version = k.v \
         ORDER BY b.gmt_create, b.channel",
    )
    .with(Arg::TextArray(keys[0].clone()))
    .with(Arg::TextArray(keys[1].clone()))
    .with(Arg::TextArray(
        keys[2].iter().map(|i| unversioned(i)).collect(),
    ))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    let mut unversioned_of: HashMap<(String, String, String), Vec<Unversioned>> = HashMap::new();
    for r in &extra {
        let k = (
            text(r, 0).unwrap_or_default(),
            text(r, 1).unwrap_or_default(),
            text(r, 2).unwrap_or_default(),
        );
        unversioned_of
            .entry(k)
            .or_default()
            .push((text(r, 3), text(r, 4), bytes(r, 5)));
    }
    let writes = Sql::new(
        "SELECT w.thread_id, w.checkpoint_ns_hash, w.checkpoint_id, w.task_id, w.task_path, \
         w.idx::int8, w.channel, w.type, w.blob_data FROM checkpoint_writes w \
         JOIN unnest($1::text[], $2::text[], $3::text[]) AS k(t, h, i) \
         ON w.thread_id = k.t AND w.checkpoint_ns_hash = k.h AND w.checkpoint_id = k.i",
    )
    .with(Arg::TextArray(keys[0].clone()))
    .with(Arg::TextArray(keys[1].clone()))
    .with(Arg::TextArray(keys[2].clone()))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    let mut cache = s.decoding.cache();
    let mut writes_of: HashMap<(String, String, String), Vec<PendingWrite>> = HashMap::new();
    for r in &writes {
        let k = (
            text(r, 0).unwrap_or_default(),
            text(r, 1).unwrap_or_default(),
            text(r, 2).unwrap_or_default(),
        );
        let type_tag = text(r, 7)
            .filter(|t| !t.is_empty())
            .unwrap_or_else(|| "msgpack".into());
        let data = bytes(r, 8);
        let (idx, value) = match r.try_get::<Option<i64>, _>(5).ok().flatten() {
            Some(i) => (
                i,
                decode_typed_cached(&type_tag, data.as_deref(), &mut cache),
            ),
            None => (
                i64::MAX,
                Decoded::Error {
                    tag: type_tag.clone(),
                    message: "this write's idx is not an integer".into(),
                    raw: data.unwrap_or_default(),
                },
            ),
        };
        writes_of.entry(k).or_default().push(PendingWrite {
            task_id: text(r, 3).unwrap_or_default(),
            task_path: text(r, 4).unwrap_or_default(),
            idx,
            channel: text(r, 6).unwrap_or_default(),
            type_tag,
            value,
        });
    }
    let mut out = Vec::with_capacity(rows.len());
    for row in rows {
        let k = (row.thread_id.clone(), row.hash.clone(), row.id.clone());
        let mut pending = writes_of.remove(&k).unwrap_or_default();
        sort_writes(&mut pending);
        let extra = unversioned_of
            .remove(&(k.0.clone(), k.1.clone(), unversioned(&k.2)))
            .unwrap_or_default();
        let mut extra = Some(extra);
        let mut vals = |row: &Row, cp: &Checkpoint, cache: &mut _, sealing: &mut _| {
            let mut fetch = |channel: &str, version: &str| {
                let key = (
                    row.thread_id.clone(),
                    row.hash.clone(),
                    channel.to_owned(),
                    version.to_owned(),
                );
                Ok(blobs.get(&key).cloned())
            };
            let extra = extra.take().unwrap_or_default();
            Ok(values_from(
                row, cp, memo, cache, sealing, &mut fetch, extra,
            ))
        };
        out.push(assemble(row, pending, &mut cache, &mut vals)?);
    }
    Ok(out)
}

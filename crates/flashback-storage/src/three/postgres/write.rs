//! [`crate::CheckpointSaver`] for [`ThreeTablePg`]: `setup` (the migrations in
//! `migrations/three-table/postgres/`), `put` (method A or B, `rows.rs`), `put_writes`,
//! `put_batch` and `delete_thread`, each in one read-write transaction.

use super::read::{load_blobs, BlobKey};
use super::ThreeTablePg;
use crate::decode::checkpoint_from_msgpack;
use crate::postgres::sql::{Arg, Sql};
use crate::postgres::wait::Bounded as _;
use crate::postgres::write_rows::{check_text, nul_path};
use crate::saver::{write_idx, writes_replace, CheckpointSaver, PutRequest};
use crate::saver::{writing_batch, WriteBatch};
use crate::serializer::Serde;
use crate::three::rows::{blob_rows, document_bytes, materialise, ns_hash, version_text, Memo};
use crate::three::Blobs;
use crate::StoreError;
use async_trait::async_trait;
use flashback_codec::{AesKey, Decoded};
use serde_json::Value as Json;
use sqlx::postgres::PgConnection;
use sqlx::Row as _;
use std::collections::{HashMap, HashSet};

/// Metadata as JSONB holds it: NULs stripped from top-level strings (as Python's Postgres
/// saver does); a NUL deeper is an error (JSONB cannot store it).
fn metadata_json(metadata: &serde_json::Map<String, Json>) -> Result<Json, StoreError> {
    let out = Json::Object(
        metadata
            .iter()
            .map(|(k, v)| match v {
                Json::String(s) if s.contains('\0') => {
                    (k.clone(), Json::String(s.replace('\0', "")))
                }
                other => (k.clone(), other.clone()),
            })
            .collect(),
    );
    match nul_path(&out) {
        Some(path) => Err(StoreError::InvalidInput(format!(
            "metadata {}: contains a NUL character (\\u0000), which Postgres JSONB cannot store",
            path.join(".")
        ))),
        None => Ok(out),
    }
}

/// The parent's `channel_versions` (empty when there is no readable parent).
async fn parent_versions(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    (thread, hash, parent): (&str, &str, &str),
    key: Option<&AesKey>,
) -> Result<Vec<(String, String)>, StoreError> {
    let row = Sql::new(
        "SELECT type, checkpoint FROM checkpoints \
         WHERE thread_id = $1 AND checkpoint_ns_hash = $2 AND checkpoint_id = $3",
    )
    .with(Arg::Text(thread.to_owned()))
    .with(Arg::Text(hash.to_owned()))
    .with(Arg::Text(parent.to_owned()))
    .query()
    .fetch_optional(&mut *conn)
    .bounded(&s.target)
    .await?;
    let Some(row) = row else {
        return Ok(Vec::new());
    };
    let tag: Option<String> = row.try_get(0).ok().flatten();
    let doc: Option<Vec<u8>> = row.try_get(1).ok().flatten();
    let decoded = flashback_codec::decode_typed_keyed(
        tag.as_deref().unwrap_or("msgpack"),
        doc.as_deref(),
        key,
    );
    Ok(match decoded {
        Decoded::Msgpack(v) => checkpoint_from_msgpack(v)
            .map(|c| {
                c.channel_versions
                    .iter()
                    .map(|(c, v)| (c.clone(), version_text(v)))
                    .collect()
            })
            .unwrap_or_default(),
        _ => Vec::new(),
    })
}

async fn put_tx(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    req: &PutRequest<'_>,
    key: Option<&AesKey>,
) -> Result<(), StoreError> {
    let (thread, ns, cp) = (req.thread_id, req.checkpoint_ns, req.checkpoint);
    check_text("thread_id", thread)?;
    check_text("checkpoint_ns", ns)?;
    check_text("checkpoint_id", &cp.id)?;
    let metadata = metadata_json(req.metadata)?;
    let hash = ns_hash(ns);
    let versions: Vec<(String, String)> = cp
        .channel_versions
        .iter()
        .map(|(c, v)| (c.clone(), version_text(v)))
        .collect();
    for (c, v) in &versions {
        check_text("channel", c)?;
        check_text("version", v)?;
    }
    // Which of the checkpoint's versions are stored already.
    let rows = Sql::new(
        "SELECT b.channel, b.version FROM checkpoint_blobs b \
         JOIN unnest($3::text[], $4::text[]) AS k(c, v) ON b.channel = k.c AND b.version = k.v \
         WHERE b.thread_id = $1 AND b.checkpoint_ns_hash = $2",
    )
    .with(Arg::Text(thread.to_owned()))
    .with(Arg::Text(hash.clone()))
    .with(Arg::TextArray(
        versions.iter().map(|(c, _)| c.clone()).collect(),
    ))
    .with(Arg::TextArray(
        versions.iter().map(|(_, v)| v.clone()).collect(),
    ))
    .query()
    .fetch_all(&mut *conn)
    .bounded(&s.target)
    .await?;
    let stored: HashSet<(String, String)> = rows
        .iter()
        .filter_map(|r| Some((r.try_get(0).ok()?, r.try_get(1).ok()?)))
        .collect();
    // Method B: the parent's versions of the channels this put stores, with their chains.
    let mut bases: HashMap<String, String> = HashMap::new();
    let mut chains = HashMap::new();
    if let (Blobs::Incremental, Some(parent)) = (s.options.blobs, req.parent_checkpoint_id) {
        let parent = parent_versions(conn, s, (thread, &hash, parent), key).await?;
        for (c, v) in parent {
            let new = versions
                .iter()
                .any(|(nc, nv)| *nc == c && !stored.contains(&(nc.clone(), nv.clone())));
            if new {
                bases.insert(c, v);
            }
        }
        let wanted = bases
            .iter()
            .map(|(c, v)| -> BlobKey { (thread.to_owned(), hash.clone(), c.clone(), v.clone()) });
        chains = load_blobs(conn, s, wanted.collect::<Vec<_>>()).await?;
    }
    let mut memo = Memo::new();
    let mut exists = |c: &str, v: &str| Ok(stored.contains(&(c.to_owned(), v.to_owned())));
    let mut base = |channel: &str| -> Result<_, StoreError> {
        let Some(v) = bases.get(channel) else {
            return Ok(None);
        };
        let mut fetch = |ver: &str| {
            let k = (
                thread.to_owned(),
                hash.clone(),
                channel.to_owned(),
                ver.to_owned(),
            );
            Ok(chains.get(&k).cloned())
        };
        // A damaged base is no base: the value is stored whole.
        Ok(
            materialise((thread, &hash, channel), v, &mut memo, &mut fetch)
                .ok()
                .flatten()
                .map(|m| (v.clone(), m)),
        )
    };
    let blobs = blob_rows(cp, s.options.blobs, key, &mut exists, &mut base)?;
    if !blobs.is_empty() {
        Sql::new(
            "INSERT INTO checkpoint_blobs (thread_id, checkpoint_ns_hash, channel, version, type, \
             kind, base_version, depth, blob_data) \
             SELECT $1, $2, r.c, r.v, r.t, r.k, r.b, r.d, r.x \
             FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::int4[], \
             $9::bytea[]) AS r(c, v, t, k, b, d, x) ON CONFLICT DO NOTHING",
        )
        .with(Arg::Text(thread.to_owned()))
        .with(Arg::Text(hash.clone()))
        .query()
        .bind(blobs.iter().map(|b| b.channel.clone()).collect::<Vec<_>>())
        .bind(blobs.iter().map(|b| b.version.clone()).collect::<Vec<_>>())
        .bind(blobs.iter().map(|b| b.type_tag.clone()).collect::<Vec<_>>())
        .bind(
            blobs
                .iter()
                .map(|b| b.kind.as_str().to_owned())
                .collect::<Vec<_>>(),
        )
        .bind(
            blobs
                .iter()
                .map(|b| b.base_version.clone())
                .collect::<Vec<_>>(),
        )
        .bind(
            blobs
                .iter()
                .map(|b| i32::try_from(b.depth).unwrap_or(i32::MAX))
                .collect::<Vec<_>>(),
        )
        .bind(blobs.iter().map(|b| b.data.clone()).collect::<Vec<_>>())
        .execute(&mut *conn)
        .bounded(&s.target)
        .await?;
    }
    let (tag, doc) = document_bytes(cp, key)?;
    Sql::new(
        "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_ns_hash, checkpoint_id, \
         parent_checkpoint_id, type, checkpoint, metadata) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb) \
         ON CONFLICT (thread_id, checkpoint_ns_hash, checkpoint_id) DO UPDATE SET \
         checkpoint_ns = EXCLUDED.checkpoint_ns, \
         parent_checkpoint_id = EXCLUDED.parent_checkpoint_id, type = EXCLUDED.type, \
         checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata, gmt_modified = now()",
    )
    .with(Arg::Text(thread.to_owned()))
    .with(Arg::Text(ns.to_owned()))
    .with(Arg::Text(hash))
    .with(Arg::Text(cp.id.clone()))
    .query()
    .bind(req.parent_checkpoint_id)
    .bind(tag)
    .bind(doc)
    .bind(metadata)
    .execute(&mut *conn)
    .bounded(&s.target)
    .await?;
    Ok(())
}

async fn put_writes_tx(
    conn: &mut PgConnection,
    s: &ThreeTablePg,
    w: &WriteBatch<'_>,
    key: Option<&AesKey>,
) -> Result<(), StoreError> {
    for (what, t) in [
        ("thread_id", w.thread_id),
        ("checkpoint_ns", w.checkpoint_ns),
        ("checkpoint_id", w.checkpoint_id),
        ("task_id", w.task_id),
        ("task_path", w.task_path),
    ] {
        check_text(what, t)?;
    }
    let conflict = if writes_replace(w.writes) {
        "DO UPDATE SET task_path = EXCLUDED.task_path, channel = EXCLUDED.channel, \
         type = EXCLUDED.type, blob_data = EXCLUDED.blob_data, gmt_create = EXCLUDED.gmt_create"
    } else {
        "DO NOTHING"
    };
    let sql = format!(
        "INSERT INTO checkpoint_writes (thread_id, checkpoint_ns_hash, checkpoint_id, task_id, \
         task_path, idx, channel, type, blob_data) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) \
         ON CONFLICT (thread_id, checkpoint_ns_hash, checkpoint_id, task_id, idx) {conflict}"
    );
    let hash = ns_hash(w.checkpoint_ns);
    // One row at a time: a batch naming one idx twice keeps the last (REPLACE) or the first.
    for (i, (channel, value)) in w.writes.iter().enumerate() {
        let (tag, bytes) = Serde::python(key).dumps_typed(channel, value)?;
        check_text("channel", channel)?;
        let idx = i32::try_from(write_idx(channel, i)).map_err(|_| {
            StoreError::InvalidInput(format!(
                "write {i} of channel {channel:?}: idx out of range"
            ))
        })?;
        Sql::new(&sql)
            .with(Arg::Text(w.thread_id.to_owned()))
            .with(Arg::Text(hash.clone()))
            .with(Arg::Text(w.checkpoint_id.to_owned()))
            .with(Arg::Text(w.task_id.to_owned()))
            .with(Arg::Text(w.task_path.to_owned()))
            .query()
            .bind(idx)
            .bind(channel.as_str())
            .bind(tag)
            .bind(bytes)
            .execute(&mut *conn)
            .bounded(&s.target)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl CheckpointSaver for ThreeTablePg {
    async fn setup(&self) -> Result<(), StoreError> {
        self.setup_tables().await
    }

    async fn put_batch(
        &self,
        puts: &[PutRequest<'_>],
        writes: &[WriteBatch<'_>],
    ) -> Result<(), StoreError> {
        let step = async {
            let key = self.key();
            let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
            for p in puts {
                put_tx(&mut tx, self, p, key.as_deref()).await?;
            }
            for w in writes {
                put_writes_tx(&mut tx, self, w, key.as_deref()).await?;
            }
            tx.commit().bounded(&self.target).await
        };
        step.await
            .map_err(|e: StoreError| e.during(|| writing_batch(puts, writes)))
    }

    async fn delete_thread(&self, thread_id: &str) -> Result<(), StoreError> {
        const DELETE_THREAD: [&str; 3] = [
            "DELETE FROM checkpoints WHERE thread_id = $1",
            "DELETE FROM checkpoint_writes WHERE thread_id = $1",
            "DELETE FROM checkpoint_blobs WHERE thread_id = $1",
        ];
        crate::postgres::write::delete_thread_with(
            &self.pool,
            &self.target,
            thread_id,
            &DELETE_THREAD,
        )
        .await
    }
}

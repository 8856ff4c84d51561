//! The blobs of a full read: which `checkpoint_blobs` rows the documents reference, streamed
//! from the server and decoded as they arrive on one thread with one decode cache.

use super::rows::{decode_blob_rows, BlobBatch, BlobKey, Blobs, Doc, RowKey};
use super::sql::{Arg, Sql};
use super::PostgresStore;
use crate::StoreError;
use flashback_codec::{AesKey, DecodeCache};
use sqlx::postgres::PgConnection;
use sqlx::Row as _;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::sync::mpsc::Sender;
use tokio::task::JoinHandle;

/// Blob rows are handed to the decoding thread in batches of about this many bytes…
const BATCH_BYTES: usize = 8 << 20;
/// …or this many rows.
const BATCH_ROWS: usize = 256;
/// Batches that may wait for the decoding thread (bounds the raw rows held).
const DECODE_AHEAD: usize = 2;
/// Rows [`PostgresStore::existing_blobs`] reads per reference at most.
const EXISTING_PER_REF: usize = 4;

/// A decoding thread for `count` blob references: send it [`BlobBatch`]es, drop the sender,
/// and join it for the decoded blobs. One [`DecodeCache`] serves the whole read: an object
/// stored again in many blobs (every message of a chat, in every later state) is decoded once
/// and shared. A decoding error ends it early (sends then fail). With `fetched`, the batches
/// count the references of that list (`fetched[i]` is the reference index of their `i`).
pub(super) fn decode_blobs(
    count: usize,
    key: Option<Arc<AesKey>>,
    fetched: Option<Vec<usize>>,
) -> (Sender<BlobBatch>, JoinHandle<Result<Blobs, StoreError>>) {
    let (batches, mut arriving) = tokio::sync::mpsc::channel::<BlobBatch>(DECODE_AHEAD);
    let decoding = tokio::task::spawn_blocking(move || {
        let mut cache = DecodeCache::new().with_key(key);
        let mut blobs: Blobs = vec![None; count];
        while let Some((offset, rows)) = arriving.blocking_recv() {
            for (i, value) in decode_blob_rows(&rows, offset, &mut cache)? {
                let i = match &fetched {
                    Some(list) => list.get(i).copied().unwrap_or(usize::MAX),
                    None => i,
                };
                if let Some(slot) = blobs.get_mut(i) {
                    *slot = value;
                }
            }
        }
        Ok(blobs)
    });
    (batches, decoding)
}

impl PostgresStore {
    /// The blobs the documents reference through their `channel_versions`: each distinct
    /// `(thread, ns, channel, version)` once (shallow saver: `(thread, ns, channel)`). Each
    /// document records the index of the blob behind each of its versions.
    pub(super) fn blob_refs(&self, keys: &[RowKey], docs: &mut [Doc]) -> Vec<BlobKey> {
        let mut index: HashMap<(&str, &str, &str, &str), usize> = HashMap::new();
        let mut refs = Vec::new();
        let mut per_doc = Vec::with_capacity(docs.len());
        // A selecting read (`PostgresStore::selecting`) fetches no other channel's blob.
        let skipped = |channel: &str| self.only.as_ref().is_some_and(|keep| !keep(channel));
        for (key, doc) in keys.iter().zip(docs.iter()) {
            let mut ids = Vec::with_capacity(doc.versions.len());
            for (channel, version) in &doc.versions {
                if skipped(channel) {
                    ids.push(None);
                    continue;
                }
                let version = match (self.info().shallow(), version) {
                    (true, _) => "",
                    (false, Some(v)) => v.as_str(),
                    // A JSON null version joins nothing in Python's SQL either.
                    (false, None) => {
                        ids.push(None);
                        continue;
                    }
                };
                let next = refs.len();
                let id = *index
                    .entry((&key.thread_id, &key.ns, channel, version))
                    .or_insert(next);
                if id == next {
                    refs.push((
                        key.thread_id.clone(),
                        key.ns.clone(),
                        channel.clone(),
                        version.to_owned(),
                    ));
                }
                ids.push(Some(id));
            }
            per_doc.push(ids);
        }
        drop(index);
        for (doc, ids) in docs.iter_mut().zip(per_doc) {
            doc.blob_ids = ids;
        }
        refs
    }

    /// Which of `refs` have a row (full saver), by index: one index-only scan of the primary
    /// key for their threads, namespaces and channels. A selecting read of many checkpoints
    /// fetches only those: a thread list's trigger channels mostly have none (an emptied
    /// channel, a value stored inline), and a probe for each costs the server more than the
    /// scan. Bounded: when the channels have many more rows than `refs` (threads with long
    /// histories), every reference is fetched as usual.
    pub(super) async fn existing_blobs(
        &self,
        tx: &mut PgConnection,
        refs: &[BlobKey],
    ) -> Result<Vec<usize>, StoreError> {
        let distinct = |f: fn(&BlobKey) -> &String| {
            let mut seen: Vec<String> = refs.iter().map(|r| f(r).clone()).collect();
            seen.sort_unstable();
            seen.dedup();
            Arg::TextArray(seen)
        };
        let sql = Sql::new(
            "SELECT thread_id, checkpoint_ns, channel, version FROM checkpoint_blobs \
             WHERE thread_id = ANY($1::text[]) AND checkpoint_ns = ANY($2::text[]) \
             AND channel = ANY($3::text[]) LIMIT $4",
        )
        .with(distinct(|r| &r.0))
        .with(distinct(|r| &r.1))
        .with(distinct(|r| &r.2))
        .with(Arg::Int(
            i64::try_from(refs.len().saturating_mul(EXISTING_PER_REF)).unwrap_or(i64::MAX),
        ));
        let rows = self.target.wait(sql.query().fetch_all(tx)).await?;
        if rows.len() >= refs.len().saturating_mul(EXISTING_PER_REF) {
            return Ok((0..refs.len()).collect());
        }
        let mut present: HashSet<(&str, &str, &str, &str)> = HashSet::with_capacity(rows.len());
        for r in &rows {
            let key = (
                r.try_get::<&str, _>("thread_id").map_err(|e| self.err(e))?,
                r.try_get::<&str, _>("checkpoint_ns")
                    .map_err(|e| self.err(e))?,
                r.try_get::<&str, _>("channel").map_err(|e| self.err(e))?,
                r.try_get::<&str, _>("version").map_err(|e| self.err(e))?,
            );
            present.insert(key);
        }
        Ok((0..refs.len())
            .filter(|&i| {
                let (t, n, c, v) = &refs[i];
                present.contains(&(t.as_str(), n.as_str(), c.as_str(), v.as_str()))
            })
            .collect())
    }

    /// The blob rows of `refs` (missing ones are simply absent), handed on to `batches` as
    /// they arrive, [`BlobBatch`]es of about [`BATCH_BYTES`]; `offset` is `refs`' first
    /// reference index. Stops early (without error) when the receiver is gone.
    pub(super) async fn stream_blobs(
        &self,
        tx: &mut PgConnection,
        refs: &[BlobKey],
        offset: usize,
        batches: &tokio::sync::mpsc::Sender<BlobBatch>,
    ) -> Result<(), StoreError> {
        if refs.is_empty() {
            return Ok(());
        }
        let column = |f: fn(&BlobKey) -> &String| {
            Arg::TextArray(refs.iter().map(|r| f(r).clone()).collect())
        };
        let sql = if self.info().shallow() {
            Sql::new(&format!(
                "SELECT r.i - 1 AS i, b.type, b.channel, {} \
                 FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS r(t, n, c, i) \
                 JOIN checkpoint_blobs b ON b.thread_id = r.t AND b.checkpoint_ns = r.n AND b.channel = r.c",
                self.budgeted("b.blob")
            ))
            .with(column(|r| &r.0))
            .with(column(|r| &r.1))
            .with(column(|r| &r.2))
        } else {
            Sql::new(&format!(
                "SELECT r.i - 1 AS i, b.type, b.channel, {} \
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) WITH ORDINALITY AS r(t, n, c, v, i) \
                 JOIN checkpoint_blobs b ON b.thread_id = r.t AND b.checkpoint_ns = r.n \
                 AND b.channel = r.c AND b.version = r.v",
                self.budgeted("b.blob")
            ))
            .with(column(|r| &r.0))
            .with(column(|r| &r.1))
            .with(column(|r| &r.2))
            .with(column(|r| &r.3))
        };
        let query = sql.query();
        let mut rows = query.fetch(tx);
        let (mut batch, mut bytes) = (Vec::new(), 0usize);
        while let Some(row) = self
            .target
            .wait_row(std::future::poll_fn(|cx| rows.as_mut().poll_next(cx)))
            .await?
        {
            bytes += row
                .try_get::<Option<&[u8]>, _>("blob")
                .ok()
                .flatten()
                .map_or(0, <[u8]>::len);
            batch.push(row);
            if bytes >= BATCH_BYTES || batch.len() >= BATCH_ROWS {
                if batches
                    .send((offset, std::mem::take(&mut batch)))
                    .await
                    .is_err()
                {
                    return Ok(());
                }
                bytes = 0;
            }
        }
        if !batch.is_empty() {
            let _ = batches.send((offset, batch)).await;
        }
        Ok(())
    }
}

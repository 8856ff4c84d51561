//! The blobs of a full read: which `checkpoint_blobs` rows the documents reference, streamed
//! from the server and decoded as they arrive on one thread with one decode cache.

use super::rows::{decode_blob_rows, BlobBatch, BlobKey, Blobs, Doc, RowKey};
use super::sql::{Arg, Sql};
use super::PostgresStore;
use crate::StoreError;
use flashback_codec::{AesKey, DecodeCache};
use sqlx::postgres::PgConnection;
use sqlx::Row as _;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc::Sender;
use tokio::task::JoinHandle;

/// Blob rows are handed to the decoding thread in batches of about this many bytes…
const BATCH_BYTES: usize = 8 << 20;
/// …or this many rows.
const BATCH_ROWS: usize = 256;
/// Batches that may wait for the decoding thread (bounds the raw rows held).
const DECODE_AHEAD: usize = 2;

/// A decoding thread for `count` blob references: send it [`BlobBatch`]es, drop the sender,
/// and join it for the decoded blobs. One [`DecodeCache`] serves the whole read: an object
/// stored again in many blobs (every message of a chat, in every later state) is decoded once
/// and shared. A decoding error ends it early (sends then fail).
pub(super) fn decode_blobs(
    count: usize,
    key: Option<Arc<AesKey>>,
) -> (Sender<BlobBatch>, JoinHandle<Result<Blobs, StoreError>>) {
    let (batches, mut arriving) = tokio::sync::mpsc::channel::<BlobBatch>(DECODE_AHEAD);
    let decoding = tokio::task::spawn_blocking(move || {
        let mut cache = DecodeCache::new().with_key(key);
        let mut blobs: Blobs = vec![None; count];
        while let Some((offset, rows)) = arriving.blocking_recv() {
            for (i, value) in decode_blob_rows(&rows, offset, &mut cache)? {
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

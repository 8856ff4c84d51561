//! The three-table store's checkpoint rows made into tuples, backend-neutral: a [`Row`] as
//! either backend reads it, its document decoded, and [`assemble`] putting the row, its
//! pending writes and its values (read by the backend: `values.rs`) together.

use crate::decode::{checkpoint_from_msgpack, empty, unreadable_document, Decoding};
use crate::escape::joined;
use crate::model::*;
use crate::StoreError;
use flashback_codec::cipher::is_encrypted;
use flashback_codec::{decode_typed_cached, DecodeCache, Decoded};
use std::sync::Arc;

/// A checkpoint row as read.
pub(super) struct Row {
    pub(super) thread_id: String,
    pub(super) ns: String,
    pub(super) hash: String,
    pub(super) id: String,
    pub(super) parent: Option<String>,
    pub(super) type_tag: Option<String>,
    pub(super) doc: Option<Vec<u8>>,
    pub(super) metadata: Option<Vec<u8>>,
    pub(super) problems: Vec<String>,
}

pub(super) type ChannelValues = Vec<(String, Arc<Decoded>)>;

/// The document decoded (without values), or why not; `Ok(None)`: encrypted, no key.
pub(super) fn document(row: &Row, cache: &mut DecodeCache) -> Result<Option<Checkpoint>, String> {
    let tag = row.type_tag.as_deref().unwrap_or("msgpack");
    let mut cp = match decode_typed_cached(tag, row.doc.as_deref(), cache) {
        Decoded::Msgpack(v) => checkpoint_from_msgpack(v),
        Decoded::Encrypted { .. } => return Ok(None),
        Decoded::Error { message, .. } => Err(message),
        Decoded::Null => Err("it is NULL".into()),
        other => Err(format!("it is not a checkpoint document: {other}")),
    }
    .map_err(unreadable_document)?;
    if cp.id.is_empty() {
        cp.id = row.id.clone();
    }
    Ok(Some(cp))
}

fn metadata(raw: Option<&[u8]>) -> serde_json::Value {
    match raw {
        None => serde_json::json!({}),
        Some(b) => serde_json::from_slice(b).unwrap_or_else(|e| {
            flashback_codec::view::error_view(
                &format!("metadata is not valid JSON: {e}"),
                "json",
                b,
            )
        }),
    }
}

impl Row {
    pub(super) fn header_with(&self, ts: String, more: Vec<String>) -> CheckpointHeader {
        let mut problems = self.problems.clone();
        problems.extend(more);
        CheckpointHeader {
            thread_id: self.thread_id.clone(),
            checkpoint_ns: self.ns.clone(),
            checkpoint_id: self.id.clone(),
            parent_checkpoint_id: self.parent.clone().filter(|p| !p.is_empty()),
            ts,
            metadata: metadata(self.metadata.as_deref()),
            problem: joined(problems),
        }
    }

    /// The header (the document decoded for its timestamp, values are not read).
    pub(super) fn header(&self, dec: &Decoding) -> CheckpointHeader {
        match document(self, &mut dec.cache()) {
            Ok(Some(cp)) => self.header_with(cp.ts, Vec::new()),
            Ok(None) => self.header_with(String::new(), Vec::new()),
            Err(p) => self.header_with(String::new(), vec![p]),
        }
    }
}

/// The channel values of a row's checkpoint, with the problems met.
pub(super) type ValuesOf<'a> = dyn FnMut(
        &Row,
        &Checkpoint,
        &mut DecodeCache,
        &mut Sealing,
    ) -> Result<(ChannelValues, Vec<String>), StoreError>
    + 'a;

/// A tuple from its row, pending writes and values (backend-neutral).
pub(super) fn assemble(
    row: Row,
    pending_writes: Vec<PendingWrite>,
    cache: &mut DecodeCache,
    values: &mut ValuesOf<'_>,
) -> Result<CheckpointTuple, StoreError> {
    let doc_encrypted = row.type_tag.as_deref().is_some_and(is_encrypted);
    let mut sealing = Sealing::default();
    if doc_encrypted {
        sealing.encrypted.push("checkpoint".into());
    }
    let (checkpoint, problems) = match document(&row, cache) {
        Ok(Some(mut cp)) => {
            let (mut vals, problems) = values(&row, &cp, cache, &mut sealing)?;
            // In the order of the document's `channel_values` keys (Python's order).
            let order = |c: &str| cp.channel_values.iter().position(|(k, _)| k == c);
            vals.sort_by_key(|(c, _)| order(c).unwrap_or(usize::MAX));
            cp.channel_values = vals;
            (cp, problems)
        }
        Ok(None) => {
            sealing.lock(row.type_tag.as_deref().unwrap_or_default());
            let mut cp = empty();
            cp.id = row.id.clone();
            (cp, Vec::new())
        }
        Err(p) => {
            let mut cp = empty();
            cp.id = row.id.clone();
            (cp, vec![p])
        }
    };
    Ok(CheckpointTuple {
        header: row.header_with(checkpoint.ts.clone(), problems),
        checkpoint,
        pending_writes,
        sealing,
        served: None,
    })
}

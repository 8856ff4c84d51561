//! One stored value of a checkpoint read alone ([`CheckpointStore::stored_value`]): a
//! channel's value streamed out of its document through SQLite's incremental blob I/O (the
//! rest of the document read past, never held), or one pending write's value.
//!
//! [`CheckpointStore::stored_value`]: crate::CheckpointStore::stored_value

use super::ctx::Ctx;
use crate::stored::{StoredBytes, ValueAt};
use crate::StoreError;
use flashback_codec::cipher::is_encrypted;
use rusqlite::types::ValueRef;
use rusqlite::OptionalExtension;
use std::io::{BufReader, Cursor, Read};

/// The value `at` of checkpoint `(thread, ns, id)`; `None` when there is none, or when it
/// cannot be read alone (a document that is not msgpack, or does not stream): the caller then
/// reads the checkpoint the usual way, which says what is wrong with it.
pub(super) fn stored_value_blocking(
    cx: Ctx<'_>,
    thread: &str,
    ns: &str,
    id: &str,
    at: ValueAt<'_>,
) -> Result<Option<StoredBytes>, StoreError> {
    let err = cx.err();
    let key = cx.dec.key.as_deref();
    match at {
        ValueAt::Channel(channel) => {
            let row = cx
                .conn
                .query_row(
                    "SELECT rowid, type FROM checkpoints \
                     WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
                    [thread, ns, id],
                    |r| Ok((r.get::<_, i64>(0)?, text(r.get_ref(1)?))),
                )
                .optional()
                .map_err(&err)?;
            let Some((rowid, tag)) = row else {
                return Ok(None);
            };
            let Ok(blob) =
                cx.conn
                    .blob_open(rusqlite::MAIN_DB, "checkpoints", "checkpoint", rowid, true)
            else {
                return Ok(None);
            };
            let value = match (tag.as_deref().unwrap_or("msgpack"), key) {
                ("msgpack", _) => flashback_codec::budget::channel_value(
                    BufReader::with_capacity(1 << 16, blob),
                    channel,
                ),
                (t, Some(k)) if is_encrypted(t) => {
                    let Some(("msgpack", plain)) = open(k, t, blob) else {
                        return Ok(None);
                    };
                    flashback_codec::budget::channel_value(Cursor::new(plain), channel)
                }
                _ => return Ok(None),
            };
            Ok(value.ok().flatten().map(|bytes| StoredBytes {
                tag: "msgpack".into(),
                bytes,
            }))
        }
        ValueAt::Write { task_id, idx } => {
            let row = cx
                .conn
                .query_row(
                    "SELECT type, value FROM writes WHERE thread_id = ? AND checkpoint_ns = ? \
                     AND checkpoint_id = ? AND task_id = ? AND idx = ?",
                    rusqlite::params![thread, ns, id, task_id, idx],
                    |r| {
                        let bytes = match r.get_ref(1)? {
                            ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
                            _ => None,
                        };
                        Ok((text(r.get_ref(0)?), bytes))
                    },
                )
                .optional()
                .map_err(&err)?;
            let Some((Some(tag), Some(bytes))) = row else {
                return Ok(None);
            };
            Ok(match key {
                Some(k) if is_encrypted(&tag) => k
                    .open(&tag, &bytes)
                    .ok()
                    .map(|(tag, bytes)| StoredBytes { tag, bytes }),
                _ => Some(StoredBytes { tag, bytes }),
            })
        }
    }
}

/// A [`ValueAt`] that can move to the connection's thread.
pub(super) enum OwnedAt {
    Channel(String),
    Write(String, i64),
}

impl From<ValueAt<'_>> for OwnedAt {
    fn from(at: ValueAt<'_>) -> OwnedAt {
        match at {
            ValueAt::Channel(c) => OwnedAt::Channel(c.to_owned()),
            ValueAt::Write { task_id, idx } => OwnedAt::Write(task_id.to_owned(), idx),
        }
    }
}

impl OwnedAt {
    pub(super) fn as_ref(&self) -> ValueAt<'_> {
        match self {
            OwnedAt::Channel(c) => ValueAt::Channel(c),
            OwnedAt::Write(task_id, idx) => ValueAt::Write { task_id, idx: *idx },
        }
    }
}

fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Text(b) => std::str::from_utf8(b).ok().map(str::to_owned),
        _ => None,
    }
}

/// An encrypted document read whole and opened: its inner tag and plaintext.
fn open(
    key: &flashback_codec::AesKey,
    tag: &str,
    mut blob: impl Read,
) -> Option<(&'static str, Vec<u8>)> {
    let mut sealed = Vec::new();
    blob.read_to_end(&mut sealed).ok()?;
    let (inner, plain) = key.open(tag, &sealed).ok()?;
    (inner == "msgpack").then_some(("msgpack", plain))
}

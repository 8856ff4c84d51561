//! Rows of the SQLite tables as read: checkpoint rows ([`Row`]) and write rows ([`RawWrite`]),
//! decoded leniently — a key column that is not text, or a checkpoint document that does not
//! decode, damages only its own row (noted in [`CheckpointHeader::problem`]).

use crate::decode::{
    checkpoint_from_msgpack, empty, in_channel, typed_channels, unreadable_document,
};
use crate::escape::{joined, key_or_note, key_text, RawKey};
use crate::model::*;
use crate::StoreError;
use flashback_codec::cipher::is_encrypted;
use flashback_codec::{decode_typed_cached, msgpack, AesKey, DecodeCache, Decoded};
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use std::collections::HashMap;
use std::sync::Arc;

/// A checkpoint row, its document not decoded yet.
pub(super) struct Row {
    pub(super) thread_id: String,
    pub(super) ns: String,
    pub(super) id: String,
    parent: Option<String>,
    type_tag: Option<String>,
    checkpoint: Option<Vec<u8>>,
    metadata: Option<Vec<u8>>,
    /// Key columns that are not valid text.
    problems: Vec<String>,
    /// The stored keys, kept when one is not text (so that its writes are still found).
    raw_key: Option<Box<[StoredKey; 3]>>,
    /// The document's stored length when it was over the budget and so not selected.
    oversized: Option<u64>,
    /// Channel values left out of the document: `(channel, bytes, kind)`.
    too_large: Vec<(String, u64, String)>,
    /// The document was stored encrypted and [`Row::slim`] decrypted it.
    decrypted: bool,
}

/// Why a row's document gives no checkpoint.
enum DocError {
    /// It is encrypted and there is no key (or its cipher is not AES): not a fault of the row.
    Locked,
    /// It cannot be read; the text says why.
    Unreadable(String),
}

impl DocError {
    fn problem(self) -> Option<String> {
        match self {
            DocError::Locked => None,
            DocError::Unreadable(p) => Some(p),
        }
    }
}

pub(super) const ROW_COLUMNS: &str =
    "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata";

/// [`ROW_COLUMNS`], except that a document longer than `limit` bytes (`0`: no limit) is not
/// selected — its length is, in an eighth column (SQLite gives a blob's length without
/// reading it). Nor is that row's metadata, which sits after the document in the row: reaching
/// it walks the document's overflow pages, which [`Row::slim`] does without a memory map.
pub(super) fn row_columns(limit: u64) -> String {
    if limit == 0 {
        return ROW_COLUMNS.to_owned();
    }
    format!(
        "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, \
         CASE WHEN length(checkpoint) > {limit} THEN NULL ELSE checkpoint END, \
         CASE WHEN length(checkpoint) > {limit} THEN NULL ELSE metadata END, \
         CASE WHEN length(checkpoint) > {limit} THEN length(checkpoint) END"
    )
}

/// A row of [`ROW_COLUMNS`] or [`row_columns`]; never fails on what the columns hold.
pub(super) fn row_from(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let mut problems = Vec::new();
    let mut key = |i: usize, column: &str| -> rusqlite::Result<String> {
        Ok(key_or_note(column, r.get_ref(i)?.into(), &mut problems))
    };
    let thread_id = key(0, "thread_id")?;
    let ns = key(1, "checkpoint_ns")?;
    let id = key(2, "checkpoint_id")?;
    let mut optional = |i: usize, column: &str| -> rusqlite::Result<Option<String>> {
        Ok(match r.get_ref(i)? {
            ValueRef::Null => None,
            v => Some(key_or_note(column, v.into(), &mut problems)),
        })
    };
    let parent = optional(3, "parent_checkpoint_id")?;
    let type_tag = optional(4, "type")?;
    let raw_key = if problems.is_empty() {
        None
    } else {
        let stored = |i: usize| r.get_ref(i).map(StoredKey::of);
        Some(Box::new([stored(0)?, stored(1)?, stored(2)?]))
    };
    let oversized = match r.as_ref().column_count() > 7 {
        true => r.get::<_, Option<i64>>(7)?.map(|n| n.max(0) as u64),
        false => None,
    };
    Ok(Row {
        thread_id,
        ns,
        id,
        parent,
        type_tag,
        checkpoint: blob_or_text(r, 5)?,
        metadata: blob_or_text(r, 6)?,
        problems,
        raw_key,
        oversized,
        too_large: Vec::new(),
        decrypted: false,
    })
}

/// Values may be stored as BLOB or (by other writers) TEXT; read both as bytes.
pub(super) fn blob_or_text(r: &rusqlite::Row<'_>, i: usize) -> rusqlite::Result<Option<Vec<u8>>> {
    Ok(match r.get_ref(i)? {
        ValueRef::Null => None,
        ValueRef::Blob(b) | ValueRef::Text(b) => Some(b.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    })
}

/// Metadata is UTF-8 JSON in a BLOB; unreadable metadata becomes an `$error` object.
fn parse_metadata(raw: Option<&[u8]>) -> serde_json::Value {
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
    /// The stored length of a document left unselected for being over the budget.
    pub(super) fn oversized(&self) -> Option<u64> {
        self.oversized
    }

    /// Keep only the values of the channels `keep` accepts in this row's (plain msgpack or
    /// JSON) document, the others read past without being decoded; an encrypted or unreadable
    /// document is left whole.
    pub(super) fn select(&mut self, keep: &dyn Fn(&str) -> bool) {
        let Some(doc) = self.checkpoint.as_deref() else {
            return;
        };
        let slim = match self.type_tag.as_deref() {
            None | Some("msgpack") => {
                flashback_codec::budget::select_channels(std::io::Cursor::new(doc), keep)
            }
            Some("json") => flashback_codec::slimjson::select_json_channels(doc, keep),
            Some(_) => return,
        };
        if let Ok(slim) = slim {
            self.checkpoint = Some(slim);
        }
    }

    /// Read an oversized msgpack document of row `rowid` through SQLite's incremental blob
    /// I/O, keeping all of it but the channel values over `limit` (see
    /// [`flashback_codec::budget::slim_document`]). A document that cannot be streamed so is
    /// noted as this row's problem.
    pub(super) fn slim(
        &mut self,
        conn: &Connection,
        rowid: i64,
        len: u64,
        limit: u64,
        key: Option<&Arc<AesKey>>,
    ) {
        let tag = self.type_tag.clone().unwrap_or_else(|| "msgpack".into());
        let blob = || {
            conn.blob_open(rusqlite::MAIN_DB, "checkpoints", "checkpoint", rowid, true)
                .map_err(|e| e.to_string())
        };
        let over = || {
            format!(
                "a {tag} document of {} is over the decode budget",
                flashback_codec::units::bytes(len)
            )
        };
        let read = match (tag.as_str(), key) {
            ("msgpack", _) => blob().and_then(|b| {
                let reader = std::io::BufReader::with_capacity(1 << 16, b);
                flashback_codec::budget::slim_document(reader, limit).map_err(|e| e.to_string())
            }),
            // LangGraph.js: one JSON document holding every value.
            ("json", _) => blob().and_then(|b| {
                let reader = std::io::BufReader::with_capacity(1 << 16, b);
                flashback_codec::slimjson::slim_json_document(reader, limit)
                    .map_err(|e| e.to_string())
            }),
            // Encrypted: the ciphertext is authenticated as a whole, so it is read whole, then
            // the plaintext is slimmed like a stored one.
            (t, Some(k)) if is_encrypted(t) => blob()
                .and_then(|mut b| {
                    let mut sealed = Vec::with_capacity(len as usize);
                    std::io::Read::read_to_end(&mut b, &mut sealed).map_err(|e| e.to_string())?;
                    k.open(t, &sealed)
                        .map_err(|e| format!("cannot decrypt: {e}"))
                })
                .and_then(|(inner, plain)| match inner.as_str() {
                    "msgpack" => {
                        flashback_codec::budget::slim_document(std::io::Cursor::new(plain), limit)
                            .map_err(|e| e.to_string())
                    }
                    _ => Err(over()),
                })
                .inspect(|_| {
                    self.decrypted = true;
                }),
            _ => Err(over()),
        };
        match read {
            Ok(slim) => {
                if self.decrypted {
                    self.type_tag = Some("msgpack".into());
                }
                self.checkpoint = Some(slim.document);
                self.too_large = slim.too_large;
            }
            Err(e) => self.problems.push(unreadable_document(e)),
        }
        let metadata = conn.query_row(
            "SELECT metadata FROM checkpoints WHERE rowid = ?",
            [rowid],
            |r| blob_or_text(r, 0),
        );
        match metadata {
            Ok(m) => self.metadata = m,
            Err(e) => self
                .problems
                .push(format!("its metadata cannot be read: {e}")),
        }
    }

    /// The header, reading `ts` cheaply from the undecoded document and checking that the
    /// document decodes (without building it; the full decode runs only for a bad one, to
    /// say why in the same words as [`Row::into_tuple`]).
    pub(super) fn header(&self, key: Option<&Arc<AesKey>>) -> CheckpointHeader {
        let stored = self.type_tag.as_deref().unwrap_or("msgpack");
        // An encrypted document is opened with the key and then read like a plaintext one;
        // without a key it is locked: no timestamp, and no problem either.
        let opened;
        let (tag, doc) = match (is_encrypted(stored), key, self.checkpoint.as_deref()) {
            (true, Some(k), Some(b)) => match k.open(stored, b) {
                Ok(o) => {
                    opened = o;
                    (opened.0.as_str(), Some(opened.1.as_slice()))
                }
                Err(flashback_codec::cipher::CipherError::Unsupported(_)) => {
                    return self.header_with(String::new(), None)
                }
                Err(e) => {
                    return self.header_with(
                        String::new(),
                        Some(unreadable_document(format!("cannot decrypt: {e}"))),
                    )
                }
            },
            (true, None, Some(_)) => return self.header_with(String::new(), None),
            _ => (stored, self.checkpoint.as_deref()),
        };
        let full = || self.checkpoint(&mut DecodeCache::new().with_key(key.cloned()));
        let (ts, problem) = match (tag, doc) {
            ("msgpack", Some(b)) => {
                let sound = msgpack::check(b).is_ok()
                    && matches!(b.first(), Some(0x80..=0x8f | 0xde | 0xdf));
                let problem = if sound {
                    None
                } else {
                    full().err().and_then(DocError::problem)
                };
                (msgpack::top_level_str(b, "ts").unwrap_or_default(), problem)
            }
            // LangGraph.js: the JSON is checked, its values skipped without being revived.
            ("json", Some(b)) => match flashback_codec::jsvalue::top_level_str(b, "ts") {
                Ok(ts) => (ts.unwrap_or_default(), None),
                Err(_) => match full() {
                    Ok(cp) => (cp.ts, None),
                    Err(e) => (String::new(), e.problem()),
                },
            },
            _ => match full() {
                Ok(cp) => (cp.ts, None),
                Err(e) => (String::new(), e.problem()),
            },
        };
        self.header_with(ts, problem)
    }

    fn header_with(&self, ts: String, document: Option<String>) -> CheckpointHeader {
        let mut problems = self.problems.clone();
        problems.extend(document);
        CheckpointHeader {
            thread_id: self.thread_id.clone(),
            checkpoint_ns: self.ns.clone(),
            checkpoint_id: self.id.clone(),
            parent_checkpoint_id: self.parent.clone().filter(|p| !p.is_empty()),
            ts,
            metadata: parse_metadata(self.metadata.as_deref()),
            problem: joined(problems),
        }
    }

    /// The decoded document, or why it cannot be read.
    fn checkpoint(&self, cache: &mut DecodeCache) -> Result<Checkpoint, DocError> {
        let tag = self.type_tag.as_deref().unwrap_or("msgpack");
        let mut cp = match decode_typed_cached(tag, self.checkpoint.as_deref(), cache) {
            Decoded::Msgpack(v) => checkpoint_from_msgpack(v).map(|cp| typed_channels(tag, cp)),
            Decoded::Error { message, .. } => Err(message),
            Decoded::Encrypted { .. } => return Err(DocError::Locked),
            Decoded::Null => Err("it is NULL".into()),
            // Described in one short line (tag, size, hash), never dumped.
            other => Err(format!("it is not a checkpoint document: {other}")),
        }
        .map_err(|e| DocError::Unreadable(unreadable_document(e)))?;
        if cp.id.is_empty() {
            cp.id = self.id.clone();
        }
        for (channel, bytes, kind) in &self.too_large {
            let placeholder = Arc::new(flashback_codec::budget::too_large(
                tag,
                *bytes,
                kind.clone(),
                flashback_codec::TooLargeReason::Value,
            ));
            match cp.channel_values.iter_mut().find(|(c, _)| c == channel) {
                Some((_, v)) => *v = placeholder,
                None => cp.channel_values.push((channel.clone(), placeholder)),
            }
        }
        Ok(cp)
    }

    /// The full tuple. An unreadable document gives a checkpoint without values (its id and,
    /// when readable, its timestamp kept) and the reason in the header's `problem`.
    pub(super) fn into_tuple(
        self,
        writes: Vec<RawWrite>,
        cache: &mut DecodeCache,
    ) -> CheckpointTuple {
        let pending_writes = decode_writes(writes, cache);
        let tag = self.type_tag.as_deref().unwrap_or("msgpack");
        let encrypted = self.decrypted || is_encrypted(tag);
        let (checkpoint, problem) = match self.checkpoint(cache) {
            Ok(cp) => (cp, None),
            Err(e) => {
                let mut cp = empty();
                cp.id = self.id.clone();
                if !encrypted {
                    cp.ts = self
                        .checkpoint
                        .as_deref()
                        .and_then(|b| msgpack::top_level_str(b, "ts"))
                        .unwrap_or_default();
                }
                (cp, Some(e))
            }
        };
        let part = vec!["checkpoint".to_owned()];
        let mut sealing = Sealing {
            encrypted: if encrypted { part.clone() } else { Vec::new() },
            plaintext: if encrypted { Vec::new() } else { part },
            ..Sealing::default()
        };
        if matches!(problem, Some(DocError::Locked)) {
            sealing.lock(tag);
        }
        CheckpointTuple {
            header: self.header_with(checkpoint.ts.clone(), problem.and_then(DocError::problem)),
            checkpoint,
            pending_writes,
            sealing,
            served: None,
        }
    }

    /// The `WHERE` of this row's writes and its parameters: the stored keys, exactly.
    pub(super) fn writes_where(&self) -> (String, Vec<SqlValue>) {
        let columns = ["thread_id", "checkpoint_ns", "checkpoint_id"];
        let keys = match &self.raw_key {
            Some(raw) => (**raw).clone(),
            None => [&self.thread_id, &self.ns, &self.id]
                .map(|k| StoredKey::Value(SqlValue::Text(k.clone()))),
        };
        let mut clauses = Vec::with_capacity(3);
        let mut params = Vec::with_capacity(3);
        for (column, key) in columns.iter().zip(keys) {
            match key {
                StoredKey::Value(v) => {
                    clauses.push(format!("{column} IS ?"));
                    params.push(v);
                }
                StoredKey::InvalidText(b) => {
                    clauses.push(format!("{column} IS CAST(? AS TEXT)"));
                    params.push(SqlValue::Blob(b));
                }
            }
        }
        (format!("WHERE {}", clauses.join(" AND ")), params)
    }
}

/// A key column's stored value, to look its row's writes up with.
#[derive(Debug, Clone)]
enum StoredKey {
    /// Any value rusqlite can bind as it is.
    Value(SqlValue),
    /// TEXT that is not UTF-8 (bound as a BLOB cast to TEXT: rusqlite's text is a `String`).
    InvalidText(Vec<u8>),
}

impl StoredKey {
    fn of(v: ValueRef<'_>) -> StoredKey {
        StoredKey::Value(match v {
            ValueRef::Null => SqlValue::Null,
            ValueRef::Integer(i) => SqlValue::Integer(i),
            ValueRef::Real(f) => SqlValue::Real(f),
            ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
            ValueRef::Text(b) => match std::str::from_utf8(b) {
                Ok(s) => SqlValue::Text(s.to_owned()),
                Err(_) => return StoredKey::InvalidText(b.to_vec()),
            },
        })
    }
}

/// The writes query's columns; a value longer than `limit` bytes (`0`: no limit) is not
/// selected, its length and rowid are (columns 9 and 10).
fn write_select(schema: &SchemaInfo, limit: u64) -> String {
    let task_path = if schema.has_task_path {
        "task_path"
    } else {
        "'' AS task_path"
    };
    let (value, extra) = match limit {
        0 => ("value".to_owned(), "NULL, NULL".to_owned()),
        n => (
            format!("CASE WHEN length(value) > {n} THEN NULL ELSE value END"),
            format!("CASE WHEN length(value) > {n} THEN length(value) END, rowid"),
        ),
    };
    format!(
        "SELECT thread_id, checkpoint_ns, checkpoint_id, task_id, channel, type, {value}, \
         {task_path}, idx, {extra} FROM writes"
    )
}

/// The kind of an oversized write value, from its first bytes (read through blob I/O, so the
/// value is never loaded).
fn value_kind(conn: &Connection, rowid: i64, tag: &str) -> String {
    let mut head = [0u8; 96];
    let n = match tag {
        "msgpack" => conn
            .blob_open(rusqlite::MAIN_DB, "writes", "value", rowid, true)
            .and_then(|b| b.read_at(&mut head, 0))
            .unwrap_or(0),
        _ => 0,
    };
    flashback_codec::budget::kind_for(tag, &head[..n])
}

/// `(thread_id, checkpoint_ns, checkpoint_id)`.
pub(super) type WriteKey = (String, String, String);

/// A write row not decoded yet (decoding happens on the worker that builds its checkpoint).
pub(super) struct RawWrite {
    task_id: String,
    channel: String,
    type_tag: String,
    data: Option<Vec<u8>>,
    task_path: String,
    idx: i64,
    /// An `idx` that is not an integer: the value is then shown as an error with this note.
    bad_idx: Option<String>,
    /// A value over the decode budget: its size and kind (it was not selected).
    oversized: Option<(u64, String)>,
}

impl RawWrite {
    fn decode(self, cache: &mut DecodeCache) -> PendingWrite {
        let value = match (self.bad_idx, self.oversized) {
            (Some(message), _) => Decoded::Error {
                tag: self.type_tag.clone(),
                message,
                raw: self.data.unwrap_or_default(),
            },
            (None, Some((bytes, kind))) => flashback_codec::budget::too_large(
                &self.type_tag,
                bytes,
                kind,
                flashback_codec::TooLargeReason::Value,
            ),
            (None, None) => in_channel(
                &self.type_tag,
                &self.channel,
                decode_typed_cached(&self.type_tag, self.data.as_deref(), cache),
            ),
        };
        PendingWrite {
            value,
            task_id: self.task_id,
            channel: self.channel,
            type_tag: self.type_tag,
            task_path: self.task_path,
            idx: self.idx,
        }
    }
}

/// Decode a checkpoint's writes and sort them as Python does.
pub(super) fn decode_writes(raw: Vec<RawWrite>, cache: &mut DecodeCache) -> Vec<PendingWrite> {
    let mut writes: Vec<PendingWrite> = raw.into_iter().map(|w| w.decode(cache)).collect();
    sort_writes(&mut writes);
    writes
}

/// The write rows of `where_sql`, by checkpoint. Key columns that are not text are shown
/// escaped (the write then belongs to the checkpoint whose keys escape alike).
pub(super) fn read_writes(
    conn: &Connection,
    schema: &SchemaInfo,
    where_sql: &str,
    params: &[SqlValue],
    limit: u64,
    query_err: &dyn Fn(rusqlite::Error) -> StoreError,
) -> Result<HashMap<WriteKey, Vec<RawWrite>>, StoreError> {
    let sql = format!("{} {where_sql}", write_select(schema, limit));
    let mut stmt = conn.prepare_cached(&sql).map_err(query_err)?;
    let mut rows = stmt
        .query(rusqlite::params_from_iter(params.iter()))
        .map_err(query_err)?;
    let mut out: HashMap<WriteKey, Vec<RawWrite>> = HashMap::new();
    while let Some(r) = rows.next().map_err(query_err)? {
        let get = |i: usize| r.get_ref(i).map_err(query_err);
        let text = |i: usize, column: &str| -> Result<String, StoreError> {
            Ok(key_text(column, get(i)?.into()).unwrap_or_else(|bad| bad.shown))
        };
        let optional = |i: usize, column: &str, default: &str| -> Result<String, StoreError> {
            Ok(match get(i)? {
                ValueRef::Null => default.to_owned(),
                v => key_text(column, v.into()).unwrap_or_else(|bad| bad.shown),
            })
        };
        let (idx, bad_idx) = match get(8)? {
            ValueRef::Integer(i) => (i, None),
            other => {
                let shown = match key_text("idx", RawKey::from(other)) {
                    Ok(text) => format!("{text:?}"),
                    Err(bad) => bad.shown,
                };
                (
                    i64::MAX,
                    Some(format!("this write's idx is {shown}, not an integer")),
                )
            }
        };
        let type_tag = optional(5, "type", "msgpack")?;
        let oversized = match get(9)? {
            ValueRef::Integer(n) => {
                let rowid = get(10)?.as_i64().unwrap_or(0);
                Some((n.max(0) as u64, value_kind(conn, rowid, &type_tag)))
            }
            _ => None,
        };
        let w = RawWrite {
            task_id: text(3, "task_id")?,
            channel: text(4, "channel")?,
            type_tag,
            data: blob_or_text(r, 6).map_err(query_err)?,
            task_path: optional(7, "task_path", "")?,
            idx,
            bad_idx,
            oversized,
        };
        let key = (
            text(0, "thread_id")?,
            text(1, "checkpoint_ns")?,
            text(2, "checkpoint_id")?,
        );
        out.entry(key).or_default().push(w);
    }
    Ok(out)
}

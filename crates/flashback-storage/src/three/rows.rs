//! The three-table store's rows, backend-neutral (`docs/three-table.md`): the namespace hash,
//! a `put` split into its checkpoint row and blob rows (method A whole, method B deltas of
//! the parent's version), and a channel version materialised back from its blob chain.

use super::delta::{self, Kind, MAX_DEPTH};
use super::Blobs;
use crate::model::{Checkpoint, Version};
use crate::saver::checkpoint_document;
use crate::serializer::Serde;
use crate::StoreError;
use flashback_codec::{msgpack, AesKey};
use md5::{Digest, Md5};
use std::collections::HashMap;
use std::sync::Arc;

/// `checkpoint_blobs.type` of a channel with a version and no value.
pub const EMPTY: &str = "empty";

/// `md5(checkpoint_ns)` as 32 lowercase hex digits.
pub fn ns_hash(checkpoint_ns: &str) -> String {
    Md5::digest(checkpoint_ns.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The version text a blob row is keyed by (the text Postgres joins on).
pub fn version_text(v: &Version) -> String {
    v.as_text()
}

/// The version of a value stored without a channel version: it belongs to `checkpoint_id`.
pub fn unversioned(checkpoint_id: &str) -> String {
    format!("~{checkpoint_id}")
}

/// Now, UTC, ISO 8601 with microseconds (`gmt_create` / `gmt_modified` on SQLite).
pub fn now_iso() -> String {
    let d = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = d.as_secs() as i64;
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        d.subsec_micros()
    )
}

/// A stored blob row (what a read fetches).
#[derive(Debug, Clone)]
pub struct StoredBlob {
    /// `type`: the serde tag, or [`EMPTY`].
    pub type_tag: String,
    /// `kind` as stored (text, checked on use).
    pub kind: String,
    /// `base_version` of a delta.
    pub base_version: Option<String>,
    /// `depth`.
    pub depth: i64,
    /// `blob_data`.
    pub data: Option<Vec<u8>>,
}

/// A channel version materialised: the value's serde tag and bytes, and the depth of its row.
#[derive(Debug, Clone)]
pub struct Materialised {
    /// The serde tag (or [`EMPTY`]).
    pub type_tag: String,
    /// The bytes `dumps_typed` produced.
    pub bytes: Arc<Vec<u8>>,
    /// Deltas since the nearest full row.
    pub depth: u32,
}

/// Values already materialised during one read, by `(thread, ns hash, channel, version)`.
pub type Memo = HashMap<(String, String, String, String), Materialised>;

/// Materialise `version` of a channel: `fetch` reads one blob row by version (`None`: no
/// row). Follows `base_version` links at most [`MAX_DEPTH`] + 1 rows, reusing `memo`.
/// `Ok(None)`: no row for `version`; `Err`: a damaged chain, said why.
pub fn materialise(
    key: (&str, &str, &str),
    version: &str,
    memo: &mut Memo,
    fetch: &mut dyn FnMut(&str) -> Result<Option<StoredBlob>, String>,
) -> Result<Option<Materialised>, String> {
    let (thread, hash, channel) = key;
    let memo_key = |v: &str| {
        (
            thread.to_owned(),
            hash.to_owned(),
            channel.to_owned(),
            v.to_owned(),
        )
    };
    if let Some(m) = memo.get(&memo_key(version)) {
        return Ok(Some(m.clone()));
    }
    // Walk back to a full row (or one already materialised).
    let mut chain: Vec<(String, Kind, Vec<u8>)> = Vec::new();
    let mut at = version.to_owned();
    let base = loop {
        if chain.len() > MAX_DEPTH as usize {
            return Err(format!(
                "version {version:?} is more than {MAX_DEPTH} deltas from a full value"
            ));
        }
        if let Some(m) = memo.get(&memo_key(&at)) {
            break m.clone();
        }
        let Some(row) = fetch(&at)? else {
            if chain.is_empty() {
                return Ok(None);
            }
            return Err(format!(
                "the base version {at:?} of a delta has no blob row"
            ));
        };
        let kind = Kind::parse(&row.kind)
            .ok_or_else(|| format!("version {at:?} has an unknown kind {:?}", row.kind))?;
        let data = row.data.unwrap_or_default();
        if kind == Kind::Full {
            break Materialised {
                type_tag: row.type_tag,
                bytes: Arc::new(data),
                depth: 0,
            };
        }
        let Some(base) = row.base_version else {
            return Err(format!("the {} delta {at:?} has no base_version", row.kind));
        };
        chain.push((at, kind, data));
        at = base;
    };
    let mut value = base;
    for (v, kind, data) in chain.into_iter().rev() {
        let v: String = v;
        let bytes = delta::apply(kind, &value.bytes, &data)
            .map_err(|e| format!("version {v:?} does not apply to its base: {e}"))?;
        value = Materialised {
            type_tag: value.type_tag,
            bytes: Arc::new(bytes),
            depth: value.depth + 1,
        };
        memo.insert(memo_key(&v), value.clone());
    }
    memo.insert(memo_key(version), value.clone());
    Ok(Some(value))
}

/// The parent's version of a channel, materialised: `(version, value)`.
pub type BaseOf<'a> = dyn FnMut(&str) -> Result<Option<(String, Materialised)>, StoreError> + 'a;

/// A blob row to store.
#[derive(Debug, Clone, PartialEq)]
pub struct NewBlob {
    /// The channel.
    pub channel: String,
    /// Its version text.
    pub version: String,
    /// The serde tag, or [`EMPTY`].
    pub type_tag: String,
    /// `full` or a delta.
    pub kind: Kind,
    /// The base of a delta.
    pub base_version: Option<String>,
    /// Deltas since the nearest full row.
    pub depth: u32,
    /// `blob_data` (`None` for an empty row).
    pub data: Option<Vec<u8>>,
}

/// The checkpoint document as stored in `checkpoints.checkpoint`: Python's SQLite document
/// with every value of `channel_values` replaced by nil (the keys keep Python's order, which a
/// read gives back); sealed with `key` when there is one.
pub fn document_bytes(
    cp: &Checkpoint,
    key: Option<&AesKey>,
) -> Result<(String, Vec<u8>), StoreError> {
    let mut bare = cp.clone();
    let nil = Arc::new(flashback_codec::Decoded::Null);
    for (_, v) in &mut bare.channel_values {
        *v = Arc::clone(&nil);
    }
    let doc = msgpack::encode(&checkpoint_document(&bare)?);
    Ok(Serde::python(key).seal("msgpack".into(), doc))
}

/// The blob rows a `put` of `cp` stores. `exists(channel, version)`: whether that row is
/// already stored (then it is not written again); `base(channel)`: the parent's version of
/// the channel materialised (method B; `None` when there is none).
pub fn blob_rows(
    cp: &Checkpoint,
    blobs: Blobs,
    key: Option<&AesKey>,
    exists: &mut dyn FnMut(&str, &str) -> Result<bool, StoreError>,
    base: &mut BaseOf<'_>,
) -> Result<Vec<NewBlob>, StoreError> {
    let mut out = Vec::new();
    let serde = Serde::python(key);
    let encode = |channel: &str, v: &flashback_codec::Decoded| serde.dumps_typed(channel, v);
    for (channel, v) in &cp.channel_versions {
        let version = version_text(v);
        if exists(channel, &version)? {
            continue;
        }
        let Some(value) = cp.value(channel) else {
            out.push(NewBlob {
                channel: channel.clone(),
                version,
                type_tag: EMPTY.into(),
                kind: Kind::Full,
                base_version: None,
                depth: 0,
                data: None,
            });
            continue;
        };
        let (tag, bytes) = encode(channel, value)?;
        let mut row = NewBlob {
            channel: channel.clone(),
            version,
            type_tag: tag,
            kind: Kind::Full,
            base_version: None,
            depth: 0,
            data: None,
        };
        if blobs == Blobs::Incremental && row.type_tag == "msgpack" {
            if let Some((base_version, b)) = base(channel)? {
                if b.type_tag == "msgpack" && b.depth < MAX_DEPTH && base_version != row.version {
                    if let Some((kind, d)) = delta::diff(&b.bytes, &bytes) {
                        row.kind = kind;
                        row.base_version = Some(base_version);
                        row.depth = b.depth + 1;
                        row.data = Some(d);
                    }
                }
            }
        }
        if row.data.is_none() {
            row.data = Some(bytes);
        }
        out.push(row);
    }
    // Values whose channel has no version belong to this checkpoint alone.
    for (channel, value) in &cp.channel_values {
        if cp.version(channel).is_some() {
            continue;
        }
        let (tag, bytes) = encode(channel, value)?;
        out.push(NewBlob {
            channel: channel.clone(),
            version: unversioned(&cp.id),
            type_tag: tag,
            kind: Kind::Full,
            base_version: None,
            depth: 0,
            data: Some(bytes),
        });
    }
    Ok(out)
}

/// Each table with its columns after `thread_id`: what `copy_thread` copies under the new
/// thread id (both backends).
pub(crate) const TABLE_COLUMNS: [(&str, &str); 3] = [
    (
        "checkpoints",
        "checkpoint_ns, checkpoint_ns_hash, checkpoint_id, parent_checkpoint_id, type, \
         checkpoint, metadata, gmt_create, gmt_modified",
    ),
    (
        "checkpoint_writes",
        "checkpoint_ns_hash, checkpoint_id, task_id, task_path, idx, channel, type, \
         blob_data, gmt_create",
    ),
    (
        "checkpoint_blobs",
        "checkpoint_ns_hash, channel, version, type, kind, base_version, depth, blob_data, \
         gmt_create",
    ),
];

/// The columns of one `checkpoints` row that maintenance plans with (both backends).
pub(crate) struct PlanColumns {
    pub(crate) ns: String,
    pub(crate) id: String,
    pub(crate) parent: Option<String>,
    pub(crate) tag: Option<String>,
    pub(crate) doc: Option<Vec<u8>>,
    /// The metadata, parsed (`Null` when it does not parse).
    pub(crate) metadata: serde_json::Value,
}

/// One `checkpoints` row as maintenance plans with it: its links, run id, channel versions,
/// the channels with a stored value (`valued`: `(ns hash, channel, version)` of the blob rows
/// that hold one) and its DeltaChannels. `names` learns the namespace of the row's hash.
pub(crate) fn plan_row(
    thread: &str,
    c: PlanColumns,
    key: Option<&AesKey>,
    valued: &std::collections::HashSet<(String, String, String)>,
    names: &mut HashMap<String, String>,
) -> crate::maintenance::plan::CpRow {
    use crate::maintenance::plan::{delta_counters, metadata_fields, CpRow};
    let (root, run_id) = metadata_fields(&c.metadata);
    let cp = match flashback_codec::decode_typed_keyed(
        c.tag.as_deref().unwrap_or("msgpack"),
        c.doc.as_deref(),
        key,
    ) {
        flashback_codec::Decoded::Msgpack(v) => crate::decode::checkpoint_from_msgpack(v).ok(),
        _ => None,
    };
    let hash = ns_hash(&c.ns);
    names.insert(hash.clone(), c.ns.clone());
    let versions: Vec<(String, String)> = cp
        .as_ref()
        .map(|cp| {
            cp.channel_versions
                .iter()
                .map(|(ch, v)| (ch.clone(), version_text(v)))
                .collect()
        })
        .unwrap_or_default();
    let stored = versions
        .iter()
        .filter(|(ch, v)| valued.contains(&(hash.clone(), ch.clone(), v.clone())))
        .map(|(ch, _)| ch.clone())
        .collect();
    CpRow {
        thread: thread.to_owned(),
        ns: c.ns,
        id: c.id,
        parent: c.parent,
        v: cp.as_ref().map(|cp| cp.v),
        root,
        run_id,
        versions,
        stored,
        delta: delta_counters(&c.metadata),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_and_times() {
        assert_eq!(ns_hash(""), "d41d8cd98f00b204e9800998ecf8427e");
        assert_eq!(ns_hash("a"), "0cc175b9c0f1b6a831c399e269772661");
        let t = now_iso();
        assert_eq!(t.len(), "2026-01-01T00:00:00.000000Z".len(), "{t}");
        assert!(t.starts_with("20"), "{t}");
    }

    #[test]
    fn a_chain_is_materialised_and_damage_is_an_error() {
        let full = msgpack::encode(&flashback_codec::Value::Array(vec![
            flashback_codec::Value::Str("hello there, a long enough item".into()),
        ]));
        let grown = msgpack::encode(&flashback_codec::Value::Array(vec![
            flashback_codec::Value::Str("hello there, a long enough item".into()),
            flashback_codec::Value::Str("b".into()),
        ]));
        let (kind, d) = delta::diff(&full, &grown).expect("a delta");
        let rows: HashMap<&str, StoredBlob> = [
            (
                "1",
                StoredBlob {
                    type_tag: "msgpack".into(),
                    kind: "full".into(),
                    base_version: None,
                    depth: 0,
                    data: Some(full.clone()),
                },
            ),
            (
                "2",
                StoredBlob {
                    type_tag: "msgpack".into(),
                    kind: kind.as_str().into(),
                    base_version: Some("1".into()),
                    depth: 1,
                    data: Some(d),
                },
            ),
            (
                "3",
                StoredBlob {
                    type_tag: "msgpack".into(),
                    kind: "append".into(),
                    base_version: Some("9".into()),
                    depth: 1,
                    data: Some(vec![0x90]),
                },
            ),
        ]
        .into_iter()
        .collect();
        let mut fetch = |v: &str| Ok(rows.get(v).cloned());
        let mut memo = Memo::new();
        let m = materialise(("t", "h", "c"), "2", &mut memo, &mut fetch)
            .expect("reads")
            .expect("found");
        assert_eq!(*m.bytes, grown);
        assert_eq!(m.depth, 1);
        assert!(materialise(("t", "h", "c"), "3", &mut memo, &mut fetch).is_err());
        assert!(materialise(("t", "h", "c"), "7", &mut memo, &mut fetch)
            .expect("no error")
            .is_none());
    }
}

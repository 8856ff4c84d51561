//! The channel values of a read (backend-neutral): each `(channel, version)` a read names is
//! materialised and decoded once and shared by every checkpoint naming it.
//!
//! A version built by `append` deltas on a full msgpack list is decoded *structurally*: its
//! list is the base's decoded items followed by the delta's, so reading a whole thread decodes
//! each stored item once instead of every list again at every checkpoint (the O(n²) work a
//! LangGraph history costs). Its size is known from the msgpack headers alone, so the decode
//! budget is charged exactly what decoding the materialised bytes would charge, before
//! anything is decoded (a value over it takes the byte path, which says what it is). Anything else — a `merge` delta, another serde type, an encrypted or
//! damaged value, a chain that does not decode — takes the byte path (`rows::materialise`,
//! then `decode_typed_cached`), which is also what the structural path is checked against:
//! it is used only when both decode, and then it gives the same value.

use super::assemble::{ChannelValues, Row};
use super::delta::{Kind, MAX_DEPTH};
use super::rows::{materialise, Materialised, Memo, StoredBlob, EMPTY};
use crate::model::{Checkpoint, Sealing};
use flashback_codec::cipher::is_encrypted;
use flashback_codec::{decode_typed_cached, msgpack, DecodeCache, Decoded, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// `(thread, ns hash, channel, version)`.
type Key = (String, String, String, String);

/// Reads one blob row of the channel by version (`None`: no row; `Err`: why not).
pub(super) type FetchVersion<'a> = dyn FnMut(&str) -> Result<Option<StoredBlob>, String> + 'a;

/// Reads one blob row by `(channel, version)` (`None`: no row; `Err`: why not).
pub(super) type FetchBlob<'a> = dyn FnMut(&str, &str) -> Result<Option<StoredBlob>, String> + 'a;

/// A value stored without a channel version: `(channel, type, blob_data)` as read.
pub(super) type Unversioned = (Option<String>, Option<String>, Option<Vec<u8>>);

/// A version's serde tag and value (`None`: an `EMPTY` row).
type Tagged = (String, Option<Arc<Decoded>>);

/// A msgpack list known by its headers: `items` items encoded in `payload` bytes.
#[derive(Debug, Clone, Copy)]
struct List {
    items: u64,
    payload: u64,
}

impl List {
    /// The list `bytes` start with, by its header (its items are not checked).
    fn of(bytes: &[u8]) -> Option<List> {
        let (items, header) = match *bytes.first()? {
            m @ 0x90..=0x9f => (u64::from(m & 0x0f), 1),
            0xdc => (
                u64::from(u16::from_be_bytes(bytes.get(1..3)?.try_into().ok()?)),
                3,
            ),
            0xdd => (
                u64::from(u32::from_be_bytes(bytes.get(1..5)?.try_into().ok()?)),
                5,
            ),
            _ => return None,
        };
        Some(List {
            items,
            payload: (bytes.len() as u64).checked_sub(header)?,
        })
    }

    /// This list with `more` appended, as `delta::apply` writes it.
    fn then(self, more: List) -> List {
        List {
            items: self.items + more.items,
            payload: self.payload + more.payload,
        }
    }

    /// Its encoded length (`write_array_header`'s minimal header, then the items).
    fn len(self) -> u64 {
        let header = match self.items {
            0..=15 => 1,
            16..=0xffff => 3,
            _ => 5,
        };
        header + self.payload
    }
}

/// How a version is read.
#[derive(Debug, Clone, Copy)]
enum Plan {
    /// No blob row.
    NoRow,
    /// A channel with a version and no value.
    Empty,
    /// A msgpack value of `len` bytes: a full row, or `list` built by appends on one.
    Msgpack { len: u64, list: Option<List> },
    /// The byte path.
    Bytes,
}

struct Entry {
    plan: Plan,
    /// The row read while planning, until it is decoded.
    row: Option<StoredBlob>,
}

/// What one read has materialised and decoded, by version.
#[derive(Default)]
pub(super) struct ReadMemo {
    /// Versions materialised as bytes (the byte path).
    bytes: Memo,
    plans: HashMap<Key, Entry>,
    /// Versions decoded on the structural path (`None`: it does not apply).
    decoded: HashMap<Key, Option<Arc<Decoded>>>,
    /// The objects decoded so far (no budget: the read's own cache is charged).
    objects: DecodeCache,
}

fn key_of(key: (&str, &str, &str), version: &str) -> Key {
    (
        key.0.to_owned(),
        key.1.to_owned(),
        key.2.to_owned(),
        version.to_owned(),
    )
}

impl ReadMemo {
    /// A memo decoding objects with `key` (encrypted values are decoded on the byte path,
    /// but a plaintext value may hold none).
    pub(super) fn new(key: Option<Arc<flashback_codec::AesKey>>) -> Self {
        ReadMemo {
            objects: DecodeCache::new().with_key(key),
            ..Self::default()
        }
    }

    /// How `version` is read, from its row's kind and headers (and its base's plan).
    fn plan(
        &mut self,
        key: (&str, &str, &str),
        version: &str,
        fetch: &mut FetchVersion<'_>,
        depth: u32,
    ) -> Plan {
        if let Some(e) = self.plans.get(&key_of(key, version)) {
            return e.plan;
        }
        let mut keep = None;
        let plan = match fetch(version) {
            Err(_) => Plan::Bytes,
            Ok(None) => Plan::NoRow,
            Ok(Some(row)) => match (Kind::parse(&row.kind), row.base_version.as_deref()) {
                (Some(Kind::Full), _) if row.type_tag == EMPTY => Plan::Empty,
                (Some(Kind::Full), _) if row.type_tag == "msgpack" => {
                    let data = row.data.as_deref().unwrap_or_default();
                    let (len, list) = (data.len() as u64, List::of(data));
                    keep = Some(row);
                    Plan::Msgpack { len, list }
                }
                (Some(Kind::Append), Some(base)) if depth < MAX_DEPTH => {
                    let base = base.to_owned();
                    let more = row.data.as_deref().and_then(List::of);
                    match (self.plan(key, &base, fetch, depth + 1), more) {
                        (
                            Plan::Msgpack {
                                list: Some(list), ..
                            },
                            Some(more),
                        ) => {
                            let list = list.then(more);
                            keep = Some(row);
                            Plan::Msgpack {
                                len: list.len(),
                                list: Some(list),
                            }
                        }
                        _ => Plan::Bytes,
                    }
                }
                _ => Plan::Bytes,
            },
        };
        let entry = Entry { plan, row: keep };
        self.plans.insert(key_of(key, version), entry);
        plan
    }

    /// `version` decoded on the structural path (its plan is `Msgpack`); `None` when that
    /// path does not apply (the byte path then reads it).
    fn decode(
        &mut self,
        key: (&str, &str, &str),
        version: &str,
        fetch: &mut FetchVersion<'_>,
        depth: u32,
    ) -> Option<Arc<Decoded>> {
        let k = key_of(key, version);
        if let Some(d) = self.decoded.get(&k) {
            return d.clone();
        }
        let row = match self.plans.get_mut(&k).and_then(|e| e.row.take()) {
            Some(row) => Some(row),
            None => fetch(version).ok().flatten(),
        };
        let out = row.and_then(|row| self.decode_row(key, row, fetch, depth));
        self.decoded.insert(k, out.clone());
        out
    }

    fn decode_row(
        &mut self,
        key: (&str, &str, &str),
        row: StoredBlob,
        fetch: &mut FetchVersion<'_>,
        depth: u32,
    ) -> Option<Arc<Decoded>> {
        let data = row.data.unwrap_or_default();
        match (Kind::parse(&row.kind), row.base_version) {
            (Some(Kind::Full), _) if row.type_tag == "msgpack" => {
                // What `decode_typed_cached` gives for these bytes (the budget is charged by
                // the caller).
                Some(Arc::new(
                    match msgpack::decode_with_cache(&data, &mut self.objects) {
                        Ok(v) => Decoded::Msgpack(v),
                        Err(e) => Decoded::Error {
                            tag: row.type_tag,
                            message: e.to_string(),
                            raw: data,
                        },
                    },
                ))
            }
            (Some(Kind::Append), Some(base)) if depth < MAX_DEPTH => {
                let base = self.decode(key, &base, fetch, depth + 1)?;
                let Decoded::Msgpack(Value::Array(items)) = &*base else {
                    return None;
                };
                let Ok(Value::Array(more)) = msgpack::decode_with_cache(&data, &mut self.objects)
                else {
                    return None;
                };
                let mut all = Vec::with_capacity(items.len() + more.len());
                all.extend(items.iter().cloned());
                all.extend(more);
                Some(Arc::new(Decoded::Msgpack(Value::Array(all))))
            }
            _ => None,
        }
    }

    /// The value of `version` for one checkpoint: `Ok(None)` when it has no blob row,
    /// `Err` when its chain is damaged; `(tag, value)` otherwise, decoded within `cache`'s
    /// budget (`EMPTY` rows give the tag and no value).
    fn value(
        &mut self,
        key: (&str, &str, &str),
        version: &str,
        cache: &mut DecodeCache,
        fetch: &mut FetchVersion<'_>,
    ) -> Result<Option<Tagged>, String> {
        match self.plan(key, version, fetch, 0) {
            Plan::NoRow => return Ok(None),
            Plan::Empty => return Ok(Some((EMPTY.into(), None))),
            Plan::Msgpack { len, .. } => {
                // Over the budget, the byte path says what it is (a damaged chain is a
                // problem, not a value too large): `charge` took nothing.
                if cache.charge(len).is_none() {
                    if let Some(v) = self.decode(key, version, fetch, 0) {
                        return Ok(Some(("msgpack".into(), Some(v))));
                    }
                    cache.refund(len);
                } else if let Some(e) = self.plans.get_mut(&key_of(key, version)) {
                    e.row = None; // not kept beside its bytes
                }
            }
            Plan::Bytes => {}
        }
        // The byte path.
        let Some(m) = materialise(key, version, &mut self.bytes, fetch)? else {
            return Ok(None);
        };
        if m.type_tag == EMPTY {
            return Ok(Some((m.type_tag, None)));
        }
        let v = decode_typed_cached(&m.type_tag, Some(&m.bytes), cache);
        Ok(Some((m.type_tag, Some(Arc::new(v)))))
    }
}

/// The channel values a checkpoint's versions name, materialised from the blob rows `fetch`
/// reads by `(channel, version)` (each version once per `memo`), then `extra` (values without
/// a version), with the problems met.
pub(super) fn values_from(
    row: &Row,
    cp: &Checkpoint,
    memo: &mut ReadMemo,
    cache: &mut DecodeCache,
    sealing: &mut Sealing,
    fetch: &mut FetchBlob<'_>,
    extra: Vec<Unversioned>,
) -> (ChannelValues, Vec<String>) {
    let mut out = Vec::with_capacity(cp.channel_versions.len());
    let mut problems = Vec::new();
    let mut put = |channel: &str, tag: &str, v: Arc<Decoded>, out: &mut ChannelValues| {
        if is_encrypted(tag) {
            sealing.encrypted.push(channel.to_owned());
        } else {
            sealing.plaintext.push(channel.to_owned());
        }
        if let Decoded::Encrypted { tag, .. } = &*v {
            sealing.lock(tag);
        }
        out.push((channel.to_owned(), v));
    };
    for (channel, version) in &cp.channel_versions {
        let version = super::rows::version_text(version);
        let key = (row.thread_id.as_str(), row.hash.as_str(), channel.as_str());
        let mut by_version = |v: &str| fetch(channel, v);
        match memo.value(key, &version, cache, &mut by_version) {
            Ok(Some((tag, Some(v)))) => put(channel, &tag, v, &mut out),
            Ok(Some((_, None))) => {}
            Ok(None) => problems.push(format!(
                "channel {channel:?}: no blob row for its version {version:?}"
            )),
            Err(e) => problems.push(format!("channel {channel:?}: {e}")),
        }
    }
    for (channel, tag, data) in extra {
        let Some(channel) = channel else {
            problems.push("a value without a version has no channel name".into());
            continue;
        };
        let m = Materialised {
            type_tag: tag.unwrap_or_else(|| "msgpack".into()),
            bytes: Arc::new(data.unwrap_or_default()),
            depth: 0,
        };
        if m.type_tag == EMPTY {
            continue;
        }
        let v = decode_typed_cached(&m.type_tag, Some(&m.bytes), cache);
        put(&channel, &m.type_tag, Arc::new(v), &mut out);
    }
    (out, problems)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_codec::DecodeBudget;

    fn list(range: std::ops::Range<usize>) -> Vec<u8> {
        let items = range.map(|i| Value::Str(format!("message number {i}").into()));
        msgpack::encode(&Value::Array(items.collect()))
    }

    fn row(kind: &str, base: Option<&str>, data: Vec<u8>) -> StoredBlob {
        StoredBlob {
            type_tag: "msgpack".into(),
            kind: kind.into(),
            base_version: base.map(str::to_owned),
            depth: 0,
            data: Some(data),
        }
    }

    /// The byte path alone: materialise, then decode within `cache`'s budget.
    fn by_bytes(
        rows: &HashMap<&str, StoredBlob>,
        v: &str,
        cache: &mut DecodeCache,
    ) -> Result<Option<Decoded>, String> {
        let mut fetch = |v: &str| Ok(rows.get(v).cloned());
        let m = materialise(("t", "h", "c"), v, &mut Memo::new(), &mut fetch)?;
        Ok(m.map(|m| decode_typed_cached(&m.type_tag, Some(&m.bytes), cache)))
    }

    #[test]
    fn the_structural_path_gives_what_the_byte_path_gives() {
        // 14 items (a fixarray), then 20 (array16), then 24; a delta that does not decode, a
        // missing base, a full value that does not decode and a delta on it, no row.
        let d1 = super::super::delta::diff(&list(0..14), &list(0..20))
            .expect("d1")
            .1;
        let d2 = super::super::delta::diff(&list(0..20), &list(0..24))
            .expect("d2")
            .1;
        let rows: HashMap<&str, StoredBlob> = [
            ("1", row("full", None, list(0..14))),
            ("2", row("append", Some("1"), d1)),
            ("3", row("append", Some("2"), d2)),
            ("4", row("append", Some("3"), vec![0x91, 0xc1])),
            ("5", row("append", Some("9"), vec![0x90])),
            ("6", row("full", None, vec![0x92, 0x01])),
            ("7", row("append", Some("6"), vec![0x91, 0x02])),
        ]
        .into_iter()
        .collect();
        let budgets = [
            DecodeBudget::UNLIMITED,
            DecodeBudget {
                max_value_bytes: 300,
                max_request_bytes: 0,
            },
            DecodeBudget {
                max_value_bytes: 0,
                max_request_bytes: 700,
            },
        ];
        for budget in budgets {
            let (mut a, mut b) = (
                DecodeCache::with_budget(budget),
                DecodeCache::with_budget(budget),
            );
            let mut memo = ReadMemo::default();
            // Newest first, then again (memoised), as a list reads them.
            for v in ["7", "6", "5", "4", "3", "2", "1", "8", "3", "2"] {
                let mut fetch = |v: &str| Ok(rows.get(v).cloned());
                let got = memo
                    .value(("t", "h", "c"), v, &mut a, &mut fetch)
                    .map(|o| o.and_then(|(_, d)| d.map(|d| (*d).clone())));
                let want = by_bytes(&rows, v, &mut b);
                assert_eq!(got, want, "version {v}, {budget:?}");
            }
        }
    }
}

//! Answering reads from a [`Snapshot`]'s checkpoints the way `InMemorySaver` does
//! (`get_tuple`, `list`): the document decoded, its values loaded from the blobs its
//! `channel_versions` name (an `empty` blob is no value), the pending writes in
//! `(task_path, task_id, idx)` order.

use super::load::{Checkpoints, Saved, StoredWrite, Typed};
use super::Snapshot;
use crate::decode::{
    checkpoint_from_msgpack, empty, in_channel, typed_channels, unreadable_document, Decoding,
};
use crate::escape::joined;
use crate::model::*;
use flashback_codec::cipher::is_encrypted;
use flashback_codec::{decode_typed_cached, DecodeCache, Decoded};
use std::sync::Arc;

/// A checkpoint found by a query: its keys and what is stored.
pub(crate) struct Found<'a> {
    pub(crate) thread_id: &'a str,
    pub(crate) ns: &'a str,
    pub(crate) id: &'a str,
    pub(crate) saved: &'a Saved,
}

/// The checkpoints a query names, newest first (by id, then thread and namespace), with
/// Python's `list()` semantics: thread, namespace (`None`: all), id(s), `before`, metadata
/// filter (equality of each key), limit.
pub(crate) fn matching<'a>(data: &'a Checkpoints, q: &ListQuery, dec: &Decoding) -> Vec<Found<'a>> {
    let mut out = Vec::new();
    let threads: Box<dyn Iterator<Item = (&String, _)>> = match &q.thread_id {
        Some(t) => Box::new(data.threads.get_key_value(t).into_iter()),
        None => Box::new(data.threads.iter()),
    };
    for (thread_id, namespaces) in threads {
        for (ns, checkpoints) in namespaces {
            if q.checkpoint_ns.as_ref().is_some_and(|want| want != ns) {
                continue;
            }
            for (id, saved) in checkpoints {
                if q.checkpoint_id.as_ref().is_some_and(|want| want != id)
                    || (!q.checkpoint_ids.is_empty() && !q.checkpoint_ids.contains(id))
                    || q.before.as_ref().is_some_and(|b| id >= b)
                {
                    continue;
                }
                out.push(Found {
                    thread_id,
                    ns,
                    id,
                    saved,
                });
            }
        }
    }
    out.sort_by(|a, b| (b.id, a.thread_id, a.ns).cmp(&(a.id, b.thread_id, b.ns)));
    if !q.filter.is_empty() {
        let mut cache = dec.cache();
        out.retain(|f| {
            let metadata = metadata(f.saved, &mut cache);
            q.filter
                .iter()
                .all(|(k, v)| metadata.get(k).unwrap_or(&serde_json::Value::Null) == v)
        });
    }
    if let Some(limit) = q.limit {
        out.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
    }
    out
}

/// The metadata as JSON (as the server's API shows it); unreadable metadata is an `$error`
/// object.
pub(super) fn metadata(saved: &Saved, cache: &mut DecodeCache) -> serde_json::Value {
    let typed = match &saved.metadata {
        Ok(t) => t,
        Err(e) => return flashback_codec::view::error_view(e, "pickle", &[]),
    };
    match decode_typed_cached(&typed.tag, Some(typed.bytes()), cache) {
        Decoded::Msgpack(v) => flashback_codec::view::view(&v, Default::default()),
        Decoded::Null => serde_json::json!({}),
        other => flashback_codec::view::view_decoded(&other, Default::default())
            .unwrap_or(serde_json::Value::Null),
    }
}

/// The document decoded (its values, if it holds them, too), or why not; `Ok(None)`:
/// encrypted and no key.
pub(super) fn document(
    f: &Found<'_>,
    cache: &mut DecodeCache,
) -> Result<Option<Checkpoint>, String> {
    let typed = f.saved.checkpoint.as_ref().map_err(|e| e.clone())?;
    let cp = match decode_typed_cached(&typed.tag, Some(typed.bytes()), cache) {
        // LangGraph.js's untyped Sends typed as the SQLite reader types them.
        Decoded::Msgpack(v) => checkpoint_from_msgpack(v).map(|cp| typed_channels(&typed.tag, cp)),
        Decoded::Encrypted { .. } => return Ok(None),
        Decoded::Error { message, .. } => Err(message),
        other => Err(format!("it is not a checkpoint document: {other}")),
    };
    let mut cp = cp.map_err(unreadable_document)?;
    if cp.id.is_empty() {
        cp.id = f.id.to_owned();
    }
    Ok(Some(cp))
}

/// The header: keys, parent, timestamp, metadata (values are not read).
pub(crate) fn header(f: &Found<'_>, dec: &Decoding) -> CheckpointHeader {
    let mut cache = dec.cache();
    let (ts, problem) = match document(f, &mut cache) {
        Ok(Some(cp)) => (cp.ts, None),
        Ok(None) => (String::new(), None),
        Err(p) => (String::new(), Some(p)),
    };
    CheckpointHeader {
        thread_id: f.thread_id.to_owned(),
        checkpoint_ns: f.ns.to_owned(),
        checkpoint_id: f.id.to_owned(),
        parent_checkpoint_id: f.saved.parent.clone(),
        ts,
        metadata: metadata(f.saved, &mut cache),
        problem,
    }
}

/// The full tuple, as `get_tuple` returns it.
pub(crate) fn tuple(snap: &Snapshot, f: &Found<'_>, dec: &Decoding) -> CheckpointTuple {
    let mut cache = dec.cache();
    let mut sealing = Sealing::default();
    let mut problems = Vec::new();
    let doc_tag = f.saved.checkpoint.as_ref().map(|t| t.tag.as_str());
    if doc_tag.is_ok_and(is_encrypted) {
        sealing.encrypted.push("checkpoint".into());
    }
    let checkpoint = match document(f, &mut cache) {
        Ok(Some(mut cp)) => {
            // Since 2.0.22 the document holds no values: they are the blobs its versions name.
            if cp.channel_values.is_empty() {
                cp.channel_values = values(snap, f, &cp, &mut cache, dec, &mut sealing);
            } else if let Some(keep) = &dec.only {
                cp.retain_channel_values(keep);
            }
            cp
        }
        Ok(None) => {
            sealing.lock(doc_tag.unwrap_or_default());
            let mut cp = empty();
            cp.id = f.id.to_owned();
            cp
        }
        Err(p) => {
            problems.push(p);
            let mut cp = empty();
            cp.id = f.id.to_owned();
            cp
        }
    };
    if let Some(p) = &snap.values_problem {
        problems.push(p.clone());
    }
    let key = (f.thread_id.to_owned(), f.ns.to_owned(), f.id.to_owned());
    let pending_writes = snap
        .data
        .writes
        .get(&key)
        .map(|w| pending_writes(w, &mut cache))
        .unwrap_or_default();
    CheckpointTuple {
        header: CheckpointHeader {
            ts: checkpoint.ts.clone(),
            problem: joined(problems),
            ..header_keys(f, &mut cache)
        },
        checkpoint,
        pending_writes,
        sealing,
        served: None,
    }
}

fn header_keys(f: &Found<'_>, cache: &mut DecodeCache) -> CheckpointHeader {
    CheckpointHeader {
        thread_id: f.thread_id.to_owned(),
        checkpoint_ns: f.ns.to_owned(),
        checkpoint_id: f.id.to_owned(),
        parent_checkpoint_id: f.saved.parent.clone(),
        ts: String::new(),
        metadata: metadata(f.saved, cache),
        problem: None,
    }
}

/// `_load_blobs`: for each `(channel, version)` of the document, the blob stored under it;
/// an `empty` blob or a missing one is no value.
fn values(
    snap: &Snapshot,
    f: &Found<'_>,
    cp: &Checkpoint,
    cache: &mut DecodeCache,
    dec: &Decoding,
    sealing: &mut Sealing,
) -> Vec<(String, Arc<Decoded>)> {
    let mut out = Vec::new();
    for (channel, version) in &cp.channel_versions {
        if dec.only.as_ref().is_some_and(|keep| !keep(channel)) {
            continue;
        }
        let key = (
            f.thread_id.to_owned(),
            f.ns.to_owned(),
            channel.clone(),
            version.as_text(),
        );
        let Some(blob) = snap.data.blobs.get(&key) else {
            continue;
        };
        if blob.tag == "empty" {
            continue;
        }
        let value = decode(blob, channel, cache);
        if is_encrypted(&blob.tag) {
            sealing.encrypted.push(channel.clone());
        } else {
            sealing.plaintext.push(channel.clone());
        }
        if let Decoded::Encrypted { tag, .. } = &value {
            sealing.lock(tag);
        }
        out.push((channel.clone(), Arc::new(value)));
    }
    out
}

fn decode(t: &Typed, channel: &str, cache: &mut DecodeCache) -> Decoded {
    in_channel(
        &t.tag,
        channel,
        decode_typed_cached(&t.tag, Some(t.bytes()), cache),
    )
}

/// The pending writes, decoded and sorted as Python returns them.
fn pending_writes(stored: &[StoredWrite], cache: &mut DecodeCache) -> Vec<PendingWrite> {
    let mut out: Vec<PendingWrite> = stored
        .iter()
        .map(|w| {
            let (type_tag, value) = match &w.value {
                Ok(t) => (t.tag.clone(), decode(t, &w.channel, cache)),
                Err(e) => (
                    String::new(),
                    Decoded::Error {
                        tag: String::new(),
                        message: e.clone(),
                        raw: Vec::new(),
                    },
                ),
            };
            PendingWrite {
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
                idx: w.idx,
                channel: w.channel.clone(),
                type_tag,
                value,
            }
        })
        .collect();
    sort_writes(&mut out);
    out
}

/// Every pending write of a thread, without values.
pub(crate) fn thread_writes(data: &Checkpoints, thread_id: &str) -> Vec<WriteInfo> {
    let mut out = Vec::new();
    for ((t, ns, id), writes) in &data.writes {
        if t != thread_id {
            continue;
        }
        for w in writes {
            out.push(WriteInfo {
                checkpoint_ns: ns.clone(),
                checkpoint_id: id.clone(),
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
                channel: w.channel.clone(),
            });
        }
    }
    out
}

/// A thread's pending writes whose stored bytes hold `needle`, decoded.
pub(crate) fn thread_writes_mentioning(
    data: &Checkpoints,
    thread_id: &str,
    needle: &str,
    dec: &Decoding,
) -> Vec<(WriteInfo, Decoded)> {
    let mut cache = dec.cache();
    let needle = needle.as_bytes();
    let mut out = Vec::new();
    for ((t, ns, id), writes) in &data.writes {
        if t != thread_id {
            continue;
        }
        for w in writes {
            let Ok(value) = &w.value else { continue };
            let bytes = value.bytes();
            if bytes.len() > crate::MENTION_MAX_BYTES
                || needle.is_empty()
                || !bytes.windows(needle.len()).any(|win| win == needle)
            {
                continue;
            }
            out.push((
                WriteInfo {
                    checkpoint_ns: ns.clone(),
                    checkpoint_id: id.clone(),
                    task_id: w.task_id.clone(),
                    task_path: w.task_path.clone(),
                    channel: w.channel.clone(),
                },
                decode(value, &w.channel, &mut cache),
            ));
        }
    }
    out
}

/// The thread list: every thread with its namespaces (root first), checkpoint count and
/// latest root checkpoint, sorted by thread id.
pub(crate) fn threads(data: &Checkpoints) -> Vec<ThreadInfo> {
    data.threads
        .iter()
        .map(|(thread_id, namespaces)| ThreadInfo {
            thread_id: thread_id.clone(),
            // A BTreeMap's order puts "" first.
            namespaces: namespaces.keys().cloned().collect(),
            checkpoint_count: namespaces.values().map(|c| c.len() as u64).sum(),
            latest_checkpoint_id: namespaces
                .get("")
                .and_then(|c| c.keys().next_back().cloned()),
            problem: None,
        })
        .collect()
}

/// What the newest values say about encryption.
pub(crate) fn encryption_probe(data: &Checkpoints) -> crate::EncryptionProbe {
    let mut probe = crate::EncryptionProbe::default();
    let mut plain = false;
    let typed = data.blobs.values().chain(
        data.writes
            .values()
            .flatten()
            .filter_map(|w| w.value.as_ref().ok()),
    );
    for t in typed {
        if is_encrypted(&t.tag) {
            if !probe.tags.contains(&t.tag) {
                probe.tags.push(t.tag.clone());
            }
            let smaller = probe
                .sample
                .as_ref()
                .is_none_or(|(_, s)| t.bytes().len() < s.len());
            if t.tag.ends_with("+aes") && smaller {
                probe.sample = Some((t.tag.clone(), t.bytes().to_vec()));
            }
        } else if t.tag != "empty" {
            plain = true;
        }
    }
    probe.tags.sort();
    probe.mixed = plain && !probe.tags.is_empty();
    probe
}

//! Assembling the tuples from the parsed rows, the decoded blobs, writes and sends.

use super::rows::{Blobs, Doc, RowKey, Sends, SendsKey, Writes};
use super::TASKS;
use crate::model::*;
use flashback_codec::Decoded;
use std::collections::HashMap;
use std::sync::Arc;

/// Build the tuples from the parsed rows, the decoded blobs, writes and sends.
pub(super) fn assemble(
    keys: Vec<RowKey>,
    docs: Vec<Doc>,
    blobs: &Blobs,
    writes: Writes,
    sends: &HashMap<SendsKey, Sends>,
    shallow: bool,
) -> Vec<CheckpointTuple> {
    let mut out = Vec::with_capacity(keys.len());
    let mut writes = writes.into_iter();
    for (key, doc) in keys.into_iter().zip(docs) {
        let Doc {
            checkpoint: mut cp,
            metadata,
            versions,
            blob_ids,
            problem,
            ..
        } = doc;

        // Overlay the blobs reached through this checkpoint's own channel_versions.
        let mut sealing = Sealing::default();
        for ((channel, _), id) in versions.iter().zip(blob_ids) {
            if let Some(Some((value, encrypted))) = id.and_then(|i| blobs.get(i)) {
                set_value(&mut cp.channel_values, channel, Arc::clone(value));
                match encrypted {
                    true => sealing.encrypted.push(channel.clone()),
                    false => sealing.plaintext.push(channel.clone()),
                }
                if let Decoded::Encrypted { tag, .. } = &**value {
                    sealing.lock(tag);
                }
            }
        }

        // Pre-v4 checkpoints: Sends were not stored in the checkpoint. (An unreadable document
        // gets no values at all.)
        if key.pre_v4 && problem.is_none() {
            if shallow {
                let found = sends.get(&(key.thread_id.clone(), key.ns.clone()));
                cp.pending_sends = Some(found.map(|s| s.items.clone()).unwrap_or_default());
            } else if let Some(parent) = key.parent.as_deref().filter(|p| !p.is_empty()) {
                if let Some(found) = sends.get(&(key.thread_id.clone(), parent.to_owned())) {
                    // channel_versions["__pregel_tasks"] = max(channel_versions.values())
                    let version = cp
                        .channel_versions
                        .iter()
                        .map(|(_, v)| v)
                        .max_by(|a, b| a.py_cmp(b))
                        .cloned()
                        .unwrap_or_else(|| Version::Str(first_version()));
                    set_value(&mut cp.channel_values, TASKS, Arc::clone(&found.as_list));
                    match cp.channel_versions.iter_mut().find(|(c, _)| c == TASKS) {
                        Some((_, v)) => *v = version,
                        None => cp.channel_versions.push((TASKS.to_owned(), version)),
                    }
                }
            }
        }

        // One entry per fetched row, in order (listed rows never share a key: it is the
        // primary key).
        let pending_writes = writes.next().unwrap_or_default();
        out.push(CheckpointTuple {
            header: CheckpointHeader {
                thread_id: key.thread_id,
                checkpoint_ns: key.ns,
                checkpoint_id: key.checkpoint_id,
                parent_checkpoint_id: key.parent.filter(|p| !p.is_empty()),
                ts: cp.ts.clone(),
                metadata,
                problem,
            },
            checkpoint: cp,
            pending_writes,
            sealing,
            served: None,
        });
    }
    out
}

/// Set a channel value in place (keeping its position, as a Python dict update does) or
/// append it.
fn set_value(values: &mut Vec<(String, Arc<Decoded>)>, channel: &str, value: Arc<Decoded>) {
    match values.iter_mut().find(|(c, _)| c == channel) {
        Some((_, v)) => *v = value,
        None => values.push((channel.to_owned(), value)),
    }
}

/// Python's `get_next_version(None, None)` with the random part fixed at 0.0:
/// `f"{1:032}.{0.0:016}"`.
fn first_version() -> String {
    format!("{:032}.{:0>16}", 1, "0.0")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_version_matches_python_format() {
        // f"{1:032}.{0.0:016}"
        assert_eq!(
            first_version(),
            "00000000000000000000000000000001.00000000000000.0"
        );
    }
}

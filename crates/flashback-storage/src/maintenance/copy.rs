//! Cross-database copy: [`copy_thread_between`].

use super::plan::not_empty;
use super::CopyReport;
use crate::model::{CheckpointTuple, ListQuery, PendingWrite};
use crate::saver::{
    check_read, write_idx, CheckpointSaver, PutRequest, WriteBatch, WRITES_IDX_MAP,
};
use crate::sealed::sealed_source;
use crate::{CheckpointStore, StoreError};
use flashback_codec::Decoded;
use std::collections::BTreeMap;

/// `(task_id, task_path, writes)` of one `put_writes` call.
type Batch = (String, String, Vec<(String, Decoded)>);

fn is_special(channel: &str) -> bool {
    WRITES_IDX_MAP.iter().any(|(c, _)| *c == channel)
}

/// The `put_writes` batches that store one checkpoint's writes again with the same `idx`.
///
/// Writes are grouped by `(task_id, task_path)`. A regular write must stand at the position
/// equal to its idx, so the gaps Python's batches left (positions taken by special writes)
/// are filled with one of the task's special writes, which gets its fixed negative idx
/// wherever it stands (a repeat of it is the same row). A gap with no special write to fill it
/// cannot be reproduced: an error, before anything is written.
fn write_batches(checkpoint_id: &str, writes: &[PendingWrite]) -> Result<Vec<Batch>, StoreError> {
    let mut groups: Vec<((&str, &str), Vec<&PendingWrite>)> = Vec::new();
    for w in writes {
        let key = (w.task_id.as_str(), w.task_path.as_str());
        match groups.iter_mut().find(|(k, _)| *k == key) {
            Some((_, g)) => g.push(w),
            None => groups.push((key, vec![w])),
        }
    }
    let unreproducible = |task: &str, what: String| {
        StoreError::InvalidInput(format!(
            "checkpoint {checkpoint_id}, task {task}: {what}; its writes cannot be stored again \
             with the same idx"
        ))
    };
    let mut out = Vec::new();
    for ((task_id, task_path), group) in groups {
        let specials: Vec<&PendingWrite> = group
            .iter()
            .copied()
            .filter(|w| is_special(&w.channel))
            .collect();
        let mut regular: BTreeMap<i64, &PendingWrite> = BTreeMap::new();
        for w in &group {
            if is_special(&w.channel) {
                if w.idx != write_idx(&w.channel, 0) {
                    return Err(unreproducible(
                        task_id,
                        format!("a {} write has idx {}", w.channel, w.idx),
                    ));
                }
            } else if w.idx < 0 || regular.insert(w.idx, w).is_some() {
                return Err(unreproducible(
                    task_id,
                    format!("a regular write has idx {}", w.idx),
                ));
            }
        }
        let len = regular.keys().next_back().map_or(0, |m| *m as usize + 1);
        let mut batch: Vec<(String, Decoded)> = Vec::with_capacity(len + specials.len());
        let mut filled = false;
        for position in 0..len {
            let w = match regular.get(&(position as i64)) {
                Some(w) => *w,
                None => {
                    let Some(first) = specials.first() else {
                        return Err(unreproducible(
                            task_id,
                            format!("nothing stands at idx {position}"),
                        ));
                    };
                    filled = true;
                    first
                }
            };
            batch.push((w.channel.clone(), w.value.clone()));
        }
        for (i, w) in specials.iter().enumerate() {
            if !(filled && i == 0) {
                batch.push((w.channel.clone(), w.value.clone()));
            }
        }
        out.push((task_id.to_owned(), task_path.to_owned(), batch));
    }
    Ok(out)
}

/// Refuse to copy the thread `source` (its `tuples`) when it holds what Flashback could not
/// read: a checkpoint that cannot be read as stored, values left sealed (a cipher Flashback
/// cannot open, or no key) or a value or write that does not decode. A copy writes every value
/// again in the target's format (sealed with the target's key), so it would store what it has
/// not read.
pub fn check_copyable(source: &str, tuples: &[CheckpointTuple]) -> Result<(), StoreError> {
    for t in tuples {
        let id = &t.header.checkpoint_id;
        if let Some(problem) = &t.header.problem {
            return Err(StoreError::InvalidInput(format!(
                "thread {source:?}: checkpoint {id} cannot be read as stored ({problem}); \
                 nothing was copied"
            )));
        }
        if t.sealing.locked {
            let what = format!("thread {source:?}, checkpoint {id}");
            return Err(sealed_source(&what, &t.sealing.locked_ciphers));
        }
        for (channel, v) in &t.checkpoint.channel_values {
            check_read(
                &format!("thread {source:?}, channel {channel:?} of checkpoint {id}"),
                v,
            )?;
        }
        for w in &t.pending_writes {
            let what = format!(
                "thread {source:?}, the write of task {} to {:?} at checkpoint {id}",
                w.task_id, w.channel
            );
            check_read(&what, &w.value)?;
        }
    }
    Ok(())
}

/// Copy the thread `source` of one database to the thread `target` of another (or the same)
/// database, through the public read and write operations: every checkpoint of every
/// namespace is `put` oldest first (with all its channel versions as new versions), then its
/// pending writes are `put_writes` in batches that reproduce their stored `idx`. Ids, parents,
/// metadata, values and writes are unchanged; the rows are written in the target's own format
/// (SQLite ↔ Postgres).
///
/// `target` must hold no checkpoint. Everything is read and checked first, then written with
/// one [`CheckpointSaver::put_batch`]: one transaction on the destination, so a failed write,
/// a killed process or a dropped connection leaves no partial copy behind.
/// Writes stored without a checkpoint row are not copied (the read side never returns them).
pub async fn copy_thread_between(
    from: &dyn CheckpointStore,
    to: &dyn CheckpointSaver,
    source: &str,
    target: &str,
) -> Result<CopyReport, StoreError> {
    let probe = ListQuery {
        limit: Some(1),
        ..ListQuery::thread(target)
    };
    if !to.list_headers(&probe).await?.is_empty() {
        return Err(not_empty(target));
    }
    let tuples = from.list_tuples(&ListQuery::thread(source)).await?;
    // Everything that can be refused is checked before the first write.
    check_copyable(source, &tuples)?;
    let mut batches = Vec::with_capacity(tuples.len());
    for t in &tuples {
        batches.push(write_batches(&t.header.checkpoint_id, &t.pending_writes)?);
    }
    let metadata: Vec<serde_json::Map<String, serde_json::Value>> = tuples
        .iter()
        .map(|t| match &t.header.metadata {
            serde_json::Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        })
        .collect();
    // Newest first as listed: put oldest first, as the run did.
    let puts: Vec<PutRequest<'_>> = tuples
        .iter()
        .zip(&metadata)
        .rev()
        .map(|(t, metadata)| PutRequest {
            thread_id: target,
            checkpoint_ns: &t.header.checkpoint_ns,
            parent_checkpoint_id: t.header.parent_checkpoint_id.as_deref(),
            checkpoint: &t.checkpoint,
            metadata,
            new_versions: &t.checkpoint.channel_versions,
        })
        .collect();
    let mut writes = Vec::new();
    let mut report = CopyReport::default();
    for (t, list) in tuples.iter().zip(&batches).rev() {
        let h = &t.header;
        for (task_id, task_path, batch) in list {
            writes.push(WriteBatch {
                thread_id: target,
                checkpoint_ns: &h.checkpoint_ns,
                checkpoint_id: &h.checkpoint_id,
                task_id,
                task_path,
                writes: batch,
            });
        }
        report.writes += t.pending_writes.len() as u64;
    }
    report.checkpoints = puts.len() as u64;
    to.put_batch(&puts, &writes).await?;
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::saver::write_idx;

    #[test]
    fn batches_reproduce_idx() {
        let w = |task: &str, idx: i64, channel: &str| PendingWrite {
            task_id: task.into(),
            task_path: String::new(),
            idx,
            channel: channel.into(),
            type_tag: "null".into(),
            value: Decoded::Null,
        };
        let writes = vec![
            w("a", -4, "__resume__"),
            w("a", -3, "__interrupt__"),
            w("a", 1, "x"),
            w("a", 3, "y"),
            w("b", 0, "z"),
        ];
        let out = write_batches("c", &writes).unwrap();
        assert_eq!(out.len(), 2);
        for (task, _, batch) in &out {
            for (pos, (channel, _)) in batch.iter().enumerate() {
                let idx = write_idx(channel, pos);
                assert!(writes
                    .iter()
                    .any(|x| &x.task_id == task && x.idx == idx && &x.channel == channel));
            }
        }
        assert!(write_batches("c", &[w("a", 1, "x")]).is_err());
    }
}

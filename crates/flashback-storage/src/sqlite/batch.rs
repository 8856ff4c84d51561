//! Many checkpoints by key in one snapshot (a thread list's latest checkpoints): each key
//! found through the primary key with one prepared statement, the rows then read in file
//! order (so that a cold file is read forwards, not at random), and decoded on the rayon pool
//! while the next rows are read.

use super::ctx::Ctx;
use super::query::{by_id_statement, fetch_row, list_tuples_blocking, tuple_of, writes_of};
use super::rows::{RawWrite, Row};
use crate::model::*;
use crate::StoreError;

/// Checkpoints decoded together on one worker, sharing a decode cache.
const BATCH: usize = 64;

/// One key: thread, namespace and, when known, the checkpoint id (else the namespace's latest).
pub(super) type Key = (String, String, Option<String>);

/// The checkpoints of `keys`, in their order (`None` where there is none).
pub(super) fn get_many(
    cx: Ctx<'_>,
    keys: &[Key],
) -> Result<Vec<Option<CheckpointTuple>>, StoreError> {
    let err = cx.err();
    let mut out: Vec<Option<CheckpointTuple>> = (0..keys.len()).map(|_| None).collect();
    // Where each key's row is: (rowid, index in `keys`).
    let mut found: Vec<(i64, usize)> = Vec::with_capacity(keys.len());
    {
        let mut find = cx
            .conn
            .prepare_cached(
                "SELECT rowid FROM checkpoints \
                 WHERE thread_id = ?1 AND checkpoint_ns = ?2 AND checkpoint_id = ?3",
            )
            .map_err(&err)?;
        for (i, (thread_id, ns, id)) in keys.iter().enumerate() {
            let Some(id) = id else {
                // The namespace's latest: Python's query, newest first.
                let q = ListQuery::one(thread_id, ns, None);
                out[i] = list_tuples_blocking(cx, &q)?.into_iter().next();
                continue;
            };
            let mut rows = find.query((thread_id, ns, id)).map_err(&err)?;
            if let Some(r) = rows.next().map_err(&err)? {
                found.push((r.get(0).map_err(&err)?, i));
            }
        }
    }
    found.sort_unstable();

    let (tx, rx) = std::sync::mpsc::channel();
    rayon::in_place_scope(|scope| -> Result<(), StoreError> {
        let only = cx.dec.only.as_ref();
        let dec = cx.dec;
        let send = |batch: Vec<(usize, Row, Vec<RawWrite>)>| {
            let tx = tx.clone();
            scope.spawn(move |_| {
                let mut cache = dec.cache();
                for (i, row, writes) in batch {
                    let _ = tx.send((i, tuple_of(row, writes, only, &mut cache)));
                }
            });
        };
        let mut by_id = by_id_statement(cx)?;
        let mut unmapped = None;
        let mut batch = Vec::with_capacity(BATCH);
        for &(rowid, i) in &found {
            let Some(row) = fetch_row(cx, &mut by_id, rowid, &mut unmapped)? else {
                continue; // gone between the two statements: cannot happen in one snapshot
            };
            let writes = writes_of(cx, &row)?;
            batch.push((i, row, writes));
            if batch.len() == BATCH {
                send(std::mem::replace(&mut batch, Vec::with_capacity(BATCH)));
            }
        }
        if !batch.is_empty() {
            send(batch);
        }
        Ok(())
    })?;
    drop(tx);
    for (i, tuple) in rx {
        out[i] = Some(tuple);
    }
    Ok(out)
}

//! Put throughput: a thread read from a LangGraph database, written again checkpoint by
//! checkpoint into a fresh database through Flashback's savers (`bench/three_table.sh`,
//! beside Python's `put` + `put_writes` replaying the same tuples).

use flashback_codec::DecodeBudget;
use flashback_storage::three::{Blobs, ThreeTableOptions};
use flashback_storage::{
    CheckpointTuple, Create, Decoded, ListQuery, PutRequest, Read, Version, Versions,
};
use std::collections::BTreeMap;
use std::time::Instant;

/// `flashback-bench put SRC THREAD DST SCHEMA`: read THREAD from SRC, then time writing it
/// into DST (a new SQLite file, or a Postgres URL of an empty database) as SCHEMA
/// (`langgraph`, `three-table-a` or `three-table-b`): oldest first, each checkpoint one `put`
/// (its own transaction, with the versions that changed since its parent as new versions)
/// followed by one `put_writes` per task, as a graph run calls them. Prints one JSON line.
pub async fn run(
    src: &str,
    thread: &str,
    dst: &str,
    schema: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let three = match schema {
        "langgraph" => None,
        "three-table-a" => Some(ThreeTableOptions {
            blobs: Blobs::Whole,
        }),
        "three-table-b" => Some(ThreeTableOptions {
            blobs: Blobs::Incremental,
        }),
        other => return Err(format!("unknown schema {other:?}").into()),
    };
    let source = flashback_storage::open(src, Read::within(DecodeBudget::UNLIMITED)).await?;
    let mut tuples = source.list_tuples(&ListQuery::thread(thread)).await?;
    drop(source);
    tuples.reverse();
    let mut prepared: Vec<Prepared> = tuples.iter().map(prepare).collect::<Result<_, _>>()?;
    link(&tuples, &mut prepared);
    let saver = flashback_storage::open(
        dst,
        Create {
            create: true,
            three,
        },
    )
    .await?;
    let start = Instant::now();
    for (t, p) in tuples.iter().zip(&prepared) {
        let h = &t.header;
        saver
            .put(PutRequest {
                thread_id: &h.thread_id,
                checkpoint_ns: &h.checkpoint_ns,
                parent_checkpoint_id: h.parent_checkpoint_id.as_deref(),
                checkpoint: &t.checkpoint,
                metadata: &p.metadata,
                new_versions: &p.new_versions,
            })
            .await?;
        for ((task_id, task_path), writes) in &p.writes {
            saver
                .put_writes(
                    &h.thread_id,
                    &h.checkpoint_ns,
                    &h.checkpoint_id,
                    task_id,
                    task_path,
                    writes,
                )
                .await?;
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{}",
        serde_json::json!({
            "writer": "flashback",
            "schema": schema,
            "backend": format!("{:?}", saver.schema().backend).to_lowercase(),
            "checkpoints": tuples.len(),
            "seconds": seconds,
            "checkpoints_per_second": tuples.len() as f64 / seconds,
        })
    );
    Ok(())
}

/// `(task_id, task_path)`.
type Task = (String, String);

/// What one checkpoint's `put` and `put_writes` calls take besides the tuple.
struct Prepared {
    metadata: serde_json::Map<String, serde_json::Value>,
    new_versions: Versions,
    /// `(task_id, task_path)` → the task's writes in `idx` order.
    writes: BTreeMap<Task, Vec<(String, Decoded)>>,
}

fn prepare(t: &CheckpointTuple) -> Result<Prepared, String> {
    let metadata = match &t.header.metadata {
        serde_json::Value::Object(m) => m.clone(),
        _ => serde_json::Map::new(),
    };
    let mut by_task: BTreeMap<Task, Vec<(i64, String, Decoded)>> = BTreeMap::new();
    for w in &t.pending_writes {
        by_task
            .entry((w.task_id.clone(), w.task_path.clone()))
            .or_default()
            .push((w.idx, w.channel.clone(), w.value.clone()));
    }
    let mut writes = BTreeMap::new();
    for (task, mut ws) in by_task {
        ws.sort_by_key(|w| w.0);
        // A benchmark thread has regular writes only, at idx 0, 1, …
        if ws.iter().enumerate().any(|(i, w)| w.0 != i as i64) {
            return Err(format!(
                "checkpoint {}: task {} has writes this benchmark does not replay",
                t.header.checkpoint_id, task.0
            ));
        }
        writes.insert(task, ws.into_iter().map(|(_, c, v)| (c, v)).collect());
    }
    Ok(Prepared {
        metadata,
        new_versions: Vec::new(),
        writes,
    })
}

/// The versions of `t` that differ from its parent's (`new_versions` as a run passes them).
fn changed(t: &Versions, parent: Option<&Versions>) -> Versions {
    t.iter()
        .filter(|(c, v)| {
            parent
                .and_then(|p| p.iter().find(|(pc, _)| pc == c))
                .is_none_or(|(_, pv): &(String, Version)| pv != v)
        })
        .cloned()
        .collect()
}

/// Fill in each prepared put's `new_versions` from its parent (oldest first).
fn link(tuples: &[CheckpointTuple], prepared: &mut [Prepared]) {
    let by_id: std::collections::HashMap<&str, &Versions> = tuples
        .iter()
        .map(|t| {
            (
                t.header.checkpoint_id.as_str(),
                &t.checkpoint.channel_versions,
            )
        })
        .collect();
    for (t, p) in tuples.iter().zip(prepared) {
        let parent = t
            .header
            .parent_checkpoint_id
            .as_deref()
            .and_then(|id| by_id.get(id).copied());
        p.new_versions = changed(&t.checkpoint.channel_versions, parent);
    }
}

//! What the three-table store's tests on both backends share: the fixture, copying its
//! checkpoints and writes through a saver, and comparing tuples value by value.

use flashback_storage::three::{Blobs, ThreeTableOptions};
use flashback_storage::{
    CheckpointSaver, CheckpointStore, CheckpointTuple, Decoded, ListQuery, PutRequest, WriteBatch,
};
use std::collections::BTreeMap;
use std::path::PathBuf;

pub fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/langgraph.sqlite")
}

pub fn opts(blobs: Blobs) -> ThreeTableOptions {
    ThreeTableOptions { blobs }
}

/// Every checkpoint of every fixture thread, oldest first, with its writes, put into `saver`
/// one `put_batch` per checkpoint. Returns the number of checkpoints.
pub async fn copy_fixture(source: &dyn CheckpointStore, saver: &dyn CheckpointSaver) -> usize {
    let mut count = 0;
    for thread in source.list_threads().await.expect("threads") {
        let mut tuples = source
            .list_tuples(&ListQuery::thread(&thread.thread_id))
            .await
            .expect("list");
        tuples.reverse();
        for t in &tuples {
            put_tuple(saver, t).await;
            count += 1;
        }
    }
    count
}

/// `(task_id, task_path)`.
pub type Task = (String, String);

pub async fn put_tuple(saver: &dyn CheckpointSaver, t: &CheckpointTuple) {
    let serde_json::Value::Object(metadata) = &t.header.metadata else {
        panic!("metadata is an object")
    };
    // One batch per task: regular writes at their idx positions, special ones after them.
    let mut tasks: BTreeMap<Task, Vec<(i64, String, Decoded)>> = BTreeMap::new();
    for w in &t.pending_writes {
        tasks
            .entry((w.task_id.clone(), w.task_path.clone()))
            .or_default()
            .push((w.idx, w.channel.clone(), w.value.clone()));
    }
    let batches: Vec<(Task, Vec<(String, Decoded)>)> = tasks
        .into_iter()
        .map(|(k, ws)| {
            // Specials fill the positions between regular writes (their idx is fixed).
            let (regular, mut special): (Vec<_>, Vec<_>) = ws.into_iter().partition(|w| w.0 >= 0);
            let len = regular.iter().map(|w| w.0 + 1).max().unwrap_or(0) as usize;
            let mut slots: Vec<Option<(String, Decoded)>> = vec![None; len];
            for (idx, c, v) in regular {
                slots[idx as usize] = Some((c, v));
            }
            special.reverse();
            let mut batch = Vec::new();
            for slot in slots {
                match slot {
                    Some(w) => batch.push(w),
                    None => {
                        let (_, c, v) = special.pop().expect("a special write fills the gap");
                        batch.push((c, v));
                    }
                }
            }
            batch.extend(special.into_iter().rev().map(|(_, c, v)| (c, v)));
            (k, batch)
        })
        .collect();
    let writes: Vec<WriteBatch<'_>> = batches
        .iter()
        .map(|((task_id, task_path), ws)| WriteBatch {
            thread_id: &t.header.thread_id,
            checkpoint_ns: &t.header.checkpoint_ns,
            checkpoint_id: &t.header.checkpoint_id,
            task_id,
            task_path,
            writes: ws,
        })
        .collect();
    let put = PutRequest {
        thread_id: &t.header.thread_id,
        checkpoint_ns: &t.header.checkpoint_ns,
        parent_checkpoint_id: t.header.parent_checkpoint_id.as_deref(),
        checkpoint: &t.checkpoint,
        metadata,
        new_versions: &t.checkpoint.channel_versions,
    };
    saver.put_batch(&[put], &writes).await.expect("put_batch");
}

/// The channel values as `(channel, tag, bytes)` in their order (bytes compare NaN as
/// stored), and the tuple without them.
pub type Values = Vec<(String, String, Vec<u8>)>;
pub fn split(mut t: CheckpointTuple) -> (Values, CheckpointTuple) {
    let values: Values = t
        .checkpoint
        .channel_values
        .drain(..)
        .map(|(c, v)| {
            let (tag, bytes) = flashback_codec::encode_typed(&v);
            (c, tag, bytes)
        })
        .collect();
    for w in &mut t.pending_writes {
        let (tag, bytes) = flashback_codec::encode_typed(&w.value);
        w.value = Decoded::Error {
            tag,
            message: String::new(),
            raw: bytes,
        };
    }
    t.sealing = Default::default();
    (values, t)
}

pub fn assert_same(want: Vec<CheckpointTuple>, got: Vec<CheckpointTuple>, what: &str) {
    assert_eq!(want.len(), got.len(), "{what}: count");
    for (w, g) in want.into_iter().zip(got) {
        let at = format!(
            "{what}: {} {:?} {}",
            w.header.thread_id, w.header.checkpoint_ns, w.header.checkpoint_id
        );
        assert_eq!(g.header.problem, None, "{at}");
        let ((wv, w), (gv, g)) = (split(w), split(g));
        let names = |v: &Values| v.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
        assert_eq!(names(&wv), names(&gv), "{at}: channels");
        for (a, b) in wv.iter().zip(&gv) {
            assert!(a == b, "{at}: channel {} differs", a.0);
        }
        assert_eq!(w.header, g.header, "{at}: header");
        assert_eq!(w.pending_writes, g.pending_writes, "{at}: writes");
        assert_eq!(w.checkpoint, g.checkpoint, "{at}: checkpoint");
    }
}

/// A write's key columns, tag and bytes.
pub type Mention = (String, String, String, String, String, String, Vec<u8>);

/// `thread_writes_mentioning`, sorted, each value as `(tag, bytes)`.
pub async fn mentioning(store: &dyn CheckpointStore, thread: &str, needle: &str) -> Vec<Mention> {
    let mut out: Vec<_> = store
        .thread_writes_mentioning(thread, needle)
        .await
        .expect("mentioning")
        .into_iter()
        .map(|(w, v)| {
            let (tag, bytes) = flashback_codec::encode_typed(&v);
            let (ns, id, task) = (w.checkpoint_ns, w.checkpoint_id, w.task_id);
            (ns, id, task, w.task_path, w.channel, tag, bytes)
        })
        .collect();
    out.sort();
    out
}

/// Everything `three` reads — threads, each thread's tuples, headers, namespaces, write keys,
/// latest tuples and a filtered `list` — equals what `source` (LangGraph's store) reads.
pub async fn assert_reads_equal(
    source: &dyn CheckpointStore,
    three: &dyn CheckpointStore,
    blobs: Blobs,
) {
    assert_eq!(
        source.list_threads().await.expect("threads"),
        three.list_threads().await.expect("threads")
    );
    // The fixture's writes that carry token usage (searched in the stored bytes).
    let mut usage_writes = 0;
    for thread in source.list_threads().await.expect("threads") {
        let t = thread.thread_id.as_str();
        let q = ListQuery::thread(t);
        let what = format!("{blobs:?} list {t}");
        assert_same(
            source.list_tuples(&q).await.expect("list"),
            three.list_tuples(&q).await.expect("list"),
            &what,
        );
        assert_eq!(
            source.list_headers(&q).await.expect("headers"),
            three.list_headers(&q).await.expect("headers"),
            "{what} headers"
        );
        assert_eq!(
            source.thread_namespaces(t).await.expect("ns"),
            three.thread_namespaces(t).await.expect("ns")
        );
        let mut w1 = source.thread_writes(t).await.expect("writes");
        let mut w2 = three.thread_writes(t).await.expect("writes");
        let key = |w: &flashback_storage::WriteInfo| {
            (
                w.checkpoint_ns.clone(),
                w.checkpoint_id.clone(),
                w.task_id.clone(),
                w.channel.clone(),
            )
        };
        w1.sort_by_key(key);
        w2.sort_by_key(key);
        assert_eq!(w1, w2, "{what} thread_writes");
        for needle in ["usage_metadata", "content", "no such text"] {
            let found = mentioning(three, t, needle).await;
            assert_eq!(
                mentioning(source, t, needle).await,
                found,
                "{what} thread_writes_mentioning {needle:?}"
            );
            if needle == "usage_metadata" {
                usage_writes += found.len();
            }
        }
        for ns in source.thread_namespaces(t).await.expect("ns") {
            let a = source.get_tuple(t, &ns, None).await.expect("get");
            let b = three.get_tuple(t, &ns, None).await.expect("get");
            assert_same(
                a.into_iter().collect(),
                b.into_iter().collect(),
                "get_tuple",
            );
        }
        // filter / before / limit as LangGraph's store.
        let all = source.list_headers(&q).await.expect("headers");
        if let Some(mid) = all.get(all.len() / 2) {
            let mut filter = serde_json::Map::new();
            filter.insert("source".into(), "loop".into());
            let q = ListQuery {
                thread_id: Some(t.into()),
                checkpoint_ns: Some(String::new()),
                before: Some(mid.checkpoint_id.clone()),
                limit: Some(3),
                filter,
                ..Default::default()
            };
            assert_same(
                source.list_tuples(&q).await.expect("list"),
                three.list_tuples(&q).await.expect("list"),
                &format!("{what} filtered"),
            );
        }
    }
    assert!(
        usage_writes > 0,
        "the fixture has writes with usage_metadata"
    );
}

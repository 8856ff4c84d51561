//! One value of a checkpoint read alone (`stored_value`: what a page of a list over the decode
//! budget is read from) is the value the full read decodes, for every channel value and every
//! pending write of every checkpoint of the fixtures the real libraries wrote — Python's
//! chats, interrupts, errors, `Send`s, subgraphs, forks, the thread filters', the storage
//! report's, encrypted ones read without their key, LangGraph.js's — on Postgres and SQLite.
//! A value it cannot read alone (held inline, not msgpack, sealed) is `None`, never another's.

use crate::common::library;
use flashback_codec::{decode_typed, Decoded};
use flashback_storage::{CheckpointStore, ListQuery, ValueAt};

/// The same value: equal as text (a value may hold a NaN, which equals nothing), a stored
/// `nil` being Python's `None` either way.
fn same(read: &Decoded, full: &Decoded, what: impl Fn() -> String) {
    if read.is_none() && full.is_none() {
        return;
    }
    assert_eq!(format!("{read:?}"), format!("{full:?}"), "{}", what());
}

/// Every value compared; returns how many were read alone (channels, writes).
async fn compare(store: &dyn CheckpointStore, what: &str) -> (usize, usize) {
    let (mut channels, mut writes) = (0, 0);
    for t in store.list_threads().await.expect("threads") {
        for tuple in store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .expect("tuples")
        {
            let h = &tuple.header;
            let read =
                |at| store.stored_value(&h.thread_id, &h.checkpoint_ns, &h.checkpoint_id, at);
            for (channel, value) in &tuple.checkpoint.channel_values {
                let Some(s) = read(ValueAt::Channel(channel)).await.expect("read") else {
                    continue;
                };
                if s.tag == "json" {
                    continue; // LangGraph.js's JSON: decoded for its channel by the full read.
                }
                same(&decode_typed(&s.tag, Some(&s.bytes)), value, || {
                    format!("{what} {} {channel}", h.checkpoint_id)
                });
                channels += 1;
            }
            for w in &tuple.pending_writes {
                let at = ValueAt::Write {
                    task_id: &w.task_id,
                    idx: w.idx,
                };
                let Some(s) = read(at).await.expect("read") else {
                    continue;
                };
                if s.tag == "json" {
                    continue;
                }
                same(&decode_typed(&s.tag, Some(&s.bytes)), &w.value, || {
                    format!("{what} {} write {}/{}", h.checkpoint_id, w.task_id, w.idx)
                });
                writes += 1;
            }
            // Nothing else is read as it.
            let none = read(ValueAt::Channel("no such channel"))
                .await
                .expect("read");
            assert!(none.is_none(), "{what}");
            let none = read(ValueAt::Write {
                task_id: "no such task",
                idx: 0,
            })
            .await
            .expect("read");
            assert!(none.is_none(), "{what}");
        }
    }
    (channels, writes)
}

#[tokio::test]
async fn stored_values_are_what_full_reads_decode_on_every_postgres_fixture() {
    let Some(stores) = library::each_pg().await else {
        return;
    };
    let (mut channels, mut writes) = (0, 0);
    for (what, store, _pg) in &stores {
        let (c, w) = compare(store, what).await;
        channels += c;
        writes += w;
    }
    assert!(
        channels > 150 && writes > 300,
        "read alone: {channels} channel values, {writes} writes"
    );
}

#[tokio::test]
async fn stored_values_are_what_full_reads_decode_on_every_sqlite_fixture() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (mut channels, mut writes) = (0, 0);
    for (what, store) in library::each_sqlite(dir.path()).await {
        let (c, w) = compare(&store, &what).await;
        channels += c;
        writes += w;
    }
    assert!(
        channels > 300 && writes > 300,
        "read alone: {channels} channel values, {writes} writes"
    );
}

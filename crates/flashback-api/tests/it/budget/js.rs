//! Sizes and the decode budget on LangGraph.js's SQLite saver, which keeps every channel value
//! inside one JSON checkpoint document: a value's size is its stored JSON's; a value over the
//! budget is left out of the document as it is streamed (`behaviours.rs`, run on both layouts).

use crate::common;

use super::behaviours::{over_the_budget, req, Layout, Spliced};
use common::*;
use flashback_api::{CheckpointDetail, Initial};

/// A 2 MB string spliced into the head of `interrupt-waiting` (budget: 1 MB).
const BIG: usize = 2 << 20;

/// LangGraph.js's layout: the big string spliced into the head of `interrupt-waiting`; its
/// stored size is the JSON string's, quotes included.
const JS: Layout = Layout {
    splice: |dir| {
        let path = dir.join("js.sqlite");
        std::fs::copy(fixtures().join("../js-fixtures/langgraphjs.sqlite"), &path).unwrap();
        let id = splice(&path);
        (path, id, BIG as u64 + 2)
    },
    thread: "interrupt-waiting",
    channel: "notes",
    kind: "str",
    also,
};

#[tokio::test]
async fn a_json_document_over_the_budget_loses_only_its_big_value() {
    over_the_budget(&JS).await;
}

fn splice(path: &std::path::Path) -> String {
    let conn = rusqlite::Connection::open(path).unwrap();
    let (id, doc): (String, Vec<u8>) = conn
        .query_row(
            "SELECT checkpoint_id, checkpoint FROM checkpoints WHERE thread_id = 'interrupt-waiting' \
             ORDER BY checkpoint_id DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut doc: serde_json::Value = serde_json::from_slice(&doc).unwrap();
    doc["channel_values"]["notes"] = serde_json::Value::String("n".repeat(BIG));
    doc["channel_versions"]["notes"] = 3.into();
    conn.execute(
        "UPDATE checkpoints SET checkpoint = ? WHERE checkpoint_id = ?",
        rusqlite::params![serde_json::to_vec(&doc).unwrap(), id],
    )
    .unwrap();
    id
}

/// What LangGraph.js's layout shows besides the shared behaviour (`behaviours.rs`).
fn also(_: &Spliced, d: &CheckpointDetail, full: &CheckpointDetail) {
    assert_eq!(d.values["draft"], "Quarterly report v1");
    assert_eq!(d.values["log"], serde_json::json!(["start", "prepared"]));
    // Its interrupt and next task are derived as always.
    assert_eq!(d.tasks.next, ["review"], "{:?}", d.tasks);
    // Opened on purpose: the whole string.
    assert_eq!(full.values["notes"].as_str().map(str::len), Some(BIG));
}

#[tokio::test]
async fn sizes_are_those_of_the_stored_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("js.sqlite");
    std::fs::copy(fixtures().join("../js-fixtures/langgraphjs.sqlite"), &path).unwrap();
    let stored: Vec<u8> = rusqlite::Connection::open(&path)
        .unwrap()
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE thread_id = 'chat-tools' \
             ORDER BY checkpoint_id DESC LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let doc: serde_json::Value = serde_json::from_slice(&stored).unwrap();
    let messages = serde_json::to_vec(&doc["channel_values"]["messages"]).unwrap();
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().unwrap()).await;
    let d = api
        .checkpoint_detail(req(&db, "chat-tools", None, false))
        .await
        .unwrap();
    let info = d.channels.iter().find(|c| c.channel == "messages").unwrap();
    assert_eq!(info.size as usize, messages.len(), "{info:?}");
}

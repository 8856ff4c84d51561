//! The decode budget on Python's layout: a value over it is shown as its size and kind, never
//! decoded (with `behaviours.rs`, run on both layouts), while the thread list and every other
//! thread stay usable; writes never start from a placeholder; the budget is a setting.

use crate::common;

use super::behaviours::{over_the_budget, req, Layout, Spliced};
use common::*;
use flashback_api::{CheckpointDetail, ForkRequest, Initial, SetSettingRequest, ThreadsRequest};
use flashback_testkit::bigvalue;
use serde_json::Value as Json;

/// 3 MB of ints against a 1 MB budget: over it, but quick to build and to decode on purpose.
const ITEMS: u32 = 600_000;

/// Python's layout: the big list spliced into the head of `forked`.
const PYTHON: Layout = Layout {
    splice: |dir| {
        let path = fixture_copy(dir);
        let big = bigvalue::BigValue::Ints(ITEMS);
        let id = bigvalue::splice(&path, "forked", "big", big).unwrap();
        (path, id, big.len())
    },
    thread: "forked",
    channel: "big",
    kind: "list",
    also,
};

#[tokio::test]
async fn a_value_over_the_budget_is_its_size_and_kind_and_opens_on_purpose() {
    over_the_budget(&PYTHON).await;
}

/// What Python's layout shows besides the shared behaviour (`behaviours.rs`).
fn also(s: &Spliced, d: &CheckpointDetail, full: &CheckpointDetail) {
    let big = &d.values["big"];
    assert!(
        big["$message"]
            .as_str()
            .unwrap()
            .starts_with("too large: 3.0 MB"),
        "{big}"
    );
    // The pending write holding the same value: a placeholder too.
    let write = d
        .writes
        .iter()
        .flat_map(|g| &g.writes)
        .find(|w| w.channel == "big")
        .expect("the big write");
    assert_eq!(write.value["$too_large"]["bytes"], s.bytes);
    // Opened on purpose: the whole list.
    let items = full.values["big"].as_array().expect("decoded");
    assert_eq!(items.len(), ITEMS as usize);
    assert_eq!(items[1], Json::from(0x1000_0001u32));
}

#[tokio::test]
async fn the_thread_list_and_other_threads_are_untouched() {
    let s = Spliced::new(&PYTHON).await;
    let (api, db) = (&s.api, &s.db);
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(threads.len() > 5);
    for t in &threads {
        assert_eq!(t.problem, None, "{}", t.thread_id);
    }
    let forked = threads.iter().find(|t| t.thread_id == "forked").unwrap();
    assert!(forked.status.is_some());
    // The history and graph of the thread read as always.
    let g = graph(api, db, "forked").await;
    assert!(g.unreadable.is_empty());
}

#[tokio::test]
async fn a_fork_copies_the_whole_value_not_the_placeholder() {
    let s = Spliced::new(&PYTHON).await;
    let (api, db, id) = (&s.api, &s.db, &s.id);
    let fork = api
        .fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: id.clone(),
            edits: vec![],
        })
        .await
        .unwrap();
    let copied = api
        .checkpoint_detail(s.req(&fork.checkpoint_id, true))
        .await
        .unwrap();
    assert_eq!(
        copied.values["big"].as_array().map(Vec::len),
        Some(ITEMS as usize),
        "the fork holds the value itself"
    );
}

#[tokio::test]
async fn the_budget_is_a_setting() {
    let dir = tempfile::tempdir().unwrap();
    let api = api_in(dir.path(), Initial::None);
    for bad in ["-1", "lots", "1.5"] {
        let e = api
            .set_setting(SetSettingRequest {
                key: "max_value_mb".into(),
                value: Some(bad.into()),
            })
            .await
            .unwrap_err();
        assert_eq!(e.code, flashback_api::ErrorCode::InvalidInput, "{bad}");
    }
    // 0: no limit, every value decoded.
    let path = fixture_copy(dir.path());
    let id = bigvalue::splice(&path, "forked", "big", bigvalue::BigValue::Ints(ITEMS)).unwrap();
    api.set_setting(SetSettingRequest {
        key: "max_value_mb".into(),
        value: Some("0".into()),
    })
    .await
    .unwrap();
    let db = open(&api, path.to_str().unwrap()).await;
    let d = api
        .checkpoint_detail(req(&db, "forked", Some(&id), false))
        .await
        .unwrap();
    assert!(d.values["big"].is_array());
}

//! DeltaChannels through the API: rebuilt by default, the stored view on request, a reducer
//! chosen per request or remembered per database (setting `reducers:<location>`), a bad
//! reducer refused with one line.

use crate::common;

use common::*;
use flashback_api::{CheckpointRequest, ErrorCode, ForkRequest, Initial, SetSettingRequest};
use flashback_codec::{Decoded, Value};
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{Checkpoint, CheckpointSaver, PutRequest, Version};
use serde_json::json;
use std::sync::Arc;

fn id(n: u32) -> String {
    format!("1f000000-0000-6000-8000-{n:012}")
}

fn list(items: &[&str]) -> Value {
    Value::Array(items.iter().map(|s| Value::Str((*s).into())).collect())
}

/// 0 (snapshot [a]) → 1 → 2 (snapshot [c]); the writes `[b]` on 0 and `[c]` on 1: the graph's
/// reducer keeps the last write, which inference (append) contradicts at 2.
async fn thread(path: &str) {
    let saver = SqliteSaver::create(path).await.unwrap();
    let snapshots = [Some(list(&["a"])), None, Some(list(&["c"]))];
    for (n, snap) in snapshots.into_iter().enumerate() {
        let n = n as u32;
        let cp = Checkpoint {
            v: 4,
            id: id(n),
            ts: "2026-01-01T00:00:00+00:00".into(),
            channel_values: snap
                .map(|v| {
                    let d = Decoded::Msgpack(Value::DeltaSnapshot(Box::new(v)));
                    vec![("log".to_owned(), Arc::new(d))]
                })
                .unwrap_or_default(),
            channel_versions: vec![("log".into(), Version::Int(i64::from(n) + 1))],
            versions_seen: Vec::new(),
            updated_channels: None,
            pending_sends: None,
        };
        let metadata =
            json!({"source": "loop", "step": n, "counters_since_delta_snapshot": {"log": [1, 1]}});
        let parent = n.checked_sub(1).map(id);
        saver
            .put(PutRequest {
                thread_id: "t",
                checkpoint_ns: "",
                parent_checkpoint_id: parent.as_deref(),
                checkpoint: &cp,
                metadata: metadata.as_object().unwrap(),
                new_versions: &cp.channel_versions,
            })
            .await
            .unwrap();
        if n < 2 {
            let w = list(&[["b", "c"][n as usize]]);
            let writes = [("log".to_owned(), Decoded::Msgpack(w))];
            saver
                .put_writes("t", "", &id(n), "task", "~p", &writes)
                .await
                .unwrap();
        }
    }
}

fn req(db: &str, raw: bool, reducers: &[(&str, &str)]) -> CheckpointRequest {
    CheckpointRequest {
        live: None,
        page: None,
        db: db.into(),
        thread_id: "t".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: Some(id(1)),
        reveal_secrets: false,
        full: false,
        raw,
        reducers: reducers
            .iter()
            .map(|(c, r)| (c.to_string(), r.to_string()))
            .collect(),
        allow_locked: false,
    }
}

#[tokio::test]
async fn reducers_per_request_and_remembered_per_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("delta.sqlite");
    thread(path.to_str().unwrap()).await;
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().unwrap()).await;

    // Inferred (append): contradicted by the snapshot at 2, so shown as an error.
    let d = api
        .checkpoint_detail(req(&db.db, false, &[]))
        .await
        .unwrap();
    assert!(d.values["log"]["$error"]
        .as_str()
        .unwrap()
        .contains("does not give the snapshot"));
    assert!(d.rebuilt["log"].error.is_some());

    // The stored view: nothing between snapshots.
    let d = api.checkpoint_detail(req(&db.db, true, &[])).await.unwrap();
    assert!(
        d.rebuilt.is_empty() && !d.values.contains_key("log"),
        "{:?}",
        d.values
    );

    // Chosen for this request.
    let d = api
        .checkpoint_detail(req(&db.db, false, &[("log", "last")]))
        .await
        .unwrap();
    assert_eq!(d.values["log"], json!(["b"]));
    assert!(!d.rebuilt["log"].inferred);

    // A bad name: one clear line.
    let e = api
        .checkpoint_detail(req(&db.db, false, &[("log", "sum")]))
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidInput);
    assert!(
        e.message.contains("unknown reducer \"sum\"") && !e.message.contains('\n'),
        "{}",
        e.message
    );

    // A fork would store the value as a snapshot: with the inferred reducer it is refused.
    let fork = |db: &str| ForkRequest {
        as_node: None,
        db: db.into(),
        thread_id: "t".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: id(1),
        edits: Vec::new(),
    };
    let e = api.fork_checkpoint(fork(&db.db)).await.unwrap_err();
    assert!(e.message.contains("cannot be rebuilt"), "{}", e.message);

    // Remembered for the database; a bad remembered value is refused.
    let key = format!("reducers:{}", db.location);
    let bad = api
        .set_setting(SetSettingRequest {
            key: key.clone(),
            value: Some("{\"log\":\"sum\"}".into()),
        })
        .await;
    assert!(bad.is_err());
    api.set_setting(SetSettingRequest {
        key,
        value: Some("{\"log\":\"last\"}".into()),
    })
    .await
    .unwrap();
    let d = api
        .checkpoint_detail(req(&db.db, false, &[]))
        .await
        .unwrap();
    assert_eq!(d.values["log"], json!(["b"]));
    assert_eq!(d.rebuilt["log"].writes, 1);
    assert_eq!(d.rebuilt["log"].from_step, Some(0));

    // The fork uses the remembered reducer too.
    let forked = api.fork_checkpoint(fork(&db.db)).await.unwrap();
    let mut r = req(&db.db, true, &[]);
    r.checkpoint_id = Some(forked.checkpoint_id);
    let d = api.checkpoint_detail(r).await.unwrap();
    assert_eq!(
        d.values["log"]["$value"],
        json!(["b"]),
        "{}",
        d.values["log"]
    );
}

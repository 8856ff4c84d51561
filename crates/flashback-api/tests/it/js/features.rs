//! LangGraph.js databases (issue 16): every feature on the real JS fixtures, on both
//! backends: diff (messages matched by id), merge (`add_messages` by id, written in JS's
//! format), export with redaction, and the storage report.

use crate::common;
use common::js::*;
use common::*;
use flashback_api::*;
use flashback_engine::diff::Change;
use serde_json::{json, Value as Json};
use sqlx::Row;

async fn at_step(api: &Api, db: &DbInfo, t: &str, step: i32) -> String {
    ns_history(api, db, t, "")
        .await
        .into_iter()
        .find(|h| h.step == Some(step))
        .unwrap_or_else(|| panic!("{t} has no step {step}"))
        .checkpoint_id
}

/// Diff, merge and export; returns the merged checkpoint's id.
async fn features(api: &Api, db: &DbInfo) -> String {
    diff_matches_messages_by_id(api, db).await;
    let merged = merge_appends_by_id(api, db).await;
    export_redacts_message_content(api, db).await;
    merged
}

async fn diff_matches_messages_by_id(api: &Api, db: &DbInfo) {
    let a = at_step(api, db, "chat-tools", 0).await;
    let b = at_step(api, db, "chat-tools", 3).await;
    let diff = api
        .diff_checkpoints(DiffRequest {
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            a: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: a,
            },
            b: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: b,
            },
        })
        .await
        .expect("diff");
    let m = diff
        .channels
        .iter()
        .find(|c| c.channel == "messages")
        .expect("messages");
    assert_eq!(m.change, Change::Changed);
    let items = m
        .items
        .as_ref()
        .expect("item by item, not a whole-list change");
    let shown: Vec<(Change, Option<&str>)> =
        items.iter().map(|i| (i.change, i.id.as_deref())).collect();
    assert_eq!(
        shown,
        [
            (Change::Unchanged, Some("human-1")),
            (Change::Added, Some("ai-1")),
            (Change::Added, Some("tool-call_add")),
            (Change::Added, Some("tool-call_mul")),
            (Change::Added, Some("ai-2")),
        ]
    );
    let added = &items[1].b.as_ref().expect("the added message")["$type"];
    assert_eq!(added, "langchain_core.messages.ai.AIMessage");
}

fn human(id: &str, text: &str) -> Json {
    json!({"$type": "langchain_core.messages.human.HumanMessage", "content": text,
           "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": null,
           "id": id})
}

/// Two edit forks of the same checkpoint, merged with append-b: B's new messages are appended
/// to A's, a message A already has (same id) is not appended twice.
async fn merge_appends_by_id(api: &Api, db: &DbInfo) -> String {
    let base = at_step(api, db, "chat-tools", 3).await;
    let d = detail(api, db, "chat-tools", "", &base).await;
    let list = d.values["messages"].as_array().expect("messages").clone();
    let fork = |extra: Vec<Json>| {
        let mut value = list.clone();
        value.extend(extra);
        api.fork_checkpoint(ForkRequest {
            as_node: None,
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: base.clone(),
            edits: vec![ChannelEdit {
                channel: "messages".into(),
                value: Json::Array(value),
            }],
        })
    };
    let shared = human("shared", "On both branches");
    let a = fork(vec![human("a-1", "Branch A"), shared.clone()])
        .await
        .expect("fork A");
    let b = fork(vec![shared, human("b-1", "Branch B")])
        .await
        .expect("fork B");
    let preview = api
        .merge_preview(MergePreviewRequest {
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            checkpoint_ns: String::new(),
            into: a.checkpoint_id.clone(),
            from: b.checkpoint_id.clone(),
            channels: vec!["messages".into()],
        })
        .await
        .expect("preview");
    assert_eq!(preview[0].fork_point.as_deref(), Some(base.as_str()));
    let list_changes = preview[0].list.as_ref().expect("list changes");
    let ids = |v: &[Json]| -> Vec<String> {
        v.iter()
            .map(|m| m["id"].as_str().expect("id").to_owned())
            .collect()
    };
    assert_eq!(ids(&list_changes.added_in_b), ["shared", "b-1"]);
    assert_eq!(ids(&list_changes.added_in_a), ["a-1", "shared"]);
    let merged = api
        .merge_branches(MergeRequest {
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            checkpoint_ns: String::new(),
            into: a.checkpoint_id.clone(),
            from: b.checkpoint_id.clone(),
            channels: vec![MergeChannel {
                channel: "messages".into(),
                mode: MergeMode::AppendB,
            }],
        })
        .await
        .expect("merge");
    let d = detail(api, db, "chat-tools", "", &merged.checkpoint_id).await;
    let got = ids(d.values["messages"].as_array().expect("messages"));
    assert_eq!(got, MERGED);
    assert!(d.problem.is_none());
    let g = graph(api, db, "chat-tools").await;
    assert_eq!(g.rows[0].id, merged.checkpoint_id);
    assert_eq!(g.rows[0].flashback_action.as_deref(), Some("merge"));
    merged.checkpoint_id
}

/// The ids of a list of lc message envelopes (panics on anything else).
fn envelope_ids(v: &Json) -> Vec<String> {
    assert!(!v.to_string().contains("$type"), "{v}");
    v.as_array()
        .expect("a list")
        .iter()
        .map(|m| {
            assert_eq!(
                (&m["lc"], &m["type"]),
                (&json!(1), &json!("constructor")),
                "{m}"
            );
            m["kwargs"]["id"].as_str().expect("an id").to_owned()
        })
        .collect()
}

const MERGED: [&str; 8] = [
    "human-1",
    "ai-1",
    "tool-call_add",
    "tool-call_mul",
    "ai-2",
    "a-1",
    "shared",
    "b-1",
];

async fn export_redacts_message_content(api: &Api, db: &DbInfo) {
    for (redact, secret_gone) in [(vec![], false), (vec!["content".to_owned()], true)] {
        let job = api
            .start_export(ExportRequest {
                db: db.db.clone(),
                thread_id: "chat-tools".into(),
                checkpoint_id: None,
                format: ExportFormat::Json,
                redact,
                path: None,
                decrypt: false,
            })
            .await
            .expect("export");
        let done = finish(api, &job).await;
        assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
        let result: ExportResult =
            serde_json::from_value(done.result.expect("result")).expect("shape");
        assert!(result.checkpoints >= 8, "{}", result.checkpoints);
        let content = result.content.expect("content");
        let report = api
            .verify_export(VerifyRequest {
                path: None,
                content: Some(content.clone()),
            })
            .await
            .expect("verify");
        assert!(report.ok, "{:?}", report.problems);
        assert!(content.contains("langchain_core.messages.ai.AIMessage"));
        for text in ["What is 2 + 3 and 4 * 5?", "You're welcome!"] {
            assert_eq!(!content.contains(text), secret_gone, "{text}");
        }
        assert_eq!(content.contains("[redacted]"), secret_gone);
        // Not a whole-message redaction: the rest of a message stays.
        assert!(content.contains("tool-call_add") && content.contains("call_mul"));
    }
}

#[tokio::test]
async fn features_work_on_the_js_sqlite_database() {
    let JsSqlite {
        dir: _dir,
        path,
        api,
        db,
    } = js_sqlite().await;
    // The report first: the fixture as JS left it.
    let r = space::report(&api, &db.db, None, 100).await;
    assert_eq!(r.layout, "langgraph-sqlite");
    assert_sane(&r, 38, 73);
    let by_channel = |c: &str| r.by_channel.iter().find(|u| u.channel == c).expect(c);
    // The values are inside the documents.
    assert!(by_channel("messages").inline.count > 0 && by_channel("messages").inline.bytes > 0);
    assert_eq!(r.totals.blobs.count, 0);
    let merged = features(&api, &db).await;
    // The merge is written in JS's format.
    let c = rusqlite::Connection::open(&path).expect("open");
    let (tag, doc): (String, String) = c
        .query_row(
            "SELECT type, CAST(checkpoint AS TEXT) FROM checkpoints WHERE checkpoint_id = ?1",
            [&merged],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .expect("the merge's row");
    assert_eq!(tag, "json");
    let doc: Json = serde_json::from_str(&doc).expect("JSON");
    assert_eq!(envelope_ids(&doc["channel_values"]["messages"]), MERGED);
}

#[tokio::test]
async fn features_work_on_the_js_postgres_database() {
    let Some(JsPostgres {
        pg,
        dir: _dir,
        api,
        db,
    }) = js_postgres().await
    else {
        return;
    };
    // The report first: the fixture as JS left it.
    let r = space::report(&api, &db.db, None, 100).await;
    assert_eq!(r.layout, "langgraph-postgres");
    assert_sane(&r, 36, 68);
    assert_eq!(r.totals.blobs.count, 94, "68 json + 26 empty");
    let messages = r
        .by_channel
        .iter()
        .find(|u| u.channel == "messages")
        .expect("messages");
    assert!(messages.blobs.count > 0 && messages.blobs.bytes > 0);
    assert_eq!(messages.inline.count, 0, "JS inlines nothing");
    let merged = features(&api, &db).await;
    // The merge is written in JS's format: a `json` blob at an integer version.
    let pool = pg.pool().await.expect("pool");
    let row = sqlx::query(
        "SELECT b.type, b.blob FROM checkpoints c JOIN checkpoint_blobs b \
           ON b.thread_id = c.thread_id AND b.checkpoint_ns = c.checkpoint_ns \
           AND b.channel = 'messages' AND b.version = c.checkpoint -> 'channel_versions' ->> 'messages' \
         WHERE c.checkpoint_id = $1 AND jsonb_typeof(c.checkpoint -> 'channel_versions' -> 'messages') = 'number' \
           AND NOT c.checkpoint ? 'channel_values'",
    )
    .bind(&merged)
    .fetch_one(&pool)
    .await
    .expect("the merge's messages blob");
    let tag: String = row.get(0);
    let bytes: Vec<u8> = row.get(1);
    assert_eq!(tag, "json");
    let value: Json = serde_json::from_slice(&bytes).expect("UTF-8 JSON");
    assert_eq!(envelope_ids(&value), MERGED);
}

fn assert_sane(r: &StorageReport, checkpoints: u64, writes: u64) {
    assert_eq!(r.thread_count, 6);
    assert_eq!(r.totals.checkpoints.count, checkpoints);
    assert_eq!(r.totals.writes.count, writes);
    assert!(r.totals.checkpoints.bytes > 0 && r.totals.writes.bytes > 0);
    assert!(r.totals.metadata_bytes > 0);
    assert_eq!(
        r.totals.total_bytes,
        r.totals.checkpoints.bytes
            + r.totals.metadata_bytes
            + r.totals.blobs.bytes
            + r.totals.writes.bytes
    );
    assert_eq!(r.by_thread.len(), 6);
    let chat = r
        .by_thread
        .iter()
        .find(|t| t.key == "chat-tools")
        .expect("chat-tools");
    assert_eq!(chat.usage.checkpoints.count, 8);
    assert_eq!(r.unmeasured.count, 0, "{:?}", r.unmeasured);
    assert_eq!(r.orphans.writes.count, 0);
    assert_eq!(r.sends.writes.count, 3, "the three Sends");
}

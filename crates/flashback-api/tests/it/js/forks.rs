//! LangGraph.js databases (issue 16), write side: forks are written in the database's own
//! format (`json` values, lc envelopes, integer versions, `toISOString` timestamps), read back
//! as their source, and a value JS could not read is refused with nothing written.

use crate::common;
use common::js::*;
use common::*;
use flashback_api::*;
use serde_json::{json, Value as Json};
use sqlx::Row;

/// The `step`'th root checkpoint of a thread.
async fn at_step(api: &Api, db: &DbInfo, t: &str, step: i32) -> String {
    ns_history(api, db, t, "")
        .await
        .into_iter()
        .find(|h| h.step == Some(step))
        .unwrap_or_else(|| panic!("{t} has no step {step}"))
        .checkpoint_id
}

async fn fork(api: &Api, db: &DbInfo, t: &str, id: &str, edits: Vec<ChannelEdit>) -> ForkResult {
    api.fork_checkpoint(ForkRequest {
        as_node: None,
        db: db.db.clone(),
        thread_id: t.into(),
        checkpoint_ns: String::new(),
        checkpoint_id: id.into(),
        edits,
    })
    .await
    .expect("fork")
}

/// The state channels of a checkpoint (control channels left out).
fn state(d: &CheckpointDetail) -> serde_json::Map<String, Json> {
    d.values
        .iter()
        .filter(|(c, _)| d.channels.iter().any(|i| &i.channel == *c && !i.control))
        .map(|(c, v)| (c.clone(), v.clone()))
        .collect()
}

/// A message added by an edit, in the JSON view.
fn human(id: &str, text: &str) -> Json {
    json!({"$type": "langchain_core.messages.human.HumanMessage", "content": text,
           "additional_kwargs": {}, "response_metadata": {}, "type": "human", "name": null,
           "id": id})
}

/// The messages of a checkpoint plus `extra`.
async fn messages_plus(api: &Api, db: &DbInfo, id: &str, extra: Json) -> ChannelEdit {
    let d = detail(api, db, "chat-tools", "", id).await;
    let mut list = d.values["messages"].as_array().expect("messages").clone();
    list.push(extra);
    ChannelEdit {
        channel: "messages".into(),
        value: Json::Array(list),
    }
}

/// Every message of a JS value is an lc constructor envelope; nothing is in the JSON view's
/// `$type` form.
fn assert_envelopes(messages: &Json) -> Vec<String> {
    let list = messages.as_array().expect("a list");
    assert!(!list.is_empty());
    for m in list {
        assert_eq!(m["lc"], 1, "{m}");
        assert_eq!(m["type"], "constructor", "{m}");
        assert_eq!(m["id"][0], "langchain_core", "{m}");
        assert_eq!(m["id"][1], "messages", "{m}");
    }
    assert!(!messages.to_string().contains("$type"), "{messages}");
    list.iter()
        .map(|m| m["kwargs"]["id"].as_str().expect("an id").to_owned())
        .collect()
}

fn assert_js_ts(ts: &str) {
    // `Date.toISOString()`: 2026-11-26T14:50:39.328Z
    assert_eq!(ts.len(), 24, "{ts}");
    assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.', "{ts}");
}

fn sqlite_row(path: &std::path::Path, id: &str) -> (String, Json, Json) {
    let c = rusqlite::Connection::open(path).expect("open");
    c.query_row(
        "SELECT type, CAST(checkpoint AS TEXT), CAST(metadata AS TEXT) FROM checkpoints \
         WHERE checkpoint_id = ?1",
        [id],
        |r| {
            let t: String = r.get(0)?;
            let doc: String = r.get(1)?;
            let meta: String = r.get(2)?;
            Ok((t, doc, meta))
        },
    )
    .map(|(t, doc, meta)| {
        (
            t,
            serde_json::from_str(&doc).expect("the document is JSON"),
            serde_json::from_str(&meta).expect("the metadata is JSON"),
        )
    })
    .expect("the fork's row")
}

fn sqlite_counts(path: &std::path::Path) -> (i64, i64) {
    let c = rusqlite::Connection::open(path).expect("open");
    let n = |sql: &str| c.query_row(sql, [], |r| r.get::<_, i64>(0)).expect(sql);
    (
        n("SELECT count(*) FROM checkpoints"),
        n("SELECT count(*) FROM writes"),
    )
}

#[tokio::test]
async fn sqlite_forks_are_written_as_langgraph_js_writes_them() {
    let JsSqlite {
        dir: _dir,
        path,
        api,
        db,
    } = js_sqlite().await;
    let (checkpoints, writes) = sqlite_counts(&path);
    let source = at_step(&api, &db, "chat-tools", 3).await;

    // A copy fork.
    let copy = fork(&api, &db, "chat-tools", &source, vec![]).await;
    assert_eq!(copy.parent_checkpoint_id, source);
    let (tag, doc, meta) = sqlite_row(&path, &copy.checkpoint_id);
    assert_eq!(tag, "json");
    assert_eq!(doc["v"], 4);
    assert_eq!(doc["id"], copy.checkpoint_id.as_str());
    assert_js_ts(doc["ts"].as_str().expect("ts"));
    let versions = doc["channel_versions"].as_object().expect("versions");
    assert!(!versions.is_empty());
    assert!(
        versions.values().all(Json::is_i64),
        "integer versions: {versions:?}"
    );
    for seen in doc["versions_seen"].as_object().expect("seen").values() {
        assert!(seen.as_object().expect("a map").values().all(Json::is_i64));
    }
    let ids = assert_envelopes(&doc["channel_values"]["messages"]);
    assert_eq!(
        ids,
        ["human-1", "ai-1", "tool-call_add", "tool-call_mul", "ai-2"]
    );
    assert_eq!(meta["source"], "fork");
    assert_eq!(meta["step"], 4);
    assert_eq!(meta["parents"], json!({}));
    let (src_tag, src_doc, _) = sqlite_row(&path, &source);
    assert_eq!(src_tag, "json");
    assert_eq!(
        doc["channel_values"]["messages"], src_doc["channel_values"]["messages"],
        "the copy stores the very envelopes JS wrote"
    );
    let a = detail(&api, &db, "chat-tools", "", &source).await;
    let b = detail(&api, &db, "chat-tools", "", &copy.checkpoint_id).await;
    assert_eq!(state(&b), state(&a), "read back as its source");
    assert!(b.problem.is_none());

    // An edit fork: a new message, stored as JS's HumanMessage envelope.
    let edit = messages_plus(
        &api,
        &db,
        &source,
        human("human-edit", "Edited in the test"),
    )
    .await;
    let edited = fork(&api, &db, "chat-tools", &source, vec![edit.clone()]).await;
    let (tag, doc, meta) = sqlite_row(&path, &edited.checkpoint_id);
    assert_eq!(tag, "json");
    assert_eq!(meta["source"], "update");
    let msgs = &doc["channel_values"]["messages"];
    let ids = assert_envelopes(msgs);
    assert_eq!(ids.last().map(String::as_str), Some("human-edit"));
    let last = msgs
        .as_array()
        .expect("list")
        .last()
        .expect("a message")
        .clone();
    assert_eq!(
        last["id"],
        json!(["langchain_core", "messages", "HumanMessage"])
    );
    assert_eq!(last["kwargs"]["content"], "Edited in the test");
    let src_version = src_doc["channel_versions"]["messages"]
        .as_i64()
        .expect("int");
    let new_version = doc["channel_versions"]["messages"].as_i64().expect("int");
    assert!(new_version > src_version, "{new_version} > {src_version}");
    let d = detail(&api, &db, "chat-tools", "", &edited.checkpoint_id).await;
    assert_eq!(d.values["messages"], edit.value, "read back as edited");
    assert_eq!(
        sqlite_counts(&path),
        (checkpoints + 2, writes),
        "two checkpoints, no writes"
    );
}

/// Edits JS's serde has no form for.
fn unreadable_by_js() -> Vec<ChannelEdit> {
    vec![
        ChannelEdit {
            channel: "due".into(),
            value: json!({"$type": "datetime.date", "$args": [2024, 1, 2]}),
        },
        ChannelEdit {
            channel: "log".into(),
            value: json!(["start", {"$type": "numpy.ndarray", "dtype": "<i8", "shape": [2],
                                    "order": "C", "base64": "AQAAAAAAAAACAAAAAAAAAA=="}]),
        },
    ]
}

async fn refuse_unreadable(api: &Api, db: &DbInfo) {
    let source = at_step(api, db, "interrupt-waiting", 1).await;
    for edit in unreadable_by_js() {
        let e = api
            .fork_checkpoint(ForkRequest {
                as_node: None,
                db: db.db.clone(),
                thread_id: "interrupt-waiting".into(),
                checkpoint_ns: String::new(),
                checkpoint_id: source.clone(),
                edits: vec![edit.clone()],
            })
            .await
            .expect_err("JS could not read it");
        assert!(e.message.contains("LangGraph.js"), "{e}");
        assert!(e.message.contains(&edit.channel), "{e}");
        assert!(!e.message.contains('\n'), "one line: {e}");
    }
}

#[tokio::test]
async fn sqlite_values_js_cannot_read_are_refused_and_nothing_is_written() {
    let JsSqlite {
        dir: _dir,
        path,
        api,
        db,
    } = js_sqlite().await;
    let before = fingerprint(&path);
    refuse_unreadable(&api, &db).await;
    assert_eq!(fingerprint(&path), before, "nothing was written");
    assert_eq!(
        ns_history(&api, &db, "interrupt-waiting", "").await.len(),
        3
    );
}

#[tokio::test]
async fn python_databases_keep_getting_msgpack() {
    let OpenedFixture {
        dir: _dir,
        path,
        api,
        db,
    } = opened_fixture().await;
    let head = graph(&api, &db, "chat-tools").await.rows[0].id.clone();
    let copy = fork(&api, &db, "chat-tools", &head, vec![]).await;
    let c = rusqlite::Connection::open(&path).expect("open");
    let tag: String = c
        .query_row(
            "SELECT type FROM checkpoints WHERE checkpoint_id = ?1",
            [&copy.checkpoint_id],
            |r| r.get(0),
        )
        .expect("the fork's row");
    assert_eq!(tag, "msgpack");
}

async fn pg_counts(pool: &sqlx::PgPool) -> (i64, i64, i64) {
    let n = |sql: &'static str| async move {
        sqlx::query(sql)
            .fetch_one(pool)
            .await
            .expect(sql)
            .get::<i64, _>(0)
    };
    (
        n("SELECT count(*) FROM checkpoints").await,
        n("SELECT count(*) FROM checkpoint_blobs").await,
        n("SELECT count(*) FROM checkpoint_writes").await,
    )
}

#[tokio::test]
async fn postgres_forks_are_written_as_langgraph_js_writes_them() {
    let Some(JsPostgres {
        pg,
        dir: _dir,
        api,
        db,
    }) = js_postgres().await
    else {
        return;
    };
    let pool = pg.pool().await.expect("pool");
    let before = pg_counts(&pool).await;
    refuse_unreadable(&api, &db).await;
    assert_eq!(pg_counts(&pool).await, before, "nothing was written");

    let source = at_step(&api, &db, "chat-tools", 3).await;
    let copy = fork(&api, &db, "chat-tools", &source, vec![]).await;
    let edit = messages_plus(
        &api,
        &db,
        &source,
        human("human-edit", "Edited in the test"),
    )
    .await;
    let edited = fork(&api, &db, "chat-tools", &source, vec![edit.clone()]).await;
    for id in [&copy.checkpoint_id, &edited.checkpoint_id] {
        let row = sqlx::query(
            "SELECT checkpoint, metadata FROM checkpoints WHERE thread_id = 'chat-tools' \
             AND checkpoint_ns = '' AND checkpoint_id = $1",
        )
        .bind(id)
        .fetch_one(&pool)
        .await
        .expect("the fork's row");
        let doc: Json = row.get(0);
        let meta: Json = row.get(1);
        assert!(doc.get("channel_values").is_none(), "{doc}");
        assert_eq!(doc["v"], 4);
        assert_js_ts(doc["ts"].as_str().expect("ts"));
        let versions = doc["channel_versions"].as_object().expect("versions");
        assert!(versions.values().all(Json::is_i64), "{versions:?}");
        assert_eq!(meta["parents"], json!({}));
        // Every version the document names has its blob row, `json` (or `empty`).
        for (channel, v) in versions {
            let blob = sqlx::query(
                "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = 'chat-tools' \
                 AND checkpoint_ns = '' AND channel = $1 AND version = $2",
            )
            .bind(channel)
            .bind(v.to_string())
            .fetch_one(&pool)
            .await
            .unwrap_or_else(|e| panic!("{channel}@{v}: {e}"));
            let tag: String = blob.get(0);
            assert!(tag == "json" || tag == "empty", "{channel}@{v}: {tag}");
        }
    }
    let doc: Json = sqlx::query(
        "SELECT checkpoint FROM checkpoints WHERE thread_id = 'chat-tools' AND checkpoint_id = $1",
    )
    .bind(&edited.checkpoint_id)
    .fetch_one(&pool)
    .await
    .expect("row")
    .get(0);
    let version = doc["channel_versions"]["messages"].as_i64().expect("int");
    let max: String = sqlx::query(
        "SELECT max(version::int)::text FROM checkpoint_blobs WHERE thread_id = 'chat-tools' \
         AND checkpoint_ns = '' AND channel = 'messages' AND version <> $1",
    )
    .bind(version.to_string())
    .fetch_one(&pool)
    .await
    .expect("max")
    .get(0);
    assert!(
        version > max.parse::<i64>().expect("int"),
        "the new version is above every stored one (JS's collision bug): {version} vs {max}"
    );
    let row = sqlx::query(
        "SELECT type, blob FROM checkpoint_blobs WHERE thread_id = 'chat-tools' \
         AND checkpoint_ns = '' AND channel = 'messages' AND version = $1",
    )
    .bind(version.to_string())
    .fetch_one(&pool)
    .await
    .expect("the new messages blob");
    let tag: String = row.get(0);
    let bytes: Vec<u8> = row.get(1);
    assert_eq!(tag, "json");
    let value: Json = serde_json::from_slice(&bytes).expect("UTF-8 JSON");
    let ids = assert_envelopes(&value);
    assert_eq!(ids.last().map(String::as_str), Some("human-edit"));

    let a = detail(&api, &db, "chat-tools", "", &source).await;
    let b = detail(&api, &db, "chat-tools", "", &copy.checkpoint_id).await;
    assert_eq!(state(&b), state(&a), "the copy reads back as its source");
    let d = detail(&api, &db, "chat-tools", "", &edited.checkpoint_id).await;
    assert_eq!(d.values["messages"], edit.value, "read back as edited");
    let after = pg_counts(&pool).await;
    assert_eq!((after.0, after.2), (before.0 + 2, before.2));
    assert!(after.1 > before.1, "the edit's blob");
}

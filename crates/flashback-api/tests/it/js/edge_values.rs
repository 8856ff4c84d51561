//! What LangGraph.js reads and Rust's types cannot hold (issue 28), in a database the real JS
//! saver wrote (`tests/js-fixtures/edge.mjs`): a string cut inside an emoji (a lone surrogate),
//! a value nested 200 levels, integers beyond 64 bits and a number beyond float64. Every
//! checkpoint shows what JS's `getStateHistory` returned (`expected-edge.json`), a fork writes
//! each of them back exactly as stored, and a write into Python's msgpack is refused.

use crate::common;

use common::js::js_fixtures;
use common::*;
use flashback_api::*;
use serde_json::Value as Json;

/// `expected-edge.json`, read with the codec's JSON reader: serde_json's stops at 128 levels,
/// and the file holds the 200-level value (plain JSON otherwise: no lone surrogate, no number
/// beyond float64 — `edge.mjs` wrote those as `lone_surrogate` / `json_cannot` objects).
fn expected() -> Json {
    let text = std::fs::read(js_fixtures().join("expected-edge.json")).expect("read");
    let v = flashback_codec::jsvalue::revive_text(&text).expect("expected JSON");
    flashback_codec::view(&v, flashback_codec::ViewOptions::default())
}

/// A private copy of `langgraphjs-edge.sqlite`, opened.
async fn edge(dir: &std::path::Path) -> (Api, DbInfo, std::path::PathBuf) {
    let path = dir.join("edge.sqlite");
    std::fs::copy(js_fixtures().join("langgraphjs-edge.sqlite"), &path).expect("copy");
    let api = api_in(dir, Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    (api, db, path)
}

/// Whether Flashback's view `fb` shows the value JS read (`js`, as `edge.mjs` wrote it): a
/// lone surrogate shown as U+FFFD (`{"lone_surrogate": …}`), a number kept as its text whose
/// value is the number JS read (`{"json_cannot": "Infinity"}` for one beyond float64).
fn shows(fb: &Json, js: &Json) -> bool {
    let number_text = |fb: &Json| -> Option<f64> {
        (fb.get("$type")? == "json.number").then_some(())?;
        fb.get("$value")?.as_str()?.parse().ok()
    };
    match (fb, js) {
        (Json::String(s), Json::Object(m)) if m.contains_key("lone_surrogate") => {
            m["lone_surrogate"] == *s
        }
        (fb, Json::Object(m)) if m.contains_key("json_cannot") => {
            let want = m["json_cannot"]
                .as_str()
                .and_then(|t| t.parse::<f64>().ok());
            want.is_some() && number_text(fb) == want
        }
        (Json::Number(a), Json::Number(b)) => a.as_f64() == b.as_f64(),
        (fb, Json::Number(b)) => number_text(fb) == b.as_f64(),
        (Json::Array(a), Json::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| shows(x, y))
        }
        (Json::Object(a), Json::Object(b)) => {
            b.iter().all(|(k, v)| a.get(k).is_some_and(|x| shows(x, v)))
        }
        (a, b) => a == b,
    }
}

#[tokio::test]
async fn every_checkpoint_shows_what_js_read() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (api, db, _) = edge(dir.path()).await;
    let history = expected()["history"].as_array().expect("history").clone();
    assert_eq!(history.len(), 4);
    for entry in &history {
        let id = entry["checkpoint_id"].as_str().expect("id");
        let d = detail(&api, &db, "edge", "", id).await;
        assert!(d.problem.is_none(), "{id}: {:?}", d.problem);
        let fb = serde_json::to_value(&d.values).expect("values");
        for (k, v) in entry["values"].as_object().expect("values") {
            assert!(shows(&fb[k], v), "{id} {k}:\n{}\nvs\n{v}", fb[k]);
        }
    }
    let head = detail(
        &api,
        &db,
        "edge",
        "",
        history[0]["checkpoint_id"].as_str().unwrap(),
    )
    .await;
    let values = serde_json::to_value(&head.values).expect("values");
    assert_eq!(values["said"], "great job \u{fffd}");
    assert_eq!(
        values["exact"],
        serde_json::json!({"$type": "json.number", "$value": "123456789012345678901234567890"})
    );
    let mut deep = &values["deep"];
    let mut levels = 0;
    while let Json::Array(items) = deep {
        levels += 1;
        deep = &items[0];
    }
    assert_eq!((levels, deep.as_str()), (200, Some("core")));
}

/// A channel's value as stored in the checkpoint document of `id` (its exact JSON text).
fn stored(path: &std::path::Path, id: &str) -> String {
    let c = rusqlite::Connection::open(path).expect("open");
    let doc: Vec<u8> = c
        .query_row(
            "SELECT checkpoint FROM checkpoints WHERE checkpoint_id = ?",
            [id],
            |r| r.get(0),
        )
        .expect("row");
    String::from_utf8(doc).expect("utf-8")
}

/// The text of `channel` in a compact document (up to the next top-level channel).
fn channel_text<'a>(doc: &'a str, channel: &str, next: &str) -> &'a str {
    let start = doc.find(&format!("\"{channel}\":")).expect("channel");
    let end = doc[start..]
        .find(&format!(",\"{next}\":"))
        .expect("next channel")
        + start;
    &doc[start..end]
}

#[tokio::test]
async fn forks_write_every_value_back_as_stored_and_msgpack_refuses_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let (api, db, path) = edge(dir.path()).await;
    let head = expected()["history"][0]["checkpoint_id"]
        .as_str()
        .expect("id")
        .to_owned();
    let source = stored(&path, &head);
    for edits in [
        vec![],
        vec![ChannelEdit {
            channel: "log".into(),
            value: serde_json::json!(["edited"]),
        }],
    ] {
        let fork = api
            .fork_checkpoint(ForkRequest {
                as_node: None,
                db: db.db.clone(),
                thread_id: "edge".into(),
                checkpoint_ns: String::new(),
                checkpoint_id: head.clone(),
                edits,
            })
            .await
            .expect("fork");
        let written = stored(&path, &fork.checkpoint_id);
        for (channel, next) in [
            ("said", "deep"),
            ("deep", "big"),
            ("big", "huge"),
            ("huge", "exact"),
            ("exact", "log"),
        ] {
            assert_eq!(
                channel_text(&written, channel, next),
                channel_text(&source, channel, next),
                "{channel}"
            );
        }
        assert!(
            written.contains(r#""said":"great job \ud83d""#),
            "{written}"
        );
        assert!(written.contains(r#""huge":1e400,"exact":123456789012345678901234567890"#));
    }

    // Python's msgpack has no form for them: a copy into a LangGraph (Python) database is
    // refused, naming the value, and nothing is written there.
    let target = fixture_copy(dir.path());
    let before = fingerprint(&target);
    let python = open(&api, target.to_str().expect("utf-8")).await;
    let e = api
        .copy_thread(CopyRequest {
            db: db.db.clone(),
            thread_id: "edge".into(),
            target_thread_id: "edge".into(),
            to_db: Some(python.db.clone()),
        })
        .await
        .expect_err("refused");
    assert!(
        e.message.contains("a string with a lone surrogate") && e.message.contains("said"),
        "{e}"
    );
    assert!(!e.message.contains('\n'), "{e}");
    assert_eq!(fingerprint(&target), before);
}

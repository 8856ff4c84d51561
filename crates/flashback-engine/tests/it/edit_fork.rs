//! Edit forks on a copy of the committed fixture (`tests/fixtures/langgraph.sqlite`).

use flashback_codec::{msgpack, view, Decoded, ObjectForm, Value, ViewOptions};
use flashback_engine::edit::edit_fork;
use flashback_engine::EngineError;
use flashback_storage::sqlite::SqliteSaver;
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery, Version};
use serde_json::{json, Value as Json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);
const THREAD: &str = "chat-tools";
const AI: &str = "langchain_core.messages.ai.AIMessage";

fn temp_copy() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("langgraph.sqlite");
    std::fs::copy(FIXTURE, &path).unwrap();
    (dir, path.to_str().unwrap().to_owned())
}

async fn head(saver: &SqliteSaver) -> CheckpointTuple {
    saver
        .get_tuple(THREAD, "", None)
        .await
        .unwrap()
        .expect("thread head")
}

async fn row_count(saver: &SqliteSaver) -> usize {
    saver
        .list_headers(&ListQuery::thread(THREAD))
        .await
        .unwrap()
        .len()
}

fn messages(t: &CheckpointTuple) -> Vec<Value> {
    match t.checkpoint.value("messages").map(|v| v.as_ref()) {
        Some(Decoded::Msgpack(Value::Array(items))) => items.clone(),
        other => panic!("messages: {other:?}"),
    }
}

/// The messages channel's JSON view with the content of the last AIMessage replaced.
fn edited_messages(t: &CheckpointTuple, content: &str) -> (Json, usize) {
    let mut shown = view(
        t.checkpoint.value("messages").unwrap().as_value().unwrap(),
        ViewOptions::default(),
    );
    let items = shown.as_array_mut().unwrap();
    let last_ai = items
        .iter()
        .rposition(|m| m["$type"] == AI)
        .expect("an AIMessage");
    items[last_ai]["content"] = json!(content);
    (shown, last_ai)
}

#[tokio::test]
async fn edit_fork_replaces_a_message_and_bumps_only_its_version() {
    let (_dir, path) = temp_copy();
    let saver = SqliteSaver::open(&path).await.unwrap();
    let source = head(&saver).await;
    let source_id = source.header.checkpoint_id.clone();
    let source_step = source.header.metadata["step"].as_i64().unwrap();
    let (edited, last_ai) = edited_messages(&source, "Edited by Flashback");

    let result = edit_fork(
        &saver,
        THREAD,
        "",
        &source_id,
        &[("messages".into(), edited)],
        &Default::default(),
    )
    .await
    .unwrap();
    assert_eq!(result.parent_checkpoint_id, source_id);
    assert_eq!(result.step, source_step + 1);
    assert!(result.checkpoint_id > source_id, "newest id");

    let fork = head(&saver).await;
    assert_eq!(
        fork.header.checkpoint_id, result.checkpoint_id,
        "the fork is the head"
    );
    assert_eq!(
        fork.header.parent_checkpoint_id.as_deref(),
        Some(source_id.as_str())
    );
    assert_eq!(
        fork.header.metadata,
        json!({
            "source": "update",
            "step": source_step + 1,
            "parents": {},
            "flashback": {"action": "edit_fork", "forked_from": source_id, "edited": ["messages"]},
        })
    );
    assert!(fork.pending_writes.is_empty());
    assert_eq!(fork.checkpoint.updated_channels, None);
    assert_eq!(
        fork.checkpoint.versions_seen,
        source.checkpoint.versions_seen
    );

    // The message is still an AIMessage (ext 5, same extra) with only its content changed.
    let before = messages(&source);
    let after = messages(&fork);
    assert_eq!(before.len(), after.len());
    for (i, (b, a)) in before.iter().zip(&after).enumerate() {
        if i != last_ai {
            assert_eq!(
                msgpack::encode(a),
                msgpack::encode(b),
                "message {i} unchanged"
            );
            continue;
        }
        let (Value::Object(b), Value::Object(a)) = (b, a) else {
            panic!("message {i} is an object: {a:?}");
        };
        assert_eq!(a.form, ObjectForm::PydanticV2);
        assert_eq!(a.type_name(), AI);
        assert_eq!(a.extra, b.extra);
        assert_eq!(a.extra, Some(Value::Str("model_validate_json".into())));
        let (Value::Map(bf), Value::Map(af)) = (&b.payload, &a.payload) else {
            panic!("fields");
        };
        assert_eq!(
            af.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            bf.iter().map(|(k, _)| k).collect::<Vec<_>>(),
            "same fields, same order"
        );
        for ((k, bv), (_, av)) in bf.iter().zip(af) {
            if k.as_str() == Some("content") {
                assert_eq!(av, &Value::Str("Edited by Flashback".into()));
            } else {
                assert_eq!(
                    msgpack::encode(av),
                    msgpack::encode(bv),
                    "field {k:?} unchanged"
                );
            }
        }
    }

    // Every other channel value is unchanged; one new version, for the edited channel only.
    let max = source
        .checkpoint
        .channel_versions
        .iter()
        .map(|(_, v)| v.counter().unwrap())
        .max()
        .unwrap();
    assert_eq!(
        fork.checkpoint
            .channel_versions
            .iter()
            .map(|(c, _)| c)
            .collect::<Vec<_>>(),
        source
            .checkpoint
            .channel_versions
            .iter()
            .map(|(c, _)| c)
            .collect::<Vec<_>>(),
    );
    for (channel, v) in &fork.checkpoint.channel_versions {
        let old = source.checkpoint.version(channel).unwrap();
        if channel == "messages" {
            let Version::Str(s) = v else {
                panic!("string version")
            };
            assert_eq!(v.counter(), Some(max + 1), "{s}");
            assert_eq!(&s[..33], format!("{:032}.", max + 1));
        } else {
            assert_eq!(v, old, "{channel} version unchanged");
        }
    }
    for (channel, v) in &source.checkpoint.channel_values {
        if channel != "messages" {
            assert_eq!(
                fork.checkpoint.value(channel),
                Some(v),
                "{channel} value unchanged"
            );
        }
    }
}

#[tokio::test]
async fn edit_fork_can_add_a_channel_and_edit_an_older_checkpoint() {
    let (_dir, path) = temp_copy();
    let saver = SqliteSaver::open(&path).await.unwrap();
    let headers = saver
        .list_headers(&ListQuery::thread(THREAD))
        .await
        .unwrap();
    let oldest_loop = headers
        .iter()
        .filter(|h| h.metadata["source"] == "loop")
        .min_by(|a, b| a.checkpoint_id.cmp(&b.checkpoint_id))
        .unwrap();
    let result = edit_fork(
        &saver,
        THREAD,
        "",
        &oldest_loop.checkpoint_id,
        &[("flashback_note".into(), json!({"n": 1.0, "tags": ["a"]}))],
        &Default::default(),
    )
    .await
    .unwrap();
    let fork = saver
        .get_tuple(THREAD, "", Some(&result.checkpoint_id))
        .await
        .unwrap()
        .unwrap();
    let value = fork.checkpoint.value("flashback_note").unwrap();
    assert_eq!(
        view(value.as_value().unwrap(), ViewOptions::default()),
        json!({"n": 1.0, "tags": ["a"]})
    );
    assert!(fork.checkpoint.version("flashback_note").is_some());
}

#[tokio::test]
async fn a_bad_value_or_unknown_checkpoint_writes_nothing() {
    let (_dir, path) = temp_copy();
    let saver = SqliteSaver::open(&path).await.unwrap();
    let source = head(&saver).await;
    let id = source.header.checkpoint_id.clone();
    let rows = row_count(&saver).await;

    // A nested value that does not fit: the error names the channel and the JSON path.
    let (mut edited, last_ai) = edited_messages(&source, "x");
    edited[last_ai]["content"] = json!({"$type": "builtins.bytes", "base64": "not base64!"});
    let err = edit_fork(
        &saver,
        THREAD,
        "",
        &id,
        &[("llm_calls".into(), json!(3)), ("messages".into(), edited)],
        &Default::default(),
    )
    .await
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains(&format!(
            "channel \"messages\": values.messages[{last_ai}].content: base64"
        )),
        "{text}"
    );

    // A masked secret has nothing to keep when the channel had no secret.
    let err = edit_fork(
        &saver,
        THREAD,
        "",
        &id,
        &[(
            "s".into(),
            json!({"$type": "pydantic.types.SecretStr", "$value": "**********", "$secret": true}),
        )],
        &Default::default(),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string().contains("values.s: a masked secret"),
        "{err}"
    );

    // An undecodable value cannot be written.
    let err = edit_fork(
        &saver,
        THREAD,
        "",
        &id,
        &[(
            "x".into(),
            json!({"$error": "bad", "$type": "msgpack.ext(9)", "raw_base64": ""}),
        )],
        &Default::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("cannot be written"), "{err}");

    let err = edit_fork(
        &saver,
        THREAD,
        "",
        "1f1e0000-0000-6000-8000-000000000000",
        &[("x".into(), json!(1))],
        &Default::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, EngineError::UnknownCheckpoint { .. }),
        "{err}"
    );

    let err = edit_fork(&saver, THREAD, "", &id, &[], &Default::default())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("no channel"), "{err}");
    let err = edit_fork(
        &saver,
        THREAD,
        "",
        &id,
        &[("a".into(), json!(1)), ("a".into(), json!(2))],
        &Default::default(),
    )
    .await
    .unwrap_err();
    assert!(err.to_string().contains("more than once"), "{err}");

    assert_eq!(row_count(&saver).await, rows, "nothing written");
    assert_eq!(head(&saver).await.header.checkpoint_id, id);
}

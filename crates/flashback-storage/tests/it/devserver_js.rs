//! The LangGraph.js dev server's folder (`npx @langchain/langgraph-cli dev`) as a source: the
//! fixture the real server wrote (`tests/devserver-fixtures/js/`, made by
//! `tests/js-devserver/drive.mjs`) read back equal to what the server's own API answered
//! (`expected.json`), and malformed superjson refused in one line.

use flashback_storage::{open, CheckpointStore, Dialect, ListQuery, Read, SchemaKind, Write};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures/js")
}

fn expected() -> Json {
    let text = std::fs::read_to_string(fixture().join("expected.json")).expect("expected");
    serde_json::from_str(&text).expect("json")
}

/// The JSON view without its `$type` markers and nulls: what the JS server's JSON shows of
/// the same value (JS leaves out what is undefined). The one field Python's message model adds
/// with its default is left out too: a `ToolMessage`'s `status: "success"`.
fn plain(v: Json) -> Json {
    match v {
        Json::Object(m) => {
            let tool = m.get("type").and_then(Json::as_str) == Some("tool");
            Json::Object(
                m.into_iter()
                    .filter(|(k, v)| {
                        k != "$type"
                            && !v.is_null()
                            && !(tool && k == "status" && v.as_str() == Some("success"))
                    })
                    .map(|(k, v)| (k, plain(v)))
                    .collect(),
            )
        }
        Json::Array(a) => Json::Array(a.into_iter().map(plain).collect()),
        v => v,
    }
}

async fn open_read(path: &Path) -> Box<dyn CheckpointStore> {
    open(&path.to_string_lossy(), Read::default())
        .await
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

/// The history entries of one namespace as (id, parent).
fn ids(history: &Json) -> Vec<(String, Option<String>)> {
    history
        .as_array()
        .expect("history")
        .iter()
        .map(|h| {
            (
                h["checkpoint_id"].as_str().expect("id").to_owned(),
                h["parent_checkpoint_id"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[tokio::test]
async fn the_real_js_servers_folder_reads_as_its_api_answers() {
    let expected = expected();
    let project = fixture();
    let state = project.join(".langgraph_api");
    let mtimes = |dir: &Path| -> Vec<(String, std::time::SystemTime, u64)> {
        let mut v: Vec<_> = std::fs::read_dir(dir)
            .expect("dir")
            .flatten()
            .map(|e| {
                let m = e.metadata().expect("meta");
                (
                    e.file_name().to_string_lossy().into_owned(),
                    m.modified().expect("mtime"),
                    m.len(),
                )
            })
            .collect();
        v.sort();
        v
    };
    let files_before = mtimes(&state);

    for location in [&project, &state] {
        let store = open_read(location).await;
        let schema = store.schema();
        assert_eq!(schema.kind, SchemaKind::DevServer);
        assert_eq!(schema.dialect, Dialect::Js);
        assert_eq!(
            schema.description,
            "langgraph dev server state (LangGraph.js)"
        );
        let threads = store.list_threads().await.expect("threads");
        let want = expected["threads"].as_object().expect("threads");
        assert_eq!(threads.len(), want.len(), "{threads:?}");

        for (name, t) in want {
            let id = t["thread_id"].as_str().expect("id");
            let info = threads
                .iter()
                .find(|i| i.thread_id == id)
                .unwrap_or_else(|| panic!("{name} listed"));
            let subgraphs = t["subgraph_history"].as_object().expect("subgraphs");
            let count: usize = t["history"].as_array().map_or(0, Vec::len)
                + subgraphs
                    .values()
                    .map(|h| h.as_array().map_or(0, Vec::len))
                    .sum::<usize>();
            assert_eq!(info.checkpoint_count as usize, count, "{name}: checkpoints");
            assert_eq!(
                info.latest_checkpoint_id.as_deref(),
                t["state"]["checkpoint_id"].as_str(),
                "{name}: head"
            );
            let mut namespaces: Vec<&str> = subgraphs.keys().map(String::as_str).collect();
            namespaces.push("");
            namespaces.sort();
            assert_eq!(info.namespaces, namespaces, "{name}: namespaces");

            // Every namespace's checkpoints, newest first, with parents and metadata as the
            // server's history lists them.
            let mut all = vec![("", &t["history"])];
            all.extend(subgraphs.iter().map(|(ns, h)| (ns.as_str(), h)));
            for (ns, history) in all {
                let headers = store
                    .list_headers(&ListQuery {
                        thread_id: Some(id.into()),
                        checkpoint_ns: Some(ns.into()),
                        ..Default::default()
                    })
                    .await
                    .expect("headers");
                let ours: Vec<(String, Option<String>)> = headers
                    .iter()
                    .map(|h| (h.checkpoint_id.clone(), h.parent_checkpoint_id.clone()))
                    .collect();
                assert_eq!(ours, ids(history), "{name} {ns:?}: history");
                for (h, e) in headers.iter().zip(history.as_array().expect("history")) {
                    assert!(h.problem.is_none(), "{name}: {:?}", h.problem);
                    // LangGraph.js's state snapshot adds the thread id to the metadata
                    // (`_prepareStateSnapshot`); what `update_state` stores lacks it.
                    let mut theirs = e["metadata"].clone();
                    if h.metadata.get("thread_id").is_none()
                        && theirs.get("thread_id").and_then(Json::as_str) == Some(id)
                    {
                        theirs
                            .as_object_mut()
                            .expect("metadata")
                            .remove("thread_id");
                    }
                    assert_eq!(h.metadata, theirs, "{name} {}: metadata", h.checkpoint_id);
                    assert!(!h.ts.is_empty(), "{name}: ts");
                }
            }

            // The latest values, as `GET /threads/{id}/state` shows them.
            let head = store
                .get_tuple(id, "", None)
                .await
                .expect("get")
                .expect("head");
            assert!(head.header.problem.is_none(), "{:?}", head.header.problem);
            let values = t["state"]["values"].as_object().expect("values");
            for (channel, want) in values {
                let got = head
                    .checkpoint
                    .value(channel)
                    .unwrap_or_else(|| panic!("{name}: channel {channel}"));
                let view = flashback_codec::view::view_decoded(got, Default::default()).map(plain);
                assert_eq!(
                    view.as_ref(),
                    Some(&plain(want.clone())),
                    "{name}: {channel}"
                );
            }
        }

        // The failed run's error and the waiting interrupt are the head's pending writes.
        let failed = &want["chat-failed"];
        let head = store
            .get_tuple(failed["thread_id"].as_str().expect("id"), "", None)
            .await
            .expect("get")
            .expect("head");
        assert!(
            head.pending_writes.iter().any(|w| w.channel == "__error__"),
            "{:?}",
            head.pending_writes
        );
        let waiting = &want["approval-waiting"];
        let head = store
            .get_tuple(waiting["thread_id"].as_str().expect("id"), "", None)
            .await
            .expect("get")
            .expect("head");
        let interrupt = head
            .pending_writes
            .iter()
            .find(|w| w.channel == "__interrupt__")
            .expect("an interrupt waits");
        let shown = flashback_codec::view::view_decoded(&interrupt.value, Default::default())
            .expect("view")
            .to_string();
        assert!(shown.contains("approve the answer?"), "{shown}");

        // The server's own view of each thread: status, graph, runs.
        let server = store.server().await.expect("server").expect("a server");
        assert_eq!(server.server, "langgraph dev (LangGraph.js)");
        assert!(!server.running);
        assert!(server.notes.is_empty(), "{:?}", server.notes);
        for t in want.values() {
            let id = t["thread_id"].as_str().expect("id");
            let s = server.thread(id).expect("server thread");
            assert_eq!(s.status.as_deref(), t["thread"]["status"].as_str());
            assert_eq!(
                s.graph_id.as_deref(),
                t["thread"]["metadata"]["graph_id"].as_str()
            );
            assert_eq!(s.created_at.as_deref(), t["thread"]["created_at"].as_str());
            assert_eq!(s.metadata, t["thread"]["metadata"]);
            assert!(s.has_checkpoints);
            let ours: Vec<(Option<&str>, &str, Option<&str>)> = s
                .runs
                .iter()
                .map(|r| {
                    (
                        r.created_at.as_deref(),
                        r.run_id.as_str(),
                        r.status.as_deref(),
                    )
                })
                .collect();
            let mut theirs: Vec<(Option<&str>, &str, Option<&str>)> = t["runs"]
                .as_array()
                .expect("runs")
                .iter()
                .map(|r| {
                    (
                        r["created_at"].as_str(),
                        r["run_id"].as_str().expect("run id"),
                        r["status"].as_str(),
                    )
                })
                .collect();
            theirs.sort();
            assert_eq!(ours, theirs);
        }

        // The memory Store.
        let memory = store.memory().expect("a store");
        let items = memory.list(&[], Default::default()).await.expect("items");
        let want = expected["store"]["items"].as_array().expect("items");
        assert_eq!(items.len(), want.len());
        for w in want {
            let ns: Vec<String> = serde_json::from_value(w["namespace"].clone()).expect("ns");
            let item = memory
                .get(&ns, w["key"].as_str().expect("key"))
                .await
                .expect("get")
                .expect("item");
            assert_eq!(item.value, w["value"]);
            assert!(item.created_at.is_some());
        }
    }
    assert_eq!(
        mtimes(&state),
        files_before,
        "opening and reading wrote nothing"
    );

    // Writing is refused in one line.
    let err = open(&project.to_string_lossy(), Write::default())
        .await
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains(
            "writing the LangGraph.js dev server's files is not supported yet: convert it to SQLite"
        ),
        "{err}"
    );
}

/// A folder holding only `checkpointer` as the JS server's checkpointer file.
async fn open_with(checkpointer: &[u8]) -> Result<Box<dyn CheckpointStore>, String> {
    let dir = tempfile::tempdir().expect("tmp");
    let state = dir.path().join(".langgraph_api");
    std::fs::create_dir(&state).expect("mkdir");
    std::fs::write(
        state.join(".langgraphjs_api.checkpointer.json"),
        checkpointer,
    )
    .expect("write");
    let store = open(&dir.path().to_string_lossy(), Read::default())
        .await
        .map_err(|e| e.to_string())?;
    // Read everything while the folder exists.
    for t in store.list_threads().await.map_err(|e| e.to_string())? {
        store
            .list_tuples(&ListQuery::thread(&t.thread_id))
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok(store)
}

#[tokio::test]
async fn malformed_superjson_is_refused_in_one_line() {
    let real = std::fs::read(fixture().join(".langgraph_api/.langgraphjs_api.checkpointer.json"))
        .expect("fixture");
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    for (what, bytes, says) in [
        ("truncated", real[..real.len() / 2].to_vec(), "is not JSON"),
        ("not JSON", b"{storage".to_vec(), "is not JSON"),
        (
            "deep",
            format!("{{\"json\":{deep}}}").into_bytes(),
            "deeper",
        ),
        (
            "not superjson",
            b"[1,2]".to_vec(),
            "not a superjson document",
        ),
        ("no json", b"{\"meta\":{}}".to_vec(), "no \"json\""),
        (
            "storage is a list",
            b"{\"json\":{\"storage\":[],\"writes\":{}}}".to_vec(),
            "storage is an array",
        ),
        (
            "a bad path",
            b"{\"json\":{},\"meta\":{\"values\":{\"a\\\\b\":[\"Date\"]},\"v\":1}}".to_vec(),
            "invalid superjson path",
        ),
    ] {
        let started = std::time::Instant::now();
        let err = open_with(&bytes)
            .await
            .err()
            .unwrap_or_else(|| panic!("{what}: opened"));
        assert!(started.elapsed().as_secs() < 10, "{what}: slow");
        assert!(!err.contains('\n'), "{what}: one line: {err}");
        assert!(
            err.contains(".langgraphjs_api.checkpointer.json"),
            "{what}: {err}"
        );
        assert!(err.contains(says), "{what}: {err}");
    }
}

#[tokio::test]
async fn lying_types_damage_only_their_checkpoint() {
    // A checkpoint whose bytes are not annotated Uint8Array, one whose base64 does not read,
    // one that is a number: each is a problem of its own checkpoint, the rest read.
    let doc = serde_json::json!({
        "json": {
            "storage": {"t": {"": {
                "1": ["e30=", "e30=", null],
                "2": ["!!!", "e30=", "1"],
                "3": [7, "e30=", "2"],
                "4": "a string"
            }}},
            "writes": {}
        },
        "meta": {"values": {
            "storage.t..2.0": [["custom", "Uint8Array"]],
            "storage.t..2.1": [["custom", "Uint8Array"]],
            "storage.t..3.0": [["custom", "Uint8Array"]],
            "storage.t..3.1": [["custom", "Uint8Array"]],
            "storage.t..1.1": ["Date"]
        }, "v": 1}
    });
    let dir = tempfile::tempdir().expect("tmp");
    std::fs::write(
        dir.path().join(".langgraphjs_api.checkpointer.json"),
        serde_json::to_vec(&doc).expect("doc"),
    )
    .expect("write");
    let store = open_read(dir.path()).await;
    let tuples = store
        .list_tuples(&ListQuery::thread("t"))
        .await
        .expect("tuples");
    assert_eq!(tuples.len(), 4);
    let problem = |id: &str| {
        tuples
            .iter()
            .find(|t| t.header.checkpoint_id == id)
            .and_then(|t| t.header.problem.clone())
            .unwrap_or_default()
    };
    assert!(
        problem("1").contains("not a Uint8Array"),
        "{}",
        problem("1")
    );
    assert!(problem("2").contains("base64"), "{}", problem("2"));
    assert!(problem("3").contains("not base64 text"), "{}", problem("3"));
    assert!(
        problem("4").contains("not [checkpoint, metadata, parent]"),
        "{}",
        problem("4")
    );
}

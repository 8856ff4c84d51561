//! The `langgraph dev` server's state folder as a source: the fixture the real server wrote
//! (`tests/devserver-fixtures/py/`, made by `tests/devserver/generate.py`) read back equal to
//! what the server's own API answered (`expected.json`), and hostile pickles refused in one
//! line, nothing run.

use flashback_storage::{open, CheckpointStore, ListQuery, Read, SchemaKind};
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/devserver-fixtures")
}

fn expected() -> Json {
    let text = std::fs::read_to_string(fixture().join("py/expected.json")).expect("expected");
    serde_json::from_str(&text).expect("json")
}

/// The JSON view without its `$type` markers: what the server's JSON shows of the same value.
fn without_types(v: Json) -> Json {
    match v {
        Json::Object(m) => Json::Object(
            m.into_iter()
                .filter(|(k, _)| k != "$type")
                .map(|(k, v)| (k, without_types(v)))
                .collect(),
        ),
        Json::Array(a) => Json::Array(a.into_iter().map(without_types).collect()),
        v => v,
    }
}

async fn open_read(path: &Path) -> Box<dyn CheckpointStore> {
    open(&path.to_string_lossy(), Read::default())
        .await
        .unwrap_or_else(|e| panic!("open {}: {e}", path.display()))
}

/// Every file of a folder with its bytes and modification time.
fn files_of(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .expect("dir")
        .flatten()
        .map(|e| {
            let meta = e.metadata().expect("meta");
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
                meta.modified().expect("mtime"),
            )
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

#[tokio::test]
async fn the_real_servers_folder_reads_as_its_api_answers() {
    let expected = expected();
    let project = fixture().join("py");
    let state = project.join(".langgraph_api");
    let before = files_of(&state);

    for location in [&project, &state] {
        let store = open_read(location).await;
        assert_eq!(store.schema().kind, SchemaKind::DevServer);
        let threads = store.list_threads().await.expect("threads");
        assert_eq!(threads.len(), 6, "{threads:?}");

        for (name, t) in expected["threads"].as_object().expect("threads") {
            let id = t["thread_id"].as_str().expect("id");
            let info = threads
                .iter()
                .find(|i| i.thread_id == id)
                .unwrap_or_else(|| panic!("{name} listed"));
            let history = t["history"].as_array().expect("history");
            let subgraphs: usize = t["subgraph_history"].as_object().map_or(0, |m| {
                m.values().map(|h| h.as_array().map_or(0, Vec::len)).sum()
            });
            assert_eq!(
                info.checkpoint_count as usize,
                history.len() + subgraphs,
                "{name}: checkpoints"
            );
            assert_eq!(
                info.latest_checkpoint_id.as_deref(),
                t["state"]["checkpoint_id"].as_str(),
                "{name}: head"
            );

            // Every checkpoint of the root namespace, newest first, with its parent and
            // metadata as the server's history lists them.
            let headers = store
                .list_headers(&ListQuery {
                    thread_id: Some(id.into()),
                    checkpoint_ns: Some(String::new()),
                    ..Default::default()
                })
                .await
                .expect("headers");
            let ours: Vec<(&str, Option<&str>)> = headers
                .iter()
                .map(|h| (h.checkpoint_id.as_str(), h.parent_checkpoint_id.as_deref()))
                .collect();
            let theirs: Vec<(&str, Option<&str>)> = history
                .iter()
                .map(|h| {
                    (
                        h["checkpoint_id"].as_str().expect("id"),
                        h["parent_checkpoint_id"].as_str(),
                    )
                })
                .collect();
            assert_eq!(ours, theirs, "{name}: history");
            for (h, e) in headers.iter().zip(history) {
                for key in ["step", "source", "run_id", "user_id", "graph_id"] {
                    assert_eq!(
                        h.metadata.get(key),
                        e["metadata"].get(key),
                        "{name} {}: metadata {key}",
                        h.checkpoint_id
                    );
                }
                assert!(h.problem.is_none(), "{:?}", h.problem);
            }

            // The latest values, as `GET /threads/{id}/state` shows plain values.
            let head = store
                .get_tuple(id, "", None)
                .await
                .expect("get")
                .expect("head");
            let values = t["state"]["values"].as_object().expect("values");
            for (channel, want) in values {
                let got = head
                    .checkpoint
                    .value(channel)
                    .unwrap_or_else(|| panic!("{name}: channel {channel}"));
                let view =
                    flashback_codec::view::view_decoded(got, Default::default()).map(without_types);
                assert_eq!(view.as_ref(), Some(want), "{name}: {channel}");
            }
        }

        // The server's own view of each thread: status, graph, runs.
        let server = store.server().await.expect("server").expect("a server");
        assert!(!server.running);
        assert!(server.notes.is_empty(), "{:?}", server.notes);
        for t in expected["threads"].as_object().expect("threads").values() {
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
            let runs: Vec<Option<&str>> = s.runs.iter().map(|r| r.status.as_deref()).collect();
            let mut want: Vec<(Option<&str>, Option<&str>)> = t["runs"]
                .as_array()
                .expect("runs")
                .iter()
                .map(|r| (r["created_at"].as_str(), r["status"].as_str()))
                .collect();
            want.sort();
            assert_eq!(runs, want.iter().map(|w| w.1).collect::<Vec<_>>());
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
            assert_eq!(item.created_at.as_deref(), w["created_at"].as_str());
        }
    }
    assert_eq!(
        files_of(&state),
        before,
        "opening and reading wrote nothing"
    );
}

#[tokio::test]
async fn threads_the_server_lists_without_checkpoints_are_said() {
    let store = open_read(&fixture().join("hostile/stale")).await;
    let server = store.server().await.expect("server").expect("a server");
    let missing: Vec<&str> = server
        .threads
        .iter()
        .filter(|t| !t.has_checkpoints)
        .map(|t| t.thread_id.as_str())
        .collect();
    assert_eq!(missing, ["0bef1a79-9960-5461-a6ca-5205f585d9db"]);
    assert!(
        server
            .notes
            .iter()
            .any(|n| n.contains("1 thread its checkpoint file does not hold")),
        "{:?}",
        server.notes
    );
    assert_eq!(store.list_threads().await.expect("threads").len(), 5);
}

#[tokio::test]
async fn hostile_checkpoint_files_are_refused_in_one_line_and_nothing_runs() {
    let marker = Path::new("/tmp/flashback-hostile-pickle-ran");
    let _ = std::fs::remove_file(marker);
    let hostile = fixture().join("hostile");
    for (file, opens) in [
        ("valid-small.checkpoint.1.pckl", true),
        ("truncated.checkpoint.1.pckl", false),
        ("lying-length.pckl", false),
        ("lying-length-binunicode.pckl", false),
        // A sparse memo index is valid: `{"k": None}`, its entry unreadable.
        ("memo-1g.pckl", true),
        ("memo-get-1g.pckl", false),
        // The metadata of one checkpoint is an `os.system` call: read as an opaque object.
        ("global-os-system.checkpoint.1.pckl", true),
        ("stack-global-os-system.pckl", false),
        ("deep-100k.pckl", false),
        ("deep-100k-lists.pckl", false),
        ("not-a-pickle.pckl", false),
        ("empty.pckl", true),
    ] {
        let dir = tempfile::tempdir().expect("tmp");
        let state = dir.path().join(".langgraph_api");
        std::fs::create_dir(&state).expect("mkdir");
        std::fs::copy(
            hostile.join(file),
            state.join(".langgraph_checkpoint.1.pckl"),
        )
        .expect("copy");
        let started = std::time::Instant::now();
        let result = open(&dir.path().to_string_lossy(), Read::default()).await;
        assert!(
            started.elapsed().as_secs() < 10,
            "{file}: took {:?}",
            started.elapsed()
        );
        match result {
            Ok(store) => {
                assert!(opens, "{file} opened");
                for t in store.list_threads().await.expect("threads") {
                    let tuples = store
                        .list_tuples(&ListQuery::thread(&t.thread_id))
                        .await
                        .expect("tuples");
                    assert_eq!(tuples.len() as u64, t.checkpoint_count);
                }
            }
            Err(e) => {
                assert!(!opens, "{file}: {e}");
                let line = e.to_string();
                assert!(!line.contains('\n'), "{file}: one line: {line}");
                assert!(
                    line.contains(".langgraph_checkpoint.1.pckl cannot be read"),
                    "{file}: {line}"
                );
            }
        }
    }
    assert!(!marker.exists(), "a pickle ran a command");
}

#[tokio::test]
async fn a_folder_that_is_not_a_dev_project_is_refused_plainly() {
    let dir = tempfile::tempdir().expect("tmp");
    let err = open(&dir.path().to_string_lossy(), Read::default())
        .await
        .err()
        .expect("refused");
    assert!(
        err.to_string().contains("without a .langgraph_api folder"),
        "{err}"
    );
}

/// The server rewrites its files (temp file + rename) every 10 s while it runs: a reader
/// meanwhile sees one whole version of each file, never a torn one, and follows the changes.
#[tokio::test]
async fn reads_stay_whole_while_the_server_rewrites_its_files() {
    let dir = tempfile::tempdir().expect("tmp");
    let state = dir.path().join(".langgraph_api");
    std::fs::create_dir(&state).expect("mkdir");
    let full = fixture().join("py/.langgraph_api");
    let stale = fixture().join("hostile/stale/.langgraph_api");
    let names = [
        ".langgraph_checkpoint.1.pckl",
        ".langgraph_checkpoint.2.pckl",
        ".langgraph_checkpoint.3.pckl",
        ".langgraph_ops.pckl",
        "store.pckl",
    ];
    let put = |from: &Path| {
        for n in names {
            let tmp = state.join(format!("{n}.tmp"));
            std::fs::copy(from.join(n), &tmp).expect("copy");
            std::fs::rename(&tmp, state.join(n)).expect("rename");
        }
    };
    put(&full);
    let store = open_read(dir.path()).await;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let (stop, state, full, stale) = (stop.clone(), state.clone(), full.clone(), stale.clone());
        std::thread::spawn(move || {
            let mut i = 0u32;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let from = if i.is_multiple_of(2) { &stale } else { &full };
                for n in names {
                    let tmp = state.join(format!("{n}.tmp"));
                    std::fs::copy(from.join(n), &tmp).expect("copy");
                    std::fs::rename(&tmp, state.join(n)).expect("rename");
                }
                i += 1;
            }
            i
        })
    };
    let mut seen = std::collections::BTreeSet::new();
    for _ in 0..40 {
        let threads = store.list_threads().await.expect("threads never fail");
        seen.insert(threads.len());
        assert!(
            threads.len() == 5 || threads.len() == 6,
            "{}",
            threads.len()
        );
        for t in threads.iter().take(2) {
            let tuples = store
                .list_tuples(&ListQuery::thread(&t.thread_id))
                .await
                .expect("tuples never fail");
            assert!(tuples.iter().all(|t| t.header.problem.is_none()));
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let rewrites = writer.join().expect("writer");
    assert!(rewrites > 1, "the writer ran");
    assert!(!seen.is_empty());
}

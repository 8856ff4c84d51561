//! Shared helpers for the fixture tests: compare what Flashback decodes with what Python's
//! savers returned for the same database (`tests/fixtures/expected/*.json`, written by
//! `tests/fixtures/generate.py`).

#![allow(dead_code)]

use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery};
use serde_json::{json, Value as Json};
use std::path::PathBuf;

pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

pub fn expected(backend: &str) -> Json {
    let path = fixtures_dir().join(format!("expected/{backend}.json"));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("parse {}: {e}", path.display()))
}

/// Types the fixture stores but Python cannot construct again (a dataclass with an
/// `init=False` field): Python's reviver falls back to the raw kwargs dict, which Flashback —
/// reading bytes, not running classes — cannot predict. Their fields must still match.
pub const PYTHON_CANNOT_REVIVE: &[&str] = &["fixture_types.Tally"];

/// Strip the `$type` of values Python returns as plain dicts (see [`PYTHON_CANNOT_REVIVE`]).
pub fn as_python_revives(v: &Json) -> Json {
    match v {
        Json::Array(items) => Json::Array(items.iter().map(as_python_revives).collect()),
        Json::Object(m) => {
            let drop_type = m
                .get("$type")
                .and_then(Json::as_str)
                .is_some_and(|t| PYTHON_CANNOT_REVIVE.contains(&t));
            Json::Object(
                m.iter()
                    .filter(|(k, _)| !(drop_type && k.as_str() == "$type"))
                    .map(|(k, v)| (k.clone(), as_python_revives(v)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}

/// Sets are unordered in Python: sort their items so both sides compare equal.
pub fn normalise(v: &Json) -> Json {
    match v {
        Json::Array(items) => Json::Array(items.iter().map(normalise).collect()),
        Json::Object(m) => {
            let mut out: serde_json::Map<String, Json> =
                m.iter().map(|(k, v)| (k.clone(), normalise(v))).collect();
            let is_set = matches!(
                m.get("$type").and_then(Json::as_str),
                Some("builtins.set" | "builtins.frozenset")
            );
            if is_set {
                if let Some(Json::Array(items)) = out.get_mut("$value") {
                    items.sort_by_key(|i| i.to_string());
                }
            }
            Json::Object(out)
        }
        other => other.clone(),
    }
}

/// Flashback's view of one tuple in the shape of the expected file.
pub fn actual_entry(t: &CheckpointTuple) -> Json {
    let opts = ViewOptions::default();
    let cp = &t.checkpoint;
    let values: serde_json::Map<String, Json> = cp
        .channel_values
        .iter()
        .filter_map(|(k, v)| Some((k.clone(), view_decoded(v, opts)?)))
        .collect();
    let versions = |vs: &flashback_storage::Versions| -> Json {
        Json::Object(
            vs.iter()
                .map(|(k, v)| (k.clone(), serde_json::to_value(v).expect("version to json")))
                .collect(),
        )
    };
    let seen: serde_json::Map<String, Json> = cp
        .versions_seen
        .iter()
        .map(|(n, vs)| (n.clone(), versions(vs)))
        .collect();
    let writes: Vec<Json> = t
        .pending_writes
        .iter()
        .map(|w| json!([w.task_id, w.channel, view_decoded(&w.value, opts)]))
        .collect();
    json!({
        "checkpoint_ns": t.header.checkpoint_ns,
        "checkpoint_id": t.header.checkpoint_id,
        "parent_checkpoint_id": t.header.parent_checkpoint_id,
        "metadata": t.header.metadata,
        "checkpoint": {
            "v": cp.v, "id": cp.id, "ts": cp.ts,
            "channel_values": values,
            "channel_versions": versions(&cp.channel_versions),
            "versions_seen": seen,
            "updated_channels": cp.updated_channels,
        },
        "pending_writes": writes,
    })
}

/// Recursively diff two JSON values, collecting readable mismatch lines.
pub fn diff(path: &str, want: &Json, got: &Json, out: &mut Vec<String>) {
    if out.len() > 40 {
        return;
    }
    match (want, got) {
        (Json::Object(a), Json::Object(b)) => {
            for (k, va) in a {
                match b.get(k) {
                    Some(vb) => diff(&format!("{path}.{k}"), va, vb, out),
                    None => out.push(format!("{path}.{k}: missing (want {})", short(va))),
                }
            }
            for k in b.keys().filter(|k| !a.contains_key(*k)) {
                out.push(format!("{path}.{k}: unexpected {}", short(&b[k])));
            }
        }
        (Json::Array(a), Json::Array(b)) if a.len() == b.len() => {
            for (i, (va, vb)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if want == got => {}
        _ => out.push(format!("{path}: want {} got {}", short(want), short(got))),
    }
}

fn short(v: &Json) -> String {
    let s = v.to_string();
    if s.len() > 160 {
        format!(
            "{}…",
            &s[..s.char_indices().nth(160).map_or(s.len(), |(i, _)| i)]
        )
    } else {
        s
    }
}

/// Compare every checkpoint of every thread in the expected file with what `store` returns.
/// Returns the number of checkpoints compared.
pub async fn compare_with_python(store: &dyn CheckpointStore, expected: &Json) -> usize {
    let threads = expected["threads"].as_object().expect("threads object");
    let mut problems = Vec::new();
    let mut compared = 0;
    for (thread, entries) in threads {
        let entries = entries.as_array().expect("thread entries");
        let tuples = store
            .list_tuples(&ListQuery::thread(thread))
            .await
            .unwrap_or_else(|e| panic!("list {thread}: {e}"));
        let want_ids: Vec<(&str, &str)> = entries
            .iter()
            .map(|e| {
                (
                    e["checkpoint_ns"].as_str().unwrap_or(""),
                    e["checkpoint_id"].as_str().unwrap_or(""),
                )
            })
            .collect();
        let got_ids: Vec<(&str, &str)> = tuples
            .iter()
            .map(|t| {
                (
                    t.header.checkpoint_ns.as_str(),
                    t.header.checkpoint_id.as_str(),
                )
            })
            .collect();
        if want_ids != got_ids {
            problems.push(format!(
                "{thread}: list order differs: want {want_ids:?} got {got_ids:?}"
            ));
            continue;
        }
        for (want, t) in entries.iter().zip(&tuples) {
            let mut w = want.clone();
            if let Some(m) = w.as_object_mut() {
                m.remove("state");
            }
            let got = actual_entry(t);
            diff(
                &format!("{thread}/{}", t.header.checkpoint_id),
                &normalise(&w),
                &normalise(&as_python_revives(&got)),
                &mut problems,
            );
            // get_tuple must agree with list.
            let single = store
                .get_tuple(
                    thread,
                    &t.header.checkpoint_ns,
                    Some(&t.header.checkpoint_id),
                )
                .await
                .expect("get_tuple")
                .expect("get_tuple finds the listed checkpoint");
            // Compare views, not trees: NaN != NaN in a tree.
            if actual_entry(&single) != got {
                problems.push(format!(
                    "{thread}/{}: get_tuple differs from list",
                    t.header.checkpoint_id
                ));
            }
            compared += 1;
        }
    }
    assert!(
        problems.is_empty(),
        "{} mismatches with Python:\n{}",
        problems.len(),
        problems.join("\n")
    );
    compared
}

/// Compare derived `next`/`tasks` with Python's `get_state` for every checkpoint that has one.
/// Returns the number of checkpoints compared.
pub async fn compare_tasks_with_python(store: &dyn CheckpointStore, expected: &Json) -> usize {
    let mut problems = Vec::new();
    let mut compared = 0;
    for (thread, entries) in expected["threads"].as_object().expect("threads") {
        for e in entries.as_array().expect("entries") {
            let Some(state) = e.get("state") else {
                continue;
            };
            let ns = e["checkpoint_ns"].as_str().unwrap_or("");
            let id = e["checkpoint_id"].as_str().unwrap_or("");
            let t = store
                .get_tuple(thread, ns, Some(id))
                .await
                .expect("get_tuple")
                .expect("checkpoint exists");
            let opts = flashback_engine::tasks::DeriveOptions {
                mode: flashback_engine::tasks::SnapshotMode::History,
                ..Default::default()
            };
            let derived = flashback_engine::tasks::derive_tasks_with(&t, &opts);
            let mut want_next: Vec<String> = state["next"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|s| s.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let mut got_next = derived.next.clone();
            want_next.sort();
            got_next.sort();
            if want_next != got_next {
                problems.push(format!(
                    "{thread}/{id}: next want {want_next:?} got {got_next:?}"
                ));
            }
            let want_tasks: Vec<Json> = state["tasks"].as_array().cloned().unwrap_or_default();
            let got_tasks = serde_json::to_value(&derived.tasks).expect("tasks to json");
            let got_tasks = got_tasks.as_array().cloned().unwrap_or_default();
            let key = |t: &Json| t["id"].as_str().unwrap_or("").to_owned();
            let mut want_sorted = want_tasks.clone();
            want_sorted.sort_by_key(key);
            let mut got_sorted = got_tasks.clone();
            got_sorted.sort_by_key(key);
            if want_sorted.len() != got_sorted.len() {
                problems.push(format!(
                    "{thread}/{id}: {} tasks want {:?} got {:?}",
                    want_sorted.len(),
                    want_sorted
                        .iter()
                        .map(|t| (t["name"].clone(), t["id"].clone()))
                        .collect::<Vec<_>>(),
                    got_sorted
                        .iter()
                        .map(|t| (t["name"].clone(), t["id"].clone()))
                        .collect::<Vec<_>>()
                ));
                continue;
            }
            for (w, g) in want_sorted.iter().zip(&got_sorted) {
                for field in ["id", "name", "path", "error", "interrupts"] {
                    if let Some(wv) = w.get(field) {
                        diff(
                            &format!("{thread}/{id} task {}.{field}", w["name"]),
                            &normalise(wv),
                            &normalise(&g[field]),
                            &mut problems,
                        );
                    }
                }
            }
            compared += 1;
        }
    }
    assert!(
        problems.is_empty(),
        "{} task mismatches with Python:\n{}",
        problems.len(),
        problems.join("\n")
    );
    compared
}

/// A thread list's reads give what full reads give: every checkpoint of every thread read
/// selecting only what the tasks need (`get_tuples_selecting` with `reads_value_of`) derives
/// the same tasks, statuses and interrupts as the checkpoint read whole; and the most recent
/// threads are the newest of the full list. Returns the number of checkpoints compared.
pub async fn compare_selecting_reads(store: &dyn CheckpointStore) -> usize {
    use flashback_engine::tasks::{derive_tasks, reads_value_of};
    let threads = store.list_threads().await.expect("threads");
    let mut keys: Vec<(String, String, Option<String>)> = Vec::new();
    for t in &threads {
        for h in store
            .list_headers(&ListQuery {
                thread_id: Some(t.thread_id.clone()),
                ..Default::default()
            })
            .await
            .expect("headers")
        {
            keys.push((t.thread_id.clone(), h.checkpoint_ns, Some(h.checkpoint_id)));
        }
    }
    let keys: Vec<(&str, &str, Option<&str>)> = keys
        .iter()
        .map(|(t, n, c)| (t.as_str(), n.as_str(), c.as_deref()))
        .collect();
    let full = store.get_tuples(&keys).await.expect("get_tuples");
    let keep: flashback_storage::ChannelFilter = std::sync::Arc::new(reads_value_of);
    let slim = store
        .get_tuples_selecting(&keys, keep)
        .await
        .expect("get_tuples_selecting");
    assert_eq!(full.len(), slim.len());
    for (key, (f, s)) in keys.iter().zip(full.iter().zip(&slim)) {
        let (Some(f), Some(s)) = (f, s) else {
            assert_eq!(f.is_some(), s.is_some(), "{key:?}");
            continue;
        };
        assert!(
            s.checkpoint.channel_values.len() <= f.checkpoint.channel_values.len(),
            "{key:?}"
        );
        assert!(
            s.checkpoint
                .channel_values
                .iter()
                .all(|(c, _)| reads_value_of(c)),
            "{key:?}: a value it need not read"
        );
        let (ft, st) = (derive_tasks(f), derive_tasks(s));
        assert_eq!(
            serde_json::to_value(&ft).expect("json"),
            serde_json::to_value(&st).expect("json"),
            "{key:?}: tasks differ"
        );
        assert_eq!(ft.status(), st.status(), "{key:?}");
    }
    let mut newest: Vec<_> = threads
        .iter()
        .filter(|t| t.latest_checkpoint_id.is_some())
        .collect();
    newest.sort_by(|a, b| b.latest_checkpoint_id.cmp(&a.latest_checkpoint_id));
    for limit in [1, 3, newest.len() + 5] {
        let recent = store.list_recent_threads(limit).await.expect("recent");
        let want: Vec<&str> = newest
            .iter()
            .take(limit)
            .map(|t| t.thread_id.as_str())
            .collect();
        let got: Vec<&str> = recent.iter().map(|t| t.thread_id.as_str()).collect();
        assert_eq!(got, want, "the {limit} most recent threads");
        for r in &recent {
            let t = threads
                .iter()
                .find(|t| t.thread_id == r.thread_id)
                .expect("listed");
            assert_eq!(
                (&r.namespaces, r.checkpoint_count, &r.latest_checkpoint_id),
                (&t.namespaces, t.checkpoint_count, &t.latest_checkpoint_id)
            );
        }
    }
    keys.len()
}

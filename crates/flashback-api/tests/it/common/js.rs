//! The LangGraph.js fixtures (`tests/js-fixtures`): private copies of the SQLite file, the
//! Postgres dump in a fresh database, and the checkpoint-by-checkpoint comparison with what
//! JS's `getStateHistory` returned (`expected-*.json`).

use super::{api_in, detail, open};
use flashback_api::*;
use flashback_codec::{jsvalue, view, ViewOptions};
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The repository's `tests/js-fixtures` directory.
pub fn js_fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/js-fixtures")
}

/// `expected-<backend>.json` (`sqlite` or `postgres`).
pub fn expected(backend: &str) -> Json {
    let path = js_fixtures().join(format!("expected-{backend}.json"));
    let text = std::fs::read_to_string(&path).expect("expected file");
    serde_json::from_str(&text).expect("expected JSON")
}

/// A private copy of `langgraphjs.sqlite`, opened.
pub struct JsSqlite {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
    pub api: Api,
    pub db: DbInfo,
}

pub async fn js_sqlite() -> JsSqlite {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("langgraphjs.sqlite");
    std::fs::copy(js_fixtures().join("langgraphjs.sqlite"), &path).expect("copy fixture");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    JsSqlite { dir, path, api, db }
}

/// `langgraphjs-postgres.sql` loaded into a fresh database, opened.
pub struct JsPostgres {
    pub pg: flashback_testkit::TestPg,
    pub dir: tempfile::TempDir,
    pub api: Api,
    pub db: DbInfo,
}

/// `None` when PostgreSQL is unavailable and not required (the test is skipped).
pub async fn js_postgres() -> Option<JsPostgres> {
    let pg = flashback_testkit::postgres_or_skip().await?;
    let dump = std::fs::read_to_string(js_fixtures().join("langgraphjs-postgres.sql"))
        .expect("the JS dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load the JS dump");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    Some(JsPostgres { pg, dir, api, db })
}

/// A value as JS's JSON shows it, revived and viewed as Flashback shows stored values.
pub fn js_view(v: &Json) -> Json {
    view(&jsvalue::revive(v), ViewOptions::default())
}

/// A history of one namespace.
pub async fn ns_history(api: &Api, db: &DbInfo, t: &str, ns: &str) -> Vec<HistoryEntry> {
    api.thread_history(HistoryRequest {
        db: db.db.clone(),
        thread_id: t.into(),
        checkpoint_ns: Some(ns.into()),
        limit: None,
        before: None,
        filter: Default::default(),
    })
    .await
    .expect("history")
}

pub async fn threads(api: &Api, db: &DbInfo) -> Vec<ThreadSummary> {
    api.list_threads(ThreadsRequest {
        limit: None,
        db: db.db.clone(),
        ..Default::default()
    })
    .await
    .expect("threads")
}

fn checkpoint_id(config: &Json) -> Option<String> {
    config["configurable"]["checkpoint_id"]
        .as_str()
        .map(str::to_owned)
}

fn sorted(names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = names.into_iter().collect();
    v.sort();
    v
}

/// How many checkpoints were compared, and every difference found (empty: Flashback shows
/// what JS shows).
pub struct Comparison {
    pub checkpoints: usize,
    pub interrupts: usize,
    pub defaults: usize,
    pub problems: Vec<String>,
}

/// Compare every thread and namespace of `expected` with what Flashback shows.
pub async fn compare_with_js(api: &Api, db: &DbInfo, expected: &Json) -> Comparison {
    let mut c = Comparison {
        checkpoints: 0,
        interrupts: 0,
        defaults: 0,
        problems: Vec::new(),
    };
    let listed = threads(api, db).await;
    let js_threads = expected["threads"].as_object().expect("threads");
    let ids: BTreeSet<&str> = listed.iter().map(|t| t.thread_id.as_str()).collect();
    let js_ids: BTreeSet<&str> = js_threads.keys().map(String::as_str).collect();
    if ids != js_ids {
        c.problems
            .push(format!("threads: flashback {ids:?}, js {js_ids:?}"));
    }
    for (tid, thread) in js_threads {
        let history = thread["history"].as_object().expect("history");
        if let Some(summary) = listed.iter().find(|t| &t.thread_id == tid) {
            let ns: BTreeSet<&str> = summary.namespaces.iter().map(String::as_str).collect();
            let js_ns: BTreeSet<&str> = history.keys().map(String::as_str).collect();
            if ns != js_ns {
                c.problems
                    .push(format!("{tid}: namespaces {ns:?}, js {js_ns:?}"));
            }
        }
        for (ns, snapshots) in history {
            let snapshots = snapshots.as_array().expect("snapshots");
            compare_namespace(api, db, tid, ns, snapshots, &mut c).await;
        }
    }
    c
}

async fn compare_namespace(
    api: &Api,
    db: &DbInfo,
    tid: &str,
    ns: &str,
    snapshots: &[Json],
    c: &mut Comparison,
) {
    let ours = ns_history(api, db, tid, ns).await;
    let js_ids: Vec<Option<String>> = snapshots
        .iter()
        .map(|s| checkpoint_id(&s["config"]))
        .collect();
    let our_ids: Vec<Option<String>> = ours.iter().map(|h| Some(h.checkpoint_id.clone())).collect();
    if js_ids != our_ids {
        c.problems.push(format!(
            "{tid}/{ns:?}: checkpoints {our_ids:?}, js {js_ids:?}"
        ));
        return;
    }
    // Where only the Annotations' defaults are visible.
    let oldest = &snapshots.last().expect("a checkpoint")["values"];
    for (snap, entry) in snapshots.iter().zip(&ours) {
        let at = format!("{tid}/{ns:?}/{}", entry.checkpoint_id);
        c.checkpoints += 1;
        let parent = snap.get("parentConfig").and_then(checkpoint_id);
        if parent != entry.parent_checkpoint_id {
            c.problems.push(format!(
                "{at}: parent {:?}, js {parent:?}",
                entry.parent_checkpoint_id
            ));
        }
        let mut meta = snap["metadata"].clone();
        meta.as_object_mut().expect("metadata").remove("thread_id");
        if meta != entry.metadata {
            c.problems
                .push(format!("{at}: metadata {}, js {meta}", entry.metadata));
        }
        let d = detail(api, db, tid, ns, &entry.checkpoint_id).await;
        if let Some(p) = &d.problem {
            c.problems.push(format!("{at}: problem {p}"));
        }
        let js_next = sorted(
            snap["next"]
                .as_array()
                .expect("next")
                .iter()
                .map(|n| n.as_str().expect("a name").to_owned()),
        );
        let next = sorted(d.tasks.next.iter().cloned());
        if next != js_next {
            c.problems
                .push(format!("{at}: next {next:?}, js {js_next:?}"));
        }
        compare_tasks(&at, snap, &d, c);
        compare_values(&at, &snap["values"], oldest, &d, c);
    }
}

fn compare_tasks(at: &str, snap: &Json, d: &CheckpointDetail, c: &mut Comparison) {
    let js_tasks = snap["tasks"].as_array().expect("tasks");
    let names = sorted(d.tasks.tasks.iter().map(|t| t.name.clone()));
    let js_names = sorted(
        js_tasks
            .iter()
            .map(|t| t["name"].as_str().expect("name").to_owned()),
    );
    if names != js_names {
        c.problems
            .push(format!("{at}: tasks {names:?}, js {js_names:?}"));
        return;
    }
    for js in js_tasks {
        let Some(ours) = d.tasks.tasks.iter().find(|t| t.path == js["path"]) else {
            c.problems.push(format!(
                "{at}: no task with path {} (ours: {:?})",
                js["path"],
                d.tasks.tasks.iter().map(|t| &t.path).collect::<Vec<_>>()
            ));
            continue;
        };
        if ours.id != js["id"].as_str().unwrap_or_default() {
            c.problems
                .push(format!("{at}: task id {}, js {}", ours.id, js["id"]));
        }
        let js_interrupts: Vec<(Json, Json)> = js["interrupts"]
            .as_array()
            .expect("interrupts")
            .iter()
            .map(|i| (i["id"].clone(), js_view(&i["value"])))
            .collect();
        let interrupts: Vec<(Json, Json)> = ours
            .interrupts
            .iter()
            .map(|i| (i["id"].clone(), i["value"].clone()))
            .collect();
        if interrupts != js_interrupts {
            c.problems.push(format!(
                "{at}: {} interrupts {interrupts:?}, js {js_interrupts:?}",
                ours.name
            ));
        }
        c.interrupts += js_interrupts.len();
    }
}

fn compare_values(at: &str, js: &Json, oldest: &Json, d: &CheckpointDetail, c: &mut Comparison) {
    let js = js.as_object().expect("values");
    let state: Vec<&ChannelInfo> = d.channels.iter().filter(|i| !i.control).collect();
    for info in &state {
        let ch = &info.channel;
        let Some(ours) = d.values.get(ch) else {
            c.problems
                .push(format!("{at}: {ch} listed without a value"));
            continue;
        };
        match js.get(ch) {
            None => c
                .problems
                .push(format!("{at}: {ch} = {ours} is not in JS's values")),
            Some(v) if js_view(v) != *ours => c
                .problems
                .push(format!("{at}: {ch} = {ours}, js {} (raw {v})", js_view(v))),
            Some(_) => {}
        }
    }
    for (k, v) in js {
        if state.iter().any(|i| &i.channel == k) {
            continue;
        }
        if oldest.get(k) == Some(v) {
            c.defaults += 1;
        } else {
            c.problems
                .push(format!("{at}: JS shows {k} = {v}, Flashback nothing"));
        }
    }
}

/// Panics with every difference, one a line.
pub fn assert_same(c: &Comparison, backend: &str) {
    assert!(
        c.problems.is_empty(),
        "{backend}: {} difference(s) with JS:\n{}",
        c.problems.len(),
        c.problems.join("\n")
    );
}

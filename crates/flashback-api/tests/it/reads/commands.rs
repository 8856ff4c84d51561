//! The read commands on the SQLite fixture: threads, graph, checkpoint detail, bad databases and undecodable values.

use crate::common;
use common::*;
use flashback_api::*;
use serde_json::json;

#[tokio::test]
async fn threads_show_status_interrupts_and_failures_without_writing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let before = fingerprint(&path);
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    assert_eq!(db.kind, DbKind::Sqlite);
    assert_eq!(db.display_name, "langgraph.sqlite");
    let threads = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: db.db.clone(),
            ..Default::default()
        })
        .await
        .expect("threads");
    assert_eq!(threads.len(), 12);
    let by = |id: &str| threads.iter().find(|t| t.thread_id == id).expect(id);
    let waiting = by("interrupt-waiting");
    assert_eq!(waiting.status, Some(ThreadStatus::Interrupted));
    assert!(
        !waiting.interrupts.is_empty(),
        "the inbox shows the question"
    );
    let failed = by("parallel-failure");
    assert_eq!(failed.status, Some(ThreadStatus::Failed));
    assert!(failed.error.is_some());
    assert_eq!(by("long").checkpoint_count, 300);
    assert_eq!(by("subgraph").namespaces.len(), 3);

    // Browse everything: graph and detail of every checkpoint of two threads.
    for t in ["forked", "subgraph"] {
        let g = graph(&api, &db, t).await;
        for row in &g.rows {
            let d = detail(&api, &db, t, &row.ns, &row.id).await;
            assert_eq!(d.checkpoint_id, row.id);
        }
    }
    assert_eq!(
        fingerprint(&path),
        before,
        "browsing never changes the file"
    );
    let names: Vec<String> = std::fs::read_dir(dir.path())
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !names
            .iter()
            .any(|n| n.contains("-journal") || n.contains("-wal")),
        "{names:?}"
    );
}

#[tokio::test]
async fn activity_of_a_list_marks_a_thread_gone_since_it_was_listed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    let found = api
        .thread_activity(ThreadActivityRequest {
            db: db.db.clone(),
            thread_ids: vec!["forked".into(), "deleted-meanwhile".into(), "long".into()],
        })
        .await
        .expect("the list's other threads are answered");
    let missing: Vec<(&str, bool)> = found
        .iter()
        .map(|a| (a.thread_id.as_str(), a.missing))
        .collect();
    assert_eq!(
        missing,
        [
            ("forked", false),
            ("deleted-meanwhile", true),
            ("long", false)
        ]
    );
    assert_eq!(
        found[1].problem.as_deref(),
        Some("thread \"deleted-meanwhile\" not found")
    );
    assert!(found[0].problem.is_none() && found[2].problem.is_none());
}

#[tokio::test]
async fn graph_rows_carry_lanes_and_subgraphs_collapse() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;

    let g = graph(&api, &db, "forked").await;
    assert_eq!(g.rows.len(), 14);
    assert!(g.width >= 3, "three branches side by side");
    assert!(g.rows[0].head, "newest first, the head on top");
    assert!(g.rows.iter().filter(|r| r.fork_point).count() >= 1);
    assert_eq!(
        g.rows.last().map(|r| r.source.as_deref()),
        Some(Some("input"))
    );

    let full = graph(&api, &db, "subgraph").await;
    assert!(!full.namespaces.is_empty());
    let spawner = full
        .rows
        .iter()
        .find(|r| !r.subgraphs.is_empty())
        .expect("a checkpoint that ran a subgraph");
    let ns = spawner.subgraphs[0].clone();
    let collapsed = api
        .thread_graph(GraphRequest {
            db: db.db.clone(),
            thread_id: "subgraph".into(),
            collapsed: vec![ns.clone()],
        })
        .await
        .expect("collapsed graph");
    assert!(collapsed
        .rows
        .iter()
        .all(|r| r.ns != ns && !r.ns.starts_with(&format!("{ns}|"))));
    assert!(collapsed.rows.len() < full.rows.len());
    assert!(collapsed
        .namespaces
        .iter()
        .any(|n| n.ns == ns && n.collapsed));

    let err = api
        .thread_graph(GraphRequest {
            db: db.db.clone(),
            thread_id: "no-such-thread".into(),
            collapsed: vec![],
        })
        .await
        .expect_err("unknown thread");
    assert_eq!(err.code, ErrorCode::NotFound);
    assert!(err.message.contains("forked"), "names known threads: {err}");
}

#[tokio::test]
async fn detail_groups_writes_per_task_and_gives_a_config() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let g = graph(&api, &db, "chat-tools").await;
    // The oldest checkpoint with writes from two tools (a parallel step).
    let mut saw_group = false;
    for row in g.rows.iter().rev() {
        let d = detail(&api, &db, "chat-tools", &row.ns, &row.id).await;
        assert_eq!(
            d.config,
            json!({"configurable": {"thread_id": "chat-tools", "checkpoint_ns": "", "checkpoint_id": row.id}})
        );
        assert_eq!(
            d.live, row.head,
            "the head is shown live, the rest as history"
        );
        for group in &d.writes {
            assert!(!group.writes.is_empty());
            let idx: Vec<i32> = group.writes.iter().map(|w| w.idx).collect();
            let mut sorted = idx.clone();
            sorted.sort();
            assert_eq!(idx, sorted, "writes in execution order");
            if group.node.is_some() {
                saw_group = true;
            }
            assert!(group
                .writes
                .iter()
                .all(|w| w.size > 0 || w.type_tag == "null"));
        }
        let messages = d.channels.iter().find(|v| v.channel == "messages");
        if let Some(m) = messages {
            assert_eq!(m.type_name, "list");
            if m.default {
                // Before its first write: the empty start Python shows, not stored.
                assert!(m.version.is_none());
                assert_eq!(d.values["messages"], json!([]));
            } else {
                assert!(m.size > 0);
                assert!(m.version.is_some());
            }
        }
    }
    assert!(saw_group, "writes are attributed to their node");

    let head = &g.rows[0];
    let d = detail(&api, &db, "chat-tools", "", &head.id).await;
    let messages = &d.values["messages"];
    assert_eq!(
        messages[1]["$type"], "langchain_core.messages.ai.AIMessage",
        "messages keep their Python type"
    );

    let waiting = graph(&api, &db, "interrupt-waiting").await;
    let d = detail(&api, &db, "interrupt-waiting", "", &waiting.rows[0].id).await;
    assert!(d.live);
    assert!(
        d.writes
            .iter()
            .flat_map(|g| &g.writes)
            .any(|w| w.kind == WriteKind::Interrupt),
        "the interrupt write is marked"
    );
    assert!(d.tasks.tasks.iter().any(|t| !t.interrupts.is_empty()));

    let err = api
        .checkpoint_detail(CheckpointRequest {
            live: None,
            page: None,
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: Some("1f000000-0000-6000-8000-000000000000".into()),
            reveal_secrets: false,
            full: false,
            raw: false,
            reducers: Default::default(),
            allow_locked: false,
        })
        .await
        .expect_err("unknown checkpoint");
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn bad_databases_give_clear_errors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let try_open = |location: String| {
        let api = &api;
        async move {
            api.open_database(OpenRequest {
                location,
                password: None,
                remember: true,
                save_password: false,
            })
            .await
            .expect_err("refused")
        }
    };
    let text = dir.path().join("notes.txt");
    let notes = "this is not a database, just some notes\n".repeat(200);
    std::fs::write(&text, &notes).expect("write");
    let e = try_open(text.to_string_lossy().into_owned()).await;
    assert_eq!(e.code, ErrorCode::NotADatabase, "{e}");
    assert_eq!(
        std::fs::read_to_string(&text).expect("read"),
        notes,
        "the file is untouched"
    );

    let e = try_open(
        dir.path()
            .join("missing.sqlite")
            .to_string_lossy()
            .into_owned(),
    )
    .await;
    assert_eq!(e.code, ErrorCode::NotFound, "{e}");
    assert!(!dir.path().join("missing.sqlite").exists(), "never created");

    let empty = dir.path().join("empty.sqlite");
    rusqlite_create(&empty);
    let e = try_open(empty.to_string_lossy().into_owned()).await;
    assert_eq!(e.code, ErrorCode::UnsupportedSchema, "{e}");

    let e = try_open("postgres://nobody@127.0.0.1:1/none?connect_timeout=2".into()).await;
    assert_eq!(e.code, ErrorCode::Connection, "{e}");

    let e = try_open("mysql://x/y".into()).await;
    assert_eq!(e.code, ErrorCode::InvalidInput, "{e}");

    assert!(
        api.recent_connections().await.expect("recent").is_empty(),
        "failed opens are not remembered"
    );
    let e = api
        .list_threads(ThreadsRequest {
            limit: None,
            db: "stale".into(),
            ..Default::default()
        })
        .await
        .expect_err("unknown handle");
    assert_eq!(e.code, ErrorCode::NotOpen);
}

fn rusqlite_create(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).expect("create");
    c.execute_batch("CREATE TABLE other (x INTEGER);")
        .expect("table");
}

#[tokio::test]
async fn undecodable_blobs_are_shown_in_place_and_the_rest_stays_readable() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    {
        let c = rusqlite::Connection::open(&path).expect("open rw");
        let n = c
            .execute(
                "UPDATE writes SET value = x'c1c1c1' WHERE thread_id = 'chat-tools' AND channel = 'messages'",
                [],
            )
            .expect("corrupt writes");
        assert!(n > 0);
    }
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    let g = graph(&api, &db, "chat-tools").await;
    let mut broken = 0;
    for row in &g.rows {
        let d = detail(&api, &db, "chat-tools", &row.ns, &row.id).await;
        for w in d.writes.iter().flat_map(|g| &g.writes) {
            if w.channel == "messages" {
                assert!(w.value.get("$error").is_some(), "{}", w.value);
                broken += 1;
            }
        }
        assert!(
            d.channels.iter().all(|v| v.error.is_none()),
            "values still decode"
        );
    }
    assert!(broken > 0);
}

/// `state THREAD` is Python's `get_state(config)` (live); `state --checkpoint ID` is `get_state`
/// of a config with that id — the step record — even for the latest checkpoint; the app asks
/// for the live view of its head row with `live: true`.
#[tokio::test]
async fn the_view_follows_get_state_with_and_without_a_checkpoint_id() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let ask = |id: Option<String>, live: Option<bool>| CheckpointRequest {
        live,
        page: None,
        db: db.db.clone(),
        thread_id: "interrupt-waiting".into(),
        checkpoint_ns: String::new(),
        checkpoint_id: id,
        reveal_secrets: false,
        full: false,
        raw: false,
        reducers: Default::default(),
        allow_locked: false,
    };
    let live = api.checkpoint_detail(ask(None, None)).await.expect("live");
    assert!(live.live);
    assert_eq!(live.status, ThreadStatus::Interrupted);
    let head = Some(live.checkpoint_id.clone());
    let record = api
        .checkpoint_detail(ask(head.clone(), None))
        .await
        .expect("record");
    assert!(
        !record.live,
        "an explicit id is the step record, even for the latest"
    );
    let app = api
        .checkpoint_detail(ask(head, Some(true)))
        .await
        .expect("app");
    assert!(app.live);
    let parent = Some(live.parent_checkpoint_id.clone().expect("a parent"));
    let older = api
        .checkpoint_detail(ask(parent, Some(true)))
        .await
        .expect("older");
    assert!(!older.live, "only the latest can be shown live");
}

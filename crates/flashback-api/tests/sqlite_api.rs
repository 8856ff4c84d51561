//! The command surface over the SQLite fixture: every read view, every write action, jobs,
//! and the bad inputs the UI must report clearly.

mod common;
use common::*;
use flashback_api::*;
use flashback_engine::merge::MergeMode;
use flashback_engine::ThreadStatus;
use serde_json::{json, Value as Json};

async fn graph(api: &Api, db: &DbInfo, t: &str) -> ThreadGraph {
    api.thread_graph(GraphRequest {
        db: db.db.clone(),
        thread_id: t.into(),
        collapsed: vec![],
    })
    .await
    .expect("graph")
}

async fn detail(api: &Api, db: &DbInfo, t: &str, ns: &str, id: &str) -> CheckpointDetail {
    api.checkpoint_detail(CheckpointRequest {
        db: db.db.clone(),
        thread_id: t.into(),
        checkpoint_ns: ns.into(),
        checkpoint_id: id.into(),
        reveal_secrets: false,
    })
    .await
    .expect("detail")
}

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
        .list_threads(DbRequest { db: db.db.clone() })
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
        let messages = d.values.iter().find(|v| v.channel == "messages");
        if let Some(m) = messages {
            assert_eq!(m.type_name, "list");
            assert!(m.size > 0);
            assert!(m.version.is_some());
        }
    }
    assert!(saw_group, "writes are attributed to their node");

    let head = &g.rows[0];
    let d = detail(&api, &db, "chat-tools", "", &head.id).await;
    let messages = &d
        .values
        .iter()
        .find(|v| v.channel == "messages")
        .expect("messages")
        .value;
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
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: "1f000000-0000-6000-8000-000000000000".into(),
            reveal_secrets: false,
        })
        .await
        .expect_err("unknown checkpoint");
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn fork_edit_fork_and_merge_show_up_as_new_branches() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let before = graph(&api, &db, "forked").await;
    let fork_point = before
        .rows
        .iter()
        .find(|r| r.fork_point)
        .expect("fork point")
        .clone();

    let copy = api
        .fork_checkpoint(ForkRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edits: vec![],
        })
        .await
        .expect("copy fork");
    assert_eq!(copy.parent_checkpoint_id, fork_point.id);
    let after = graph(&api, &db, "forked").await;
    assert_eq!(after.rows.len(), before.rows.len() + 1);
    assert_eq!(
        after.rows[0].id, copy.checkpoint_id,
        "the fork is the new head"
    );
    assert_eq!(after.rows[0].flashback_action.as_deref(), Some("copy_fork"));
    assert_eq!(after.width, before.width + 1, "a new lane");

    // Edit fork: the value is validated first, then written.
    let d = detail(&api, &db, "forked", "", &fork_point.id).await;
    let channel = d
        .values
        .iter()
        .find(|v| v.value.is_array())
        .expect("a list channel")
        .channel
        .clone();
    let good = ChannelEdit {
        channel: channel.clone(),
        value: json!(["edited in the test"]),
    };
    let check = api
        .validate_edit(ValidateEditRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edit: good.clone(),
        })
        .await
        .expect("validate");
    assert!(check.ok, "{check:?}");
    let bad = ChannelEdit {
        channel: channel.clone(),
        value: json!({"$type": "builtins.bytes", "base64": "%%%"}),
    };
    let check = api
        .validate_edit(ValidateEditRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edit: bad.clone(),
        })
        .await
        .expect("validate");
    assert!(!check.ok);
    assert!(
        check
            .path
            .as_deref()
            .is_some_and(|p| p.starts_with("values.")),
        "{check:?}"
    );

    let rejected = api
        .fork_checkpoint(ForkRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edits: vec![bad],
        })
        .await
        .expect_err("the engine rejects a bad value");
    assert_eq!(rejected.code, ErrorCode::InvalidEdit);
    assert_eq!(
        graph(&api, &db, "forked").await.rows.len(),
        after.rows.len(),
        "a rejected fork writes nothing"
    );

    let edited = api
        .fork_checkpoint(ForkRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: fork_point.id.clone(),
            edits: vec![good],
        })
        .await
        .expect("edit fork");
    let d = detail(&api, &db, "forked", "", &edited.checkpoint_id).await;
    assert_eq!(
        d.values
            .iter()
            .find(|v| v.channel == channel)
            .expect("channel")
            .value,
        json!(["edited in the test"])
    );
    assert_eq!(d.source.as_deref(), Some("update"));

    // Diff the edit fork against its source: the edited channel changed.
    let diff = api
        .diff_checkpoints(DiffRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            a: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: fork_point.id.clone(),
            },
            b: CheckpointRef {
                checkpoint_ns: String::new(),
                checkpoint_id: edited.checkpoint_id.clone(),
            },
        })
        .await
        .expect("diff");
    assert_eq!(diff.channels[0].channel, channel, "changed channels first");

    // Merge the edited channel into the copy fork's branch.
    let preview = api
        .merge_preview(MergePreviewRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            into: copy.checkpoint_id.clone(),
            from: edited.checkpoint_id.clone(),
            channels: vec![channel.clone()],
        })
        .await
        .expect("3-way");
    assert_eq!(
        preview[0].fork_point.as_deref(),
        Some(fork_point.id.as_str())
    );
    let merged = api
        .merge_branches(MergeRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            into: copy.checkpoint_id.clone(),
            from: edited.checkpoint_id.clone(),
            channels: vec![MergeChannel {
                channel: channel.clone(),
                mode: MergeMode::TakeB,
            }],
        })
        .await
        .expect("merge");
    assert_eq!(merged.parent_checkpoint_id, copy.checkpoint_id);
    let g = graph(&api, &db, "forked").await;
    assert_eq!(g.rows[0].flashback_action.as_deref(), Some("merge"));

    // Replay the merged branch: root first, the merge last.
    let steps = api
        .replay_steps(ReplayRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            tip: Some(merged.checkpoint_id.clone()),
        })
        .await
        .expect("replay");
    assert_eq!(
        steps.last().map(|s| s.checkpoint_id.as_str()),
        Some(merged.checkpoint_id.as_str())
    );
    assert_eq!(steps[0].source.as_deref(), Some("input"));
}

#[tokio::test]
async fn export_job_reports_progress_and_the_file_verifies() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;

    // To a file, as HTML.
    let out = dir.path().join("long.html");
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_id: None,
            format: ExportFormat::Html,
            redact: vec!["*token*".into()],
            path: Some(out.to_string_lossy().into_owned()),
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let progress = done.progress.expect("progress");
    assert_eq!((progress.done, progress.total), (300, 300));
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    assert_eq!(result.checkpoints, 300);
    assert!(result.content.is_none());
    let report = api
        .verify_export(VerifyRequest {
            path: result.path.clone(),
            content: None,
        })
        .await
        .expect("verify");
    assert!(report.ok, "{:?}", report.problems);

    // As content (the browser downloads it), then tampered with.
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "chat-tools".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: None,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    let result: ExportResult = serde_json::from_value(done.result.expect("result")).expect("shape");
    assert_eq!(result.file_name, "chat-tools-tree.json");
    let content = result.content.expect("content");
    assert!(
        api.verify_export(VerifyRequest {
            path: None,
            content: Some(content.clone()),
        })
        .await
        .expect("verify")
        .ok
    );
    let tampered = content.replacen("What is 2+3", "What is 9+9", 1);
    let report = api
        .verify_export(VerifyRequest {
            path: None,
            content: Some(tampered),
        })
        .await
        .expect("verify");
    assert!(!report.ok);

    // A folder that does not exist is refused before any work.
    let err = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: Some(
                dir.path()
                    .join("nope/x.json")
                    .to_string_lossy()
                    .into_owned(),
            ),
        })
        .await
        .expect_err("missing folder");
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[tokio::test]
async fn an_export_can_be_cancelled() {
    let OpenedFixture { dir, api, db, .. } = opened_fixture().await;
    let out = dir.path().join("never.json");
    let job = api
        .start_export(ExportRequest {
            db: db.db.clone(),
            thread_id: "long".into(),
            checkpoint_id: None,
            format: ExportFormat::Json,
            redact: vec![],
            path: Some(out.to_string_lossy().into_owned()),
        })
        .await
        .expect("start");
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel");
    // `#[tokio::test]` runs on one thread and neither call above yields to the spawned job, so
    // the cancel is set before the export reads its first checkpoint: the outcome is certain.
    // (Cancelling part-way through hashing is the engine's `export_bundle` test.)
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Cancelled, "{:?}", done.error);
    let err = done.error.expect("a cancelled job carries an error");
    assert_eq!(err.code, ErrorCode::Cancelled);
    assert!(!out.exists(), "a cancelled export leaves no file");
    assert!(
        std::fs::read_dir(dir.path()).expect("list").all(|e| !e
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .contains("never")),
        "nor a temporary file"
    );
}

#[tokio::test]
async fn delete_and_prune_preview_then_write() {
    let OpenedFixture {
        dir: _dir,
        path,
        api,
        db,
    } = opened_fixture().await;
    let before = fingerprint(&path);
    let preview = api
        .delete_thread(DeleteRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            dry_run: true,
        })
        .await
        .expect("preview");
    assert_eq!(preview.checkpoints, 14);
    assert!(preview.writes > 0);
    let prune = api
        .prune_threads(PruneRequest {
            db: db.db.clone(),
            thread_ids: vec!["long".into()],
            strategy: PruneMode::KeepLatest,
            dry_run: true,
        })
        .await
        .expect("prune preview");
    assert_eq!(prune.checkpoints.len(), 299);
    assert_eq!(fingerprint(&path), before, "previews write nothing");

    api.delete_thread(DeleteRequest {
        db: db.db.clone(),
        thread_id: "forked".into(),
        dry_run: false,
    })
    .await
    .expect("delete");
    api.prune_threads(PruneRequest {
        db: db.db.clone(),
        thread_ids: vec!["long".into()],
        strategy: PruneMode::KeepLatest,
        dry_run: false,
    })
    .await
    .expect("prune");
    let threads = api
        .list_threads(DbRequest { db: db.db.clone() })
        .await
        .expect("threads");
    assert!(threads.iter().all(|t| t.thread_id != "forked"));
    assert_eq!(
        threads
            .iter()
            .find(|t| t.thread_id == "long")
            .map(|t| t.checkpoint_count),
        Some(1)
    );
    let err = api
        .delete_thread(DeleteRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            dry_run: true,
        })
        .await
        .expect_err("gone");
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
        .list_threads(DbRequest { db: "stale".into() })
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
            d.values.iter().all(|v| v.error.is_none()),
            "values still decode"
        );
    }
    assert!(broken > 0);
}

#[tokio::test]
async fn recent_connections_settings_and_the_last_database() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = fixture_copy(dir.path());
    {
        // A `serve` session does not change what the desktop app reopens.
        let served = api_in(dir.path(), Initial::None);
        open(
            &served,
            &fixtures().join("langgraph.sqlite").to_string_lossy(),
        )
        .await;
        let api = api_as(HostMode::Desktop, dir.path(), Initial::None);
        api.open_database(OpenRequest {
            location: path.to_string_lossy().into_owned(),
            password: None,
            remember: true,
            save_password: false,
        })
        .await
        .expect("open");
        let recent = api.recent_connections().await.expect("recent");
        assert_eq!(recent.len(), 1);
        assert!(!recent[0].missing);
        api.set_setting(SetSettingRequest {
            key: "theme".into(),
            value: Some("dark".into()),
        })
        .await
        .expect("theme");
        let e = api
            .set_setting(SetSettingRequest {
                key: "theme".into(),
                value: Some("purple".into()),
            })
            .await
            .expect_err("bad theme");
        assert_eq!(e.code, ErrorCode::InvalidInput);
    }
    // A new start (desktop) reopens the last database and keeps the theme.
    let api = api_as(HostMode::Desktop, dir.path(), Initial::Last);
    let info = api.app_info().await.expect("info");
    assert_eq!(
        info.initial.as_ref().map(|d| d.location.as_str()),
        Some(path.to_str().expect("utf-8"))
    );
    assert!(info
        .settings
        .iter()
        .any(|s| s.key == "theme" && s.value == "dark"));
    // The initial database is opened once; a reloaded page gets the same one.
    assert_eq!(
        api.app_info().await.expect("again").initial.map(|d| d.db),
        info.initial.as_ref().map(|d| d.db.clone())
    );

    let recent = api.recent_connections().await.expect("recent");
    let id = recent[0].id;
    let reopened = api
        .open_recent(OpenRecentRequest {
            id,
            password: None,
            save_password: false,
        })
        .await
        .expect("reopen");
    assert_eq!(reopened.kind, DbKind::Sqlite);
    std::fs::remove_file(&path).expect("rm");
    assert!(api.recent_connections().await.expect("recent")[0].missing);
    api.forget_connection(ConnectionId { id })
        .await
        .expect("forget");
    assert!(api.recent_connections().await.expect("recent").is_empty());
}

#[tokio::test]
async fn the_demo_database_is_a_private_copy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::Demo);
    let info = api.app_info().await.expect("info");
    let demo = info.initial.expect("demo opened");
    assert!(demo.demo);
    assert!(demo
        .location
        .starts_with(dir.path().to_str().expect("utf-8")));
    let fork = api
        .fork_checkpoint(ForkRequest {
            db: demo.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: graph(&api, &demo, "forked").await.rows[3].id.clone(),
            edits: vec![],
        })
        .await
        .expect("fork in the demo");
    let again = api
        .open_demo(DemoRequest { reset: false })
        .await
        .expect("reopen");
    assert_eq!(
        graph(&api, &again, "forked").await.rows[0].id,
        fork.checkpoint_id,
        "kept"
    );
    let fresh = api
        .open_demo(DemoRequest { reset: true })
        .await
        .expect("reset");
    assert_eq!(
        graph(&api, &fresh, "forked").await.rows.len(),
        14,
        "reset drops forks"
    );
    assert_eq!(
        fingerprint(&fixtures().join("langgraph.sqlite")),
        fingerprint(std::path::Path::new(&fresh.location)),
        "the demo is the committed fixture"
    );
}

#[tokio::test]
async fn every_command_is_dispatched_by_name() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    for name in COMMANDS {
        match api.dispatch(name, &json!({"req": {}})).await {
            Ok(_) => {}
            Err(e) => assert!(
                !e.message.starts_with("unknown command"),
                "{name} is not dispatched: {e}"
            ),
        }
    }
    let threads = api
        .dispatch("list_threads", &json!({"req": {"db": db.db}}))
        .await
        .expect("list_threads over dispatch");
    assert_eq!(threads.as_array().map(Vec::len), Some(12));
    let e = api
        .dispatch("rm_rf", &Json::Null)
        .await
        .expect_err("unknown");
    assert_eq!(e.code, ErrorCode::NotFound);
    let e = api
        .dispatch("thread_graph", &json!({"req": {"db": 5}}))
        .await
        .expect_err("bad args");
    assert_eq!(e.code, ErrorCode::InvalidInput);
}

#[tokio::test]
async fn rerun_tails_new_checkpoints_and_output_and_can_be_stopped() {
    let OpenedFixture {
        dir: _dir, api, db, ..
    } = opened_fixture().await;
    let g = graph(&api, &db, "forked").await;
    let from = g.rows[2].id.clone();
    let job = api
        .start_rerun(RerunRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: from.clone(),
            runner: "echo \"resuming $FLASHBACK_THREAD_ID from $FLASHBACK_CHECKPOINT_ID\"; echo oops >&2".into(),
            timeout_secs: 30,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    let fork: flashback_engine::fork::ForkResult =
        serde_json::from_value(done.result.expect("fork")).expect("shape");
    assert_eq!(fork.parent_checkpoint_id, from);
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Checkpoint { checkpoint_id, .. } if *checkpoint_id == fork.checkpoint_id)));
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Output { stream, line } if stream == "stdout" && line.contains(&fork.checkpoint_id))));
    assert!(done.events.iter().any(|e| matches!(e,
        JobEvent::Output { stream, line } if stream == "stderr" && line == "oops")));
    // The runner is remembered for this database.
    let info = api.app_info().await.expect("info");
    assert!(info.settings.iter().any(|s| s.key.starts_with("runner:")));

    let started = std::time::Instant::now();
    let job = api
        .start_rerun(RerunRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: from.clone(),
            runner: "sleep 60 & sleep 60; wait".into(),
            timeout_secs: 120,
        })
        .await
        .expect("start");
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    api.job_cancel(JobRequest { job: job.clone() })
        .await
        .expect("cancel");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Cancelled);
    assert!(started.elapsed().as_secs() < 20, "stopped promptly");
    assert!(done.error.expect("why").message.contains("kept"));

    let job = api
        .start_rerun(RerunRequest {
            db: db.db.clone(),
            thread_id: "forked".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: from,
            runner: "exit 3".into(),
            timeout_secs: 30,
        })
        .await
        .expect("start");
    let done = finish(&api, &job).await;
    assert_eq!(done.state, JobState::Failed);
    assert!(done.error.expect("why").message.contains("runner failed"));
}

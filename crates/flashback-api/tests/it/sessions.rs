//! Sessions: recent connections, settings, the last database, the demo copy, dispatch by name.

use crate::common;
use common::*;
use flashback_api::*;
use serde_json::{json, Value as Json};

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
        // Where the app was left (the UI's route): kept for the next start.
        api.set_setting(SetSettingRequest {
            key: "place".into(),
            value: Some("#/thread/forked?tab=writes".into()),
        })
        .await
        .expect("place");
        let e = api
            .set_setting(SetSettingRequest {
                key: "place".into(),
                value: Some("https://elsewhere".into()),
            })
            .await
            .expect_err("not a route");
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
    assert!(info
        .settings
        .iter()
        .any(|s| s.key == "place" && s.value == "#/thread/forked?tab=writes"));
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
            as_node: None,
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

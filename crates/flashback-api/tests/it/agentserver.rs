//! An Agent Server's URL through the front door, against a scripted server
//! (`flashback_testkit::http::keyed`): the key asked for as a password and never kept in the
//! location, the thread's status and the checkpoint's next task and interrupt as the server
//! names them, and a fork made through the server's `POST /threads/{id}/state`.

use crate::common::{api_in, detail};
use flashback_api::{
    DbKind, DeleteRequest, ErrorCode, ForkRequest, Initial, OpenRequest, ThreadsRequest,
};
use flashback_testkit::http::{keyed, serve};

fn request(location: &str, password: Option<&str>) -> OpenRequest {
    OpenRequest {
        location: location.to_owned(),
        password: password.map(str::to_owned),
        remember: true,
        save_password: false,
    }
}

#[tokio::test]
async fn an_agent_server_opens_with_its_key_and_reads_and_forks_the_servers_way() {
    let url = serve(keyed).await;
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);

    let e = api
        .open_database(request(&url, None))
        .await
        .expect_err("a key is needed");
    assert_eq!(e.code, ErrorCode::NeedsPassword, "{}", e.message);
    assert!(e.message.contains("API key"), "{}", e.message);

    let db = api
        .open_database(request(&format!("{url}/"), Some("right-key")))
        .await
        .expect("opens with the key");
    assert_eq!(db.kind, DbKind::AgentServer);
    assert_eq!(db.location, url);
    assert!(!db.location.contains("right-key"));
    assert_eq!(
        db.server.as_ref().and_then(|s| s.api_url.as_deref()),
        Some(url.as_str())
    );

    let threads = api
        .list_threads(ThreadsRequest {
            db: db.db.clone(),
            limit: None,
            ..Default::default()
        })
        .await
        .expect("threads");
    assert_eq!(threads.len(), 1);
    let json = serde_json::to_value(&threads[0]).expect("json");
    assert_eq!(json["status"], "interrupted", "{json}");

    let d = detail(&api, &db, "th", "", "c2").await;
    assert_eq!(d.tasks.next, ["review"]);
    assert_eq!(d.tasks.tasks[0].interrupts.len(), 1);
    assert_eq!(d.values["request"], "a refund");

    let forked = api
        .fork_checkpoint(ForkRequest {
            db: db.db.clone(),
            thread_id: "th".into(),
            checkpoint_ns: String::new(),
            checkpoint_id: "c2".into(),
            edits: vec![],
            as_node: Some("review".into()),
        })
        .await
        .expect("fork through the server");
    assert_eq!(forked.checkpoint_id, "c3");

    let preview = api
        .delete_thread(DeleteRequest {
            db: db.db.clone(),
            thread_id: "th".into(),
            dry_run: true,
        })
        .await
        .expect("a preview");
    assert_eq!((preview.checkpoints, preview.dry_run), (1, true));
    let deleted = api
        .delete_thread(DeleteRequest {
            db: db.db.clone(),
            thread_id: "th".into(),
            dry_run: false,
        })
        .await
        .expect("deleted through the server");
    assert!(!deleted.dry_run);

    let recent = api.recent_connections().await.expect("recent");
    assert_eq!(recent[0].kind, DbKind::AgentServer);
    assert_eq!(recent[0].location, url);
}

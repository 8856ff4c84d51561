//! The Agent Server source against small scripted HTTP servers: every way of failing to
//! open is one line naming the server (unreachable, hanging, not an Agent Server, a key
//! missing or refused — the key never shown), and a server's answers read as checkpoints.
//! The real `langgraph dev` is checked in tests/interop/agentserver_test.py.

use flashback_storage::agentserver::{set_api_key, AgentServerStore};
use flashback_storage::{CheckpointStore, StoreError};
use flashback_testkit::http::{keyed, serve};
use std::time::{Duration, Instant};
use tokio::net::TcpListener;

fn one_line(e: &StoreError) -> String {
    let s = e.to_string();
    assert!(!s.contains('\n'), "{s}");
    s
}

#[tokio::test]
async fn an_unreachable_server_is_one_line() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr").port()
    };
    let url = format!("http://127.0.0.1:{port}");
    let e = AgentServerStore::open(&url).await.err().expect("refused");
    let s = one_line(&e);
    assert!(s.contains(&url) && s.contains("cannot reach"), "{s}");
}

#[tokio::test]
async fn a_server_that_never_answers_is_given_up_on_within_the_connect_limit() {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let held = tokio::spawn(async move {
        let mut socks = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            socks.push(s);
        }
    });
    let t = Instant::now();
    let e = AgentServerStore::open(&url).await.err().expect("timed out");
    assert!(t.elapsed() < Duration::from_secs(15), "{:?}", t.elapsed());
    let s = one_line(&e);
    assert!(s.contains("did not answer GET /ok within 10 s"), "{s}");
    assert!(e.is_timeout());
    held.abort();
}

#[tokio::test]
async fn a_web_server_that_is_not_langgraph_is_refused() {
    let url = serve(|_, _| (404, "text/html", "<h1>Not Found</h1>".into())).await;
    let s = one_line(&AgentServerStore::open(&url).await.err().expect("refused"));
    assert!(s.contains("is not a LangGraph Agent Server"), "{s}");
    // A single-page app answers every path with its page.
    let url = serve(|_, _| (200, "text/html", "<html>app</html>".into())).await;
    let s = one_line(&AgentServerStore::open(&url).await.err().expect("refused"));
    assert!(s.contains("is not a LangGraph Agent Server"), "{s}");
}

#[tokio::test]
async fn a_key_is_asked_for_refused_in_one_line_and_never_shown() {
    let url = serve(keyed).await;
    let e = AgentServerStore::open(&url)
        .await
        .err()
        .expect("needs a key");
    assert!(matches!(e, StoreError::Auth(_)), "{e}");
    assert!(one_line(&e).contains("needs an API key"), "{e}");

    set_api_key(&url, "wrong-key-123");
    let e = AgentServerStore::open(&url).await.err().expect("refused");
    let s = one_line(&e);
    assert!(
        s.contains("refused the API key") && s.contains("Invalid API key"),
        "{s}"
    );
    assert!(!s.contains("wrong-key-123"), "{s}");

    set_api_key(&url, "right-key");
    let store = AgentServerStore::open(&url)
        .await
        .expect("opens with the key");
    let threads = store.list_threads().await.expect("threads");
    assert_eq!(threads.len(), 1);
    assert_eq!(threads[0].latest_checkpoint_id.as_deref(), Some("c2"));
    let t = store
        .get_tuple("th", "", None)
        .await
        .expect("read")
        .expect("latest");
    assert_eq!(t.header.parent_checkpoint_id.as_deref(), Some("c1"));
    assert_eq!(t.served.as_ref().expect("served").tasks[0].name, "review");
    assert_eq!(t.pending_writes[0].channel, "__interrupt__");
    let server = store.server().await.expect("server").expect("a server");
    assert_eq!(server.threads[0].status.as_deref(), Some("interrupted"));
    assert_eq!(server.api_url.as_deref(), Some(url.as_str()));
    assert!(store
        .get_tuple("nope", "", None)
        .await
        .expect("read")
        .is_none());
    set_api_key(&url, "");
}

fn one_bad_thread(line: &str, _key: Option<&str>) -> (u16, &'static str, String) {
    let state = |id: &str| {
        serde_json::json!({"values": {"n": 1}, "tasks": [], "metadata": {"step": 0},
            "checkpoint": {"checkpoint_id": id, "checkpoint_ns": ""}})
    };
    let ok = |v: serde_json::Value| (200, "application/json", v.to_string());
    match line.split_whitespace().nth(1).unwrap_or("") {
        "/ok" => ok(serde_json::json!({"ok": true})),
        "/threads/search" => ok(serde_json::json!([
            {"thread_id": "good", "status": "idle", "updated_at": "2"},
            {"thread_id": "bad", "status": "idle", "updated_at": "1"}
        ])),
        "/threads/good/history" => ok(serde_json::json!([state("g1")])),
        "/threads/bad/history" => (200, "application/json", "{not json".into()),
        p if p.ends_with("/runs?limit=1000") => ok(serde_json::json!([])),
        _ => (404, "application/json", r#"{"detail":"Not Found"}"#.into()),
    }
}

#[tokio::test]
async fn one_threads_bad_answer_damages_only_that_thread() {
    let url = serve(one_bad_thread).await;
    let store = AgentServerStore::open(&url).await.expect("opens");
    let threads = store.list_threads().await.expect("the list is read");
    let ids: Vec<&str> = threads.iter().map(|t| t.thread_id.as_str()).collect();
    assert_eq!(ids, ["bad", "good"]);
    let bad = one_line_problem(threads[0].problem.as_deref());
    assert!(bad.contains("its history cannot be read"), "{bad}");
    assert_eq!(threads[1].latest_checkpoint_id.as_deref(), Some("g1"));
    assert!(threads[1].problem.is_none());
}

fn one_line_problem(p: Option<&str>) -> String {
    let p = p.expect("a problem").to_owned();
    assert!(!p.contains('\n'), "{p}");
    p
}

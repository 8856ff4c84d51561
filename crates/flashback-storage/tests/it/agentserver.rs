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

//! The Agent Server source against small scripted HTTP servers: every way of failing to
//! open is one line naming the server (unreachable, hanging, not an Agent Server, a key
//! missing or refused — the key never shown), and a server's answers read as checkpoints.
//! The real `langgraph dev` is checked in tests/interop/agentserver_test.py.

use flashback_storage::agentserver::{set_api_key, AgentServerStore};
use flashback_storage::{CheckpointStore, StoreError};
use serde_json::{json, Value as Json};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the scripted server answers: `(status, content type, body)` for a request line and
/// its `x-api-key` header.
type Script = fn(&str, Option<&str>) -> (u16, &'static str, String);

async fn serve(script: Script) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let Ok(n) = sock.read(&mut chunk).await else {
                        return;
                    };
                    if n == 0 {
                        return;
                    }
                    buf.extend_from_slice(&chunk[..n]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    let Some(end) = text.find("\r\n\r\n") else {
                        continue;
                    };
                    let head = &text[..end];
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap_or(0))
                        })
                        .unwrap_or(0);
                    if buf.len() < end + 4 + length {
                        continue;
                    }
                    let line = head.lines().next().unwrap_or("").to_owned();
                    let key = head.lines().find_map(|l| {
                        l.to_ascii_lowercase()
                            .starts_with("x-api-key:")
                            .then(|| l["x-api-key:".len()..].trim().to_owned())
                    });
                    let (status, ctype, body) = script(&line, key.as_deref());
                    let resp = format!(
                        "HTTP/1.1 {status} X\r\ncontent-type: {ctype}\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    );
                    let _ = sock.write_all(resp.as_bytes()).await;
                    buf.clear();
                }
            });
        }
    });
    format!("http://{addr}")
}

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

fn keyed(line: &str, key: Option<&str>) -> (u16, &'static str, String) {
    if line.starts_with("GET /ok") {
        return (200, "application/json", r#"{"ok":true}"#.into());
    }
    if key != Some("right-key") {
        return (
            401,
            "application/json",
            r#"{"detail":"Invalid API key"}"#.into(),
        );
    }
    let state = json!({
        "values": {"request": "a refund", "draft": "draft"},
        "next": ["review"],
        "tasks": [{"id": "t-1", "name": "review", "path": ["__pregel_pull", "review"],
                   "error": null, "interrupts": [{"id": "i1", "value": "approve?"}],
                   "checkpoint": null, "state": null, "result": null}],
        "metadata": {"step": 1, "source": "loop", "graph_id": "approval"},
        "created_at": "2026-11-29T05:02:41.016712+00:00",
        "checkpoint": {"checkpoint_id": "c2", "thread_id": "th", "checkpoint_ns": ""},
        "parent_checkpoint": {"checkpoint_id": "c1", "thread_id": "th", "checkpoint_ns": ""}
    });
    let body: Json = match line.split_whitespace().nth(1).unwrap_or("") {
        "/threads/search" => json!([{"thread_id": "th", "status": "interrupted",
            "updated_at": "2026-11-29T05:02:41+00:00", "metadata": {"graph_id": "approval"}}]),
        "/threads/th/history" => json!([state]),
        "/threads/th" => json!({"thread_id": "th", "status": "interrupted"}),
        "/info" => json!({"version": "0.16.7"}),
        "/assistants/search" => json!([]),
        "/store/items/search" => json!({"items": []}),
        p if p.starts_with("/threads/th/runs") => json!([]),
        _ => return (404, "application/json", r#"{"detail":"Not Found"}"#.into()),
    };
    (200, "application/json", body.to_string())
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

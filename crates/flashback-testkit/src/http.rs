//! A scripted HTTP server for the Agent Server source's tests: each request line (and its
//! `x-api-key`) is answered by a plain function, so a test is one table of answers; and
//! [`keyed`], a small Agent Server that wants the key `right-key` and holds one thread `th`
//! waiting on an interrupt in `review`.

use serde_json::{json, Value as Json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// What the scripted server answers: `(status, content type, body)` for a request line and
/// its `x-api-key` header.
pub type Script = fn(&str, Option<&str>) -> (u16, &'static str, String);

pub async fn serve(script: Script) -> String {
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

/// A small Agent Server: `GET /ok` open to all, everything else wants `x-api-key: right-key`;
/// one thread `th` (graph `approval`) whose latest checkpoint `c2` (parent `c1`) waits on an
/// interrupt in `review`; `POST /threads/th/state` answers the new checkpoint `c3`.
pub fn keyed(line: &str, key: Option<&str>) -> (u16, &'static str, String) {
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
        "/threads/th" => json!({"thread_id": "th", "status": "interrupted",
            "metadata": {"graph_id": "approval"}}),
        "/threads/th/state" => json!({"checkpoint": {"checkpoint_id": "c3", "thread_id": "th",
            "checkpoint_ns": ""}}),
        "/info" => json!({"version": "0.16.7"}),
        "/assistants/search" => json!([]),
        "/store/items/search" => json!({"items": []}),
        p if p.starts_with("/threads/th/runs") => json!([]),
        _ => return (404, "application/json", r#"{"detail":"Not Found"}"#.into()),
    };
    (200, "application/json", body.to_string())
}

//! `flashback mcp DB --http PORT`: the streamable-HTTP transport (rmcp's) at
//! `http://127.0.0.1:PORT/mcp`, behind `serve`'s rules: listening on 127.0.0.1 only, exactly one
//! `Host` naming the loopback address and port served (DNS rebinding), a request from a page of
//! another origin refused, and `Authorization: Bearer <token>` on every request. The token is
//! random per start and printed with the URL, or `FLASHBACK_MCP_TOKEN` when set (so a client's
//! configuration can name it; at least 16 characters).

use super::Handler;
use crate::serve::api::{bearer, cross_site, host_ok, same_token};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use flashback_api::ApiError;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::sync::Arc;

struct Guard {
    token: String,
    port: u16,
}

fn refuse(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({"code": "unauthorized", "message": message});
    (status, axum::Json(body)).into_response()
}

async fn guard(State(g): State<Arc<Guard>>, req: Request, next: Next) -> Response {
    let headers = req.headers();
    let hosts: Vec<&HeaderValue> = headers.get_all(header::HOST).iter().collect();
    match hosts.as_slice() {
        [host] if host_ok(host, g.port) => {}
        [_, _, ..] => {
            return refuse(
                StatusCode::BAD_REQUEST,
                "a request must carry exactly one Host header",
            )
        }
        _ => {
            return refuse(
                StatusCode::FORBIDDEN,
                &format!("requests must be made to 127.0.0.1:{}", g.port),
            )
        }
    }
    if let Some(why) = cross_site(headers) {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    if !bearer(headers).any(|t| same_token(t, &g.token)) {
        return refuse(
            StatusCode::UNAUTHORIZED,
            "missing or wrong token: send the header `Authorization: Bearer <token>` that `flashback mcp --http` printed",
        );
    }
    next.run(req).await
}

/// The token: `FLASHBACK_MCP_TOKEN`, or a random one.
fn token() -> Result<String, ApiError> {
    match std::env::var("FLASHBACK_MCP_TOKEN") {
        Ok(t) if t.trim().len() >= 16 && t.trim().is_ascii() => Ok(t.trim().to_owned()),
        Ok(_) => Err(ApiError::invalid(
            "FLASHBACK_MCP_TOKEN must be at least 16 ASCII characters",
        )),
        Err(_) => Ok(uuid::Uuid::new_v4().simple().to_string()),
    }
}

/// Serve `handler` on 127.0.0.1:`port` until Ctrl-C.
pub async fn serve(handler: Handler, db: &str, port: u16) -> Result<String, ApiError> {
    let token = token()?;
    let listener = crate::serve::listen(port)
        .map_err(|e| ApiError::io(format!("cannot listen on 127.0.0.1:{port}: {e}")))?;
    let port = listener
        .local_addr()
        .map_err(|e| ApiError::io(e.to_string()))?
        .port();
    let config = StreamableHttpServerConfig::default().with_allowed_hosts([
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]);
    let service: StreamableHttpService<Handler, LocalSessionManager> =
        StreamableHttpService::new(move || Ok(handler.clone()), Arc::default(), config);
    let guard_state = Arc::new(Guard {
        token: token.clone(),
        port,
    });
    let app = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(guard_state, guard));
    let what = flashback_api::Location::parse(db)
        .map(|l| l.public)
        .unwrap_or_else(|_| db.to_owned());
    crate::out::stdout(&format!(
        "Flashback MCP server for {what}\n  url     http://127.0.0.1:{port}/mcp\n  header  Authorization: Bearer {token}\nPress Ctrl-C to stop.\n"
    ));
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| ApiError::io(format!("mcp --http: {e}")))?;
    Ok("stopped\n".into())
}

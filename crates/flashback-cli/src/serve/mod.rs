//! `flashback serve`: the desktop app's UI and commands over HTTP on 127.0.0.1.
//!
//! ```text
//!  browser ──GET /, /assets/*──────────────▶ the built UI (embedded at compile time)
//!          ──POST /api/<command> {"req":…}─▶ flashback_api::Api::dispatch ─▶ JSON | {code, message}
//!             Authorization: Bearer <token>
//! ```
//!
//! The token is random per start and printed in the URL's fragment (`/#token=…`), which browsers
//! never send to servers or put in `Referer`. Every API call must carry it; requests whose `Host`
//! is not the loopback address they were made to are refused (DNS rebinding).

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use flashback_api::{Api, ApiConfig, ApiError, ErrorCode, HostMode, Initial};
use serde_json::Value as Json;
use std::sync::Arc;

include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// Options of `flashback serve`.
pub struct ServeOptions {
    /// The database, unless `demo`.
    pub db: Option<String>,
    /// Serve the built-in demo database.
    pub demo: bool,
    /// Port (0: any free port).
    pub port: u16,
}

struct Shared {
    api: Api,
    token: String,
    port: u16,
}

const CSP: &str = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; \
                   connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

fn content_type(path: &str) -> &'static str {
    match path.rsplit('.').next().unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

fn security_headers(headers: &mut HeaderMap) {
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
}

fn error_response(status: StatusCode, e: &ApiError) -> Response {
    let mut r = (status, axum::Json(e)).into_response();
    security_headers(r.headers_mut());
    r
}

fn host_ok(headers: &HeaderMap, port: u16) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok()) else {
        return false;
    };
    [
        format!("127.0.0.1:{port}"),
        format!("localhost:{port}"),
        format!("[::1]:{port}"),
    ]
    .iter()
    .any(|h| h.eq_ignore_ascii_case(host))
}

/// Compare without stopping at the first difference.
fn same_token(given: &str, want: &str) -> bool {
    given.len() == want.len()
        && given
            .bytes()
            .zip(want.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

async fn api_call(
    State(shared): State<Arc<Shared>>,
    Path(command): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    if !host_ok(&headers, shared.port) {
        return error_response(
            StatusCode::FORBIDDEN,
            &ApiError::new(
                ErrorCode::Unauthorized,
                "requests must be made to 127.0.0.1",
            ),
        );
    }
    let token = headers
        .get(header::AUTHORIZATION)
        .and_then(|h| h.to_str().ok())
        .and_then(|h| h.strip_prefix("Bearer "))
        .unwrap_or("");
    if !same_token(token, &shared.token) {
        return error_response(
            StatusCode::UNAUTHORIZED,
            &ApiError::new(
                ErrorCode::Unauthorized,
                "missing or wrong token: open the URL `flashback serve` printed (it ends in #token=…)",
            ),
        );
    }
    let args: Json = if body.is_empty() {
        Json::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(v) => v,
            Err(e) => {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    &ApiError::invalid(format!("the request body is not JSON: {e}")),
                )
            }
        }
    };
    if !flashback_api::COMMANDS.contains(&command.as_str()) {
        return error_response(
            StatusCode::NOT_FOUND,
            &ApiError::not_found(format!("unknown command {command:?}")),
        );
    }
    match shared.api.dispatch(&command, &args).await {
        Ok(v) => {
            let mut r = axum::Json(v).into_response();
            r.headers_mut()
                .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            r
        }
        Err(e) => {
            let status = if e.code == ErrorCode::Internal {
                StatusCode::INTERNAL_SERVER_ERROR
            } else {
                StatusCode::BAD_REQUEST
            };
            error_response(status, &e)
        }
    }
}

/// The embedded file for a URL path (the SPA's `index.html` for anything unknown).
fn asset(path: &str) -> Option<(&'static str, &'static [u8])> {
    let find = |p: &str| {
        UI_ASSETS
            .iter()
            .find(|(name, _)| *name == p)
            .map(|(name, bytes)| (*name, *bytes))
    };
    let wanted = if path == "/" { "/index.html" } else { path };
    find(wanted).or_else(|| {
        // Unknown non-file paths are the UI's own routes.
        (!wanted.rsplit('/').next().unwrap_or("").contains('.'))
            .then(|| find("/index.html"))
            .flatten()
    })
}

async fn static_file(uri: Uri) -> Response {
    match asset(uri.path()) {
        Some((name, bytes)) => {
            let mut r = bytes.into_response();
            let h = r.headers_mut();
            h.insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(content_type(name)),
            );
            // Hashed asset names never change; the page itself is always fetched again.
            h.insert(
                header::CACHE_CONTROL,
                HeaderValue::from_static(if name.starts_with("/assets/") {
                    "public, max-age=31536000, immutable"
                } else {
                    "no-cache"
                }),
            );
            security_headers(h);
            r
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

/// The router (public for tests).
pub fn router(api: Api, token: String, port: u16) -> Router {
    let shared = Arc::new(Shared { api, token, port });
    Router::new()
        .route("/api/{command}", post(api_call))
        .fallback(static_file)
        .layer(DefaultBodyLimit::max(256 * 1024 * 1024))
        .with_state(shared)
}

/// Run the server until Ctrl-C.
pub async fn serve(opts: ServeOptions) -> Result<String, ApiError> {
    if UI_ASSETS.is_empty() {
        return Err(ApiError::invalid(
            "this flashback was built without the UI: run `npm install && npm --prefix ui run build`, then rebuild (cargo build -p flashback-cli)",
        ));
    }
    let initial = match (&opts.db, opts.demo) {
        (Some(_), true) => return Err(ApiError::invalid("give a database or --demo, not both")),
        (None, false) => {
            return Err(ApiError::invalid(
                "give a database (a .sqlite file or a postgres:// URL) or --demo",
            ))
        }
        (None, true) => Initial::Demo,
        (Some(db), false) => Initial::Location(db.clone()),
    };
    let api = Api::new(ApiConfig {
        host: HostMode::Serve,
        data_dir: flashback_api::default_data_dir(),
        initial,
        secrets: Box::new(flashback_api::secrets::NoSecrets),
    })?;
    // Open the database now and fail with the CLI's exit codes rather than in the browser.
    if let Some(e) = api.app_info().await?.initial_error {
        return Err(e);
    }
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", opts.port))
        .await
        .map_err(|e| ApiError::io(format!("cannot listen on 127.0.0.1:{}: {e}", opts.port)))?;
    let port = listener
        .local_addr()
        .map_err(|e| ApiError::io(e.to_string()))?
        .port();
    let token = uuid::Uuid::new_v4().simple().to_string();
    let what = match (&opts.db, opts.demo) {
        (_, true) => "the demo database".to_owned(),
        (Some(db), _) => flashback_api::Location::parse(db)
            .map(|l| l.public)
            .unwrap_or_else(|_| db.clone()),
        (None, false) => String::new(),
    };
    // One write, and no panic when stdout is gone (a closed pipe must not stop the server).
    crate::out::stdout(&format!(
        "Flashback is serving {what}\n  open http://127.0.0.1:{port}/#token={token}\nPress Ctrl-C to stop.\n"
    ));
    let app = router(api, token, port);
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| ApiError::io(format!("server error: {e}")))?;
    Ok("stopped\n".into())
}

//! `flashback serve`: the desktop app's UI and commands over HTTP on 127.0.0.1.
//!
//! ```text
//!  browser ──GET /, /assets/*──────────────▶ the built UI (embedded at compile time)
//!          ──POST /api/<command> {"req":…}─▶ flashback_api::Api::dispatch ─▶ JSON | {code, message}
//!             Authorization: Bearer <token>, or the cookie + X-Flashback: 1
//! ```
//!
//! The token is random per start and printed in the URL's fragment (`/#token=…`), which browsers
//! never send to servers or put in `Referer`. The page sends it once as a bearer token, gets it
//! back as an `HttpOnly; SameSite=Strict` cookie and drops it from the address bar. Requests
//! whose `Host` is not the loopback address they were made to are refused (DNS rebinding);
//! `api.rs` holds the checks, `http.rs` the server's limits (timeouts, panics kept to their
//! request), `admission.rs` (below `http.rs`) the connection cap — the lobby, the places and
//! the 503 past them — and `assets.rs` the UI's files. What the API may do on this machine
//! (run commands, write exports) is the `Api`'s policy, set from `--allow-run` and
//! `--export-dir`.

pub(crate) mod api;
mod assets;
pub mod http;

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use flashback_api::{Api, ApiConfig, ApiError, ExportWrites, HostMode, Initial, Policy};
use std::sync::Arc;

/// Options of `flashback serve`.
pub struct ServeOptions {
    /// The database, unless `demo`.
    pub db: Option<String>,
    /// Serve the built-in demo database.
    pub demo: bool,
    /// Port (0: any free port).
    pub port: u16,
    /// Let re-run start commands.
    pub allow_run: bool,
    /// Where exports may be written (none: nowhere).
    pub export_dir: Option<std::path::PathBuf>,
}

/// What every request handler shares.
pub struct Shared {
    api: Api,
    token: String,
    port: u16,
}

async fn with_security_headers(req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    http::security_headers(r.headers_mut());
    r
}

/// The router: the API behind its checks, the UI's files, the Host check and the security
/// headers on every answer.
pub fn router(api: Api, token: String, port: u16) -> Router {
    let shared = Arc::new(Shared { api, token, port });
    Router::new()
        .route("/api/{command}", post(api::api_call))
        .fallback(assets::static_file)
        .layer(middleware::from_fn_with_state(
            Arc::clone(&shared),
            api::guard_host,
        ))
        .layer(middleware::from_fn(with_security_headers))
        .with_state(shared)
}

/// What the browser may do beyond the database, said at start.
fn rights_line(policy: &Policy) -> String {
    let run = if policy.run_commands {
        "Re-run may run commands on this machine (--allow-run)"
    } else {
        "Re-run is off (--allow-run turns it on)"
    };
    let exports = match &policy.exports {
        ExportWrites::Within(dir) => format!("exports may be written to {}", dir.display()),
        ExportWrites::Anywhere => "exports may be written anywhere".to_owned(),
        ExportWrites::Nowhere => {
            "exports download in the browser (--export-dir DIR writes them here)".to_owned()
        }
    };
    format!("  {run}; {exports}.")
}

/// Listen on 127.0.0.1 with room for a burst of connections before the server accepts them
/// (the usual 128 drops SYNs under a flood, and every dropped one costs its client a second;
/// past 1024, thousands of clients at once lose requests in the kernel). The system's
/// `somaxconn` may lower it.
pub(crate) fn listen(port: u16) -> std::io::Result<tokio::net::TcpListener> {
    let socket = tokio::net::TcpSocket::new_v4()?;
    socket.set_reuseaddr(true)?;
    socket.bind(std::net::SocketAddr::from(([127, 0, 0, 1], port)))?;
    socket.listen(4096)
}

/// Run the server until Ctrl-C.
pub async fn serve(opts: ServeOptions) -> Result<String, ApiError> {
    if !assets::built_in() {
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
    let policy = Policy::serve(opts.allow_run, opts.export_dir.as_deref())?;
    let rights = rights_line(&policy);
    let api = Api::new(ApiConfig {
        host: HostMode::Serve,
        data_dir: flashback_api::default_data_dir(),
        initial,
        secrets: Box::new(flashback_api::secrets::NoSecrets),
        policy,
    })?;
    // Open the database now and fail with the CLI's exit codes rather than in the browser.
    if let Some(e) = api.app_info().await?.initial_error {
        return Err(e);
    }
    let listener = listen(opts.port)
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
        "Flashback is serving {what}\n  open http://127.0.0.1:{port}/#token={token}\n{rights}\nPress Ctrl-C to stop.\n"
    ));
    let app = router(api, token, port);
    http::serve(listener, app, http::Limits::default(), async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await;
    Ok("stopped\n".into())
}

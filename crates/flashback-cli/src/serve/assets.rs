//! The built UI, embedded at compile time (`build.rs`), served as files.

use axum::http::{header, HeaderValue, StatusCode, Uri};
use axum::response::{IntoResponse, Response};

include!(concat!(env!("OUT_DIR"), "/ui_assets.rs"));

/// Whether this binary was built with the UI.
pub fn built_in() -> bool {
    !UI_ASSETS.is_empty()
}

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

/// A file of the UI, or 404.
pub async fn static_file(uri: Uri) -> Response {
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
            r
        }
        None => (StatusCode::NOT_FOUND, "not found").into_response(),
    }
}

//! `POST /api/<command>`: who may call, what they may send, and the call itself.
//!
//! In this order, each before anything is read from the body:
//!
//! 1. the `Host` (one header, naming the loopback address and port served: DNS rebinding) —
//!    [`guard_host`], for every path;
//! 2. where the request comes from: an `Origin` must be this server's, a `Sec-Fetch-Site`
//!    must be `same-origin` (another site's page cannot drive the API with the cookie);
//! 3. the token: `Authorization: Bearer <token>` (scripts; the scheme in any case), or the
//!    `HttpOnly; SameSite=Strict` cookie set for the page, which must come with
//!    `X-Flashback: 1` (a header no cross-site form can send);
//! 4. the command exists; its `Content-Length` is within its limit (413 otherwise);
//! 5. the body, read up to the same limit whatever the headers claim, within 30 seconds.

use super::Shared;
use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use flashback_api::{ApiError, ErrorCode};
use serde_json::Value as Json;
use std::sync::Arc;
use std::time::Duration;

/// The largest API request body.
pub const MAX_BODY: usize = 8 * 1024 * 1024;
/// The largest body of `verify_export`, which carries a whole bundle.
pub const MAX_VERIFY_BODY: usize = 64 * 1024 * 1024;
/// Time to receive a request body.
const BODY_TIMEOUT: Duration = Duration::from_secs(30);

fn body_limit(command: &str) -> usize {
    if command == "verify_export" {
        MAX_VERIFY_BODY
    } else {
        MAX_BODY
    }
}

pub fn error_response(status: StatusCode, e: &ApiError) -> Response {
    let mut r = (status, axum::Json(e)).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn refuse(status: StatusCode, message: impl Into<String>) -> Response {
    error_response(status, &ApiError::new(ErrorCode::Unauthorized, message))
}

/// The cookie that carries the token for the page (per port: cookies ignore ports).
pub fn cookie_name(port: u16) -> String {
    format!("flashback_{port}")
}

/// Every request: exactly one `Host`, naming what is served.
pub async fn guard_host(State(shared): State<Arc<Shared>>, req: Request, next: Next) -> Response {
    let hosts: Vec<&HeaderValue> = req.headers().get_all(header::HOST).iter().collect();
    let port = shared.port;
    match hosts.as_slice() {
        [host] if host_ok(host, port) => next.run(req).await,
        [] | [_] => refuse(
            StatusCode::FORBIDDEN,
            format!("requests must be made to 127.0.0.1:{port}"),
        ),
        _ => refuse(
            StatusCode::BAD_REQUEST,
            "a request must carry exactly one Host header",
        ),
    }
}

pub(crate) fn host_ok(host: &HeaderValue, port: u16) -> bool {
    let Ok(host) = host.to_str() else {
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
pub(crate) fn same_token(given: &str, want: &str) -> bool {
    given.len() == want.len()
        && given
            .bytes()
            .zip(want.bytes())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            == 0
}

/// A page of another origin (another port counts) must not drive the API.
pub(crate) fn cross_site(headers: &HeaderMap) -> Option<&'static str> {
    let host = headers.get(header::HOST).and_then(|h| h.to_str().ok())?;
    if let Some(origin) = headers.get(header::ORIGIN) {
        let ours = origin
            .to_str()
            .ok()
            .and_then(|o| o.strip_prefix("http://"))
            .is_some_and(|o| o.eq_ignore_ascii_case(host));
        if !ours {
            return Some("requests from another origin are refused");
        }
    }
    match headers.get("sec-fetch-site").map(HeaderValue::as_bytes) {
        None | Some(b"same-origin") | Some(b"none") => None,
        Some(_) => Some("requests from another site are refused"),
    }
}

#[derive(PartialEq)]
enum Auth {
    Bearer,
    Cookie,
}

pub(crate) fn bearer(headers: &HeaderMap) -> impl Iterator<Item = &str> {
    headers
        .get_all(header::AUTHORIZATION)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .filter_map(|h| h.trim().split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
}

fn cookies<'a>(headers: &'a HeaderMap, name: &'a str) -> impl Iterator<Item = &'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|h| h.to_str().ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .filter(move |(k, _)| *k == name)
        .map(|(_, v)| v.trim())
}

/// Who is calling, or why they may not (status, message).
fn authenticate(headers: &HeaderMap, shared: &Shared) -> Result<Auth, (StatusCode, &'static str)> {
    if bearer(headers).any(|t| same_token(t, &shared.token)) {
        return Ok(Auth::Bearer);
    }
    let name = cookie_name(shared.port);
    if cookies(headers, &name).any(|t| same_token(t, &shared.token)) {
        if headers.get("x-flashback").is_none() {
            return Err((
                StatusCode::FORBIDDEN,
                "a request authenticated by the cookie must carry the header X-Flashback: 1",
            ));
        }
        return Ok(Auth::Cookie);
    }
    Err((
        StatusCode::UNAUTHORIZED,
        "missing or wrong token: open the URL `flashback serve` printed (it ends in #token=…)",
    ))
}

enum BodyError {
    TooLarge,
    Broken(String),
}

/// The body, up to `limit` bytes whatever `Content-Length` claimed.
async fn read_limited(body: Body, limit: usize) -> Result<Bytes, BodyError> {
    let mut body = std::pin::pin!(body);
    let mut buf = Vec::new();
    while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
        let frame = frame.map_err(|e| BodyError::Broken(e.to_string()))?;
        if let Ok(data) = frame.into_data() {
            if buf.len() + data.len() > limit {
                return Err(BodyError::TooLarge);
            }
            buf.extend_from_slice(&data);
        }
    }
    Ok(Bytes::from(buf))
}

fn too_large(command: &str) -> Response {
    let limit = body_limit(command) / (1024 * 1024);
    let hint = if command == "verify_export" {
        "; `flashback verify FILE` checks larger bundles"
    } else {
        ""
    };
    error_response(
        StatusCode::PAYLOAD_TOO_LARGE,
        &ApiError::invalid(format!(
            "the request body is larger than {limit} MB, the limit for {command}{hint}"
        )),
    )
}

pub async fn api_call(
    State(shared): State<Arc<Shared>>,
    Path(command): Path<String>,
    req: Request,
) -> Response {
    let (parts, body) = req.into_parts();
    if let Some(why) = cross_site(&parts.headers) {
        return refuse(StatusCode::FORBIDDEN, why);
    }
    let auth = match authenticate(&parts.headers, &shared) {
        Ok(a) => a,
        Err((status, why)) => return refuse(status, why),
    };
    let mut response = call(&shared, &command, &parts.headers, body).await;
    // The page's first call carries the token from the URL; from then on the cookie does, so
    // the token need not stay in the address bar or in storage.
    if auth == Auth::Bearer && parts.headers.contains_key("x-flashback") {
        let cookie = format!(
            "{}={}; HttpOnly; SameSite=Strict; Path=/",
            cookie_name(shared.port),
            shared.token
        );
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            response.headers_mut().insert(header::SET_COOKIE, v);
        }
    }
    response
}

async fn call(shared: &Shared, command: &str, headers: &HeaderMap, body: Body) -> Response {
    if !flashback_api::COMMANDS.contains(&command) {
        return error_response(
            StatusCode::NOT_FOUND,
            &ApiError::not_found(format!("unknown command {command:?}")),
        );
    }
    let limit = body_limit(command);
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return too_large(command);
    }
    let bytes = match tokio::time::timeout(BODY_TIMEOUT, read_limited(body, limit)).await {
        Ok(Ok(b)) => b,
        Ok(Err(BodyError::TooLarge)) => return too_large(command),
        Ok(Err(BodyError::Broken(e))) => {
            return error_response(
                StatusCode::BAD_REQUEST,
                &ApiError::invalid(format!("the request body could not be read: {e}")),
            )
        }
        Err(_) => {
            return error_response(
                StatusCode::REQUEST_TIMEOUT,
                &ApiError::invalid("the request body did not arrive within 30 seconds"),
            )
        }
    };
    let args: Json = if bytes.is_empty() {
        Json::Null
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(v) => v,
            Err(e) => {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    &ApiError::invalid(format!("the request body is not JSON: {e}")),
                )
            }
        }
    };
    drop(bytes);
    match shared.api.dispatch(command, &args).await {
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

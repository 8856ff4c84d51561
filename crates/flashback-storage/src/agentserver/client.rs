//! The HTTP client of an Agent Server: one base URL, the API key sent as `x-api-key` (never
//! in a URL, a log or an error), bounded waits, and every failure one line naming the server.

use crate::StoreError;
use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value as Json;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long connecting may take (and how long a server that accepts but never answers the
/// first request is waited for).
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The longest pause between two reads of one answer.
pub const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// The environment variables an API key is read from, in order.
pub const KEY_VARIABLES: [&str; 2] = ["LANGGRAPH_API_KEY", "LANGSMITH_API_KEY"];

/// API keys given for a server in this process (the app's prompt or keyring), by base URL:
/// every store opened on the URL later (writes, jobs) sends it.
type Keys = Mutex<Vec<(String, Arc<str>)>>;

fn given_keys() -> &'static Keys {
    static KEYS: OnceLock<Keys> = OnceLock::new();
    KEYS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Remember `key` as the API key of the server at `url` (any form [`base_url`] accepts).
pub fn set_api_key(url: &str, key: &str) {
    let Ok(base) = base_url(url) else { return };
    let mut keys = given_keys().lock().unwrap_or_else(|e| e.into_inner());
    keys.retain(|(b, _)| b != &base);
    if !key.is_empty() {
        keys.push((base, Arc::from(key)));
    }
}

/// The key for a server: the one given for it, else the environment's.
fn api_key(base: &str) -> Option<Arc<str>> {
    let keys = given_keys().lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, k)) = keys.iter().find(|(b, _)| b == base) {
        return Some(Arc::clone(k));
    }
    KEY_VARIABLES
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|k| !k.trim().is_empty()))
        .map(|k| Arc::from(k.trim()))
}

/// Whether a location is an Agent Server's URL (`http://…` or `https://…`).
pub fn is_server_url(location: &str) -> bool {
    let l = location.trim_start();
    let lower = l.get(..8).unwrap_or(l).to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://")
}

/// The URL as the server's base: scheme, host, port and path, without user info, query,
/// fragment or trailing `/`. Refuses what is not an http(s) URL with a host.
pub fn base_url(location: &str) -> Result<String, StoreError> {
    let bad = |why: &str| {
        StoreError::InvalidInput(format!(
            "{:?} is not an Agent Server URL ({why}): use http://HOST:PORT",
            redact(location)
        ))
    };
    let l = location.trim();
    let (scheme, rest) = l.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad("not http or https"));
    }
    let rest = rest.split(['?', '#']).next().unwrap_or("");
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') {
        return Err(bad("no host"));
    }
    if host.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("the host has spaces"));
    }
    let path = path.trim_end_matches('/');
    Ok(format!("{scheme}://{}{path}", host.to_ascii_lowercase()))
}

/// The location without user info (for messages).
fn redact(location: &str) -> String {
    match location.split_once("://") {
        Some((scheme, rest)) => {
            let (authority, tail) = match rest.find('/') {
                Some(i) => (&rest[..i], &rest[i..]),
                None => (rest, ""),
            };
            let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
            format!("{scheme}://{host}{tail}")
        }
        None => location.to_owned(),
    }
}

/// The process's TLS setup: rustls with ring and the OS's trust store (as the Postgres
/// connections), built once.
fn tls() -> Result<rustls::ClientConfig, String> {
    static ROOTS: OnceLock<Arc<rustls::RootCertStore>> = OnceLock::new();
    let roots = ROOTS.get_or_init(|| {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            let _ = roots.add(cert);
        }
        Arc::new(roots)
    });
    rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map(|b| {
            b.with_root_certificates(Arc::clone(roots))
                .with_no_client_auth()
        })
        .map_err(|e| e.to_string())
}

/// An Agent Server's HTTP API.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: String,
    key: Option<Arc<str>>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("base", &self.base)
            .field("key", &self.key.as_ref().map(|_| "…"))
            .finish()
    }
}

impl Client {
    /// A client for the server at `location` (its key: [`set_api_key`], else the environment).
    pub fn new(location: &str) -> Result<Client, StoreError> {
        let base = base_url(location)?;
        let http = reqwest::Client::builder()
            .tls_backend_preconfigured(tls().map_err(StoreError::Connection)?)
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .user_agent(concat!("flashback/", env!("CARGO_PKG_VERSION")))
            .no_proxy()
            .build()
            .map_err(|e| StoreError::Connection(format!("{base}: {}", one_line(&e))))?;
        Ok(Client {
            key: api_key(&base),
            http,
            base,
        })
    }

    /// The base URL (no key, no user info).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// Whether a key is sent.
    pub fn has_key(&self) -> bool {
        self.key.is_some()
    }

    /// Send a request; a status other than 2xx is an error naming the server's own detail.
    pub async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<reqwest::Response, StoreError> {
        self.send_within(method, path, body, CONNECT_TIMEOUT + READ_TIMEOUT)
            .await
    }

    /// `GET path` as JSON, the answer's head due within `limit` (opening's probe: a server
    /// that accepts and never answers is given up on within the connect limit).
    pub async fn get_within<T: DeserializeOwned>(
        &self,
        path: &str,
        limit: Duration,
    ) -> Result<T, StoreError> {
        let resp = self.send_within(Method::GET, path, None, limit).await?;
        let bytes = tokio::time::timeout(limit, resp.bytes())
            .await
            .map_err(|_| self.timeout(limit, &Method::GET, path))?
            .map_err(|e| self.transport(e, &Method::GET, path))?;
        serde_json::from_slice(&bytes).map_err(|_| {
            StoreError::NotFound(format!(
                "{} GET {path} answered something that is not JSON ({})",
                self.base,
                short_text(&bytes)
            ))
        })
    }

    /// [`send`](Self::send) with the answer's head due within `limit`.
    pub async fn send_within(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
        limit: Duration,
    ) -> Result<reqwest::Response, StoreError> {
        let mut req = self
            .http
            .request(method.clone(), format!("{}{path}", self.base));
        if let Some(k) = &self.key {
            req = req.header("x-api-key", k.as_ref());
        }
        if let Some(b) = body {
            req = req.json(b);
        }
        let sent = tokio::time::timeout(limit, req.send()).await;
        let resp = match sent {
            Err(_) => return Err(self.timeout(limit, &method, path)),
            Ok(Err(e)) => return Err(self.transport(e, &method, path)),
            Ok(Ok(r)) => r,
        };
        let status = resp.status();
        if status.is_success() {
            return Ok(resp);
        }
        let detail = error_detail(resp).await;
        Err(self.refused(status, &method, path, &detail))
    }

    /// A JSON answer.
    pub async fn json<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<T, StoreError> {
        let resp = self.send(method.clone(), path, body).await?;
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| self.transport(e, &method, path))?;
        serde_json::from_slice(&bytes).map_err(|e| self.not_json(path, &e))
    }

    /// `GET path` as JSON.
    pub async fn get<T: DeserializeOwned>(&self, path: &str) -> Result<T, StoreError> {
        self.json(Method::GET, path, None).await
    }

    /// `POST path` with a JSON body, as JSON.
    pub async fn post<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &Json,
    ) -> Result<T, StoreError> {
        self.json(Method::POST, path, Some(body)).await
    }

    /// [`post`](Self::post), with the size of the answer in bytes.
    pub async fn post_sized<T: DeserializeOwned>(
        &self,
        path: &str,
        body: &Json,
    ) -> Result<(T, usize), StoreError> {
        let resp = self.send(Method::POST, path, Some(body)).await?;
        let bytes = resp
            .bytes()
            .await
            .map_err(|e| self.transport(e, &Method::POST, path))?;
        let value = serde_json::from_slice(&bytes).map_err(|e| self.not_json(path, &e))?;
        Ok((value, bytes.len()))
    }

    fn not_json(&self, path: &str, e: &serde_json::Error) -> StoreError {
        StoreError::Query(format!(
            "{} {path} answered something that is not the Agent Server's JSON ({e})",
            self.base
        ))
    }

    fn timeout(&self, after: Duration, method: &Method, path: &str) -> StoreError {
        StoreError::ServerTimeout(format!(
            "{} did not answer {method} {path} within {}",
            self.base,
            crate::error::duration_text(after)
        ))
    }

    fn transport(&self, e: reqwest::Error, method: &Method, path: &str) -> StoreError {
        if e.is_timeout() {
            let after = if e.is_connect() {
                CONNECT_TIMEOUT
            } else {
                READ_TIMEOUT
            };
            return self.timeout(after, method, path);
        }
        if e.is_connect() {
            return StoreError::Connection(format!("{}: {}", self.base, connect_reason(&e)));
        }
        if e.is_decode() || e.is_body() {
            return StoreError::Query(format!(
                "{} broke off its answer to {method} {path}: {}",
                self.base,
                one_line(&e)
            ));
        }
        StoreError::Connection(format!("{}: {}", self.base, one_line(&e)))
    }

    fn refused(&self, status: StatusCode, method: &Method, path: &str, detail: &str) -> StoreError {
        let why = if detail.is_empty() {
            String::new()
        } else {
            format!(": {detail}")
        };
        let status_text = format!(
            "{} {}",
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        );
        let status_text = status_text.trim_end();
        match status {
            StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => StoreError::Auth(match &self.key {
                Some(_) => format!("{} refused the API key ({status_text}{why})", self.base),
                None => format!(
                    "{} needs an API key ({status_text}): set LANGGRAPH_API_KEY or \
                     LANGSMITH_API_KEY, or enter it when opening",
                    self.base
                ),
            }),
            StatusCode::NOT_FOUND => {
                StoreError::NotFound(format!("{} {method} {path}: {status_text}{why}", self.base))
            }
            s if s.is_client_error() => StoreError::InvalidInput(format!(
                "{} refused {method} {path} ({status_text}){why}",
                self.base
            )),
            _ => StoreError::Query(format!(
                "{} failed {method} {path} ({status_text}){why}",
                self.base
            )),
        }
    }
}

/// The server's own words for an error answer (`{"detail": …}` or `{"message": …}`), one
/// line, at most 300 characters.
async fn error_detail(resp: reqwest::Response) -> String {
    let bytes = match resp.bytes().await {
        Ok(b) => b,
        Err(_) => return String::new(),
    };
    let text = match serde_json::from_slice::<Json>(&bytes) {
        Ok(j) => match j.get("detail").or_else(|| j.get("message")) {
            Some(Json::String(s)) => s.clone(),
            Some(other) => other.to_string(),
            None => j.to_string(),
        },
        Err(_) => String::from_utf8_lossy(&bytes).into_owned(),
    };
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// The start of a body, as text, for messages.
fn short_text(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]);
    let line: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("{line:?}")
}

/// What a connect error comes down to (`connection refused`, `dns error: …`).
fn connect_reason(e: &reqwest::Error) -> String {
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(e);
    let mut last = None;
    while let Some(s) = source {
        last = Some(s.to_string());
        source = s.source();
    }
    let reason = last.unwrap_or_else(|| one_line(e));
    format!("cannot reach the server ({})", reason.to_lowercase())
}

/// An error and its causes, one line, without the URL (the caller names the server).
fn one_line(e: &dyn std::error::Error) -> String {
    let mut out = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let t = s.to_string();
        if !out.contains(&t) {
            out.push_str(": ");
            out.push_str(&t);
        }
        source = s.source();
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_drop_user_info_query_and_trailing_slash() {
        assert_eq!(
            base_url("http://127.0.0.1:2024/").unwrap(),
            "http://127.0.0.1:2024"
        );
        assert_eq!(
            base_url("HTTPS://me:secret@Host.example/api/?x=1").unwrap(),
            "https://host.example/api"
        );
        assert!(base_url("ftp://x").is_err());
        assert!(base_url("http://").is_err());
        let e = base_url("http://me:secret@").unwrap_err().to_string();
        assert!(!e.contains("secret"), "{e}");
        assert!(is_server_url("http://x:1"));
        assert!(is_server_url("HTTPS://x"));
        assert!(!is_server_url("postgres://x"));
        assert!(!is_server_url("/tmp/http://x"));
    }

    #[test]
    fn given_keys_win_over_the_environment() {
        set_api_key("http://keyed.invalid:1/", "k1");
        assert_eq!(api_key("http://keyed.invalid:1").as_deref(), Some("k1"));
        set_api_key("http://keyed.invalid:1", "");
        let client = Client::new("http://keyed.invalid:1").unwrap();
        assert!(!format!("{client:?}").contains("k1"));
    }
}

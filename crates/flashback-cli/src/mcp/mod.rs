//! `flashback mcp DB`: a Model Context Protocol server for one database — a fourth thin door
//! onto the command table, beside the CLI, `serve` and the app.
//!
//! ```text
//!  MCP client ──stdio or streamable HTTP (rmcp)──▶ handler.rs ──▶ call.rs ──▶ table.rs
//!     tools/list: tools.rs (which commands, their names and words) + schema.rs (request
//!                 type's JSON Schema without `db`, plus limit/cursor/max_tokens/format)
//!     tools/call: the request built, `Api::<command>` called through the generated table,
//!                 the answer paged and folded (bound.rs), the CLI's text (render.rs) first
//!     resources, prompt: resources.rs
//! ```
//!
//! Reads are always offered; writes only with `--allow-writes`, each with `dry_run` (default
//! true; dry.rs says what the writes without a dry run of their own would do); `rerun` also
//! needs `--allow-run`. Over HTTP (`--http PORT`), as `serve`: 127.0.0.1 only, the Host and
//! Origin checked, and a bearer token (http.rs).

mod bound;
mod call;
mod dry;
mod handler;
mod http;
mod jobs;
mod render;
mod resources;
mod schema;
mod statepath;
mod table;
#[cfg(test)]
mod tests;
mod tools;

pub use handler::Handler;

use crate::doors::outcome::open_info;
use flashback_api::{Api, ApiError};
use rmcp::ServiceExt;
use std::sync::Arc;
use tools::{Access, ToolSpec};

/// Options of `flashback mcp`.
#[derive(Debug, Clone)]
pub struct McpOptions {
    /// The database.
    pub db: String,
    /// Serve streamable HTTP on this port of 127.0.0.1 instead of stdio.
    pub http: Option<u16>,
    /// Offer the writes.
    pub allow_writes: bool,
    /// Offer `rerun` (with `allow_writes`).
    pub allow_run: bool,
}

/// The database a server answers for, and what it may do.
pub struct Door {
    api: Api,
    db: String,
    allow_writes: bool,
    allow_run: bool,
}

impl Door {
    /// Open `location` (as every CLI command does: read-only, nothing remembered).
    pub async fn open(opts: &McpOptions) -> Result<Door, ApiError> {
        let (api, info) = open_info(&opts.db).await?;
        Ok(Door {
            api,
            db: info.db,
            allow_writes: opts.allow_writes,
            allow_run: opts.allow_run,
        })
    }

    /// Whether `spec` is offered.
    fn offers(&self, spec: &ToolSpec) -> bool {
        match spec.access {
            Access::Read => true,
            Access::Write => self.allow_writes,
            Access::Run => self.allow_writes && self.allow_run,
        }
    }

    /// Why `spec` is not offered.
    fn refusal(&self, spec: &ToolSpec) -> String {
        match spec.access {
            Access::Run if self.allow_writes => format!(
                "{} runs a command on this machine: start `flashback mcp` with --allow-run",
                spec.name
            ),
            _ => format!(
                "{} writes the database: start `flashback mcp` with --allow-writes",
                spec.name
            ),
        }
    }
}

/// Run the server until the client goes (stdio) or Ctrl-C (HTTP).
pub async fn run(opts: McpOptions) -> Result<String, ApiError> {
    if opts.allow_run && !opts.allow_writes {
        return Err(ApiError::invalid(
            "--allow-run needs --allow-writes (a re-run writes a fork)",
        ));
    }
    let door = Door::open(&opts).await?;
    let handler = Handler(Arc::new(door));
    match opts.http {
        Some(port) => http::serve(handler, &opts.db, port).await,
        None => {
            let running = handler
                .serve(rmcp::transport::stdio())
                .await
                .map_err(|e| ApiError::io(format!("mcp: {e}")))?;
            running
                .waiting()
                .await
                .map_err(|e| ApiError::io(format!("mcp: {e}")))?;
            Ok(String::new())
        }
    }
}

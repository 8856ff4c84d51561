//! The protocol side: `rmcp`'s `ServerHandler` for the door — tools listed from the tool table
//! (writes only with `--allow-writes`, `rerun` also with `--allow-run`), calls answered with
//! the text first and the structured content, every failure a tool error (`isError`) carrying
//! the CLI's one line; resources and the prompt.

use super::resources;
use super::schema::input_schema;
use super::tools::{self, ToolSpec, TOOLS};
use super::{call, Door};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, Role, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{json, Value as Json};
use std::sync::Arc;

/// The MCP server of one database.
#[derive(Clone)]
pub struct Handler(pub Arc<Door>);

const INSTRUCTIONS: &str = "Flashback reads one LangGraph checkpoint database (the saved state \
    of an agent after every step). Start with `threads` (ids and statuses), then `history` or \
    `graph` for a thread, `state` for a checkpoint (`path` for one value), `diff` between two \
    checkpoints, `watch` to see how a value changed, `search` to find a thread by content. The \
    prompt `why_did_it_stop` gathers a failed or interrupted thread's error, writes and \
    interrupt. Answers are bounded: follow `next_cursor`, or ask for a `path`.";

fn tool(spec: &ToolSpec) -> Option<Tool> {
    let schema = input_schema(spec)?;
    let object = schema.as_object()?.clone();
    let mut about = spec.about.to_owned();
    if !spec.example.is_empty() {
        about.push_str(&format!(" Example: {}", spec.example));
    }
    let write = spec.access != tools::Access::Read;
    let annotations = ToolAnnotations::new()
        .read_only(!write)
        .destructive(write)
        .open_world(false);
    Some(Tool::new(spec.name, about, Arc::new(object)).annotate(annotations))
}

impl Handler {
    /// The tools this server offers.
    pub fn tools(&self) -> Vec<Tool> {
        TOOLS
            .iter()
            .filter(|t| self.0.offers(t))
            .filter_map(tool)
            .collect()
    }

    /// A tool call's result (never a protocol error).
    pub async fn call(&self, name: &str, args: serde_json::Map<String, Json>) -> CallToolResult {
        let spec = match tools::find(name) {
            Some(t) if self.0.offers(t) => t,
            Some(t) => return failure(&self.0.refusal(t)),
            None => {
                let names: Vec<&str> = TOOLS
                    .iter()
                    .filter(|t| self.0.offers(t))
                    .map(|t| t.name)
                    .collect();
                return failure(&format!(
                    "no tool {name:?}: the tools are {}",
                    names.join(", ")
                ));
            }
        };
        match call::call(&self.0, spec, args).await {
            Ok(reply) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(reply.text)]);
                r.structured_content = Some(reply.structured);
                r
            }
            Err(e) => {
                let mut r = CallToolResult::error(vec![ContentBlock::text(e.message.clone())]);
                r.structured_content = Some(json!({"error": e}));
                r
            }
        }
    }
}

fn failure(message: &str) -> CallToolResult {
    let mut r = CallToolResult::error(vec![ContentBlock::text(message)]);
    r.structured_content = Some(json!({"error": {"code": "invalid_input", "message": message}}));
    r
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_prompts()
                .enable_resources()
                .enable_tools()
                .build(),
        )
        .with_server_info(Implementation::new("flashback", env!("CARGO_PKG_VERSION")))
        .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let args = request.arguments.unwrap_or_default();
        Ok(self.call(&request.name, args).await.into())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, McpError> {
        let listed = resources::list(&self.0)
            .await
            .map_err(|e| McpError::internal_error(e.message, None))?;
        let items = listed
            .into_iter()
            .map(|l| {
                Resource::new(l.uri, l.name)
                    .with_description(l.description)
                    .with_mime_type("application/json")
            })
            .collect();
        Ok(ListResourcesResult::with_all_items(items))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, McpError> {
        let templates = vec![
            ResourceTemplate::new("flashback://thread/{thread_id}", "thread")
                .with_description("A thread: its summary (status, error, interrupts) and history")
                .with_mime_type("application/json"),
            ResourceTemplate::new(
                "flashback://thread/{thread_id}/checkpoint/{checkpoint_id}",
                "checkpoint",
            )
            .with_description("A checkpoint's state: values, writes, next tasks, metadata")
            .with_mime_type("application/json"),
        ];
        Ok(ListResourceTemplatesResult::with_all_items(templates))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, McpError> {
        match resources::read(&self.0, &request.uri).await {
            Ok(text) => {
                Ok(ReadResourceResult::new(vec![
                    ResourceContents::text(text, request.uri).with_mime_type("application/json")
                ])
                .into())
            }
            Err(e) if e.code == flashback_api::ErrorCode::NotFound => Err(
                McpError::resource_not_found(e.message, Some(json!({"uri": request.uri}))),
            ),
            Err(e) => Err(McpError::invalid_params(e.message, None)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, McpError> {
        let arg = PromptArgument::new("thread_id")
            .with_description("The thread (see the `threads` tool)")
            .with_required(true);
        Ok(ListPromptsResult::with_all_items(vec![Prompt::new(
            resources::PROMPT,
            Some(resources::PROMPT_ABOUT),
            Some(vec![arg]),
        )]))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, McpError> {
        if request.name != resources::PROMPT {
            return Err(McpError::invalid_params(
                format!(
                    "no prompt {:?}: the prompt is {}",
                    request.name,
                    resources::PROMPT
                ),
                None,
            ));
        }
        let thread = request
            .arguments
            .as_ref()
            .and_then(|a| a.get("thread_id"))
            .and_then(Json::as_str)
            .ok_or_else(|| McpError::invalid_params("the prompt needs a thread_id", None))?;
        let text = resources::why(&self.0, thread)
            .await
            .map_err(|e| McpError::invalid_params(e.message, None))?;
        Ok(
            GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)])
                .with_description(resources::PROMPT_ABOUT)
                .into(),
        )
    }
}

//! Human-in-the-loop approvals: the interrupts LangChain's `HumanInTheLoopMiddleware` raises
//! (langchain 1.5), read from the tasks' interrupts so every door can show them as what they
//! are and build the answer the middleware expects.
//!
//! * **batched** (the default): one interrupt per model turn whose value is a `HITLRequest`
//!   (`action_requests` with `name`/`args`/`description`, `review_configs` with each action's
//!   `allowed_decisions`), answered with `{"decisions": [decision, …]}`, one per action in order;
//! * **per_call**: one interrupt per gated tool call whose value is a `ToolApprovalRequest`
//!   (`type: "tool_approval"`, `tool_call_id`, `name`, `args`, `description`) with a
//!   `response_schema` (a JSON schema of the allowed decisions), answered with one decision;
//!   several waiting interrupts are answered together as `{interrupt_id: answer, …}`.
//!
//! A decision is `{"type": "approve"}`, `{"type": "edit", "edited_action": {"name", "args"}}`,
//! `{"type": "reject", "message"?}` or `{"type": "respond", "message"}`.

use crate::tasks::TaskSet;
use serde::Serialize;
use serde_json::{Map, Value as Json};

/// The decision types the middleware knows, in its order.
pub const DECISIONS: [&str; 4] = ["approve", "edit", "reject", "respond"];

/// How the middleware asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum ApprovalMode {
    /// One interrupt for all the gated calls of a model turn.
    Batched,
    /// One interrupt per gated tool call.
    PerCall,
}

/// One tool call waiting for review.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ApprovalAction {
    /// The tool.
    pub name: String,
    /// Its arguments, as the model asked (JSON view).
    pub args: Json,
    /// The text shown to the reviewer.
    pub description: Option<String>,
    /// What the reviewer may answer (`approve`, `edit`, `reject`, `respond`).
    pub allowed_decisions: Vec<String>,
    /// The model's tool call id (per-call mode).
    pub tool_call_id: Option<String>,
}

/// One approval interrupt.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct Approval {
    /// The interrupt's id (what a per-id resume is keyed by).
    pub interrupt_id: Option<String>,
    /// The task that waits.
    pub task_id: String,
    /// Its node.
    pub node: String,
    /// Batched or per call.
    pub mode: ApprovalMode,
    /// The calls to review, in order.
    pub actions: Vec<ApprovalAction>,
    /// Per-call mode: the JSON schema one decision must match.
    pub response_schema: Option<Json>,
}

fn text(m: &Map<String, Json>, k: &str) -> Option<String> {
    m.get(k).and_then(Json::as_str).map(str::to_owned)
}

/// The interrupt's value, id and response schema from its JSON view (an `Interrupt` object, or
/// an older interrupt stored as its bare value).
fn parts(view: &Json) -> (Option<&Json>, Option<String>, Option<&Json>) {
    match view.as_object() {
        Some(o) if o.contains_key("value") && o.get("$type").is_some() => (
            o.get("value"),
            text(o, "id"),
            o.get("response_schema").filter(|s| s.is_object()),
        ),
        _ => (Some(view), None, None),
    }
}

/// The decision types a per-call `response_schema` allows: every `type` constant it names.
fn schema_decisions(schema: &Json) -> Vec<String> {
    fn walk(v: &Json, out: &mut Vec<String>, depth: usize) {
        if depth > 32 {
            return;
        }
        match v {
            Json::Object(o) => {
                if let Some(Json::Object(p)) = o.get("properties") {
                    if let Some(t) = p.get("type") {
                        let consts = t
                            .get("const")
                            .into_iter()
                            .chain(t.get("enum").and_then(Json::as_array).into_iter().flatten());
                        for c in consts.filter_map(Json::as_str) {
                            if DECISIONS.contains(&c) && !out.iter().any(|x| x == c) {
                                out.push(c.to_owned());
                            }
                        }
                    }
                }
                o.values().for_each(|x| walk(x, out, depth + 1));
            }
            Json::Array(items) => items.iter().for_each(|x| walk(x, out, depth + 1)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(schema, &mut out, 0);
    out.sort_by_key(|d| DECISIONS.iter().position(|x| x == d));
    out
}

fn batched(value: &Map<String, Json>) -> Option<Vec<ApprovalAction>> {
    let requests = value.get("action_requests")?.as_array()?;
    let configs = value
        .get("review_configs")
        .and_then(Json::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    requests
        .iter()
        .map(|r| {
            let r = r.as_object()?;
            let name = text(r, "name")?;
            let allowed = configs
                .iter()
                .filter_map(Json::as_object)
                .find(|c| c.get("action_name").and_then(Json::as_str) == Some(name.as_str()))
                .and_then(|c| c.get("allowed_decisions"))
                .and_then(Json::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(Json::as_str)
                        .map(str::to_owned)
                        .collect()
                })
                .unwrap_or_default();
            Some(ApprovalAction {
                args: r.get("args").cloned().unwrap_or(Json::Null),
                description: text(r, "description"),
                allowed_decisions: allowed,
                tool_call_id: None,
                name,
            })
        })
        .collect()
}

/// The approvals among a snapshot's interrupts (waiting ones in a live view, every one raised
/// in a step record), in task order.
pub fn approvals(tasks: &TaskSet) -> Vec<Approval> {
    let mut out = Vec::new();
    for t in &tasks.tasks {
        for view in &t.interrupts {
            let (Some(Json::Object(value)), id, schema) = parts(view) else {
                continue;
            };
            let (mode, actions) =
                if value.get("type").and_then(Json::as_str) == Some("tool_approval") {
                    let Some(name) = text(value, "name") else {
                        continue;
                    };
                    let allowed = schema.map(schema_decisions).unwrap_or_default();
                    let action = ApprovalAction {
                        args: value.get("args").cloned().unwrap_or(Json::Null),
                        description: text(value, "description"),
                        allowed_decisions: allowed,
                        tool_call_id: text(value, "tool_call_id"),
                        name,
                    };
                    (ApprovalMode::PerCall, vec![action])
                } else if let Some(actions) = batched(value) {
                    (ApprovalMode::Batched, actions)
                } else {
                    continue;
                };
            out.push(Approval {
                interrupt_id: id,
                task_id: t.id.clone(),
                node: t.name.clone(),
                mode,
                actions,
                response_schema: schema.cloned(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tasks::{Task, TaskKind, TaskStatus};
    use serde_json::json;

    fn set(interrupts: Vec<Json>) -> TaskSet {
        TaskSet {
            checkpoint_id: "c".into(),
            checkpoint_ns: String::new(),
            step: 1,
            next: vec!["tools".into()],
            tasks: vec![Task {
                id: "t1".into(),
                name: "tools".into(),
                kind: TaskKind::Push,
                path: json!(["__pregel_push", 0, false]),
                triggers: vec![],
                checkpoint_ns: "tools:t1".into(),
                error: None,
                interrupts,
                state: None,
                writes: vec![],
                finished: false,
                status: TaskStatus::Interrupted,
                send_arg: None,
            }],
            unmatched_task_ids: vec![],
            warnings: vec![],
        }
    }

    #[test]
    fn batched_requests_pair_actions_with_their_configs() {
        let v = json!({"$type": "langgraph.types.Interrupt", "id": "i1", "value": {
            "action_requests": [
                {"name": "send_email", "args": {"to": "a@b"}, "description": "Send?\nreally"},
                {"name": "delete", "args": {}}],
            "review_configs": [
                {"action_name": "delete", "allowed_decisions": ["approve", "reject"]},
                {"action_name": "send_email", "allowed_decisions": ["approve", "edit", "reject"]}]}});
        let a = approvals(&set(vec![v]));
        assert_eq!(a.len(), 1);
        assert_eq!(a[0].mode, ApprovalMode::Batched);
        assert_eq!(a[0].interrupt_id.as_deref(), Some("i1"));
        assert_eq!(
            a[0].actions[0].allowed_decisions,
            ["approve", "edit", "reject"]
        );
        assert_eq!(
            a[0].actions[0].description.as_deref(),
            Some("Send?\nreally")
        );
        assert_eq!(a[0].actions[1].allowed_decisions, ["approve", "reject"]);
    }

    #[test]
    fn per_call_requests_read_their_decisions_from_the_schema() {
        let schema = json!({"$defs": {
            "ApproveDecision": {"properties": {"type": {"const": "approve"}}},
            "RejectDecision": {"properties": {"type": {"const": "reject"}, "message": {"type": "string"}}}},
            "oneOf": [{"$ref": "#/$defs/RejectDecision"}, {"$ref": "#/$defs/ApproveDecision"}],
            "discriminator": {"propertyName": "type"}});
        let v = json!({"$type": "langgraph.types.Interrupt", "id": "i2", "response_schema": schema,
            "value": {"type": "tool_approval", "tool_call_id": "call_1", "name": "rm",
                      "args": {"path": "/x"}, "description": "Remove?"}});
        let a = approvals(&set(vec![v, json!("plain question")]));
        assert_eq!(a.len(), 1, "a plain interrupt is not an approval");
        assert_eq!(a[0].mode, ApprovalMode::PerCall);
        assert_eq!(a[0].actions[0].allowed_decisions, ["approve", "reject"]);
        assert_eq!(a[0].actions[0].tool_call_id.as_deref(), Some("call_1"));
        assert!(a[0].response_schema.is_some());
    }
}

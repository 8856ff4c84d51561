//! LangChain messages (their JSON view: `$type` `langchain_core.messages.*`) read as people
//! read a chat: who said it, and the text (an AI message's tool calls after it).

use super::one_line;
use serde_json::Value as Json;

/// `(who, text)` of a message — `human`, `ai`, `tool NAME`, … and its text with the tool
/// calls (`→ add({"a":2})`), `(empty)` when it says nothing; `None` for anything else.
pub(super) fn message_parts(m: &Json) -> Option<(String, String)> {
    let o = m.as_object()?;
    let kind = o.get("$type")?.as_str()?;
    if !kind.starts_with("langchain_core.messages.") {
        return None;
    }
    let role = o
        .get("type")
        .and_then(Json::as_str)
        .unwrap_or("message")
        .trim_end_matches("Chunk");
    let who = match (role, o.get("name").and_then(Json::as_str)) {
        ("tool", Some(name)) => format!("tool {name}"),
        (role, _) => role.to_owned(),
    };
    let mut text = content_text(o.get("content").unwrap_or(&Json::Null));
    if let Some(calls) = o.get("tool_calls").and_then(Json::as_array) {
        for c in calls {
            let name = c.get("name").and_then(Json::as_str).unwrap_or("?");
            let args = c.get("args").map(Json::to_string).unwrap_or_default();
            if !text.is_empty() {
                text.push(' ');
            }
            text.push_str(&format!("→ {name}({args})"));
        }
    }
    if text.is_empty() {
        text = "(empty)".into();
    }
    Some((who, text))
}

/// A message's content as text: a string as is; content blocks by their text (other blocks by
/// their type, e.g. `[image_url]`).
fn content_text(c: &Json) -> String {
    match c {
        Json::String(s) => s.clone(),
        Json::Array(blocks) => blocks
            .iter()
            .map(|b| match b {
                Json::String(s) => s.clone(),
                Json::Object(o) => match o.get("text").and_then(Json::as_str) {
                    Some(t) => t.to_owned(),
                    None => format!(
                        "[{}]",
                        o.get("type").and_then(Json::as_str).unwrap_or("block")
                    ),
                },
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        Json::Null => String::new(),
        other => one_line(other),
    }
}

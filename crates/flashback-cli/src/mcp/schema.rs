//! A tool's input schema: its request type's JSON Schema (from the command table) without the
//! `db` handle, which the server holds, plus this door's own arguments — `limit`/`cursor` for
//! paging, `max_tokens`, `format`, `path` for `state` and `dry_run` (default true) for writes.

use super::bound::{DEFAULT_TOKENS, MAX_TOKENS};
use super::table;
use super::tools::{Access, ToolSpec};
use serde_json::{json, Map, Value as Json};

/// Whether the request of `spec` has a member `name`.
pub fn request_has(spec: &ToolSpec, name: &str) -> bool {
    table::request_schema(spec.command)
        .and_then(|s| s.get("properties").map(|p| p.get(name).is_some()))
        .unwrap_or(false)
}

/// Request members no tool offers: secrets stay masked for a model (`reveal_secrets`), and a
/// locked database's values stay refused (`allow_locked`, the app's own switch).
const HIDDEN: &[&str] = &["reveal_secrets", "allow_locked"];

fn add(props: &mut Map<String, Json>, name: &str, schema: Json) {
    props.entry(name.to_owned()).or_insert(schema);
}

/// The input schema of `spec` as a tool (`None`: its request has no schema).
pub fn input_schema(spec: &ToolSpec) -> Option<Json> {
    let mut schema = table::request_schema(spec.command)?;
    let obj = schema.as_object_mut()?;
    obj.remove("$schema");
    obj.remove("title");
    obj.remove("description");
    if let Some(Json::Array(required)) = obj.get_mut("required") {
        required.retain(|r| r != "db" && r != "dry_run");
    }
    let props = obj
        .entry("properties")
        .or_insert_with(|| json!({}))
        .as_object_mut()?;
    props.remove("db");
    for name in HIDDEN {
        props.remove(*name);
    }
    let own_limit = props.contains_key("limit");
    if spec.list.is_some() {
        if !own_limit {
            add(
                props,
                "limit",
                json!({"type": "integer", "minimum": 1,
                       "description": "At most this many items of the answer's list (a page); default: as many as fit."}),
            );
        }
        add(
            props,
            "cursor",
            json!({"type": "string",
                   "description": "Where the page starts: the `next_cursor` a previous answer gave (default: the first item)."}),
        );
    }
    add(
        props,
        "max_tokens",
        json!({"type": "integer", "minimum": 500, "maximum": MAX_TOKENS, "default": DEFAULT_TOKENS,
               "description": "About how many tokens the answer may take; longer values and lists are folded (their length said) to fit."}),
    );
    add(
        props,
        "format",
        json!({"type": "string", "enum": ["text", "json"], "default": "text",
               "description": "The text content: `text` (the CLI's compact table or text) or `json` (the structured content as JSON text)."}),
    );
    if spec.name == "state" {
        add(
            props,
            "path",
            json!({"type": "string",
                   "description": "Only the value at this path: a channel, then keys and list indexes, e.g. `messages`, `messages[-1].content`, `plan.steps`, `plan[\"a.b\"]`."}),
        );
        add(
            props,
            "limit",
            json!({"type": "integer", "minimum": 1, "maximum": 1000,
                   "description": "With `path` at a list: at most this many items (default 1000); the answer says the list's `total`."}),
        );
        add(
            props,
            "cursor",
            json!({"type": "string",
                   "description": "With `path` at a list: the index of the first item to show (default 0)."}),
        );
    }
    if spec.access != Access::Read {
        props.insert(
            "dry_run".into(),
            json!({"type": "boolean", "default": true,
                   "description": "true (the default): write nothing, say what would be done. false: really do it."}),
        );
    }
    if let Some(Json::Array(required)) = obj.get("required") {
        if required.is_empty() {
            obj.remove("required");
        }
    }
    Some(schema)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::tools::{find, TOOLS};

    #[test]
    fn schemas_drop_db_and_add_the_door_arguments() {
        for t in TOOLS {
            let s = input_schema(t).unwrap_or(Json::Null);
            assert_eq!(s["type"], "object", "{}", t.name);
            assert!(s.pointer("/properties/db").is_none(), "{}", t.name);
            assert!(s.pointer("/properties/max_tokens").is_some(), "{}", t.name);
            let required = s["required"].as_array().cloned().unwrap_or_default();
            assert!(!required.contains(&json!("db")), "{}", t.name);
            if t.access != Access::Read {
                assert_eq!(s.pointer("/properties/dry_run/default"), Some(&json!(true)));
                assert!(!required.contains(&json!("dry_run")), "{}", t.name);
            }
        }
    }

    #[test]
    fn state_takes_the_app_field_names_and_a_path() {
        let s = find("state").and_then(input_schema).unwrap_or(Json::Null);
        for name in ["thread_id", "checkpoint_id", "checkpoint_ns", "path"] {
            assert!(s["properties"].get(name).is_some(), "{name}: {s}");
        }
        assert_eq!(s["required"], json!(["thread_id"]));
        assert!(
            s["properties"].get("reveal_secrets").is_none(),
            "secrets stay masked"
        );
    }
}

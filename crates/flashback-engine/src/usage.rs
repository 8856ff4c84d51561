//! Token usage per step: the `usage_metadata` a chat model puts on the messages it returns
//! (`AIMessage.usage_metadata = {input_tokens, output_tokens, total_tokens}`), summed over the
//! messages a step's tasks wrote. Only writes whose stored bytes mention `usage_metadata` are
//! read ([`NEEDLE`]); a message is counted once per step however often it was written. The
//! writes alone are read, not the state: a node that returns an earlier message again (same id)
//! has its usage counted again at that step.

use flashback_codec::view::{view_decoded, ViewOptions};
use flashback_storage::{Decoded, WriteInfo};
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::{HashMap, HashSet};

/// What the writes are searched for.
pub const NEEDLE: &str = "usage_metadata";

/// Tokens a step's model calls used.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct TokenUsage {
    /// Prompt tokens (`input_tokens`).
    pub input: u32,
    /// Completion tokens (`output_tokens`).
    pub output: u32,
    /// `total_tokens` (input + output when a message does not say).
    pub total: u32,
    /// Messages that carried usage.
    pub messages: u32,
}

impl TokenUsage {
    fn add(&mut self, usage: &serde_json::Map<String, Json>) {
        let n = |k: &str| {
            usage
                .get(k)
                .and_then(Json::as_u64)
                .map_or(0, |v| u32::try_from(v).unwrap_or(u32::MAX))
        };
        let (input, output) = (n("input_tokens"), n("output_tokens"));
        let total = match n("total_tokens") {
            0 => input.saturating_add(output),
            t => t,
        };
        self.input = self.input.saturating_add(input);
        self.output = self.output.saturating_add(output);
        self.total = self.total.saturating_add(total);
        self.messages += 1;
    }
}

/// Every object in `v` carrying a `usage_metadata` object (messages, at any depth), with its
/// `id` when it has one.
fn usages<'a>(v: &'a Json, out: &mut Vec<(Option<&'a str>, &'a serde_json::Map<String, Json>)>) {
    match v {
        Json::Object(m) => {
            if let Some(Json::Object(u)) = m.get(NEEDLE) {
                out.push((m.get("id").and_then(Json::as_str), u));
            }
            m.values().for_each(|x| usages(x, out));
        }
        Json::Array(items) => items.iter().for_each(|x| usages(x, out)),
        _ => {}
    }
}

/// Token usage by `(namespace, checkpoint id)` of the checkpoint the writes are pending on.
pub fn step_usage(writes: &[(WriteInfo, Decoded)]) -> HashMap<(String, String), TokenUsage> {
    let mut out: HashMap<(String, String), TokenUsage> = HashMap::new();
    let mut seen: HashSet<(String, String, String)> = HashSet::new();
    for (w, value) in writes {
        let Some(view) = view_decoded(value, ViewOptions::default()) else {
            continue;
        };
        let mut found = Vec::new();
        usages(&view, &mut found);
        for (id, usage) in found {
            if let Some(id) = id {
                let key = (
                    w.checkpoint_ns.clone(),
                    w.checkpoint_id.clone(),
                    id.to_owned(),
                );
                if !seen.insert(key) {
                    continue;
                }
            }
            out.entry((w.checkpoint_ns.clone(), w.checkpoint_id.clone()))
                .or_default()
                .add(usage);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(id: &str, json: Json) -> (WriteInfo, Decoded) {
        let info = WriteInfo {
            checkpoint_ns: String::new(),
            checkpoint_id: id.into(),
            task_id: "t".into(),
            task_path: "~__pregel_pull, agent".into(),
            channel: "messages".into(),
        };
        (
            info,
            Decoded::Msgpack(flashback_codec::jsvalue::revive(&json)),
        )
    }

    #[test]
    fn sums_usage_over_the_messages_of_a_step_once_each() {
        let m = |id: &str, i: u64, o: u64| {
            serde_json::json!({"type": "ai", "id": id, "content": "x",
                "usage_metadata": {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}})
        };
        let writes = [
            w("c1", serde_json::json!([m("a", 10, 5), m("b", 7, 3)])),
            // The same message written again at the same step counts once.
            w("c1", m("a", 10, 5)),
            w(
                "c2",
                serde_json::json!({"usage_metadata": {"input_tokens": 4, "output_tokens": 1}}),
            ),
            w("c3", serde_json::json!({"content": "no usage"})),
        ];
        let u = step_usage(&writes);
        let get = |id: &str| u.get(&(String::new(), id.to_owned())).copied();
        assert_eq!(
            get("c1"),
            Some(TokenUsage {
                input: 17,
                output: 8,
                total: 25,
                messages: 2
            })
        );
        // No total given: input + output.
        assert_eq!(get("c2").map(|t| t.total), Some(5));
        assert_eq!(get("c3"), None);
    }
}

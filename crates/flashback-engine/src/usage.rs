//! Token usage: the `usage_metadata` a chat model puts on the messages it returns
//! (`AIMessage.usage_metadata = {input_tokens, output_tokens, total_tokens,
//! input_token_details.cache_read, output_token_details.reasoning}`), read from the writes whose
//! stored bytes mention `usage_metadata` ([`NEEDLE`]).
//!
//! A message is counted **once per thread, where the model produced it**: messages travel — a
//! parent graph writes its sub-agent's messages again when the sub-agent returns, a sub-agent's
//! input copies the supervisor's messages, a `Send` carries the state — so among the writes of
//! the same message id, the ones that only carry it are left out (the input writes of a graph's
//! `__start__`, `update_state` writes, the `Send` packets) and of the rest the one in the deepest
//! namespace (the graph the model ran in), earliest there, counts. A message without an id
//! counts where it is written.

use flashback_codec::reserved::{PULL, START, TASKS};
use flashback_codec::view::{view_decoded, ViewOptions};
use flashback_storage::{Decoded, WriteInfo, NULL_TASK_ID};
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};

/// What the writes are searched for.
pub const NEEDLE: &str = "usage_metadata";

/// Tokens model calls used.
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
    /// Prompt tokens read from the provider's cache (`input_token_details.cache_read`).
    pub cached: u32,
    /// Completion tokens spent reasoning (`output_token_details.reasoning`).
    pub reasoning: u32,
}

impl TokenUsage {
    fn add(&mut self, usage: &serde_json::Map<String, Json>) {
        let n = |v: Option<&Json>| {
            v.and_then(Json::as_u64)
                .map_or(0, |v| u32::try_from(v).unwrap_or(u32::MAX))
        };
        let detail = |k: &str, d: &str| n(usage.get(k).and_then(|x| x.get(d)));
        let (input, output) = (n(usage.get("input_tokens")), n(usage.get("output_tokens")));
        let total = match n(usage.get("total_tokens")) {
            0 => input.saturating_add(output),
            t => t,
        };
        self.input = self.input.saturating_add(input);
        self.output = self.output.saturating_add(output);
        self.total = self.total.saturating_add(total);
        self.cached = self
            .cached
            .saturating_add(detail("input_token_details", "cache_read"));
        self.reasoning = self
            .reasoning
            .saturating_add(detail("output_token_details", "reasoning"));
        self.messages += 1;
    }

    /// Add another usage to this one.
    pub fn merge(&mut self, o: &TokenUsage) {
        self.input = self.input.saturating_add(o.input);
        self.output = self.output.saturating_add(o.output);
        self.total = self.total.saturating_add(o.total);
        self.cached = self.cached.saturating_add(o.cached);
        self.reasoning = self.reasoning.saturating_add(o.reasoning);
        self.messages = self.messages.saturating_add(o.messages);
    }
}

/// A thread's token usage: per step (by the `(namespace, checkpoint id)` its writes are pending
/// on), with the models that answered, and in total.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThreadUsage {
    /// Usage per step.
    pub steps: HashMap<(String, String), TokenUsage>,
    /// `response_metadata.model_name` of the messages counted per step, first seen first.
    pub models: HashMap<(String, String), Vec<String>>,
    /// The thread's total.
    pub total: TokenUsage,
    /// Every model that answered, first seen first.
    pub all_models: Vec<String>,
}

/// A message's usage as found: its id, its `usage_metadata`, its model name.
type Found<'a> = (
    Option<&'a str>,
    &'a serde_json::Map<String, Json>,
    Option<&'a str>,
);

/// Every object in `v` carrying a `usage_metadata` object (messages, at any depth), with its
/// `id` and model name when it has them.
fn usages<'a>(v: &'a Json, out: &mut Vec<Found<'a>>) {
    match v {
        Json::Object(m) => {
            if let Some(Json::Object(u)) = m.get(NEEDLE) {
                let model = m
                    .get("response_metadata")
                    .and_then(|r| r.get("model_name").or_else(|| r.get("model")))
                    .and_then(Json::as_str);
                out.push((m.get("id").and_then(Json::as_str), u, model));
            }
            m.values().for_each(|x| usages(x, out));
        }
        Json::Array(items) => items.iter().for_each(|x| usages(x, out)),
        _ => {}
    }
}

/// Whether a write only carries messages made elsewhere: a graph's input (its `__start__`
/// task), an `update_state`/input write, a `Send` packet.
fn carries_only(w: &WriteInfo) -> bool {
    let start_task = w
        .task_path
        .strip_prefix('~')
        .and_then(|p| p.strip_prefix(PULL))
        .and_then(|p| p.strip_prefix(", "))
        == Some(START);
    w.task_id == NULL_TASK_ID || w.channel == TASKS || start_task
}

fn depth(ns: &str) -> usize {
    if ns.is_empty() {
        0
    } else {
        ns.split('|').count()
    }
}

/// The thread's token usage from its writes that mention [`NEEDLE`] (see the module docs).
pub fn thread_usage(writes: &[(WriteInfo, Decoded)]) -> ThreadUsage {
    type Counted = (
        String,
        String,
        serde_json::Map<String, Json>,
        Option<String>,
    );
    // By message id: the write that counts (deepest namespace, then earliest checkpoint).
    let mut by_id: BTreeMap<String, ((usize, String), Counted)> = BTreeMap::new();
    let mut anonymous: Vec<Counted> = Vec::new();
    for (w, value) in writes {
        if carries_only(w) {
            continue;
        }
        let Some(view) = view_decoded(value, ViewOptions::default()) else {
            continue;
        };
        let mut found = Vec::new();
        usages(&view, &mut found);
        for (id, usage, model) in found {
            let entry: Counted = (
                w.checkpoint_ns.clone(),
                w.checkpoint_id.clone(),
                usage.clone(),
                model.map(str::to_owned),
            );
            let Some(id) = id else {
                anonymous.push(entry);
                continue;
            };
            // Deeper first, then the earliest checkpoint id (ids sort by time).
            let rank = (
                usize::MAX - depth(&w.checkpoint_ns),
                w.checkpoint_id.clone(),
            );
            match by_id.get(id) {
                Some((best, _)) if *best <= rank => {}
                _ => {
                    by_id.insert(id.to_owned(), (rank, entry));
                }
            }
        }
    }
    let mut out = ThreadUsage::default();
    for (ns, cp, usage, model) in by_id.into_values().map(|(_, f)| f).chain(anonymous) {
        let key = (ns, cp);
        let mut one = TokenUsage::default();
        one.add(&usage);
        out.steps.entry(key.clone()).or_default().merge(&one);
        out.total.merge(&one);
        if let Some(m) = model {
            let models = out.models.entry(key).or_default();
            if !models.contains(&m) {
                models.push(m.clone());
            }
            if !out.all_models.contains(&m) {
                out.all_models.push(m);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn w(ns: &str, id: &str, path: &str, channel: &str, json: Json) -> (WriteInfo, Decoded) {
        let info = WriteInfo {
            checkpoint_ns: ns.into(),
            checkpoint_id: id.into(),
            task_id: "t".into(),
            task_path: path.into(),
            channel: channel.into(),
        };
        (
            info,
            Decoded::Msgpack(flashback_codec::jsvalue::revive(&json)),
        )
    }

    fn m(id: &str, i: u64, o: u64) -> Json {
        json!({"type": "ai", "id": id, "content": "x",
            "response_metadata": {"model_name": "fake-1"},
            "usage_metadata": {"input_tokens": i, "output_tokens": o, "total_tokens": i + o,
                "input_token_details": {"cache_read": 2}}})
    }

    const AGENT: &str = "~__pregel_pull, agent";

    #[test]
    fn sums_usage_over_the_messages_of_a_step_once_each() {
        let writes = [
            w(
                "",
                "c1",
                AGENT,
                "messages",
                json!([m("a", 10, 5), m("b", 7, 3)]),
            ),
            // The same message written again at the same step counts once.
            w("", "c1", AGENT, "messages", m("a", 10, 5)),
            w(
                "",
                "c2",
                AGENT,
                "x",
                json!({"usage_metadata": {"input_tokens": 4, "output_tokens": 1}}),
            ),
            w("", "c3", AGENT, "x", json!({"content": "no usage"})),
        ];
        let u = thread_usage(&writes);
        let get = |id: &str| u.steps.get(&(String::new(), id.to_owned())).copied();
        assert_eq!(
            get("c1"),
            Some(TokenUsage {
                input: 17,
                output: 8,
                total: 25,
                messages: 2,
                cached: 4,
                reasoning: 0
            })
        );
        // No total given: input + output.
        assert_eq!(get("c2").map(|t| t.total), Some(5));
        assert_eq!(get("c3"), None);
        assert_eq!(u.total.total, 30);
        assert_eq!(u.all_models, ["fake-1"]);
    }

    #[test]
    fn a_message_counts_once_where_the_model_produced_it() {
        let sub = "supervisor:0d2e";
        let writes = [
            // The supervisor's model, inside its sub-agent.
            w(sub, "c5", AGENT, "messages", json!([m("s1", 100, 20)])),
            // The parent writes the sub-agent's messages again when it returns (earlier id).
            w(
                "",
                "c1",
                "~__pregel_pull, supervisor",
                "messages",
                json!([m("s1", 100, 20)]),
            ),
            // A worker's input copies them; a Send carries them.
            w(
                "worker:77",
                "c7",
                "~__pregel_pull, __start__",
                "messages",
                json!([m("s1", 100, 20)]),
            ),
            w(
                "",
                "c1",
                AGENT,
                "__pregel_tasks",
                json!({"state": [m("s1", 100, 20)]}),
            ),
            // The worker's own model.
            w(
                "worker:77",
                "c8",
                AGENT,
                "messages",
                json!([m("w1", 50, 5)]),
            ),
        ];
        let u = thread_usage(&writes);
        assert_eq!(u.total.total, 175);
        assert_eq!(u.total.messages, 2);
        assert_eq!(u.steps.len(), 2, "{:?}", u.steps);
        assert_eq!(u.steps[&(sub.to_owned(), "c5".to_owned())].total, 120);
        assert_eq!(
            u.steps[&("worker:77".to_owned(), "c8".to_owned())].total,
            55
        );
        assert_eq!(u.models[&(sub.to_owned(), "c5".to_owned())], ["fake-1"]);
    }
}

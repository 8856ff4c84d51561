//! The API's `ThreadState` (one checkpoint as `get_state_history` shows it) as a
//! [`CheckpointTuple`]: the values as the API shows them (plain JSON), the tasks the server
//! names ([`Served`]), and the pending writes the API exposes — each task's `result` (its
//! writes, once it finished), `error` and `interrupts`. A state the API gives without a
//! checkpoint id is left out with a note, never failing the thread.

use crate::model::*;
use flashback_codec::reserved::{ERROR, INTERRUPT, NO_WRITES};
use flashback_codec::{DecodeBudget, Decoded, TooLargeReason, Value};
use serde_json::Value as Json;
use std::sync::Arc;

/// A JSON value as the codec's tree (keys stay strings, numbers stay as they are).
pub(crate) fn plain(v: &Json) -> Value {
    match v {
        Json::Null => Value::Nil,
        Json::Bool(b) => Value::Bool(*b),
        Json::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Value::Int(i),
            (None, Some(u)) => Value::UInt(u),
            _ => Value::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => Value::Str(s.as_str().into()),
        Json::Array(items) => Value::Array(items.iter().map(plain).collect()),
        Json::Object(m) => Value::Map(
            m.iter()
                .map(|(k, v)| (Value::Str(k.as_str().into()), plain(v)))
                .collect(),
        ),
    }
}

/// A `Write` that only counts, and stops the serialiser once past a limit.
struct Counter {
    n: u64,
    limit: u64,
}

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.n += buf.len() as u64;
        if self.n > self.limit {
            return Err(std::io::Error::other("over the limit"));
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A value within the decode budget (measured as its JSON text, counted without being
/// written, stopping at the limit), else its size and kind.
fn decoded(v: &Json, budget: DecodeBudget) -> Decoded {
    let limit = budget.max_value_bytes;
    if limit > 0 && matches!(v, Json::Array(_) | Json::Object(_) | Json::String(_)) {
        let mut count = Counter { n: 0, limit };
        if serde_json::to_writer(&mut count, v).is_err() {
            // Its whole size, counted to the end (still nothing written).
            let mut all = Counter {
                n: 0,
                limit: u64::MAX,
            };
            let _ = serde_json::to_writer(&mut all, v);
            let bytes = all.n;
            let kind = match v {
                Json::Array(_) => "list",
                Json::Object(_) => "dict",
                _ => "str",
            };
            return Decoded::TooLarge {
                tag: "json".into(),
                bytes,
                kind: kind.into(),
                reason: TooLargeReason::Value,
            };
        }
    }
    Decoded::Msgpack(plain(v))
}

fn text(v: Option<&Json>) -> Option<String> {
    v.and_then(Json::as_str).map(str::to_owned)
}

/// `state.checkpoint.checkpoint_id` (or the top-level `checkpoint_id`).
pub(crate) fn checkpoint_id(state: &Json) -> Option<&str> {
    state
        .pointer("/checkpoint/checkpoint_id")
        .or_else(|| state.get("checkpoint_id"))
        .and_then(Json::as_str)
}

/// `state.checkpoint.checkpoint_ns` (`""` when absent).
pub(crate) fn checkpoint_ns(state: &Json) -> &str {
    state
        .pointer("/checkpoint/checkpoint_ns")
        .and_then(Json::as_str)
        .unwrap_or("")
}

/// The subgraph namespaces a state's tasks name (`tasks[].checkpoint.checkpoint_ns`).
pub(crate) fn task_namespaces(state: &Json) -> impl Iterator<Item = &str> {
    tasks(state).filter_map(|t| {
        t.pointer("/checkpoint/checkpoint_ns")
            .and_then(Json::as_str)
    })
}

fn tasks(state: &Json) -> impl Iterator<Item = &Json> {
    state
        .get("tasks")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
}

/// The header of a state (no values).
pub(crate) fn header(thread_id: &str, state: &Json) -> Option<CheckpointHeader> {
    let id = checkpoint_id(state)?;
    Some(CheckpointHeader {
        thread_id: thread_id.to_owned(),
        checkpoint_ns: checkpoint_ns(state).to_owned(),
        checkpoint_id: id.to_owned(),
        parent_checkpoint_id: state
            .pointer("/parent_checkpoint/checkpoint_id")
            .or_else(|| state.get("parent_checkpoint_id"))
            .and_then(Json::as_str)
            .map(str::to_owned),
        ts: text(state.get("created_at")).unwrap_or_default(),
        metadata: state
            .get("metadata")
            .filter(|m| m.is_object())
            .cloned()
            .unwrap_or_else(|| Json::Object(Default::default())),
        problem: None,
    })
}

/// The channel values of a state (`values`: a dict of channels, or one value of a graph
/// whose state is not a dict, shown as `__root__`).
fn channel_values(
    state: &Json,
    budget: DecodeBudget,
    only: Option<&ChannelFilter>,
) -> Vec<(String, Arc<Decoded>)> {
    let keep = |c: &str| only.is_none_or(|f| f(c));
    match state.get("values") {
        Some(Json::Object(m)) => m
            .iter()
            .filter(|(c, _)| keep(c))
            .map(|(c, v)| (c.clone(), Arc::new(decoded(v, budget))))
            .collect(),
        None | Some(Json::Null) => Vec::new(),
        Some(other) if keep("__root__") => {
            vec![("__root__".into(), Arc::new(decoded(other, budget)))]
        }
        Some(_) => Vec::new(),
    }
}

/// A task's path as the savers store it (`~__pregel_pull, model`: Python's `", ".join` of
/// the path, booleans as `True`/`False`), so its writes name their node.
fn task_path(path: Option<&Json>) -> String {
    let Some(Json::Array(parts)) = path else {
        return String::new();
    };
    let parts: Vec<String> = parts
        .iter()
        .map(|p| match p {
            Json::String(s) => s.clone(),
            Json::Bool(true) => "True".into(),
            Json::Bool(false) => "False".into(),
            Json::Null => "None".into(),
            other => other.to_string(),
        })
        .collect();
    format!("~{}", parts.join(", "))
}

/// Each pending write the API shows, in the API's order: each task's `result` (its writes by
/// channel; an empty result is the task's "no writes" mark, `None` here), `error` and
/// `interrupts` (the list as one `__interrupt__` write), with the task's id and path.
fn each_write(state: &Json, mut f: impl FnMut(&str, &str, i64, &str, Option<&Json>)) {
    for t in tasks(state) {
        let Some(task_id) = t.get("id").and_then(Json::as_str) else {
            continue;
        };
        let path = task_path(t.get("path"));
        if let Some(e) = t.get("error").filter(|e| !e.is_null()) {
            f(
                task_id,
                &path,
                crate::saver::write_idx(ERROR, 0),
                ERROR,
                Some(e),
            );
        }
        if let Some(list) = t
            .get("interrupts")
            .filter(|i| i.as_array().is_some_and(|a| !a.is_empty()))
        {
            f(
                task_id,
                &path,
                crate::saver::write_idx(INTERRUPT, 0),
                INTERRUPT,
                Some(list),
            );
        }
        match t.get("result") {
            Some(Json::Object(m)) if m.is_empty() => f(task_id, &path, 0, NO_WRITES, None),
            Some(Json::Object(m)) => {
                for (i, (channel, v)) in m.iter().enumerate() {
                    f(task_id, &path, i as i64, channel, Some(v));
                }
            }
            None | Some(Json::Null) => {}
            Some(other) => f(task_id, &path, 0, "__root__", Some(other)),
        }
    }
}

/// The pending writes the API shows ([`each_write`]), decoded, in the savers' order.
fn pending_writes(state: &Json, budget: DecodeBudget) -> Vec<PendingWrite> {
    let mut out = Vec::new();
    each_write(state, |task_id, path, idx, channel, value| {
        out.push(PendingWrite {
            task_id: task_id.to_owned(),
            task_path: path.to_owned(),
            idx,
            channel: channel.to_owned(),
            type_tag: "json".into(),
            value: value.map_or(Decoded::Msgpack(Value::Nil), |v| decoded(v, budget)),
        })
    });
    sort_writes(&mut out);
    out
}

/// The tasks as the server names them.
fn served(state: &Json) -> Served {
    Served {
        tasks: tasks(state)
            .filter_map(|t| {
                Some(ServedTask {
                    id: t.get("id")?.as_str()?.to_owned(),
                    name: text(t.get("name")).unwrap_or_default(),
                    path: t.get("path").cloned().unwrap_or(Json::Null),
                    checkpoint_ns: text(t.pointer("/checkpoint/checkpoint_ns")),
                })
            })
            .collect(),
    }
}

/// A state as a tuple (`None` without a checkpoint id). `only`: the channels whose values
/// are kept (a selecting read).
pub(crate) fn tuple(
    thread_id: &str,
    state: &Json,
    budget: DecodeBudget,
    only: Option<&ChannelFilter>,
) -> Option<CheckpointTuple> {
    let header = header(thread_id, state)?;
    let checkpoint = Checkpoint {
        v: 4,
        id: header.checkpoint_id.clone(),
        ts: header.ts.clone(),
        channel_values: channel_values(state, budget, only),
        channel_versions: Vec::new(),
        versions_seen: Vec::new(),
        updated_channels: None,
        pending_sends: None,
    };
    Some(CheckpointTuple {
        pending_writes: pending_writes(state, budget),
        served: Some(Arc::new(served(state))),
        header,
        checkpoint,
        sealing: Sealing::default(),
    })
}

/// The writes of a state without their values (nothing decoded).
pub(crate) fn write_infos(state: &Json) -> Vec<WriteInfo> {
    let Some(id) = checkpoint_id(state) else {
        return Vec::new();
    };
    let ns = checkpoint_ns(state);
    let mut out = Vec::new();
    each_write(state, |task_id, path, _, channel, _| {
        out.push(WriteInfo {
            checkpoint_ns: ns.to_owned(),
            checkpoint_id: id.to_owned(),
            task_id: task_id.to_owned(),
            task_path: path.to_owned(),
            channel: channel.to_owned(),
        })
    });
    out
}

/// The writes of a state whose value's JSON text holds `needle`, with their values decoded
/// (what the steps' token usage reads: nothing else of the state is converted).
pub(crate) fn writes_mentioning(
    state: &Json,
    needle: &str,
    budget: DecodeBudget,
) -> Vec<(WriteInfo, Decoded)> {
    let Some(id) = checkpoint_id(state) else {
        return Vec::new();
    };
    let ns = checkpoint_ns(state);
    let mut out = Vec::new();
    each_write(state, |task_id, path, _, channel, value| {
        let Some(v) = value.filter(|v| v.to_string().contains(needle)) else {
            return;
        };
        let info = WriteInfo {
            checkpoint_ns: ns.to_owned(),
            checkpoint_id: id.to_owned(),
            task_id: task_id.to_owned(),
            task_path: path.to_owned(),
            channel: channel.to_owned(),
        };
        out.push((info, decoded(v, budget)));
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_state_reads_as_a_tuple_with_the_servers_tasks_and_writes() {
        let state = json!({
            "values": {"messages": [{"type": "human", "content": "hi"}], "n": 2},
            "next": ["review"],
            "tasks": [
                {"id": "t1", "name": "review", "path": ["__pregel_pull", "review"], "error": null,
                 "interrupts": [{"id": "i1", "value": {"q": "ok?"}}], "checkpoint": null,
                 "state": null, "result": null},
                {"id": "t2", "name": "model", "path": ["__pregel_pull", "model"],
                 "error": "ValueError('boom')", "interrupts": [], "checkpoint": null,
                 "result": {"messages": [], "turns": 1}}
            ],
            "metadata": {"step": 1, "source": "loop"},
            "created_at": "2026-11-29T05:02:41.016712+00:00",
            "checkpoint": {"checkpoint_id": "c2", "thread_id": "t", "checkpoint_ns": ""},
            "parent_checkpoint": {"checkpoint_id": "c1", "thread_id": "t", "checkpoint_ns": ""}
        });
        let t = tuple("t", &state, DecodeBudget::DEFAULT, None).unwrap();
        assert_eq!(t.header.checkpoint_id, "c2");
        assert_eq!(t.header.parent_checkpoint_id.as_deref(), Some("c1"));
        assert_eq!(t.header.step(), Some(1));
        assert_eq!(t.checkpoint.channel_values.len(), 2);
        let served = t.served.as_ref().unwrap();
        assert_eq!(served.tasks.len(), 2);
        let channels: Vec<_> = t
            .pending_writes
            .iter()
            .map(|w| (w.task_id.as_str(), w.channel.as_str()))
            .collect();
        assert_eq!(
            channels,
            // The savers' order: by task path (its node), task id, index.
            [
                ("t2", "__error__"),
                ("t2", "messages"),
                ("t2", "turns"),
                ("t1", "__interrupt__"),
            ]
        );
        assert_eq!(write_infos(&state).len(), 4);
        assert_eq!(t.pending_writes[3].task_path, "~__pregel_pull, review");
        assert_eq!(
            task_path(Some(&json!(["__pregel_push", 0, false]))),
            "~__pregel_push, 0, False"
        );
        assert!(tuple("t", &json!({"values": {}}), DecodeBudget::DEFAULT, None).is_none());
    }

    #[test]
    fn values_over_the_budget_are_left_out() {
        let big =
            json!({"values": {"blob": "x".repeat(100)}, "checkpoint": {"checkpoint_id": "c"}});
        let budget = DecodeBudget {
            max_value_bytes: 10,
            max_request_bytes: 0,
        };
        let t = tuple("t", &big, budget, None).unwrap();
        assert!(matches!(
            &*t.checkpoint.channel_values[0].1,
            Decoded::TooLarge { .. }
        ));
    }
}

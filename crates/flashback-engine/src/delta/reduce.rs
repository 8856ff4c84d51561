//! The reducers a DeltaChannel can be replayed with, as batch reducers
//! (`reducer(state, [write, …]) -> state`, LangGraph's `DeltaChannel` contract), and how one is
//! inferred from the values when the database does not say.

use crate::reducer::Reducer;
use flashback_codec::Value;

/// `langgraph.graph.message.REMOVE_ALL_MESSAGES`: a `RemoveMessage` with this id clears the list.
const REMOVE_ALL: &str = "__remove_all__";

/// The key LangGraph's `Overwrite` takes in its dict forms (`langgraph._internal._constants`).
const OVERWRITE: &str = "__overwrite__";

/// Is `v` a langchain message (`langchain_core.messages.*`)?
pub(crate) fn is_message(v: &Value) -> bool {
    matches!(v, Value::Object(o) if o.module.starts_with("langchain_core.messages")
        || o.name.ends_with("Message") || o.name.ends_with("MessageChunk"))
}

fn str_key<'a>(map: &'a [(Value, Value)], key: &str) -> Option<&'a Value> {
    map.iter()
        .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
        .map(|(_, v)| v)
}

/// `binop._get_overwrite`: `Overwrite(value)`, `{"__overwrite__": value}` or
/// `{"type": "__overwrite__", "value": value}`.
fn overwrite(v: &Value) -> Option<&Value> {
    match v {
        Value::Object(o) if o.name == "Overwrite" && o.module.starts_with("langgraph") => {
            match &o.payload {
                Value::Map(m) => str_key(m, "value"),
                Value::Array(a) => a.first(),
                other => Some(other),
            }
        }
        Value::Map(m) if m.len() == 1 => str_key(m, OVERWRITE),
        Value::Map(m) if matches!(str_key(m, "type"), Some(Value::Str(s)) if s == OVERWRITE) => {
            str_key(m, "value")
        }
        _ => None,
    }
}

/// The empty value a DeltaChannel starts from when nothing is stored (`typ()`): a dict for
/// channels merged as dicts, else a list (`DeltaChannel`'s default type).
pub(crate) fn empty(reducer: Reducer) -> Value {
    match reducer {
        Reducer::DictMerge => Value::Map(Vec::new()),
        _ => Value::Array(Vec::new()),
    }
}

/// A message's `id`, borrowed (no allocation: this runs for every message of every step).
fn message_id(m: &Value) -> Option<&str> {
    match m {
        Value::Object(o) => match &o.payload {
            Value::Map(entries) => match str_key(entries, "id") {
                Some(Value::Str(id)) => Some(id.as_str()),
                _ => None,
            },
            _ => None,
        },
        _ => None,
    }
}

/// `DeltaChannel.replay_writes`: the last `Overwrite` among `writes` resets the base, then the
/// reducer folds the rest in one batch.
pub(crate) fn replay(reducer: Reducer, base: Value, writes: &[&Value]) -> Result<Value, String> {
    let mut base = base;
    let mut start = 0;
    for (i, w) in writes.iter().enumerate() {
        if let Some(v) = overwrite(w) {
            base = match v {
                Value::Nil => empty(reducer),
                v => v.clone(),
            };
            start = i + 1;
        }
    }
    fold(reducer, base, &writes[start..])
}

fn fold(reducer: Reducer, base: Value, writes: &[&Value]) -> Result<Value, String> {
    if writes.is_empty() {
        return Ok(base);
    }
    match reducer {
        Reducer::LastValue => Ok(writes[writes.len() - 1].clone()),
        Reducer::ListAppend => {
            let Value::Array(mut out) = base else {
                return Err(format!(
                    "append: the value is a {}, not a list",
                    base.type_name()
                ));
            };
            for w in writes {
                match w {
                    Value::Array(items) => out.extend(items.iter().cloned()),
                    other => out.push((*other).clone()),
                }
            }
            Ok(Value::Array(out))
        }
        Reducer::AddMessages => add_messages(base, writes),
        Reducer::DictMerge => {
            let Value::Map(mut out) = base else {
                return Err(format!(
                    "merge: the value is a {}, not a dict",
                    base.type_name()
                ));
            };
            for w in writes {
                let Value::Map(entries) = w else {
                    return Err(format!("merge: a write is a {}, not a dict", w.type_name()));
                };
                for (k, v) in entries {
                    match out.iter_mut().find(|(x, _)| x == k) {
                        Some((_, old)) => *old = v.clone(),
                        None => out.push((k.clone(), v.clone())),
                    }
                }
            }
            Ok(Value::Map(out))
        }
    }
}

/// `_messages_delta_reducer` (LangGraph's batch reducer for message DeltaChannels) plus
/// `add_messages`' remove-all: writes that are lists are flattened, a message replaces the one
/// with its id or is appended, `RemoveMessage` drops its id (an unknown id is ignored, as the
/// batch reducer does), and `RemoveMessage(id="__remove_all__")` drops everything before it.
fn add_messages(base: Value, writes: &[&Value]) -> Result<Value, String> {
    let Value::Array(state) = base else {
        return Err(format!(
            "add_messages: the value is a {}, not a list",
            base.type_name()
        ));
    };
    // References into `state` and `writes`; one clone of each kept message at the end.
    let mut result: Vec<Option<&Value>> = state.iter().map(Some).collect();
    let mut index: std::collections::HashMap<&str, usize> = state
        .iter()
        .enumerate()
        .filter_map(|(i, m)| message_id(m).map(|id| (id, i)))
        .collect();
    let flat = writes.iter().flat_map(|w| match w {
        Value::Array(items) => items.iter().collect::<Vec<_>>(),
        other => vec![*other],
    });
    for msg in flat {
        let remove = matches!(msg, Value::Object(o) if o.name == "RemoveMessage");
        match message_id(msg) {
            Some(REMOVE_ALL) if remove => {
                result.clear();
                index.clear();
            }
            Some(id) if remove => {
                if let Some(i) = index.remove(id) {
                    result[i] = None;
                }
            }
            Some(id) => match index.get(id) {
                Some(&i) => result[i] = Some(msg),
                None => {
                    index.insert(id, result.len());
                    result.push(Some(msg));
                }
            },
            None => result.push(Some(msg)),
        }
    }
    let out: Vec<Value> = result.into_iter().flatten().cloned().collect();
    Ok(Value::Array(out))
}

/// The reducer the values suggest (the database does not record it): langchain messages →
/// `add_messages`; other lists → append; dicts → merge; anything else → last value.
pub(crate) fn infer<'a>(values: impl IntoIterator<Item = &'a Value>) -> Reducer {
    let mut list = false;
    let mut map = false;
    let mut other = false;
    for v in values {
        let v = overwrite(v).unwrap_or(v);
        match v {
            Value::Array(items) => {
                if items.iter().any(is_message) {
                    return Reducer::AddMessages;
                }
                list = true;
            }
            v if is_message(v) => return Reducer::AddMessages,
            Value::Map(_) => map = true,
            Value::Nil => {}
            _ => other = true,
        }
    }
    if list {
        Reducer::ListAppend
    } else if map && !other {
        Reducer::DictMerge
    } else if other || map {
        Reducer::LastValue
    } else {
        Reducer::ListAppend
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_codec::{ObjectForm, PyObject};
    use std::sync::Arc;

    fn msg(name: &str, id: &str, content: &str) -> Value {
        Value::Object(Arc::new(PyObject {
            form: ObjectForm::PydanticV2,
            module: "langchain_core.messages.ai".into(),
            name: name.into(),
            payload: Value::Map(vec![
                (Value::Str("content".into()), Value::Str(content.into())),
                (Value::Str("id".into()), Value::Str(id.into())),
            ]),
            extra: None,
        }))
    }
    fn ids(v: &Value) -> Vec<String> {
        match v {
            Value::Array(xs) => xs
                .iter()
                .filter_map(message_id)
                .map(str::to_owned)
                .collect(),
            _ => vec![],
        }
    }

    #[test]
    fn add_messages_replaces_removes_and_clears() {
        let base = Value::Array(vec![
            msg("HumanMessage", "h", "hi"),
            msg("AIMessage", "a", "x"),
        ]);
        let w1 = Value::Array(vec![
            msg("AIMessage", "b", "y"),
            msg("AIMessage", "a", "x2"),
        ]);
        let w2 = msg("RemoveMessage", "h", "");
        let w3 = msg("RemoveMessage", "unknown", "");
        let out = replay(Reducer::AddMessages, base.clone(), &[&w1, &w2, &w3]).unwrap();
        assert_eq!(ids(&out), ["a", "b"]);
        let clear = msg("RemoveMessage", REMOVE_ALL, "");
        let tail = msg("AIMessage", "c", "z");
        let out = replay(Reducer::AddMessages, base, &[&w1, &clear, &tail]).unwrap();
        assert_eq!(ids(&out), ["c"]);
    }

    #[test]
    fn append_extends_lists_and_pushes_anything_else() {
        let out = replay(
            Reducer::ListAppend,
            Value::Array(vec![Value::Int(1)]),
            &[
                &Value::Array(vec![Value::Int(2), Value::Int(3)]),
                &Value::Int(4),
            ],
        )
        .unwrap();
        assert_eq!(out, Value::Array((1..=4).map(Value::Int).collect()));
    }

    #[test]
    fn overwrite_resets_the_base_and_batching_is_invariant() {
        let ow = Value::Map(vec![(
            Value::Str(OVERWRITE.into()),
            Value::Array(vec![Value::Int(9)]),
        )]);
        let a = Value::Array(vec![Value::Int(1)]);
        let b = Value::Array(vec![Value::Int(2)]);
        let all = replay(Reducer::ListAppend, Value::Array(vec![]), &[&a, &ow, &b]).unwrap();
        assert_eq!(all, Value::Array(vec![Value::Int(9), Value::Int(2)]));
        let first = replay(Reducer::ListAppend, Value::Array(vec![]), &[&a]).unwrap();
        let then = replay(Reducer::ListAppend, first, &[&ow, &b]).unwrap();
        assert_eq!(all, then);
    }

    #[test]
    fn dict_merge_refuses_a_non_dict_write() {
        let err = replay(Reducer::DictMerge, Value::Map(vec![]), &[&Value::Int(1)]).unwrap_err();
        assert!(err.contains("not a dict"), "{err}");
    }

    #[test]
    fn inference_follows_the_shapes() {
        let m = msg("AIMessage", "a", "x");
        assert_eq!(infer([&Value::Array(vec![m])]), Reducer::AddMessages);
        assert_eq!(
            infer([&Value::Array(vec![Value::Int(1)])]),
            Reducer::ListAppend
        );
        assert_eq!(infer([&Value::Map(vec![])]), Reducer::DictMerge);
        assert_eq!(infer([&Value::Int(3)]), Reducer::LastValue);
        assert_eq!(infer(std::iter::empty()), Reducer::ListAppend);
    }
}

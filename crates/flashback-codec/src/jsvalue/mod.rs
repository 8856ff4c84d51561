//! The `json` serde: what LangGraph.js's `JsonPlusSerializer` writes (every value of a
//! LangGraph.js database), and LangGraph Python's 2024 legacy format. Values are plain JSON with
//! langchain objects as `lc` envelopes:
//! `{"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"], "kwargs": {…}}`.
//!
//! [`revive`] turns such a document into the typed value tree Python's reviver would give:
//! messages become `langchain_core.messages.<module>.<Class>` objects with the fields of
//! Python's `model_dump()` (defaults filled in, tool calls in Python's key order); other `lc: 1`
//! constructors keep their id path as the type name (and are marked [`LC_EXTRA`], so they are
//! written back as envelopes); `lc: 2` constructors (Python legacy) become the module.Name
//! objects they construct. [`for_channel`] then gives LangGraph.js's untyped control values their
//! Python types: `{node, args}` packets in `__pregel_tasks` are `langgraph.types.Send`s and the
//! `{id, value}` items of an `__interrupt__` write are `langgraph.types.Interrupt`s.
//!
//! [`revive_text`] reads stored JSON as JS's `JSON.parse` does ([`parse`]): a string holding a
//! lone surrogate, a number beyond float64 and a list or dict nested deeper than the codec's
//! limit are kept as their exact text ([`crate::JsonText`]), one value each, never failing the
//! whole document.
//!
//! [`to_json_text`] is the way back, for writing into a LangGraph.js database: it refuses (with
//! the path and the type) every value JS's reader could not revive, so that Flashback never
//! writes what the program cannot read; what was kept as text is written back unchanged.

use crate::value::{ObjectForm, PyObject, Value};
use node::{Node, Obj};
use serde_json::Value as Json;

/// The `extra` of an object revived from an `lc: 1` envelope that is not a message: written back
/// as the envelope it came from.
pub const LC_EXTRA: &str = "lc:1";
pub use crate::reserved::{INTERRUPT, TASKS};

/// A message class: its langchain_core module, its `type` field, and the fields Python's
/// `model_dump()` adds after the base fields, with their defaults.
struct MessageClass {
    name: &'static str,
    module: &'static str,
    kind: &'static str,
    extra: &'static [(&'static str, Default)],
}

#[derive(Clone, Copy)]
enum Default {
    Null,
    EmptyList,
    EmptyStr,
    Success,
}

impl Default {
    fn value(self) -> Value {
        match self {
            Default::Null => Value::Nil,
            Default::EmptyList => Value::Array(Vec::new()),
            Default::EmptyStr => Value::Str("".into()),
            Default::Success => Value::Str("success".into()),
        }
    }
}

const AI: &[(&str, Default)] = &[
    ("tool_calls", Default::EmptyList),
    ("invalid_tool_calls", Default::EmptyList),
    ("usage_metadata", Default::Null),
];
const AI_CHUNK: &[(&str, Default)] = &[
    ("tool_calls", Default::EmptyList),
    ("invalid_tool_calls", Default::EmptyList),
    ("usage_metadata", Default::Null),
    ("tool_call_chunks", Default::EmptyList),
];
const TOOL: &[(&str, Default)] = &[
    ("tool_call_id", Default::EmptyStr),
    ("artifact", Default::Null),
    ("status", Default::Success),
];
const CHAT: &[(&str, Default)] = &[("role", Default::EmptyStr)];

const MESSAGES: &[MessageClass] = &[
    class("AIMessage", "ai", "ai", AI),
    class("AIMessageChunk", "ai", "AIMessageChunk", AI_CHUNK),
    class("HumanMessage", "human", "human", &[]),
    class("HumanMessageChunk", "human", "HumanMessageChunk", &[]),
    class("SystemMessage", "system", "system", &[]),
    class("SystemMessageChunk", "system", "SystemMessageChunk", &[]),
    class("ToolMessage", "tool", "tool", TOOL),
    class("ToolMessageChunk", "tool", "ToolMessageChunk", TOOL),
    class("ChatMessage", "chat", "chat", CHAT),
    class("ChatMessageChunk", "chat", "ChatMessageChunk", CHAT),
    class("FunctionMessage", "function", "function", &[]),
    class(
        "FunctionMessageChunk",
        "function",
        "FunctionMessageChunk",
        &[],
    ),
    class("RemoveMessage", "modifier", "remove", &[]),
];

const fn class(
    name: &'static str,
    module: &'static str,
    kind: &'static str,
    extra: &'static [(&'static str, Default)],
) -> MessageClass {
    MessageClass {
        name,
        module,
        kind,
        extra,
    }
}

/// The fields every message dumps first, in Python's order (`type` is filled per class).
const BASE: &[&str] = &[
    "content",
    "additional_kwargs",
    "response_metadata",
    "type",
    "name",
    "id",
];
/// Fields JS's message constructors always keep in `kwargs` (written even when default).
const ALWAYS: &[&str] = &[
    "content",
    "additional_kwargs",
    "response_metadata",
    "tool_call_id",
];
/// Python's key order of a tool call.
const TOOL_CALL: &[&str] = &["name", "args", "id", "type"];

fn message_class(id: &[&str]) -> Option<&'static MessageClass> {
    let name = match id {
        ["langchain_core", "messages", name] => *name,
        ["langchain", "schema", "messages", name] => *name,
        ["langchain_core", "messages", _module, name] => *name,
        _ => return None,
    };
    MESSAGES.iter().find(|c| c.name == name)
}

/// The message class of a Python type (`langchain_core.messages.ai`, `AIMessage`).
fn class_of(o: &PyObject) -> Option<&'static MessageClass> {
    let c = MESSAGES.iter().find(|c| c.name == o.name)?;
    let module = o.module.strip_prefix("langchain_core.messages.")?;
    (module == c.module).then_some(c)
}

/// A JSON document as the value tree Python's reviver gives (see the module docs).
pub fn revive(v: &Json) -> Value {
    revive_node(&Node::of_json(v))
}

/// The value [`revive`] gives for the JSON `text` as JS's `JSON.parse` reads it: strings with
/// lone surrogates, numbers beyond float64 and lists or dicts nested deeper than
/// [`crate::msgpack::MAX_DEPTH`] levels are kept as their text ([`crate::JsonText`]).
pub fn revive_text(text: &[u8]) -> Result<Value, JsonError> {
    Ok(revive_node(&parse_text(text)?))
}

/// The tree of a JSON text (UTF-8), nesting limited to the codec's depth.
pub(crate) fn parse_text(text: &[u8]) -> Result<Node<'_>, JsonError> {
    parse::parse(text, crate::msgpack::MAX_DEPTH)
}

/// The string member `key` of a JSON text's top-level dict, reading nothing deeper (its
/// lists and dicts are checked, not decoded): `Err` when the text is not JSON, `Ok(None)`
/// when the text is not a dict or has no such string.
pub fn top_level_str(text: &[u8], key: &str) -> Result<Option<String>, JsonError> {
    Ok(parse::parse(text, 1)?
        .get(key)
        .and_then(Node::as_str)
        .map(str::to_owned))
}

pub(crate) fn revive_node(v: &Node<'_>) -> Value {
    match v {
        Node::Arr(items) => Value::Array(items.iter().map(revive_node).collect()),
        Node::Obj(m) => envelope(m).unwrap_or_else(|| plain(m, revive_node)),
        scalar => scalar.scalar().unwrap_or(Value::Nil),
    }
}

/// A dict key as a value: a string, or one holding lone surrogates kept as its token.
fn key_value(k: &Node<'_>) -> Value {
    k.scalar().unwrap_or(Value::Nil)
}

fn plain(m: &Obj<'_>, mut revive: impl FnMut(&Node<'_>) -> Value) -> Value {
    Value::Map(
        m.members
            .iter()
            .map(|(k, v)| (key_value(k), revive(v)))
            .collect(),
    )
}

/// The `lc: 2` records LangGraph.js's `_default` writes and its reviver reads back: `undefined`,
/// a DeltaChannel snapshot, and `Set`, `Map`, `RegExp`, `Error`, `Uint8Array` constructors
/// (JS keeps any other `lc: 2` constructor as the plain object it is).
fn js_record(m: &Obj<'_>) -> Option<Value> {
    if m.get("lc")?.as_i64()? != 2 {
        return None;
    }
    match m.get("type")?.as_str()? {
        "undefined" if m.members.len() == 2 => {
            return Some(PyObject::value(
                ObjectForm::KwArgs,
                JS,
                "undefined",
                Value::Map(Vec::new()),
                None,
            ))
        }
        "delta_snapshot" => {
            return Some(Value::DeltaSnapshot(Box::new(revive_node(m.get("value")?))))
        }
        "constructor" => {}
        _ => return None,
    }
    let [Node::Str(name)] = m.get("id")?.as_array()?.as_slice() else {
        return None;
    };
    let method = m
        .get("method")
        .filter(|v| !v.is_null())
        .and_then(Node::as_str);
    let args = m.get("args")?.as_array()?;
    let items = || match args.as_slice() {
        [Node::Arr(items)] => Some(items),
        _ => None,
    };
    Some(match (name.as_ref(), method) {
        ("Set", None) => PyObject::value(
            ObjectForm::SingleArg,
            "builtins",
            "set",
            Value::Array(items()?.iter().map(revive_node).collect()),
            None,
        ),
        ("Map", None) => {
            let pairs = items()?
                .iter()
                .map(|p| match p.as_array().map(Vec::as_slice) {
                    Some([k, v]) => Some((revive_node(k), revive_node(v))),
                    _ => None,
                })
                .collect::<Option<Vec<_>>>()?;
            PyObject::value(ObjectForm::SingleArg, JS, "Map", Value::Map(pairs), None)
        }
        ("RegExp", None) | ("Error", None) => {
            let n = if name == "RegExp" { 2 } else { 1 };
            if args.len() != n || !args.iter().all(Node::is_string) {
                return None;
            }
            let args = args.iter().map(revive_node).collect();
            PyObject::value(ObjectForm::PosArgs, JS, name, Value::Array(args), None)
        }
        ("Uint8Array", None | Some("from")) => Value::Bin(
            items()?
                .iter()
                .map(|b| b.as_u64().filter(|b| *b <= 255).map(|b| b as u8))
                .collect::<Option<Vec<u8>>>()?,
        ),
        _ => return None,
    })
}

/// The module of JS values with no Python type (`js.Map`, `js.RegExp`, `js.Error`, `js.undefined`).
pub const JS: &str = "js";

fn envelope(m: &Obj<'_>) -> Option<Value> {
    if let Some(v) = js_record(m) {
        return Some(v);
    }
    let lc = m.get("lc")?.as_i64()?;
    let kind = m.get("type")?.as_str()?;
    let id: Vec<&str> = m
        .get("id")?
        .as_array()?
        .iter()
        .map(Node::as_str)
        .collect::<Option<_>>()?;
    let (last, path) = id.split_last()?;
    if lc == 2 && path.is_empty() {
        // JS's own records are above; JS keeps any other as the plain object it is.
        return None;
    }
    let module = path.join(".");
    let kwargs = m.get("kwargs").and_then(Node::as_object);
    Some(match (lc, kind) {
        (1, "constructor") => match message_class(&id) {
            Some(class) => message(class, kwargs),
            None => PyObject::value(
                ObjectForm::KwArgs,
                &module,
                last,
                kwargs.map_or(Value::Map(Vec::new()), |k| plain(k, revive_node)),
                Some(Value::Str(LC_EXTRA.into())),
            ),
        },
        (2, "constructor") => {
            let args: Vec<Value> = match m.get("args") {
                Some(Node::Arr(a)) => a.iter().map(revive_node).collect(),
                _ => Vec::new(),
            };
            let method = m.get("method").and_then(Node::as_str);
            match (method, kwargs) {
                (Some(method), None) if args.len() == 1 => {
                    let arg = args.into_iter().next().unwrap_or(Value::Nil);
                    let extra = Some(Value::Str(method.into()));
                    PyObject::value(ObjectForm::Method, &module, last, arg, extra)
                }
                (_, Some(kwargs)) if args.is_empty() => PyObject::value(
                    ObjectForm::KwArgs,
                    &module,
                    last,
                    plain(kwargs, revive_node),
                    None,
                ),
                _ => PyObject::value(ObjectForm::PosArgs, &module, last, Value::Array(args), None),
            }
        }
        (_, "secret") => PyObject::value(
            ObjectForm::SingleArg,
            "langchain",
            "secret",
            Value::Str(id.join(".").into()),
            None,
        ),
        (_, "not_implemented") => {
            let mut fields = vec![(Value::Str("id".into()), Value::Str(id.join(".").into()))];
            if let Some(repr) = m.get("repr") {
                fields.push((Value::Str("repr".into()), revive_node(repr)));
            }
            PyObject::value(
                ObjectForm::KwArgs,
                "langchain",
                "not_implemented",
                Value::Map(fields),
                None,
            )
        }
        _ => return None,
    })
}

/// A message with Python's `model_dump()` fields: the base fields, then the class's own, then
/// whatever else the envelope holds, in stored order.
fn message(class: &MessageClass, kwargs: Option<&Obj<'_>>) -> Value {
    let empty = Obj {
        members: Vec::new(),
        text: None,
    };
    let kwargs = kwargs.unwrap_or(&empty);
    let mut fields: Vec<(Value, Value)> = Vec::with_capacity(BASE.len() + class.extra.len());
    let mut push = |key: &str, default: Value| {
        let v = match (key, kwargs.get(key)) {
            ("type", _) => Value::Str(class.kind.into()),
            ("tool_calls" | "invalid_tool_calls", Some(Node::Arr(calls))) => {
                Value::Array(calls.iter().map(tool_call).collect())
            }
            (_, Some(v)) => revive_node(v),
            (_, None) => default,
        };
        fields.push((Value::Str(key.into()), v));
    };
    for key in BASE {
        let default = match *key {
            "content" => Value::Str("".into()),
            "additional_kwargs" | "response_metadata" => Value::Map(Vec::new()),
            _ => Value::Nil,
        };
        push(key, default);
    }
    for (key, default) in class.extra {
        push(key, default.value());
    }
    for (k, v) in &kwargs.members {
        let known = k
            .as_str()
            .is_some_and(|k| fields.iter().any(|(f, _)| f.as_str() == Some(k)));
        if !known {
            fields.push((key_value(k), revive_node(v)));
        }
    }
    PyObject::value(
        ObjectForm::PydanticV2,
        &format!("langchain_core.messages.{}", class.module),
        class.name,
        Value::Map(fields),
        Some(Value::Str("model_validate_json".into())),
    )
}

/// A tool call with its keys in Python's order (`name, args, id, type`, then any others).
fn tool_call(v: &Node<'_>) -> Value {
    let Node::Obj(m) = v else {
        return revive_node(v);
    };
    let mut out: Vec<(Value, Value)> = TOOL_CALL
        .iter()
        .filter_map(|k| Some((Value::Str((*k).into()), revive_node(m.get(k)?))))
        .collect();
    for (k, v) in &m.members {
        if !k.as_str().is_some_and(|k| TOOL_CALL.contains(&k)) {
            out.push((key_value(k), revive_node(v)));
        }
    }
    Value::Map(out)
}

/// Give LangGraph.js's untyped control values of `channel` their Python types: in
/// `__pregel_tasks`, an object with exactly a string `node` and `args` is a
/// `langgraph.types.Send` (one packet, or a list of them); in `__interrupt__`, a list of
/// objects with exactly `id` and `value` are `langgraph.types.Interrupt`s. Anything else, and
/// every other channel, is returned as it is.
pub fn for_channel(channel: &str, v: Value) -> Value {
    match channel {
        TASKS => match v {
            Value::Array(items) => Value::Array(items.into_iter().map(send).collect()),
            v => send(v),
        },
        INTERRUPT => match v {
            Value::Array(items) => Value::Array(items.into_iter().map(interrupt).collect()),
            v => v,
        },
        _ => v,
    }
}

fn keys_are(m: &[(Value, Value)], keys: &[&str]) -> bool {
    m.len() == keys.len()
        && keys
            .iter()
            .all(|k| m.iter().any(|(x, _)| x.as_str() == Some(k)))
}

/// The value of string key `key` in a dict's entries (`None`, Python's, when absent).
fn entry(m: &[(Value, Value)], key: &str) -> Value {
    m.iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map_or(Value::Nil, |(_, v)| v.clone())
}

fn send(v: Value) -> Value {
    let Value::Map(m) = v else { return v };
    let timeout = keys_are(&m, &["node", "args", "timeout"]);
    let named = entry(&m, "node").as_str().is_some();
    if !named || !(timeout || keys_are(&m, &["node", "args"])) {
        return Value::Map(m);
    }
    let mut args = vec![entry(&m, "node"), entry(&m, "args")];
    if timeout {
        args.push(entry(&m, "timeout"));
    }
    PyObject::value(
        ObjectForm::PosArgs,
        "langgraph.types",
        "Send",
        Value::Array(args),
        None,
    )
}

fn interrupt(v: Value) -> Value {
    match v {
        Value::Map(m) if keys_are(&m, &["id", "value"]) => {
            let fields = vec![
                (Value::Str("value".into()), entry(&m, "value")),
                (Value::Str("id".into()), entry(&m, "id")),
            ];
            PyObject::value(
                ObjectForm::KwArgs,
                "langgraph.types",
                "Interrupt",
                Value::Map(fields),
                None,
            )
        }
        v => v,
    }
}

mod cached;
mod node;
mod parse;
mod write;
pub use cached::revive_cached;
pub use node::number;
pub use parse::{is_number, JsonError};
pub use write::{encode, to_json_text, NotJson};

#[cfg(test)]
mod parse_tests;
#[cfg(test)]
mod tests;

//! The way back: a typed value as the JSON text LangGraph.js's serde writes (compact
//! `JSON.stringify` output), refusing what JS could not read back as the same value. What was
//! read as its text ([`crate::JsonText`]) is written back as that text.

use super::{class_of, ALWAYS, BASE, LC_EXTRA};
use crate::value::{JsonTextKind, PyObject, Value};
use std::collections::HashMap;

/// Why a value cannot be written as JSON LangGraph.js reads back as the same value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {what} cannot be written to a LangGraph.js database (its JSON serde has no form for it)")]
pub struct NotJson {
    /// Where in the value (`messages[2].when`).
    pub path: String,
    /// What it is.
    pub what: String,
}

/// The JSON text LangGraph.js's serde writes for `v`: messages as `lc` envelopes, `Send` as
/// `{node, args}`, `Interrupt` as `{id, value}`, objects revived from envelopes as those
/// envelopes, bytes, sets and DeltaChannel snapshots as JS's `lc: 2` records, and values kept
/// as their stored text as that text. Refuses what JS could not read back as the same value:
/// numpy arrays, non-finite floats, dicts with non-string keys, and every other Python object.
/// A dict's repeated key is written once, at its first place with its last value.
pub fn to_json_text(v: &Value) -> Result<String, NotJson> {
    let mut w = Writer {
        out: Vec::with_capacity(64),
        path: String::new(),
    };
    w.value(v)?;
    // Only whole strings, escaped by serde_json, and stored JSON text are written.
    String::from_utf8(w.out).map_err(|_| refuse("", "text that is not UTF-8".into()))
}

fn refuse(path: &str, what: String) -> NotJson {
    NotJson {
        path: if path.is_empty() {
            "the value".into()
        } else {
            path.trim_start_matches('.').into()
        },
        what,
    }
}

/// A dict key as written: a string, or a string kept as its token.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Key<'a> {
    Str(&'a str),
    Token(&'a str),
}

struct Writer {
    out: Vec<u8>,
    path: String,
}

impl Writer {
    fn raw(&mut self, s: &str) {
        self.out.extend_from_slice(s.as_bytes());
    }

    fn str(&mut self, s: &str) {
        // Escapes as JSON.stringify does: `"`, `\` and control characters.
        let _ = serde_json::to_writer(&mut self.out, s);
    }

    fn key(&mut self, k: Key<'_>) {
        match k {
            Key::Str(s) => self.str(s),
            Key::Token(t) => self.raw(t),
        }
    }

    /// `,` unless first, then `"key":`.
    fn member(&mut self, first: &mut bool, key: &str) {
        if !std::mem::take(first) {
            self.raw(",");
        }
        self.str(key);
        self.raw(":");
    }

    fn err(&self, what: String) -> NotJson {
        refuse(&self.path, what)
    }

    /// `f` with `segment` appended to the path.
    fn at<T>(&mut self, segment: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path.len();
        self.path.push_str(segment);
        let out = f(self);
        self.path.truncate(len);
        out
    }

    fn value(&mut self, v: &Value) -> Result<(), NotJson> {
        match v {
            Value::Nil => self.raw("null"),
            Value::Bool(b) => self.raw(if *b { "true" } else { "false" }),
            Value::Int(i) => self.raw(&i.to_string()),
            Value::UInt(u) => self.raw(&u.to_string()),
            Value::Float(f) => self.float(*f)?,
            Value::Float32(f) => self.float(f64::from(*f))?,
            Value::Str(s) => self.str(s),
            Value::Array(items) => self.array(items)?,
            Value::Map(entries) => {
                let entries = self.entries(entries, |_, _| true)?;
                self.object(&entries)?;
            }
            Value::Object(o) => self.py_object(o)?,
            Value::Bin(b) => {
                let bytes: Vec<String> = b.iter().map(u8::to_string).collect();
                self.record("Uint8Array", Some("from"), |w| {
                    w.raw(&format!("[{}]", bytes.join(",")));
                    Ok(())
                })?;
            }
            Value::NdArray(_) => return Err(self.err("a numpy array".into())),
            Value::DeltaSnapshot(inner) => {
                self.raw(r#"{"lc":2,"type":"delta_snapshot","value":"#);
                self.value(inner)?;
                self.raw("}");
            }
            Value::RawExt(raw) => {
                return Err(self.err(format!("an undecoded msgpack ext {}", raw.code)))
            }
            Value::JsonText(t) => self.raw(&t.text),
        }
        Ok(())
    }

    fn float(&mut self, f: f64) -> Result<(), NotJson> {
        let n =
            serde_json::Number::from_f64(f).ok_or_else(|| self.err(format!("the float {f}")))?;
        self.raw(&n.to_string());
        Ok(())
    }

    fn array(&mut self, items: &[Value]) -> Result<(), NotJson> {
        self.raw("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.raw(",");
            }
            self.at(&format!("[{i}]"), |w| w.value(item))?;
        }
        self.raw("]");
        Ok(())
    }

    /// A list of values, each at the current path (items of a record's argument).
    fn items(&mut self, items: &[&Value]) -> Result<(), NotJson> {
        self.raw("[");
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.raw(",");
            }
            self.value(item)?;
        }
        self.raw("]");
        Ok(())
    }

    /// A dict's entries that `keep` accepts, keyed as written: a repeated key once, at its
    /// first place with its last value.
    fn entries<'v>(
        &self,
        entries: &'v [(Value, Value)],
        keep: impl Fn(&str, &Value) -> bool,
    ) -> Result<Vec<(Key<'v>, &'v Value)>, NotJson> {
        let mut out: Vec<(Key<'v>, &'v Value)> = Vec::with_capacity(entries.len());
        let mut index: HashMap<Key<'v>, usize> = HashMap::new();
        for (k, v) in entries {
            let key = match k {
                Value::Str(s) => Key::Str(s),
                Value::JsonText(t) if matches!(t.kind, JsonTextKind::LoneSurrogate { .. }) => {
                    Key::Token(&t.text)
                }
                k => return Err(self.err(format!("a dict with a {} key", k.type_name()))),
            };
            if let Key::Str(s) = key {
                if !keep(s, v) {
                    continue;
                }
            }
            match index.get(&key) {
                Some(&i) => out[i].1 = v,
                None => {
                    index.insert(key, out.len());
                    out.push((key, v));
                }
            }
        }
        Ok(out)
    }

    fn object(&mut self, entries: &[(Key<'_>, &Value)]) -> Result<(), NotJson> {
        self.raw("{");
        for (i, (k, v)) in entries.iter().enumerate() {
            if i > 0 {
                self.raw(",");
            }
            self.key(*k);
            self.raw(":");
            let segment = match k {
                Key::Str(s) => format!(".{s}"),
                Key::Token(t) => format!("[{t}]"),
            };
            self.at(&segment, |w| w.value(v))?;
        }
        self.raw("}");
        Ok(())
    }

    /// An `lc: 2` constructor record as JS's `_encodeConstructorArgs` writes it; `args` writes
    /// the argument list's items.
    fn record(
        &mut self,
        name: &str,
        method: Option<&str>,
        args: impl FnOnce(&mut Self) -> Result<(), NotJson>,
    ) -> Result<(), NotJson> {
        self.raw(r#"{"lc":2,"type":"constructor","id":["#);
        self.str(name);
        self.raw(r#"],"method":"#);
        match method {
            Some(m) => self.str(m),
            None => self.raw("null"),
        }
        self.raw(r#","args":["#);
        args(self)?;
        self.raw(r#"],"kwargs":{}}"#);
        Ok(())
    }

    fn py_object(&mut self, o: &PyObject) -> Result<(), NotJson> {
        let entries = match &o.payload {
            Value::Map(m) => Some(m.as_slice()),
            _ => None,
        };
        if let (Some(class), Some(entries)) = (class_of(o), entries) {
            let is_default = |key: &str, v: &Value| -> bool {
                let default = BASE.contains(&key).then_some(Value::Nil).or_else(|| {
                    class
                        .extra
                        .iter()
                        .find(|(k, _)| *k == key)
                        .map(|(_, d)| d.value())
                });
                default.is_some_and(|d| &d == v)
            };
            let always_list = |key: &str| {
                class.kind == "ai" && matches!(key, "tool_calls" | "invalid_tool_calls")
            };
            let kwargs = self.entries(entries, |key, v| {
                key != "type" && (ALWAYS.contains(&key) || always_list(key) || !is_default(key, v))
            })?;
            self.raw(r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","#);
            self.str(class.name);
            self.raw(r#"],"kwargs":"#);
            self.object(&kwargs)?;
            self.raw("}");
            return Ok(());
        }
        let type_name = o.type_name();
        match (type_name.as_str(), &o.payload) {
            ("langgraph.types.Send", Value::Array(args)) if matches!(args.len(), 2 | 3) => {
                let mut first = true;
                self.raw("{");
                self.member(&mut first, "node");
                self.value(&args[0])?;
                self.member(&mut first, "args");
                self.at(".arg", |w| w.value(&args[1]))?;
                if let Some(timeout) = args.get(2) {
                    self.member(&mut first, "timeout");
                    self.value(timeout)?;
                }
                self.raw("}");
                return Ok(());
            }
            ("builtins.set", Value::Array(items)) => {
                let items: Vec<&Value> = items.iter().collect();
                return self.record("Set", None, |w| w.items(&items));
            }
            ("js.Map", Value::Map(pairs)) => {
                return self.record("Map", None, |w| {
                    w.raw("[");
                    for (i, (k, v)) in pairs.iter().enumerate() {
                        if i > 0 {
                            w.raw(",");
                        }
                        w.items(&[k, v])?;
                    }
                    w.raw("]");
                    Ok(())
                });
            }
            ("js.RegExp" | "js.Error", Value::Array(args)) => {
                let name = o.name.clone();
                return self.record(&name, None, |w| {
                    for (i, a) in args.iter().enumerate() {
                        if i > 0 {
                            w.raw(",");
                        }
                        w.value(a)?;
                    }
                    Ok(())
                });
            }
            ("js.undefined", _) => {
                self.raw(r#"{"lc":2,"type":"undefined"}"#);
                return Ok(());
            }
            ("langgraph.types.Interrupt", Value::Map(m)) => {
                let get = |key: &str| {
                    m.iter()
                        .find(|(k, _)| k.as_str() == Some(key))
                        .map(|(_, v)| v)
                };
                if let (Some(value), Some(id)) = (get("value"), get("id")) {
                    let mut first = true;
                    self.raw("{");
                    self.member(&mut first, "id");
                    self.value(id)?;
                    self.member(&mut first, "value");
                    self.value(value)?;
                    self.raw("}");
                    return Ok(());
                }
            }
            _ => {}
        }
        if o.extra.as_ref().and_then(Value::as_str) == Some(LC_EXTRA) {
            if let Some(entries) = entries {
                let kwargs = self.entries(entries, |_, _| true)?;
                self.raw(r#"{"lc":1,"type":"constructor","id":["#);
                for (i, part) in o.module.split('.').enumerate() {
                    if i > 0 {
                        self.raw(",");
                    }
                    self.str(part);
                }
                self.raw(",");
                self.str(&o.name);
                self.raw(r#"],"kwargs":"#);
                self.object(&kwargs)?;
                self.raw("}");
                return Ok(());
            }
        }
        Err(self.err(format!("a {type_name} object")))
    }
}

/// `(type, bytes)` as LangGraph.js's `dumpsTyped` stores a value: `json` (compact
/// `JSON.stringify` output) or `bytes`. A value stored in a form JS has none for (pickle,
/// encrypted, undecodable other than `json`, left undecoded) is refused.
pub fn encode(d: &crate::Decoded) -> Result<(String, Vec<u8>), NotJson> {
    use crate::Decoded;
    let what = match d {
        Decoded::Msgpack(v) => return Ok(("json".into(), to_json_text(v)?.into_bytes())),
        Decoded::Null => return Ok(("json".into(), b"null".to_vec())),
        Decoded::Bytes(b) | Decoded::ByteArray(b) => return Ok(("bytes".into(), b.clone())),
        Decoded::Error { tag, raw, .. } if tag == "json" || tag == "bytes" => {
            return Ok((tag.clone(), raw.clone()))
        }
        Decoded::Empty => return Ok(("empty".into(), Vec::new())),
        Decoded::Pickle(_) => "a pickled value".to_owned(),
        Decoded::Encrypted { tag, .. } => format!("an encrypted value ({tag})"),
        Decoded::Error { tag, .. } => format!("an undecodable {tag} value"),
        Decoded::TooLarge { .. } => "a value left undecoded (too large)".to_owned(),
    };
    Err(refuse("", what))
}

//! The tree the `json` reader ([`super::parse`]) builds and the reviver walks: strings and
//! numbers borrow the stored text where they can; what Rust's types cannot hold exactly is
//! kept as its text (see the reader's docs).

use crate::value::{JsonText, JsonTextKind, Value};
use std::borrow::Cow;

/// A parsed JSON value; strings and numbers borrow the text where they can.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node<'a> {
    Null,
    Bool(bool),
    /// A number, as its token.
    Num(Cow<'a, str>),
    Str(Cow<'a, str>),
    /// A string holding a lone surrogate: its exact token (quotes included) and its text with
    /// U+FFFD in place of each lone surrogate.
    Lone(&'a str, String),
    Arr(Vec<Node<'a>>),
    Obj(Obj<'a>),
    /// A list or dict nested deeper than the reader's limit: its exact text.
    Deep(&'a str),
}

/// A dict: its members in first-seen order (keys are [`Node::Str`] or [`Node::Lone`]), and
/// its exact text when it was parsed from text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Obj<'a> {
    pub(crate) members: Vec<(Node<'a>, Node<'a>)>,
    pub(crate) text: Option<&'a [u8]>,
}

impl<'a> Node<'a> {
    /// The member `key` of a dict.
    pub(crate) fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.as_object()?.get(key)
    }

    pub(crate) fn as_object(&self) -> Option<&Obj<'a>> {
        match self {
            Node::Obj(o) => Some(o),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&Vec<Node<'a>>> {
        match self {
            Node::Arr(items) => Some(items),
            _ => None,
        }
    }

    /// A string without lone surrogates.
    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Node::Str(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_i64(&self) -> Option<i64> {
        match self {
            Node::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub(crate) fn as_u64(&self) -> Option<u64> {
        match self {
            Node::Num(n) => n.parse().ok(),
            _ => None,
        }
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Node::Null)
    }

    /// Any string (a JS string may hold lone surrogates).
    pub(crate) fn is_string(&self) -> bool {
        matches!(self, Node::Str(_) | Node::Lone(..))
    }

    /// The tree of a parsed `serde_json` value (its numbers as serde_json writes them).
    pub(crate) fn of_json(v: &'a serde_json::Value) -> Node<'a> {
        use serde_json::Value as Json;
        match v {
            Json::Null => Node::Null,
            Json::Bool(b) => Node::Bool(*b),
            Json::Number(n) => Node::Num(Cow::Owned(n.to_string())),
            Json::String(s) => Node::Str(Cow::Borrowed(s)),
            Json::Array(items) => Node::Arr(items.iter().map(Node::of_json).collect()),
            Json::Object(m) => Node::Obj(Obj {
                members: m
                    .iter()
                    .map(|(k, v)| (Node::Str(Cow::Borrowed(k)), Node::of_json(v)))
                    .collect(),
                text: None,
            }),
        }
    }

    /// A scalar (or a value read past) as its typed value; `None` for a list or dict.
    pub(crate) fn scalar(&self) -> Option<Value> {
        Some(match self {
            Node::Null => Value::Nil,
            Node::Bool(b) => Value::Bool(*b),
            Node::Num(n) => number(n),
            Node::Str(s) => Value::Str(s.as_ref().into()),
            Node::Lone(token, shown) => text_value(
                JsonTextKind::LoneSurrogate {
                    shown: shown.clone(),
                },
                token,
            ),
            Node::Deep(text) => text_value(JsonTextKind::TooDeep, text),
            Node::Arr(_) | Node::Obj(_) => return None,
        })
    }
}

impl<'a> Obj<'a> {
    pub(crate) fn get(&self, key: &str) -> Option<&Node<'a>> {
        self.members
            .iter()
            .find(|(k, _)| k.as_str() == Some(key))
            .map(|(_, v)| v)
    }

    pub(crate) fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

pub(crate) fn text_value(kind: JsonTextKind, text: &str) -> Value {
    Value::JsonText(Box::new(JsonText {
        kind,
        text: text.to_owned(),
    }))
}

/// A JSON number token as a typed value: an integer token that fits 64 bits is an int, any
/// other finite number a float; an integer beyond 64 bits (JS reads a rounded float, Python an
/// exact int) and a number beyond float64's range (`1e400`: JS reads `Infinity`) are kept as
/// their text ([`JsonTextKind::Number`]).
pub fn number(token: &str) -> Value {
    let integral = !token.bytes().any(|b| matches!(b, b'.' | b'e' | b'E'));
    if integral {
        if let Ok(i) = token.parse::<i64>() {
            return Value::Int(i);
        }
        if let Ok(u) = token.parse::<u64>() {
            return Value::UInt(u);
        }
    } else if let Ok(f) = token.parse::<f64>() {
        if f.is_finite() {
            return Value::Float(f);
        }
    }
    text_value(JsonTextKind::Number, token)
}

//! [`revive_cached`]: reviving a `json` document through a [`DecodeCache`], so that an `lc`
//! envelope stored again and again (LangGraph.js's SQLite saver keeps every message in every
//! later checkpoint) is revived once and shared, as msgpack objects are.
//!
//! The document is parsed once ([`super::parse`]); lists and dicts are walked into, and a dict
//! with an `lc` key is revived whole by [`super::revive_node`] and remembered by its exact
//! text. The result equals [`super::revive_text`] of the document, which the tests check.

use super::node::Node;
use super::{parse_text, plain, revive_node, JsonError};
use crate::msgpack::DecodeCache;
use crate::value::Value;

/// The value [`super::revive_text`] gives for the JSON `text`, envelopes shared through
/// `cache`.
pub fn revive_cached(text: &[u8], cache: &mut DecodeCache) -> Result<Value, JsonError> {
    Ok(walk(&parse_text(text)?, cache))
}

fn walk(node: &Node<'_>, cache: &mut DecodeCache) -> Value {
    match node {
        Node::Arr(items) => Value::Array(items.iter().map(|i| walk(i, cache)).collect()),
        Node::Obj(m) if m.has("lc") => {
            let Some(text) = m.text else {
                return revive_node(node);
            };
            if let Some(v) = cache.envelopes.get(text) {
                return v.clone();
            }
            let v = revive_node(node);
            cache.envelopes.insert(text.into(), v.clone());
            v
        }
        Node::Obj(m) => plain(m, |v| walk(v, cache)),
        scalar => revive_node(scalar),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(text: &str) {
        let mut cache = DecodeCache::new();
        let cached = revive_cached(text.as_bytes(), &mut cache).expect("parses");
        let plain = super::super::revive_text(text.as_bytes()).expect("parses");
        assert_eq!(cached, plain, "{text}");
    }

    #[test]
    fn equals_revive_of_the_parsed_document() {
        let msg = r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","AIMessage"],"kwargs":{"id":"a","content":"hi","tool_calls":[{"id":"c","name":"f","args":{"x":1},"type":"tool_call"}]}}"#;
        same(&format!(
            r#"{{"v":4,"channel_values":{{"messages":[{msg},{msg}],"n":1.5,"s":"x","b":null}}}}"#
        ));
        same(r#"{"a":1,"a":2,"b":{"c":[1,{"d":"e"}],"c":3}}"#);
        same(r#"{"lc":"not an envelope","x":[1]}"#);
        same(
            r#"{"lc":2,"type":"constructor","id":["Set"],"method":null,"args":[["a"]],"kwargs":{}}"#,
        );
        same(&format!("{}1{}", "[".repeat(400), "]".repeat(400)));
        same(" [ 1 , -2.5e3 , \"\\u00e9\" , true ] ");
        same("12345678901234567890123");
        same(r#"{"s":"cut \ud83d","n":1e400}"#);
    }

    #[test]
    fn an_envelope_met_again_is_shared() {
        let msg = r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}"#;
        let mut cache = DecodeCache::new();
        let first = revive_cached(format!("[{msg}]").as_bytes(), &mut cache).unwrap();
        let again = revive_cached(format!(r#"{{"m":[{msg}]}}"#).as_bytes(), &mut cache).unwrap();
        let (Value::Array(a), Some(Value::Array(b))) = (&first, again.get("m")) else {
            panic!("{first:?} {again:?}")
        };
        let (Value::Object(x), Value::Object(y)) = (&a[0], &b[0]) else {
            panic!("messages are objects")
        };
        assert!(std::sync::Arc::ptr_eq(x, y), "one revived message, shared");
        assert!(revive_cached(b"{\"a\":", &mut cache).is_err());
    }
}

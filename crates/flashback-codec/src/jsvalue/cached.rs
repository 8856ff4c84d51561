//! [`revive_cached`]: reviving a `json` document through a [`DecodeCache`], so that an `lc`
//! envelope stored again and again (LangGraph.js's SQLite saver keeps every message in every
//! later checkpoint) is revived once and shared, as msgpack objects are.
//!
//! The document is walked as raw JSON (`serde_json::value::RawValue`): an object with an `lc`
//! key is revived whole by [`revive`] and remembered by its exact text; any other object or
//! array is walked into; scalars are parsed. The result equals `revive` of the parsed document
//! (keys in first-seen order, a repeated key's last value), which the tests check.

use super::revive;
use crate::msgpack::DecodeCache;
use crate::value::Value;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value as Json;
use std::fmt;

/// An object's members in stored order, their values left raw.
struct Members<'a>(Vec<(String, &'a RawValue)>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Members<'de>, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, &'de RawValue>()? {
                    out.push((k, v));
                }
                Ok(Members(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// How deep the raw walk goes before parsing the rest in one piece (each level re-scans its
/// text; envelopes sit a few levels down).
const MAX_WALK: usize = 8;

/// The value [`revive`] gives for the JSON `text`, envelopes shared through `cache`.
pub fn revive_cached(text: &str, cache: &mut DecodeCache) -> Result<Value, serde_json::Error> {
    let raw: &RawValue = serde_json::from_str(text)?;
    walk(raw, cache, 0)
}

fn walk(raw: &RawValue, cache: &mut DecodeCache, depth: usize) -> Result<Value, serde_json::Error> {
    let text = raw.get();
    let whole = |text: &str| -> Result<Value, serde_json::Error> {
        Ok(revive(&serde_json::from_str::<Json>(text)?))
    };
    match text.as_bytes().first() {
        _ if depth >= MAX_WALK => whole(text),
        Some(b'[') => {
            let items: Vec<&RawValue> = serde_json::from_str(text)?;
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                out.push(walk(item, cache, depth + 1)?);
            }
            Ok(Value::Array(out))
        }
        Some(b'{') => {
            let Members(members) = serde_json::from_str(text)?;
            if members.iter().any(|(k, _)| k == "lc") {
                if let Some(v) = cache.envelopes.get(text.as_bytes()) {
                    return Ok(v.clone());
                }
                let v = whole(text)?;
                cache.envelopes.insert(text.as_bytes().into(), v.clone());
                return Ok(v);
            }
            // As `serde_json::Map` keeps them: a repeated key at its first place, last value.
            let mut out: Vec<(Value, Value)> = Vec::with_capacity(members.len());
            for (k, v) in members {
                let v = walk(v, cache, depth + 1)?;
                match out.iter_mut().find(|(x, _)| x.as_str() == Some(k.as_str())) {
                    Some(slot) => slot.1 = v,
                    None => out.push((Value::Str(k.as_str().into()), v)),
                }
            }
            Ok(Value::Map(out))
        }
        _ => whole(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(text: &str) {
        let mut cache = DecodeCache::new();
        let cached = revive_cached(text, &mut cache).expect("parses");
        let plain = revive(&serde_json::from_str::<Json>(text).expect("parses"));
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
        same(&format!("{}1{}", "[".repeat(40), "]".repeat(40)));
        same(" [ 1 , -2.5e3 , \"\\u00e9\" , true ] ");
        same("12345678901234567890123");
    }

    #[test]
    fn an_envelope_met_again_is_shared() {
        let msg = r#"{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{"content":"hi"}}"#;
        let mut cache = DecodeCache::new();
        let first = revive_cached(&format!("[{msg}]"), &mut cache).unwrap();
        let again = revive_cached(&format!(r#"{{"m":[{msg}]}}"#), &mut cache).unwrap();
        let (Value::Array(a), Some(Value::Array(b))) = (&first, again.get("m")) else {
            panic!("{first:?} {again:?}")
        };
        let (Value::Object(x), Value::Object(y)) = (&a[0], &b[0]) else {
            panic!("messages are objects")
        };
        assert!(std::sync::Arc::ptr_eq(x, y), "one revived message, shared");
        assert!(revive_cached("{\"a\":", &mut cache).is_err());
    }
}

//! Legacy formats: the 2024 `json` serde tag with `lc` envelopes, and a static peek into pickles.

use serde_json::{Map, Value as Json};

/// JSON view of a legacy `json` value: `lc` constructor envelopes become `$type` objects.
pub fn view_legacy_json(v: &Json) -> Json {
    match v {
        Json::Array(items) => Json::Array(items.iter().map(view_legacy_json).collect()),
        Json::Object(m) => match envelope(m) {
            Some(obj) => obj,
            None => {
                let plain = m.keys().all(|k| !k.starts_with('$'));
                if plain {
                    Json::Object(
                        m.iter()
                            .map(|(k, v)| (k.clone(), view_legacy_json(v)))
                            .collect(),
                    )
                } else {
                    let items = m
                        .iter()
                        .map(|(k, v)| {
                            Json::Array(vec![Json::String(k.clone()), view_legacy_json(v)])
                        })
                        .collect();
                    serde_json::json!({"$type": "builtins.dict", "$items": Json::Array(items)})
                }
            }
        },
        other => other.clone(),
    }
}

fn envelope(m: &Map<String, Json>) -> Option<Json> {
    let lc = m.get("lc")?.as_i64()?;
    let kind = m.get("type")?.as_str()?;
    let id: Vec<&str> = m
        .get("id")?
        .as_array()?
        .iter()
        .map(Json::as_str)
        .collect::<Option<_>>()?;
    let type_name = id.join(".");
    let mut out = Map::new();
    match (lc, kind) {
        (1 | 2, "constructor") => {
            out.insert("$type".into(), type_name.into());
            if let Some(args) = m.get("args") {
                out.insert("$args".into(), view_legacy_json(args));
            }
            if let Some(method) = m.get("method").filter(|m| !m.is_null()) {
                out.insert("$method".into(), method.clone());
            }
            if let Some(Json::Object(kwargs)) = m.get("kwargs") {
                for (k, v) in kwargs {
                    let key = if k.starts_with('$') {
                        format!("${k}")
                    } else {
                        k.clone()
                    };
                    out.insert(key, view_legacy_json(v));
                }
            }
        }
        (_, "secret") => {
            out.insert("$type".into(), "langchain.secret".into());
            out.insert("$value".into(), type_name.into());
        }
        (_, "not_implemented") => {
            out.insert("$type".into(), "langchain.not_implemented".into());
            out.insert("$value".into(), type_name.into());
            if let Some(repr) = m.get("repr") {
                out.insert("repr".into(), repr.clone());
            }
        }
        _ => return None,
    }
    Some(Json::Object(out))
}

/// The first class a pickle refers to (`module.name`), read from its opcodes without running
/// anything. Recognises `GLOBAL` (protocols 0–3) and `STACK_GLOBAL` after two short strings
/// (protocol 4+), skipping `PROTO`, `FRAME` and `MEMOIZE`. `None` when not found quickly.
pub fn pickle_class(data: &[u8]) -> Option<String> {
    let mut i = 0;
    let mut strings: Vec<String> = Vec::new();
    for _ in 0..64 {
        let op = *data.get(i)?;
        i += 1;
        match op {
            0x80 => i += 1, // PROTO n
            0x95 => i += 8, // FRAME len
            0x94 => {}      // MEMOIZE
            0x8c => {
                // SHORT_BINUNICODE len bytes
                let n = *data.get(i)? as usize;
                let s = data.get(i + 1..i + 1 + n)?;
                strings.push(String::from_utf8(s.to_vec()).ok()?);
                i += 1 + n;
            }
            0x93 => {
                // STACK_GLOBAL
                let name = strings.pop()?;
                let module = strings.pop()?;
                return Some(format!("{module}.{name}"));
            }
            b'c' => {
                // GLOBAL "module\nname\n"
                let rest = data.get(i..)?;
                let mut parts = rest.splitn(3, |&b| b == b'\n');
                let module = std::str::from_utf8(parts.next()?).ok()?;
                let name = std::str::from_utf8(parts.next()?).ok()?;
                parts.next()?;
                return Some(format!("{module}.{name}"));
            }
            _ => return None,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lc_envelopes_become_typed_objects() {
        let stored = json!({
            "messages": [{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "AIMessage"],
                          "kwargs": {"content": "hi", "type": "ai"}}],
            "when": {"lc": 2, "type": "constructor", "id": ["datetime", "datetime"], "method": "fromisoformat",
                     "args": ["2024-01-02T03:04:05"]},
            "key": {"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]},
        });
        assert_eq!(
            view_legacy_json(&stored),
            json!({
                "messages": [{"$type": "langchain.schema.messages.AIMessage", "content": "hi", "type": "ai"}],
                "when": {"$type": "datetime.datetime", "$args": ["2024-01-02T03:04:05"], "$method": "fromisoformat"},
                "key": {"$type": "langchain.secret", "$value": "OPENAI_API_KEY"},
            })
        );
    }

    #[test]
    fn pickle_class_is_read_statically() {
        // protocol 4: PROTO 4, FRAME, SHORT_BINUNICODE "collections", MEMOIZE,
        // SHORT_BINUNICODE "OrderedDict", MEMOIZE, STACK_GLOBAL …
        let mut p = vec![0x80, 4, 0x95, 30, 0, 0, 0, 0, 0, 0, 0, 0x8c, 11];
        p.extend_from_slice(b"collections");
        p.extend_from_slice(&[0x94, 0x8c, 11]);
        p.extend_from_slice(b"OrderedDict");
        p.extend_from_slice(&[0x94, 0x93, 0x94, b')', b'R', b'.']);
        assert_eq!(pickle_class(&p).as_deref(), Some("collections.OrderedDict"));
        // protocol 2 GLOBAL
        assert_eq!(
            pickle_class(b"\x80\x02cdecimal\nDecimal\nq\x00").as_deref(),
            Some("decimal.Decimal")
        );
        assert_eq!(pickle_class(b"\x80\x04K\x01."), None);
        assert_eq!(pickle_class(b""), None);
    }
}

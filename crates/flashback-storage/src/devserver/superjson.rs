//! superjson documents (`superjson.stringify`, v2), the LangGraph.js dev server's file format:
//! `{"json": <plain JSON>, "meta": {"values": <annotation tree>, "referentialEqualities": …, "v": 1}}`.
//!
//! The plain JSON is kept as it is; the annotation tree says what each annotated value was in
//! JS (`Date` as its ISO text, `Map` as an array of `[key, value]` entries, `Set` as an array,
//! `undefined` as `null`, a custom `Uint8Array` as base64 text: `@langchain/langgraph-api`'s
//! `storage/persist.mjs` registers it). A tree node is `[annotation]`, `[annotation,
//! {children}]` or `{children}`, each child key a path (`.`-separated, `\.` and `\\` escaped
//! since meta `v` 1) below its parent, which points into the value before the parent's own
//! annotation is undone (a `Map`'s entries array). Readers ask [`Doc::bytes`] for the
//! `Uint8Array`s they expect: a value not annotated so is refused, never guessed.
//! `referentialEqualities` only restores shared identity (every copy is written out in full
//! unless stringify deduplicates, which the server does not ask for), so it is not needed.
//!
//! Bounded: the file's size ([`super::files::MAX_FILE_BYTES`]), the nesting depth (serde_json's
//! recursion limit, 128) and the number of annotations ([`MAX_ANNOTATIONS`]).

use base64::Engine;
use serde_json::Value as Json;
use std::collections::HashMap;

/// The most annotations read from one document.
pub(crate) const MAX_ANNOTATIONS: usize = 1 << 22;

/// What an annotation says a value was in JS.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Annotation {
    /// A `Uint8Array` (`["custom", "Uint8Array"]`), stored as base64 text.
    Bytes,
    /// Any other annotation (`Date`, `map`, `set`, `undefined`, `bigint`, a class…), by name.
    Other(String),
}

/// A parsed superjson document.
#[derive(Debug)]
pub(crate) struct Doc {
    /// The plain JSON (`json`).
    pub(crate) json: Json,
    /// Each annotated value's annotation, by its path in [`Doc::json`].
    annotations: HashMap<Vec<String>, Annotation>,
}

/// Split a superjson path (`parsePath`): `.` separates, `\.` is a dot, `\\` a backslash
/// (without meta `v`, legacy paths: no escapes).
fn parse_path(text: &str, legacy: bool) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut segment = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' if !legacy => match chars.next() {
                Some('\\') => segment.push('\\'),
                Some('.') => segment.push('.'),
                _ => return Err(format!("an invalid superjson path {text:?}")),
            },
            '.' => out.push(std::mem::take(&mut segment)),
            c => segment.push(c),
        }
    }
    out.push(segment);
    Ok(out)
}

fn annotation(v: &Json) -> Result<Annotation, String> {
    match v {
        Json::String(s) => Ok(Annotation::Other(s.clone())),
        Json::Array(a) => match a.as_slice() {
            [Json::String(kind), Json::String(name)]
                if kind == "custom" && name == "Uint8Array" =>
            {
                Ok(Annotation::Bytes)
            }
            [Json::String(kind), Json::String(name)] => {
                Ok(Annotation::Other(format!("{kind} {name}")))
            }
            _ => Err("an annotation that is not a type name".into()),
        },
        _ => Err("an annotation that is not a type name".into()),
    }
}

/// Parse `bytes` as a superjson document.
pub(crate) fn parse(bytes: &[u8]) -> Result<Doc, String> {
    let top: Json = serde_json::from_slice(bytes).map_err(|e| {
        if e.to_string().contains("recursion limit") {
            format!("it nests deeper than the 128 levels Flashback reads ({e})")
        } else {
            format!("it is not JSON ({e})")
        }
    })?;
    let Json::Object(mut top) = top else {
        return Err("it is not a superjson document ({json, meta})".into());
    };
    let json = top
        .remove("json")
        .ok_or("it is not a superjson document: no \"json\"")?;
    let mut doc = Doc {
        json,
        annotations: HashMap::new(),
    };
    let Some(meta) = top.get("meta") else {
        return Ok(doc);
    };
    let legacy = meta.get("v").is_none();
    if let Some(values) = meta.get("values") {
        // Iterative: (path so far, tree node).
        let mut stack = vec![(Vec::new(), values)];
        while let Some((path, tree)) = stack.pop() {
            let children = match tree {
                Json::Array(a) => {
                    let first = a.first().ok_or("an empty annotation")?;
                    if doc.annotations.len() >= MAX_ANNOTATIONS {
                        return Err(format!("over {MAX_ANNOTATIONS} annotations"));
                    }
                    doc.annotations.insert(path.clone(), annotation(first)?);
                    a.get(1)
                }
                tree => Some(tree),
            };
            match children {
                None | Some(Json::Null) => {}
                Some(Json::Object(children)) => {
                    for (key, child) in children {
                        let mut full = path.clone();
                        full.extend(parse_path(key, legacy)?);
                        stack.push((full, child));
                    }
                }
                Some(_) => return Err("an annotation tree that is not an object".into()),
            }
        }
    }
    Ok(doc)
}

impl Doc {
    /// The annotation of the value at `path`.
    pub(crate) fn annotation(&self, path: &[&str]) -> Option<&Annotation> {
        let path: Vec<String> = path.iter().map(|s| (*s).to_owned()).collect();
        self.annotations.get(&path)
    }

    /// The bytes of the `Uint8Array` at `path` whose JSON is `value`, or why it is not one.
    pub(crate) fn bytes(&self, path: &[&str], value: &Json) -> Result<Vec<u8>, String> {
        match (self.annotation(path), value) {
            (Some(Annotation::Bytes), Json::String(b64)) => {
                base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .map_err(|e| format!("a Uint8Array whose base64 does not read ({e})"))
            }
            (Some(Annotation::Bytes), v) => Err(format!(
                "a Uint8Array stored as {}, not base64 text",
                kind(v)
            )),
            (Some(Annotation::Other(a)), _) => Err(format!("a {a}, not a Uint8Array")),
            (None, v) => Err(format!("{}, not a Uint8Array", kind(v))),
        }
    }
}

/// A JSON value's kind, for messages.
pub(crate) fn kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "text",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_unescape_as_superjson_does() {
        assert_eq!(parse_path("a.b", false).unwrap(), ["a", "b"]);
        assert_eq!(parse_path("a\\.b.c", false).unwrap(), ["a.b", "c"]);
        assert_eq!(parse_path("a..b", false).unwrap(), ["a", "", "b"]);
        assert_eq!(parse_path("a\\\\.b", false).unwrap(), ["a\\", "b"]);
        assert!(parse_path("a\\b", false).is_err());
        assert_eq!(parse_path("a\\b", true).unwrap(), ["a\\b"]);
    }

    #[test]
    fn nested_annotations_resolve_below_their_parent() {
        let doc = parse(
            br#"{"json":{"m":[["k",{"at":"2026-01-01T00:00:00.000Z","b":"AAE="}]]},
                "meta":{"values":{"m":["map",{"0.1.at":["Date"],"0.1.b":[["custom","Uint8Array"]]}]},"v":1}}"#,
        )
        .unwrap();
        assert_eq!(
            doc.annotation(&["m"]),
            Some(&Annotation::Other("map".into()))
        );
        let b = &doc.json["m"][0][1]["b"];
        assert_eq!(doc.bytes(&["m", "0", "1", "b"], b).unwrap(), [0, 1]);
        let at = &doc.json["m"][0][1]["at"];
        assert!(doc
            .bytes(&["m", "0", "1", "at"], at)
            .unwrap_err()
            .contains("Date"));
    }
}

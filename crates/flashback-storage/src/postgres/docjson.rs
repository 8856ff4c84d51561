//! A checkpoint document's JSON text (`checkpoint::text`) read straight into a [`Checkpoint`],
//! without building a `serde_json::Value` tree of the whole document first: a thread list
//! reads one per thread. Only the channel values kept are revived (a selecting read skips the
//! others unbuilt). Anything unusual (not an object, malformed text) is left to the tree
//! reading in `rows.rs`, which is the reference and says what is wrong.

use crate::decode::empty;
use crate::model::{ChannelFilter, Checkpoint, Version, Versions};
use flashback_codec::{jsvalue, Decoded};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;

/// `channel_versions` as Postgres' `jsonb_each_text` renders them (where the client can), and
/// whether some could not be rendered so.
pub(super) type VersionTexts = (Vec<(String, Option<String>)>, bool);

/// The document in `text` with its version texts; `None` when it is not a JSON object (or
/// not JSON): the caller reads it the reference way.
pub(super) fn parse(
    text: &str,
    keep: Option<&ChannelFilter>,
) -> Option<(Checkpoint, VersionTexts)> {
    let mut de = serde_json::Deserializer::from_str(text);
    let parsed = de.deserialize_any(Doc { keep }).ok()??;
    de.end().ok()?;
    Some(parsed)
}

/// Implements the visitor methods of a value that is read from a JSON object and is empty
/// (`Default`) for any other JSON value, as the tree reading treats them.
macro_rules! or_default_for_non_maps {
    () => {
        fn visit_unit<E>(self) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
            Ok(Default::default())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            self,
            mut s: A,
        ) -> Result<Self::Value, A::Error> {
            while s.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Default::default())
        }
    };
}

struct Doc<'k> {
    keep: Option<&'k ChannelFilter>,
}

impl<'de> Visitor<'de> for Doc<'_> {
    type Value = Option<(Checkpoint, VersionTexts)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a checkpoint document")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut cp = empty();
        let mut texts = (Vec::new(), false);
        while let Some(key) = m.next_key::<Key>()? {
            match key {
                Key::V => cp.v = m.next_value::<Value>()?.as_i64().unwrap_or(0),
                Key::Id => cp.id = text_of(m.next_value()?),
                Key::Ts => cp.ts = text_of(m.next_value()?),
                Key::Values => cp.channel_values = m.next_value_seed(Values(self.keep))?,
                Key::Versions => {
                    (cp.channel_versions, texts) = m.next_value_seed(VersionsOf(true))?;
                }
                Key::Seen => cp.versions_seen = m.next_value_seed(Seen)?,
                Key::Updated => {
                    cp.updated_channels = match m.next_value::<Value>()? {
                        Value::Array(a) => Some(
                            a.into_iter()
                                .filter_map(|s| match s {
                                    Value::String(s) => Some(s),
                                    _ => None,
                                })
                                .collect(),
                        ),
                        _ => None,
                    }
                }
                Key::Other => {
                    m.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some((cp, texts)))
    }

    // Not an object: `None`, the tree reading's case.
    or_default_for_non_maps!();
}

/// A top-level key of the document (read without allocating).
enum Key {
    V,
    Id,
    Ts,
    Values,
    Versions,
    Seen,
    Updated,
    Other,
}

impl<'de> serde::Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Key, D::Error> {
        struct K;
        impl Visitor<'_> for K {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, k: &str) -> Result<Key, E> {
                Ok(match k {
                    "v" => Key::V,
                    "id" => Key::Id,
                    "ts" => Key::Ts,
                    "channel_values" => Key::Values,
                    "channel_versions" => Key::Versions,
                    "versions_seen" => Key::Seen,
                    "updated_channels" => Key::Updated,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_str(K)
    }
}

fn text_of(v: Value) -> String {
    match v {
        Value::String(s) => s,
        _ => String::new(),
    }
}

/// `channel_values`: the kept channels' values revived, the others skipped unbuilt.
struct Values<'k>(Option<&'k ChannelFilter>);

impl<'de> DeserializeSeed<'de> for Values<'_> {
    type Value = Vec<(String, Arc<Decoded>)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Values<'_> {
    type Value = Vec<(String, Arc<Decoded>)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("channel values")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(channel) = m.next_key::<String>()? {
            if self.0.is_some_and(|keep| !keep(&channel)) {
                m.next_value::<IgnoredAny>()?;
                continue;
            }
            let v: Value = m.next_value()?;
            out.push((channel, Arc::new(Decoded::from(jsvalue::revive(&v)))));
        }
        Ok(out)
    }

    or_default_for_non_maps!();
}

/// A versions map (`channel_versions`, or one node's `versions_seen`), with the version
/// texts when `texts`.
struct VersionsOf(bool);

impl<'de> DeserializeSeed<'de> for VersionsOf {
    type Value = (Versions, VersionTexts);
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for VersionsOf {
    type Value = (Versions, VersionTexts);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("channel versions")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut versions = Vec::new();
        let (mut texts, mut inexact) = (Vec::new(), false);
        while let Some(channel) = m.next_key::<String>()? {
            let v: Value = m.next_value()?;
            if self.0 {
                let text = match &v {
                    Value::String(s) => Some(s.clone()),
                    Value::Null => None,
                    Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
                    _ => {
                        inexact = true;
                        None
                    }
                };
                texts.push((channel.clone(), text));
            }
            if let Some(version) = Version::from_json(&v) {
                versions.push((channel, version));
            }
        }
        Ok((versions, (texts, inexact)))
    }

    or_default_for_non_maps!();
}

/// `versions_seen`: each node's versions.
struct Seen;

impl<'de> DeserializeSeed<'de> for Seen {
    type Value = Vec<(String, Versions)>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seen {
    type Value = Vec<(String, Versions)>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("versions seen")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
        let mut out = Vec::new();
        while let Some(node) = m.next_key::<String>()? {
            let (versions, _) = m.next_value_seed(VersionsOf(false))?;
            out.push((node, versions));
        }
        Ok(out)
    }

    or_default_for_non_maps!();
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::checkpoint_from_json;

    /// The tree reading of `rows.rs`, the reference.
    fn reference(text: &str) -> Option<(Checkpoint, VersionTexts)> {
        let doc: Value = serde_json::from_str(text).ok()?;
        let cp = checkpoint_from_json(&doc).ok()?;
        Some((cp, super::super::rows::version_texts(&doc)))
    }

    #[test]
    fn documents_read_as_the_tree_reading_reads_them() {
        let docs = [
            r#"{"v": 4, "id": "1f0", "ts": "2026-11-29T00:00:00+00:00",
                "channel_values": {"a": 1, "b": "x\u00e9\"", "c": null, "d": [1, {"k": true}]},
                "channel_versions": {"a": "00000000000000000000000000000002.0.5", "b": 3, "c": 2.5, "d": null, "e": {"x": 1}, "f": 18446744073709551615},
                "versions_seen": {"__input__": {}, "n\u00f8de": {"a": "0001", "b": 7}, "odd": 5, "x": [1]},
                "updated_channels": ["a", 3, "b"], "extra": {"deep": [1, 2, {"x": null}]}}"#,
            r#"{"v": 1.5, "id": 7, "ts": null, "channel_values": [], "channel_versions": "x", "versions_seen": null, "updated_channels": "no"}"#,
            r#"{"v": 4, "v": 3, "channel_values": {"__pregel_tasks": {"lc": 2, "type": "constructor", "id": ["langgraph", "types", "Send"], "kwargs": {"node": "a", "arg": 1}}}}"#,
            r#"{}"#,
        ];
        for text in docs {
            let ours = parse(text, None).expect("an object");
            assert_eq!(
                format!("{ours:?}"),
                format!("{:?}", reference(text).unwrap()),
                "{text}"
            );
        }
        for odd in ["[1, 2]", "3", "\"x\"", "null", "{", "{} x", ""] {
            assert!(parse(odd, None).is_none(), "{odd}");
        }
    }

    #[test]
    fn a_selecting_read_revives_only_the_channels_kept() {
        let text = r#"{"v": 4, "channel_values": {"messages": [1, 2, 3], "branch:to:a": null, "x": {"y": 1}}}"#;
        let keep: ChannelFilter = Arc::new(|c: &str| c.starts_with("branch:"));
        let (cp, _) = parse(text, Some(&keep)).unwrap();
        let names: Vec<&str> = cp.channel_values.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, ["branch:to:a"]);
    }
}

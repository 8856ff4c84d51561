//! The three-table store's method B deltas (`docs/three-table.md`, "Writing"): a channel's new
//! value stored as what it adds to the value before it — the items appended to a list, the keys
//! of a map set or removed — and put back together on read, **byte for byte**.
//!
//! Both sides are msgpack documents (the bytes `dumps_typed` wrote). Nothing is decoded: items,
//! keys and values are compared and spliced as raw bytes ([`raw_parts`]). A delta is offered
//! only when applying it gives back exactly the new bytes and it is smaller than them, so a
//! read can never return anything but what was written.

use crate::msgpack::{raw_parts, write_array_header, write_map_header, RawParts};
use std::collections::HashMap;

/// How a blob row's `blob_data` relates to the value it stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// The value itself.
    Full,
    /// A msgpack array of the items to append to the base list.
    Append,
    /// `[{key: value} set, [key] removed]` to apply to the base map.
    Merge,
}

impl Kind {
    /// The text stored in `checkpoint_blobs.kind`.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Full => "full",
            Kind::Append => "append",
            Kind::Merge => "merge",
        }
    }

    /// The kind a stored text names.
    pub fn parse(text: &str) -> Option<Kind> {
        match text {
            "full" => Some(Kind::Full),
            "append" => Some(Kind::Append),
            "merge" => Some(Kind::Merge),
            _ => None,
        }
    }
}

/// The most deltas stacked on one full value: a new delta is stored only below it, so a read
/// applies at most this many.
pub const MAX_DEPTH: u32 = 64;

/// Why a delta cannot be applied to its base (a damaged row).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DeltaError {
    /// The base or the delta is not the msgpack shape the kind needs.
    #[error("a {kind} delta needs {need}")]
    Shape {
        /// The delta's kind.
        kind: &'static str,
        /// What was expected.
        need: &'static str,
    },
    /// Not msgpack at all.
    #[error("not msgpack: {0}")]
    Msgpack(String),
}

fn parts(data: &[u8]) -> Result<RawParts<'_>, DeltaError> {
    raw_parts(data).map_err(|e| DeltaError::Msgpack(e.to_string()))
}

/// The delta that turns `base` into `new`, when one exists that reproduces `new` byte for byte
/// and is smaller than it; `None`: store `new` whole.
pub fn diff(base: &[u8], new: &[u8]) -> Option<(Kind, Vec<u8>)> {
    let (Ok(b), Ok(n)) = (raw_parts(base), raw_parts(new)) else {
        return None;
    };
    let (kind, delta) = match (b, n) {
        (RawParts::Array(old), RawParts::Array(items)) => {
            if items.len() < old.len() || items[..old.len()] != old[..] {
                return None;
            }
            let added = &items[old.len()..];
            let mut out = Vec::with_capacity(new.len() / 4 + 8);
            write_array_header(added.len(), &mut out);
            added.iter().for_each(|i| out.extend_from_slice(i));
            (Kind::Append, out)
        }
        (RawParts::Map(old), RawParts::Map(entries)) => {
            let before: HashMap<&[u8], &[u8]> = old.iter().copied().collect();
            let after: HashMap<&[u8], &[u8]> = entries.iter().copied().collect();
            if before.len() != old.len() || after.len() != entries.len() {
                return None; // duplicate keys: leave such a map whole
            }
            let set: Vec<(&[u8], &[u8])> = entries
                .iter()
                .copied()
                .filter(|(k, v)| before.get(k) != Some(v))
                .collect();
            let removed: Vec<&[u8]> = old
                .iter()
                .map(|(k, _)| *k)
                .filter(|k| !after.contains_key(k))
                .collect();
            let mut out = Vec::with_capacity(new.len() / 4 + 8);
            write_array_header(2, &mut out);
            write_map_header(set.len(), &mut out);
            for (k, v) in &set {
                out.extend_from_slice(k);
                out.extend_from_slice(v);
            }
            write_array_header(removed.len(), &mut out);
            removed.iter().for_each(|k| out.extend_from_slice(k));
            (Kind::Merge, out)
        }
        _ => return None,
    };
    if delta.len() >= new.len() {
        return None;
    }
    // Offered only when it gives back exactly `new` (a non-minimal header, a key that moved
    // to the end, … would not).
    match apply(kind, base, &delta) {
        Ok(back) if back == new => Some((kind, delta)),
        _ => None,
    }
}

/// The value a delta stands for: `base` (the materialised value of `base_version`) with
/// `delta` applied. A `Full` delta is the value itself.
pub fn apply(kind: Kind, base: &[u8], delta: &[u8]) -> Result<Vec<u8>, DeltaError> {
    match kind {
        Kind::Full => Ok(delta.to_vec()),
        Kind::Append => {
            let (RawParts::Array(old), RawParts::Array(added)) = (parts(base)?, parts(delta)?)
            else {
                return Err(DeltaError::Shape {
                    kind: "append",
                    need: "a list as its base and a list of items",
                });
            };
            let mut out = Vec::with_capacity(base.len() + delta.len());
            write_array_header(old.len() + added.len(), &mut out);
            old.iter()
                .chain(&added)
                .for_each(|i| out.extend_from_slice(i));
            Ok(out)
        }
        Kind::Merge => {
            let shape = || DeltaError::Shape {
                kind: "merge",
                need: "a map as its base and [map, list of keys]",
            };
            let RawParts::Map(old) = parts(base)? else {
                return Err(shape());
            };
            let RawParts::Array(pair) = parts(delta)? else {
                return Err(shape());
            };
            let [set, removed] = pair[..] else {
                return Err(shape());
            };
            let (RawParts::Map(set), RawParts::Array(removed)) = (parts(set)?, parts(removed)?)
            else {
                return Err(shape());
            };
            let changed: HashMap<&[u8], &[u8]> = set.iter().copied().collect();
            let mut out: Vec<(&[u8], &[u8])> = Vec::with_capacity(old.len() + set.len());
            for (k, v) in &old {
                if removed.contains(k) {
                    continue;
                }
                out.push((k, changed.get(k).copied().unwrap_or(v)));
            }
            for (k, v) in &set {
                if !old.iter().any(|(o, _)| o == k) {
                    out.push((k, v));
                }
            }
            let mut bytes = Vec::with_capacity(base.len() + delta.len());
            write_map_header(out.len(), &mut bytes);
            for (k, v) in out {
                bytes.extend_from_slice(k);
                bytes.extend_from_slice(v);
            }
            Ok(bytes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack::encode;
    use crate::Value;

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    fn list(items: &[&str]) -> Vec<u8> {
        encode(&Value::Array(items.iter().map(|i| s(i)).collect()))
    }

    fn map(entries: &[(&str, i64)]) -> Vec<u8> {
        encode(&Value::Map(
            entries
                .iter()
                .map(|(k, v)| (s(k), Value::Int(*v)))
                .collect(),
        ))
    }

    fn round_trip(base: &[u8], new: &[u8]) -> Option<Kind> {
        let (kind, delta) = diff(base, new)?;
        assert!(delta.len() < new.len());
        assert_eq!(apply(kind, base, &delta).expect("applies"), new);
        Some(kind)
    }

    #[test]
    fn a_grown_list_is_stored_as_its_new_items() {
        let long = "a message that is long enough to make a delta worth it";
        let base = list(&[long, long]);
        let new = list(&[long, long, "and one more"]);
        assert_eq!(round_trip(&base, &new), Some(Kind::Append));
        let (_, delta) = diff(&base, &new).expect("delta");
        assert_eq!(delta, list(&["and one more"]));
        // Past 15 items the header grows from one byte to three: still exact.
        let many: Vec<String> = (0..40).map(|i| format!("{long} {i}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(
            round_trip(&list(&refs[..15]), &list(&refs)),
            Some(Kind::Append)
        );
        // From nothing, the delta would be the whole value again: stored whole.
        assert_eq!(round_trip(&list(&[]), &list(&refs)), None);
    }

    #[test]
    fn a_list_that_changed_inside_is_stored_whole() {
        let long = "a message that is long enough to make a delta worth it";
        let base = list(&[long, "x"]);
        assert_eq!(round_trip(&base, &list(&[long, "y", "z"])), None);
        assert_eq!(round_trip(&base, &list(&["x", long])), None);
        assert_eq!(round_trip(&base, &list(&[long])), None);
        // The same list again (a version with nothing new): an empty append.
        assert_eq!(round_trip(&list(&["a"]), &list(&["a"])), Some(Kind::Append));
    }

    #[test]
    fn a_map_keeps_its_order_with_keys_set_added_and_removed() {
        let wide: Vec<(String, i64)> = (0..20).map(|i| (format!("key-number-{i}"), i)).collect();
        let entries: Vec<(&str, i64)> = wide.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let base = map(&entries);
        let mut next = entries.clone();
        next[3].1 = 300; // changed in place
        next.remove(7); // removed
        next.push(("a-new-key", 1)); // added at the end
        assert_eq!(round_trip(&base, &map(&next)), Some(Kind::Merge));
        // A key removed and added again moves to the end: no merge gives that back.
        let mut moved = entries.clone();
        let k = moved.remove(0);
        moved.push(k);
        assert_eq!(round_trip(&base, &map(&moved)), None);
    }

    #[test]
    fn other_shapes_and_broken_bytes_are_stored_whole() {
        assert_eq!(diff(&encode(&s("a")), &encode(&s("ab"))), None);
        assert_eq!(diff(&list(&["a"]), &map(&[("a", 1)])), None);
        assert_eq!(diff(b"\xc1", &list(&["a"])), None);
        // A non-minimal header (array16 for 2 items) cannot be given back by a splice.
        let mut odd = vec![0xdc, 0, 2];
        odd.extend(encode(&s("a long enough first item for the test")));
        odd.extend(encode(&s("b")));
        assert_eq!(
            diff(&list(&["a long enough first item for the test"]), &odd),
            None
        );
    }

    #[test]
    fn damaged_deltas_are_errors_not_panics() {
        let base = list(&["a"]);
        assert!(apply(Kind::Append, &base, b"\xc1").is_err());
        assert!(apply(Kind::Append, &map(&[("a", 1)]), &list(&["b"])).is_err());
        assert!(apply(Kind::Merge, &map(&[("a", 1)]), &list(&["b"])).is_err());
        assert!(apply(Kind::Merge, &base, &encode(&Value::Array(vec![]))).is_err());
        // A huge declared count with no bytes behind it.
        assert!(apply(Kind::Append, &base, &[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err());
        for k in ["full", "append", "merge"] {
            assert_eq!(Kind::parse(k).map(Kind::as_str), Some(k));
        }
        assert_eq!(Kind::parse("other"), None);
    }
}

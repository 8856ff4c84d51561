//! The JSON view as a [`serde::Serialize`]: the one definition of the mapping from a value tree
//! to JSON. Written straight to bytes (`serde_json::to_writer`) it never builds a
//! `serde_json::Value`; [`super::view`] collects the same serialization into one
//! (`serde_json::to_value`), so the two cannot drift.

use super::float::Float;
use super::{
    b64, bytes_view, decoded_view, error_view, is_secret, opaque_pickle, ViewOptions, BYTES_TYPE,
    DELTA_TYPE, DICT_TYPE, NDARRAY_TYPE, NUMBER_TYPE, SECRET_MASK, TOO_DEEP,
};
use crate::decoded::Decoded;
use crate::value::{JsonTextKind, NdArray, ObjectForm, PyObject, Value};
use serde::ser::{SerializeMap, Serializer};
use serde::Serialize;

/// The JSON view of a [`Value`] or a [`Decoded`], serialized on demand.
///
/// `serde_json::to_writer(w, &JsonView::decoded(d, opts))` writes exactly the bytes of
/// `serde_json::to_vec(&view_decoded(d, opts))` (`null` for [`Decoded::Empty`]), key order
/// included, without building the intermediate tree.
#[derive(Debug, Clone, Copy)]
pub struct JsonView<'a> {
    node: Node<'a>,
    opts: ViewOptions,
}

#[derive(Debug, Clone, Copy)]
enum Node<'a> {
    Value(&'a Value),
    Decoded(&'a Decoded),
}

impl<'a> JsonView<'a> {
    /// The view of a value tree (what [`super::view`] returns).
    pub fn new(value: &'a Value, opts: ViewOptions) -> Self {
        JsonView {
            node: Node::Value(value),
            opts,
        }
    }

    /// The view of a stored value (what [`super::view_decoded`] returns; `null` for `empty`).
    pub fn decoded(value: &'a Decoded, opts: ViewOptions) -> Self {
        JsonView {
            node: Node::Decoded(value),
            opts,
        }
    }
}

impl Serialize for JsonView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.node {
            Node::Value(v) => V(v, self.opts).serialize(s),
            Node::Decoded(Decoded::Msgpack(v)) => V(v, self.opts).serialize(s),
            Node::Decoded(Decoded::Empty) => s.serialize_unit(),
            // A pickle that reads is shown as the same value stored as msgpack would be.
            Node::Decoded(Decoded::Pickle(b)) => match crate::pickle::shown(b) {
                Ok(v) => V(&v, self.opts).serialize(s),
                Err(e) => opaque_pickle(b, Some(&e.to_string())).serialize(s),
            },
            // The other forms are small objects built once (their bytes are in base64 anyway).
            Node::Decoded(d) => decoded_view(d).serialize(s),
        }
    }
}

/// A value with the options, serialized as its view.
struct V<'a>(&'a Value, ViewOptions);

impl Serialize for V<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let opts = self.1;
        match self.0 {
            Value::Nil => s.serialize_unit(),
            Value::Bool(b) => s.serialize_bool(*b),
            Value::Int(i) => s.serialize_i64(*i),
            Value::UInt(u) => s.serialize_u64(*u),
            Value::Float(f) => Float(*f).serialize(s),
            Value::Float32(f) => Float(f64::from(*f)).serialize(s),
            Value::Str(text) => s.serialize_str(text),
            Value::Bin(b) => bytes_view(BYTES_TYPE, b).serialize(s),
            Value::Array(items) => s.collect_seq(items.iter().map(|i| V(i, opts))),
            Value::Map(entries) => map(entries, opts, s),
            Value::Object(obj) => object(obj, opts, s),
            Value::NdArray(arr) => ndarray(arr, s),
            Value::DeltaSnapshot(inner) => {
                let mut m = s.serialize_map(Some(2))?;
                m.serialize_entry("$type", DELTA_TYPE)?;
                m.serialize_entry("$value", &V(inner, opts))?;
                m.end()
            }
            Value::RawExt(raw) => {
                error_view(&raw.error, &format!("msgpack.ext({})", raw.code), &raw.data)
                    .serialize(s)
            }
            Value::JsonText(t) => match &t.kind {
                JsonTextKind::LoneSurrogate { shown } => s.serialize_str(shown),
                JsonTextKind::Number => {
                    let mut m = s.serialize_map(Some(2))?;
                    m.serialize_entry("$type", NUMBER_TYPE)?;
                    m.serialize_entry("$value", &t.text)?;
                    m.end()
                }
                JsonTextKind::TooDeep => {
                    error_view(TOO_DEEP, "json", t.text.as_bytes()).serialize(s)
                }
            },
        }
    }
}

/// Whether `a` and `b` are the same string key.
fn same_key(a: &Value, b: &Value) -> bool {
    matches!((a, b), (Value::Str(a), Value::Str(b)) if a == b)
}

/// Whether no two entries have the same key (small maps are compared pairwise: no hashing).
fn unique_keys(entries: &[(Value, Value)]) -> bool {
    if entries.len() <= 16 {
        return entries
            .iter()
            .enumerate()
            .all(|(i, (k, _))| !entries[..i].iter().any(|(j, _)| same_key(j, k)));
    }
    let mut seen = std::collections::HashSet::with_capacity(entries.len());
    entries.iter().all(|(k, _)| match k {
        Value::Str(s) => seen.insert(s.as_str()),
        _ => true,
    })
}

/// A dict shown as a JSON object: string keys, none the view's own (`super::plain_key`), no
/// duplicates.
fn plain_keys(entries: &[(Value, Value)]) -> bool {
    entries
        .iter()
        .all(|(k, _)| matches!(k, Value::Str(s) if super::plain_key(s)))
        && unique_keys(entries)
}

fn map<S: Serializer>(
    entries: &[(Value, Value)],
    opts: ViewOptions,
    s: S,
) -> Result<S::Ok, S::Error> {
    if plain_keys(entries) {
        let mut m = s.serialize_map(Some(entries.len()))?;
        for (k, v) in entries {
            if let Value::Str(k) = k {
                m.serialize_entry(k.as_str(), &V(v, opts))?;
            }
        }
        m.end()
    } else {
        let mut m = s.serialize_map(Some(2))?;
        m.serialize_entry("$type", DICT_TYPE)?;
        m.serialize_entry("$items", &Items(entries, opts))?;
        m.end()
    }
}

/// `[[key_view, value_view], …]`.
struct Items<'a>(&'a [(Value, Value)], ViewOptions);

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let opts = self.1;
        s.collect_seq(self.0.iter().map(|(k, v)| [V(k, opts), V(v, opts)]))
    }
}

/// `module.name`, written without building the string first.
struct TypeName<'a>(&'a PyObject);

impl Serialize for TypeName<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(&format_args!("{}.{}", self.0.module, self.0.name))
    }
}

fn object<S: Serializer>(obj: &PyObject, opts: ViewOptions, s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("$type", &TypeName(obj))?;
    match obj.form {
        ObjectForm::SingleArg | ObjectForm::Method => {
            if is_secret(obj) && !opts.reveal_secrets {
                m.serialize_entry("$value", SECRET_MASK)?;
                m.serialize_entry("$secret", &true)?;
            } else {
                m.serialize_entry("$value", &V(&obj.payload, opts))?;
            }
            if obj.form == ObjectForm::Method {
                let method = obj.extra.as_ref().and_then(Value::as_str);
                if method != Some("fromisoformat") {
                    m.serialize_entry("$method", &obj.extra.as_ref().map(|e| V(e, opts)))?;
                }
            }
        }
        ObjectForm::PosArgs => match &obj.payload {
            args @ Value::Array(_) => m.serialize_entry("$args", &V(args, opts))?,
            other => m.serialize_entry("$args", &[V(other, opts)])?,
        },
        ObjectForm::KwArgs | ObjectForm::PydanticV1 | ObjectForm::PydanticV2 => {
            match &obj.payload {
                Value::Map(entries) if entries.iter().all(|(k, _)| matches!(k, Value::Str(_))) => {
                    fields(entries, opts, &mut m)?;
                }
                other => m.serialize_entry("$kwargs", &V(other, opts))?,
            }
        }
    }
    m.end()
}

/// An object's fields (string keys): a key starting with `$` gets one more `$`; a repeated
/// key keeps its first place and its last value, as a dict built from the pairs does.
fn fields<M: SerializeMap>(
    entries: &[(Value, Value)],
    opts: ViewOptions,
    m: &mut M,
) -> Result<(), M::Error> {
    let unique = unique_keys(entries);
    for (i, (k, v)) in entries.iter().enumerate() {
        let Value::Str(key) = k else { continue };
        let v = if unique {
            v
        } else if entries[..i].iter().any(|(j, _)| same_key(j, k)) {
            continue;
        } else {
            let last = entries.iter().rposition(|(j, _)| same_key(j, k));
            &entries[last.unwrap_or(i)].1
        };
        if key.starts_with('$') {
            m.serialize_entry(&format!("${key}"), &V(v, opts))?;
        } else {
            m.serialize_entry(key.as_str(), &V(v, opts))?;
        }
    }
    Ok(())
}

fn ndarray<S: Serializer>(arr: &NdArray, s: S) -> Result<S::Ok, S::Error> {
    let mut m = s.serialize_map(None)?;
    m.serialize_entry("$type", NDARRAY_TYPE)?;
    m.serialize_entry("dtype", arr.dtype.as_str())?;
    m.serialize_entry("shape", &arr.shape)?;
    m.serialize_entry("order", arr.order.as_str())?;
    m.serialize_entry("base64", &b64(&arr.data))?;
    if let Some(values) = crate::numpy::values(arr) {
        m.serialize_entry("values", &values)?;
    }
    m.end()
}

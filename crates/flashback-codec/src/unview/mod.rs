//! The reverse of the JSON view: JSON (as shown by [`crate::view`], possibly edited by a user)
//! back to a typed [`Value`] that can be stored again.
//!
//! `from_view(&view(v, reveal), Some(&v)) == v` for every value Python writes, and encoding the
//! result gives the stored bytes again. The optional *template* (the value being replaced)
//! decides what the JSON view cannot say on its own:
//!
//! * an object whose `$type` matches the template's keeps the template's encoding (ext code,
//!   `module`/`name` split, the ext 5 `model_validate_json` / ext 3 method extra), and its
//!   fields follow the template's field order (new fields are appended in JSON order);
//! * a masked secret (`"$secret": true` with the mask) keeps the template's real secret;
//! * an undecodable value (`$error` object) is accepted only when it is the template's own,
//!   unchanged (its bytes are kept); any other `$error` object is rejected;
//! * a float32 template keeps float32 when the number is exactly representable.
//!
//! Without a template (or when the `$type` differs) the encoding is inferred: `$value` → ext 0
//! (ext 3 `fromisoformat` for `datetime.datetime`), `$args` → ext 1, fields → ext 5 with
//! `"model_validate_json"` when the module starts with `langchain_core.`, else ext 2. An explicit
//! `"$ext": N` (0–5) overrides the inference.
//!
//! Errors carry the JSON path of the offending value (`values.messages[2].content: …`).

use crate::typed::Decoded;
use crate::value::{NdArray, ObjectForm, PyObject, Str, Value};
use crate::view::{is_secret, view, view_decoded, ViewOptions, SECRET_MASK};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{Map, Value as Json};
use std::sync::Arc;
use thiserror::Error;

/// The type name of the DeltaChannel snapshot wrapper (ext 7) in the view.
const DELTA_SNAPSHOT_TYPE: &str = "langgraph.checkpoint.serde.types._DeltaSnapshot";

/// Why a JSON view could not be turned back into a value. Every variant carries the JSON path
/// of the offending value (empty for the root, unless a root path was given).
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum UnviewError {
    /// The JSON does not have the shape the view rules require.
    #[error("{}: {message}", display_path(path))]
    Invalid {
        /// Where, e.g. `values.messages[2].content`.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// A secret is shown masked and there is no template secret to keep.
    #[error("{}: a masked secret (\"{SECRET_MASK}\") cannot be stored; give the real value or keep the original", display_path(path))]
    MaskedSecret {
        /// Where.
        path: String,
    },
    /// An `{"$error": …}` object (a value that could not be decoded) that is not the original,
    /// unchanged value, or an opaque value (pickle, encrypted) that cannot be written.
    #[error("{}: {message}", display_path(path))]
    NotWritable {
        /// Where.
        path: String,
        /// What it is.
        message: String,
    },
}

impl UnviewError {
    /// The JSON path of the offending value.
    pub fn path(&self) -> &str {
        match self {
            UnviewError::Invalid { path, .. }
            | UnviewError::MaskedSecret { path }
            | UnviewError::NotWritable { path, .. } => path,
        }
    }
}

fn display_path(path: &str) -> &str {
    if path.is_empty() {
        "$"
    } else {
        path
    }
}

/// Turn a JSON view back into a value; see the module docs. `template` is the value being
/// replaced (or the value the view was made from), if any.
pub fn from_view(json: &Json, template: Option<&Value>) -> Result<Value, UnviewError> {
    from_view_at(json, template, "")
}

/// [`from_view`] with a root path for error messages (e.g. `values.messages`).
pub fn from_view_at(
    json: &Json,
    template: Option<&Value>,
    path: &str,
) -> Result<Value, UnviewError> {
    Unview {
        path: path.to_owned(),
    }
    .value(json, template)
}

/// A whole stored value (a channel value or a pending write) from its JSON view
/// ([`crate::view_decoded`]): `null` → [`Decoded::Null`], top-level bytes →
/// [`Decoded::Bytes`] / [`Decoded::ByteArray`] (the serde tags Python uses for them), anything
/// else → [`Decoded::Msgpack`]. A template that is not msgpack (legacy JSON, pickle, encrypted,
/// undecodable) is kept as it is when the JSON is its unchanged view; otherwise pickle,
/// encrypted and `$error` views are rejected.
pub fn decoded_from_view(
    json: &Json,
    template: Option<&Decoded>,
    path: &str,
) -> Result<Decoded, UnviewError> {
    let mut u = Unview {
        path: path.to_owned(),
    };
    if let Some(t) = template {
        if !matches!(t, Decoded::Msgpack(_) | Decoded::Null | Decoded::Empty)
            && view_decoded(
                t,
                ViewOptions {
                    reveal_secrets: true,
                },
            )
            .as_ref()
                == Some(json)
        {
            return Ok(t.clone());
        }
    }
    if let Some(obj) = json.as_object() {
        match obj.get("$type").and_then(Json::as_str) {
            Some("builtins.bytearray") => return Ok(Decoded::ByteArray(u.bytes(obj)?)),
            Some("builtins.bytes") => return Ok(Decoded::Bytes(u.bytes(obj)?)),
            _ => {}
        }
    }
    let value_template = template.and_then(|t| match t {
        Decoded::Msgpack(v) => Some(v.clone()),
        Decoded::Null => Some(Value::Nil),
        _ => None,
    });
    Ok(u.value(json, value_template.as_ref())?.into())
}

/// The walker: keeps the current JSON path.
struct Unview {
    path: String,
}

fn is_ident(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

impl Unview {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, UnviewError> {
        Err(UnviewError::Invalid {
            path: self.path.clone(),
            message: message.into(),
        })
    }

    /// Run `f` with `segment` appended to the path.
    fn at<T>(&mut self, segment: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path.len();
        self.path.push_str(segment);
        let out = f(self);
        self.path.truncate(len);
        out
    }

    fn key_segment(&self, key: &str) -> String {
        if is_ident(key) {
            if self.path.is_empty() {
                key.to_owned()
            } else {
                format!(".{key}")
            }
        } else {
            format!("[{}]", Json::String(key.to_owned()))
        }
    }

    fn field<T>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let seg = self.key_segment(key);
        self.at(&seg, f)
    }

    fn index<T>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> T) -> T {
        self.at(&format!("[{i}]"), f)
    }

    fn value(&mut self, json: &Json, template: Option<&Value>) -> Result<Value, UnviewError> {
        Ok(match json {
            Json::Null => Value::Nil,
            Json::Bool(b) => Value::Bool(*b),
            Json::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i)
                } else if let Some(u) = n.as_u64() {
                    Value::UInt(u)
                } else {
                    let f = n.as_f64().unwrap_or(f64::NAN);
                    float_like(f, template)
                }
            }
            Json::String(s) => Value::Str(s.as_str().into()),
            Json::Array(items) => {
                let t_items = match template {
                    Some(Value::Array(t)) => Some(t.as_slice()),
                    _ => None,
                };
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.iter().enumerate() {
                    let t = t_items.and_then(|t| t.get(i));
                    out.push(self.index(i, |u| u.value(item, t))?);
                }
                Value::Array(out)
            }
            Json::Object(obj) => match obj.get("$type") {
                None => {
                    if obj.contains_key("$error") {
                        return self.error_object(json, template);
                    }
                    self.plain_map(obj, template)?
                }
                Some(Json::String(t)) => self.typed(t, obj, json, template)?,
                Some(_) => return self.err("\"$type\" must be a string"),
            },
        })
    }

    fn plain_map(
        &mut self,
        obj: &Map<String, Json>,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        let mut out = Vec::with_capacity(obj.len());
        for (k, v) in obj {
            if k.starts_with('$') {
                return self.err(format!(
                    "unexpected key {k:?}: a dict with keys starting with \"$\" is written as {{\"$type\": \"builtins.dict\", \"$items\": [[key, value], …]}}"
                ));
            }
            let t = template.and_then(|t| t.get(k));
            let value = self.field(k, |u| u.value(v, t))?;
            out.push((Value::Str(k.as_str().into()), value));
        }
        Ok(Value::Map(out))
    }

    fn error_object(
        &mut self,
        json: &Json,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        if let Some(t @ Value::RawExt(_)) = template {
            if &view(
                t,
                ViewOptions {
                    reveal_secrets: true,
                },
            ) == json
            {
                return Ok(t.clone());
            }
        }
        let what = json
            .get("$error")
            .and_then(Json::as_str)
            .unwrap_or("undecodable value");
        Err(UnviewError::NotWritable {
            path: self.path.clone(),
            message: format!(
                "a value that could not be decoded ({what}) cannot be written; keep the original or replace the whole value"
            ),
        })
    }

    fn only_keys(&self, obj: &Map<String, Json>, allowed: &[&str]) -> Result<(), UnviewError> {
        match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => self.err(format!(
                "unexpected key {k:?} in a {:?} object",
                obj.get("$type").and_then(Json::as_str).unwrap_or_default()
            )),
            None => Ok(()),
        }
    }

    fn bytes(&self, obj: &Map<String, Json>) -> Result<Vec<u8>, UnviewError> {
        self.only_keys(obj, &["$type", "base64"])?;
        self.base64(obj, "base64")
    }

    fn base64(&self, obj: &Map<String, Json>, key: &str) -> Result<Vec<u8>, UnviewError> {
        match obj.get(key) {
            Some(Json::String(s)) => B64
                .decode(s)
                .or_else(|e| self.err(format!("{key}: invalid base64 ({e})"))),
            Some(_) => self.err(format!("{key:?} must be a base64 string")),
            None => self.err(format!("missing {key:?}")),
        }
    }

    fn typed(
        &mut self,
        type_name: &str,
        obj: &Map<String, Json>,
        json: &Json,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        if obj.contains_key("$error") {
            return self.error_object(json, template);
        }
        let template_object = match template {
            Some(Value::Object(o)) if o.type_name() == type_name => Some(o.as_ref()),
            _ => None,
        };
        let explicit_ext = obj.contains_key("$ext");
        if template_object.is_none() && !explicit_ext {
            match type_name {
                "builtins.float" => return self.special_float(obj, template),
                "builtins.bytes" | "builtins.bytearray" => return Ok(Value::Bin(self.bytes(obj)?)),
                "builtins.dict" => return self.items(obj, template),
                "numpy.ndarray" => return self.ndarray(obj),
                DELTA_SNAPSHOT_TYPE => {
                    self.only_keys(obj, &["$type", "$value"])?;
                    let Some(inner) = obj.get("$value") else {
                        return self.err("missing \"$value\"");
                    };
                    let t = match template {
                        Some(Value::DeltaSnapshot(t)) => Some(t.as_ref()),
                        _ => None,
                    };
                    let v = self.field("$value", |u| u.value(inner, t))?;
                    return Ok(Value::DeltaSnapshot(Box::new(v)));
                }
                "pickle" | "encrypted"
                    if obj.contains_key("$opaque") || obj.contains_key("$encrypted") =>
                {
                    return Err(UnviewError::NotWritable {
                        path: self.path.clone(),
                        message: format!(
                            "a {type_name} value cannot be stored inside a msgpack value"
                        ),
                    })
                }
                _ => {}
            }
        }
        self.object(type_name, obj, template_object)
    }

    fn special_float(
        &self,
        obj: &Map<String, Json>,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        self.only_keys(obj, &["$type", "$value"])?;
        let f = match obj.get("$value") {
            Some(Json::String(s)) => match s.as_str() {
                "nan" => f64::NAN,
                "inf" => f64::INFINITY,
                "-inf" => f64::NEG_INFINITY,
                other => {
                    return self.err(format!(
                        "expected \"nan\", \"inf\" or \"-inf\", got {other:?}"
                    ))
                }
            },
            Some(Json::Number(n)) => n.as_f64().unwrap_or(f64::NAN),
            _ => return self.err("builtins.float needs \"$value\": \"nan\" | \"inf\" | \"-inf\""),
        };
        // Keep the exact NaN bits of the template (Python writes the canonical NaN).
        if f.is_nan() {
            match template {
                Some(Value::Float(t)) if t.is_nan() => return Ok(Value::Float(*t)),
                Some(Value::Float32(t)) if t.is_nan() => return Ok(Value::Float32(*t)),
                _ => {}
            }
        }
        Ok(float_like(f, template))
    }

    fn items(
        &mut self,
        obj: &Map<String, Json>,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        self.only_keys(obj, &["$type", "$items"])?;
        let Some(Json::Array(items)) = obj.get("$items") else {
            return self.err("builtins.dict needs \"$items\": [[key, value], …]");
        };
        let t_entries = match template {
            Some(Value::Map(t)) => Some(t.as_slice()),
            _ => None,
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let segment = format!("{}[{i}]", self.key_segment("$items"));
            let entry = self.at(&segment, |u| {
                let Some([k, v]) = item
                    .as_array()
                    .map(Vec::as_slice)
                    .and_then(|a| <&[Json; 2]>::try_from(a).ok())
                else {
                    return u.err("expected a [key, value] pair");
                };
                let t_pos = t_entries.and_then(|t| t.get(i));
                let key = u.index(0, |u| u.value(k, t_pos.map(|(tk, _)| tk)))?;
                // The template entry with the same key (usually the one at the same position).
                let t_val = match t_pos {
                    Some((tk, tv)) if *tk == key => Some(tv),
                    _ => t_entries
                        .and_then(|t| t.iter().find(|(tk, _)| *tk == key).map(|(_, tv)| tv)),
                };
                let value = u.index(1, |u| u.value(v, t_val))?;
                Ok((key, value))
            })?;
            out.push(entry);
        }
        Ok(Value::Map(out))
    }

    fn ndarray(&self, obj: &Map<String, Json>) -> Result<Value, UnviewError> {
        self.only_keys(
            obj,
            &["$type", "dtype", "shape", "order", "base64", "values"],
        )?;
        let dtype = match obj.get("dtype") {
            Some(Json::String(s)) => Str::from(s.as_str()),
            _ => return self.err("numpy.ndarray needs \"dtype\" (a string such as \"<f8\")"),
        };
        let shape = match obj.get("shape") {
            Some(Json::Array(dims)) => dims.iter().map(Json::as_u64).collect::<Option<Vec<u64>>>(),
            _ => None,
        };
        let Some(shape) = shape else {
            return self.err("numpy.ndarray needs \"shape\" (a list of non-negative integers)");
        };
        let order = match obj.get("order") {
            Some(Json::String(s)) => Str::from(s.as_str()),
            _ => return self.err("numpy.ndarray needs \"order\" (\"C\" or \"F\")"),
        };
        let data = self.base64(obj, "base64")?;
        let arr = NdArray {
            dtype,
            shape,
            order,
            data,
        };
        if let Some(values) = obj.get("values") {
            if crate::numpy::values(&arr).as_ref() != Some(values) {
                return self.err(
                    "numpy.ndarray \"values\" do not match \"base64\" (values are shown for reading only; edit the base64 buffer, or drop \"values\")",
                );
            }
        }
        Ok(Value::NdArray(Box::new(arr)))
    }

    fn object(
        &mut self,
        type_name: &str,
        obj: &Map<String, Json>,
        template: Option<&PyObject>,
    ) -> Result<Value, UnviewError> {
        let shape = if obj.contains_key("$value") {
            Shape::Value
        } else if obj.contains_key("$args") {
            Shape::Args
        } else if obj.contains_key("$kwargs") {
            Shape::RawKwargs
        } else {
            Shape::Fields
        };
        let explicit = match obj.get("$ext") {
            None => None,
            Some(j) => match j
                .as_i64()
                .and_then(|c| i8::try_from(c).ok())
                .and_then(ObjectForm::from_code)
            {
                Some(f) => Some(f),
                None => return self.err("\"$ext\" must be an integer from 0 to 5"),
            },
        };
        // The template's form applies when it fits the JSON's shape.
        let template =
            template.filter(|t| explicit.is_none_or(|f| f == t.form) && shape.fits(t.form));
        let form = match (explicit, template) {
            (Some(f), _) => f,
            (None, Some(t)) => t.form,
            (None, None) => match shape {
                Shape::Value if type_name == "datetime.datetime" => ObjectForm::Method,
                Shape::Value => ObjectForm::SingleArg,
                Shape::Args => ObjectForm::PosArgs,
                Shape::RawKwargs | Shape::Fields if type_name.starts_with("langchain_core.") => {
                    ObjectForm::PydanticV2
                }
                Shape::RawKwargs | Shape::Fields => ObjectForm::KwArgs,
            },
        };
        if !shape.fits(form) {
            return self.err(format!(
                "\"$ext\": {} does not fit this object ({})",
                form.code(),
                shape.describe()
            ));
        }
        let (module, name) = match template {
            Some(t) => (t.module.clone(), t.name.clone()),
            None => match type_name.rsplit_once('.') {
                Some((m, n)) if !m.is_empty() && !n.is_empty() => (Str::from(m), Str::from(n)),
                _ => {
                    return self.err(format!(
                        "\"$type\" {type_name:?} is not a Python type name (\"module.Name\")"
                    ))
                }
            },
        };
        let t_payload = template.map(|t| &t.payload);
        let (payload, extra) = match form {
            ObjectForm::SingleArg | ObjectForm::Method => {
                let mut allowed = vec!["$type", "$value", "$ext", "$secret"];
                if form == ObjectForm::Method {
                    allowed.push("$method");
                }
                self.only_keys(obj, &allowed)?;
                let payload = self.single(obj, &module, &name, template)?;
                let extra = if form == ObjectForm::Method {
                    match obj.get("$method") {
                        None => Some(Value::Str("fromisoformat".into())),
                        Some(m) => match self.field("$method", |u| {
                            u.value(m, template.and_then(|t| t.extra.as_ref()))
                        })? {
                            Value::Nil => None,
                            v => Some(v),
                        },
                    }
                } else {
                    None
                };
                (payload, extra)
            }
            ObjectForm::PosArgs => {
                self.only_keys(obj, &["$type", "$args", "$ext"])?;
                let Some(args) = obj.get("$args").filter(|a| a.is_array()) else {
                    return self.err("\"$args\" must be a list");
                };
                let t = t_payload.filter(|p| matches!(p, Value::Array(_)));
                (self.field("$args", |u| u.value(args, t))?, None)
            }
            ObjectForm::KwArgs | ObjectForm::PydanticV1 | ObjectForm::PydanticV2 => {
                let payload = if shape == Shape::RawKwargs {
                    self.only_keys(obj, &["$type", "$kwargs", "$ext"])?;
                    let raw = &obj["$kwargs"];
                    self.field("$kwargs", |u| u.value(raw, t_payload))?
                } else {
                    self.fields(obj, t_payload)?
                };
                let extra = match (template, form) {
                    (Some(t), _) => t.extra.clone(),
                    (None, ObjectForm::PydanticV2) => {
                        Some(Value::Str("model_validate_json".into()))
                    }
                    (None, _) => None,
                };
                (payload, extra)
            }
        };
        Ok(Value::Object(Arc::new(PyObject {
            form,
            module,
            name,
            payload,
            extra,
        })))
    }

    /// The argument of a single-argument object, with the secret rule.
    fn single(
        &mut self,
        obj: &Map<String, Json>,
        module: &str,
        name: &str,
        template: Option<&PyObject>,
    ) -> Result<Value, UnviewError> {
        let Some(arg) = obj.get("$value") else {
            return self.err("missing \"$value\"");
        };
        match obj.get("$secret") {
            None | Some(Json::Bool(false)) => {}
            Some(Json::Bool(true)) => {
                if arg.as_str() == Some(SECRET_MASK) {
                    return match template.filter(|t| is_secret(t)) {
                        Some(t) => Ok(t.payload.clone()),
                        None => Err(UnviewError::MaskedSecret {
                            path: self.path.clone(),
                        }),
                    };
                }
            }
            Some(_) => return self.err("\"$secret\" must be true or false"),
        }
        let probe = PyObject {
            form: ObjectForm::SingleArg,
            module: module.into(),
            name: name.into(),
            payload: Value::Nil,
            extra: None,
        };
        if is_secret(&probe) && arg.as_str() == Some(SECRET_MASK) && template.is_none() {
            return Err(UnviewError::MaskedSecret {
                path: self.path.clone(),
            });
        }
        self.field("$value", |u| u.value(arg, template.map(|t| &t.payload)))
    }

    /// Keyword fields (`$$key` → `$key`), in the template's field order, then new ones.
    fn fields(
        &mut self,
        obj: &Map<String, Json>,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        let mut given: Vec<(String, &Json)> = Vec::with_capacity(obj.len());
        for (k, v) in obj {
            match k.as_str() {
                "$type" | "$ext" => continue,
                _ if k.starts_with("$$") => given.push((k[1..].to_owned(), v)),
                _ if k.starts_with('$') => {
                    return self.err(format!(
                        "unexpected key {k:?} (a field whose name starts with \"$\" is written with an extra \"$\")"
                    ))
                }
                _ => given.push((k.clone(), v)),
            }
        }
        let t_entries = match template {
            Some(Value::Map(t)) => t.as_slice(),
            _ => &[],
        };
        // Template order first.
        let mut order: Vec<usize> = Vec::with_capacity(given.len());
        for (tk, _) in t_entries {
            if let Some(i) = tk
                .as_str()
                .and_then(|tk| given.iter().position(|(k, _)| k == tk))
            {
                if !order.contains(&i) {
                    order.push(i);
                }
            }
        }
        for i in 0..given.len() {
            if !order.contains(&i) {
                order.push(i);
            }
        }
        let mut out = Vec::with_capacity(given.len());
        for i in order {
            let (key, v) = &given[i];
            let t = template.and_then(|t| t.get(key));
            let shown = if key.starts_with('$') {
                format!("${key}")
            } else {
                key.clone()
            };
            let value = self.field(&shown, |u| u.value(v, t))?;
            out.push((Value::Str(key.as_str().into()), value));
        }
        Ok(Value::Map(out))
    }
}

/// A JSON float as a value: float32 when the template is a float32 and the number fits exactly.
fn float_like(f: f64, template: Option<&Value>) -> Value {
    match template {
        Some(Value::Float32(_)) if (f as f32) as f64 == f || f.is_nan() => Value::Float32(f as f32),
        _ => Value::Float(f),
    }
}

/// Which payload shape an object's JSON has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Value,
    Args,
    RawKwargs,
    Fields,
}

impl Shape {
    fn fits(self, form: ObjectForm) -> bool {
        match self {
            Shape::Value => matches!(form, ObjectForm::SingleArg | ObjectForm::Method),
            Shape::Args => form == ObjectForm::PosArgs,
            Shape::RawKwargs | Shape::Fields => matches!(
                form,
                ObjectForm::KwArgs | ObjectForm::PydanticV1 | ObjectForm::PydanticV2
            ),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Shape::Value => "it has \"$value\"",
            Shape::Args => "it has \"$args\"",
            Shape::RawKwargs => "it has \"$kwargs\"",
            Shape::Fields => "it has fields",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::msgpack;
    use crate::value::RawExt;
    use serde_json::json;

    fn obj(
        form: ObjectForm,
        module: &str,
        name: &str,
        payload: Value,
        extra: Option<Value>,
    ) -> Value {
        Value::Object(Arc::new(PyObject {
            form,
            module: module.into(),
            name: name.into(),
            payload,
            extra,
        }))
    }

    fn s(x: &str) -> Value {
        Value::Str(x.into())
    }

    #[test]
    fn scalars_and_containers() {
        let j = json!([null, true, 1, -2, 18446744073709551615u64, 1.0, "x", {"a": [1.5]}]);
        let v = from_view(&j, None).unwrap();
        assert_eq!(
            v,
            Value::Array(vec![
                Value::Nil,
                Value::Bool(true),
                Value::Int(1),
                Value::Int(-2),
                Value::UInt(u64::MAX),
                Value::Float(1.0),
                s("x"),
                Value::Map(vec![(s("a"), Value::Array(vec![Value::Float(1.5)]))]),
            ])
        );
        let nan = from_view(&json!({"$type": "builtins.float", "$value": "nan"}), None).unwrap();
        assert!(matches!(nan, Value::Float(f) if f.is_nan()));
        assert_eq!(
            from_view(&json!({"$type": "builtins.float", "$value": "-inf"}), None).unwrap(),
            Value::Float(f64::NEG_INFINITY)
        );
        assert_eq!(
            from_view(&json!({"$type": "builtins.bytes", "base64": "AP8="}), None).unwrap(),
            Value::Bin(vec![0, 255])
        );
        assert_eq!(
            from_view(
                &json!({"$type": "builtins.dict", "$items": [[1, "a"], [null, {"$k": 1}], ["$x", 2]]}),
                None
            )
            .unwrap_err()
            .to_string(),
            "$items[1][1]: unexpected key \"$k\": a dict with keys starting with \"$\" is written as {\"$type\": \"builtins.dict\", \"$items\": [[key, value], …]}"
        );
        assert_eq!(
            from_view(
                &json!({"$type": "builtins.dict", "$items": [[1, "a"], [null, 2], ["$x", [3]]]}),
                None
            )
            .unwrap(),
            Value::Map(vec![
                (Value::Int(1), s("a")),
                (Value::Nil, Value::Int(2)),
                (s("$x"), Value::Array(vec![Value::Int(3)])),
            ])
        );
    }

    #[test]
    fn objects_are_inferred_without_a_template() {
        let msg = from_view(
            &json!({"$type": "langchain_core.messages.ai.AIMessage", "content": "hi", "$$odd": 1}),
            None,
        )
        .unwrap();
        assert_eq!(
            msg,
            obj(
                ObjectForm::PydanticV2,
                "langchain_core.messages.ai",
                "AIMessage",
                Value::Map(vec![(s("content"), s("hi")), (s("$odd"), Value::Int(1))]),
                Some(s("model_validate_json"))
            )
        );
        let dc = from_view(&json!({"$type": "app.Point", "x": 1}), None).unwrap();
        assert!(
            matches!(&dc, Value::Object(o) if o.form == ObjectForm::KwArgs && o.extra.is_none())
        );
        let v1 = from_view(&json!({"$type": "app.Point", "x": 1, "$ext": 4}), None).unwrap();
        assert!(matches!(&v1, Value::Object(o) if o.form == ObjectForm::PydanticV1));
        let uuid = from_view(&json!({"$type": "uuid.UUID", "$value": "ab"}), None).unwrap();
        assert_eq!(
            uuid,
            obj(ObjectForm::SingleArg, "uuid", "UUID", s("ab"), None)
        );
        let dt = from_view(
            &json!({"$type": "datetime.datetime", "$value": "2024-01-01T00:00:00"}),
            None,
        )
        .unwrap();
        assert_eq!(
            dt,
            obj(
                ObjectForm::Method,
                "datetime",
                "datetime",
                s("2024-01-01T00:00:00"),
                Some(s("fromisoformat"))
            )
        );
        let date = from_view(
            &json!({"$type": "datetime.date", "$args": [2024, 1, 2]}),
            None,
        )
        .unwrap();
        assert_eq!(
            date,
            obj(
                ObjectForm::PosArgs,
                "datetime",
                "date",
                Value::Array(vec![Value::Int(2024), Value::Int(1), Value::Int(2)]),
                None
            )
        );
        let err =
            from_view(&json!({"$type": "app.Point", "$value": 1, "$ext": 2}), None).unwrap_err();
        assert!(err.to_string().contains("does not fit"), "{err}");
        let err = from_view(&json!({"$type": "NoModule", "x": 1}), None).unwrap_err();
        assert!(err.to_string().contains("not a Python type name"), "{err}");
    }

    #[test]
    fn template_keeps_form_extra_and_field_order() {
        let t = obj(
            ObjectForm::KwArgs,
            "langchain_core.messages.tool",
            "ToolCallish",
            Value::Map(vec![(s("a"), Value::Int(1)), (s("b"), Value::Int(2))]),
            None,
        );
        let v = from_view(
            &json!({"$type": "langchain_core.messages.tool.ToolCallish", "c": 3, "b": 20, "a": 10}),
            Some(&t),
        )
        .unwrap();
        assert_eq!(
            v,
            obj(
                ObjectForm::KwArgs,
                "langchain_core.messages.tool",
                "ToolCallish",
                Value::Map(vec![
                    (s("a"), Value::Int(10)),
                    (s("b"), Value::Int(20)),
                    (s("c"), Value::Int(3))
                ]),
                None
            )
        );
    }

    #[test]
    fn secrets() {
        let secret = obj(
            ObjectForm::SingleArg,
            "pydantic.types",
            "SecretStr",
            s("hunter2"),
            None,
        );
        let masked = view(&secret, ViewOptions::default());
        assert_eq!(from_view(&masked, Some(&secret)).unwrap(), secret);
        let err = from_view(&masked, None).unwrap_err();
        assert!(matches!(err, UnviewError::MaskedSecret { .. }), "{err}");
        let err = from_view(
            &json!({"$type": "pydantic.types.SecretStr", "$value": SECRET_MASK}),
            None,
        )
        .unwrap_err();
        assert!(matches!(err, UnviewError::MaskedSecret { .. }), "{err}");
        let new = from_view(
            &json!({"$type": "pydantic.types.SecretStr", "$value": "new", "$secret": true}),
            Some(&secret),
        )
        .unwrap();
        assert_eq!(
            new,
            obj(
                ObjectForm::SingleArg,
                "pydantic.types",
                "SecretStr",
                s("new"),
                None
            )
        );
    }

    #[test]
    fn errors_name_the_path() {
        let j = json!({"values": {"messages": [1, 2, {"$type": "x.Y", "content": {"$type": "builtins.bytes", "base64": "!!"}}]}});
        let err = from_view(&j, None).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("values.messages[2].content: base64: invalid base64"),
            "{err}"
        );
        let err = from_view_at(&json!({"a b": {"$error": "bad"}}), None, "values.x").unwrap_err();
        assert!(matches!(err, UnviewError::NotWritable { .. }));
        assert!(err.to_string().starts_with("values.x[\"a b\"]: "), "{err}");
    }

    #[test]
    fn raw_ext_passes_through_only_unchanged() {
        let raw = Value::RawExt(Box::new(RawExt {
            code: 9,
            data: vec![1, 2],
            error: "unknown ext".into(),
        }));
        let j = view(&raw, ViewOptions::default());
        assert_eq!(from_view(&j, Some(&raw)).unwrap(), raw);
        assert!(from_view(&j, None).is_err());
    }

    #[test]
    fn numpy_and_delta_snapshot() {
        let arr = Value::NdArray(Box::new(NdArray {
            dtype: "<i8".into(),
            shape: vec![2],
            order: "C".into(),
            data: [1i64.to_le_bytes(), 2i64.to_le_bytes()].concat(),
        }));
        let j = view(&arr, ViewOptions::default());
        assert_eq!(from_view(&j, None).unwrap(), arr);
        let mut bad = j.clone();
        bad["values"] = json!([1, 3]);
        assert!(from_view(&bad, None).is_err());
        let snap = Value::DeltaSnapshot(Box::new(Value::Array(vec![Value::Int(1)])));
        let j = view(&snap, ViewOptions::default());
        let back = from_view(&j, None).unwrap();
        assert_eq!(back, snap);
        assert_eq!(msgpack::encode(&back), msgpack::encode(&snap));
    }

    #[test]
    fn decoded_top_level() {
        let b = Decoded::Bytes(vec![1, 2]);
        let j = view_decoded(&b, ViewOptions::default()).unwrap();
        assert_eq!(decoded_from_view(&j, None, "").unwrap(), b);
        let ba = Decoded::ByteArray(vec![3]);
        let j = view_decoded(&ba, ViewOptions::default()).unwrap();
        assert_eq!(decoded_from_view(&j, Some(&ba), "").unwrap(), ba);
        assert_eq!(
            decoded_from_view(&Json::Null, None, "").unwrap(),
            Decoded::Null
        );
        let p = Decoded::Pickle(vec![0x80, 4, b'.']);
        let j = view_decoded(&p, ViewOptions::default()).unwrap();
        assert_eq!(decoded_from_view(&j, Some(&p), "").unwrap(), p);
        assert!(decoded_from_view(&j, None, "").is_err());
    }
}

//! The walker ([`Unview`]): keeps the current JSON path, turns JSON values back into values
//! (scalars, lists, plain dicts) and dispatches `$type` objects to the per-type revivers
//! (`builtins` and `object`).

use super::UnviewError;
use crate::value::Value;
use crate::view::{view, ViewOptions};
use base64::engine::general_purpose::STANDARD as B64;
use base64::Engine;
use serde_json::{Map, Value as Json};

/// The type name of the DeltaChannel snapshot wrapper (ext 7) in the view.
const DELTA_SNAPSHOT_TYPE: &str = "langgraph.checkpoint.serde.types._DeltaSnapshot";

/// The walker: keeps the current JSON path.
pub(super) struct Unview {
    pub(super) path: String,
}

fn is_ident(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

impl Unview {
    pub(super) fn err<T>(&self, message: impl Into<String>) -> Result<T, UnviewError> {
        Err(UnviewError::Invalid {
            path: self.path.clone(),
            message: message.into(),
        })
    }

    /// Run `f` with `segment` appended to the path.
    pub(super) fn at<T>(&mut self, segment: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let len = self.path.len();
        self.path.push_str(segment);
        let out = f(self);
        self.path.truncate(len);
        out
    }

    pub(super) fn key_segment(&self, key: &str) -> String {
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

    pub(super) fn field<T>(&mut self, key: &str, f: impl FnOnce(&mut Self) -> T) -> T {
        let seg = self.key_segment(key);
        self.at(&seg, f)
    }

    pub(super) fn index<T>(&mut self, i: usize, f: impl FnOnce(&mut Self) -> T) -> T {
        self.at(&format!("[{i}]"), f)
    }

    pub(super) fn value(
        &mut self,
        json: &Json,
        template: Option<&Value>,
    ) -> Result<Value, UnviewError> {
        // A value kept as its stored JSON text stays that text while its view is unchanged.
        if let Some(t @ Value::JsonText(_)) = template {
            if view(t, ViewOptions::default()) == *json {
                return Ok(t.clone());
            }
        }
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
            if !crate::view::plain_key(k) {
                return self.err(format!(
                    "unexpected key {k:?}: a dict with this key is written as {{\"$type\": \"builtins.dict\", \"$items\": [[key, value], …]}}"
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

    pub(super) fn only_keys(
        &self,
        obj: &Map<String, Json>,
        allowed: &[&str],
    ) -> Result<(), UnviewError> {
        match obj.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) => self.err(format!(
                "unexpected key {k:?} in a {:?} object",
                obj.get("$type").and_then(Json::as_str).unwrap_or_default()
            )),
            None => Ok(()),
        }
    }

    pub(super) fn bytes(&self, obj: &Map<String, Json>) -> Result<Vec<u8>, UnviewError> {
        self.only_keys(obj, &["$type", "base64"])?;
        self.base64(obj, "base64")
    }

    pub(super) fn base64(
        &self,
        obj: &Map<String, Json>,
        key: &str,
    ) -> Result<Vec<u8>, UnviewError> {
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
                crate::view::NUMBER_TYPE => return self.number_text(obj),
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
}

/// A JSON float as a value: float32 when the template is a float32 and the number fits exactly.
pub(super) fn float_like(f: f64, template: Option<&Value>) -> Value {
    match template {
        Some(Value::Float32(_)) if (f as f32) as f64 == f || f.is_nan() => Value::Float32(f as f32),
        _ => Value::Float(f),
    }
}

//! The reviver of Python objects (ext 0–5): the form is taken from `$ext`, the template or the
//! JSON's shape ([`Shape`]), then the payload is rebuilt (single argument with the secret rule,
//! positional arguments, or keyword fields in the template's order).

use super::walker::Unview;
use super::UnviewError;
use crate::value::{ObjectForm, PyObject, Str, Value};
use crate::view::{is_secret, SECRET_MASK};
use serde_json::{Map, Value as Json};
use std::sync::Arc;

impl Unview {
    pub(super) fn object(
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
        let obj = PyObject {
            form,
            module,
            name,
            payload,
            extra,
        };
        if let Some(why) = super::revive::problem(&obj, template) {
            return self.err(why);
        }
        Ok(Value::Object(Arc::new(obj)))
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

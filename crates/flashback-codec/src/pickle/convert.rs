//! A [`PyValue`] as the codec's [`Value`], the way LangGraph's msgpack serializer
//! (`jsonplus._msgpack_default`) encodes the same Python object, so a pickled value is shown
//! exactly like the same value stored as msgpack. The walk is bounded by a node budget on the
//! expanded tree (a node shared a thousand times costs a thousand), and by depth.

use super::PyValue;
use crate::value::{JsonText, JsonTextKind, ObjectForm, PyObject, Value};
use std::sync::Arc;

/// What stands for the part of a value past the node budget.
pub const TRUNCATED: &str = "<truncated: too many nodes>";
/// What stands for a reference to a container that contains it.
pub const RECURSIVE: &str = "<recursive>";
/// Deepest nesting walked: what msgpack values have (the view is recursive); deeper parts are
/// [`TRUNCATED`].
const MAX_DEPTH: usize = crate::msgpack::MAX_DEPTH;

/// A [`PyValue`] as a [`Value`] (see the module docs), expanding at most `max_nodes` nodes:
/// past them, the rest is the string [`TRUNCATED`]. A cycle is the string [`RECURSIVE`].
pub fn to_value(v: &PyValue, max_nodes: usize) -> Value {
    Walk { left: max_nodes }.value(v, 0)
}

pub(super) struct Walk {
    left: usize,
}

pub(super) fn string(s: &str) -> Value {
    Value::Str(s.into())
}

impl Walk {
    pub(super) fn value(&mut self, v: &PyValue, depth: usize) -> Value {
        if self.left == 0 || depth >= MAX_DEPTH {
            return string(TRUNCATED);
        }
        self.left -= 1;
        let depth = depth + 1;
        match v {
            PyValue::None => Value::Nil,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(i) => Value::Int(*i),
            PyValue::BigInt(digits) => match digits.parse::<u64>() {
                Ok(u) => Value::UInt(u),
                Err(_) => Value::JsonText(Box::new(JsonText {
                    kind: JsonTextKind::Number,
                    text: digits.clone(),
                })),
            },
            PyValue::Float(f) => Value::Float(*f),
            PyValue::Str(s) => string(s),
            PyValue::Bytes(b) | PyValue::ByteArray(b) => Value::Bin(b.clone()),
            PyValue::Tuple(items) | PyValue::List(items) => self.seq(items, depth),
            PyValue::Dict(items) | PyValue::DefaultDict { items, .. } => self.map(items, depth),
            PyValue::Set(items) => {
                let payload = self.seq(items, depth);
                PyObject::value(ObjectForm::SingleArg, "builtins", "set", payload, None)
            }
            PyValue::FrozenSet(items) => {
                let payload = self.seq(items, depth);
                PyObject::value(
                    ObjectForm::SingleArg,
                    "builtins",
                    "frozenset",
                    payload,
                    None,
                )
            }
            PyValue::Global { module, name } => PyObject::value(
                ObjectForm::SingleArg,
                "builtins",
                "type",
                string(&format!("{module}.{name}")),
                None,
            ),
            PyValue::Object { .. } => self.object(v, depth),
            PyValue::Recursive => string(RECURSIVE),
        }
    }

    pub(super) fn seq(&mut self, items: &[Arc<PyValue>], depth: usize) -> Value {
        let mut out = Vec::with_capacity(items.len().min(self.left));
        for i in items {
            if self.left == 0 {
                out.push(string(TRUNCATED));
                break;
            }
            out.push(self.value(i, depth));
        }
        Value::Array(out)
    }

    fn map(&mut self, items: &[(Arc<PyValue>, Arc<PyValue>)], depth: usize) -> Value {
        let mut out = Vec::with_capacity(items.len().min(self.left));
        for (k, v) in items {
            if self.left == 0 {
                out.push((string("$truncated"), string(TRUNCATED)));
                break;
            }
            let k = self.value(k, depth);
            let v = self.value(v, depth);
            out.push((k, v));
        }
        Value::Map(out)
    }

    /// An object's fields: its state dict (or `(dict, slots)` state), its `__dict__` for
    /// pydantic models.
    fn fields(&mut self, state: &PyValue, depth: usize) -> Vec<(Value, Value)> {
        let mut out = Vec::new();
        let parts: Vec<&PyValue> = match state {
            PyValue::Tuple(t) => t.iter().map(|p| &**p).collect(),
            other => vec![other],
        };
        for part in parts {
            match part {
                PyValue::None => {}
                PyValue::Dict(items) => match self.map(items, depth) {
                    Value::Map(m) => out.extend(m),
                    other => out.push((string("__state__"), other)),
                },
                other => {
                    let v = self.value(other, depth);
                    out.push((string("__state__"), v));
                }
            }
        }
        out
    }

    fn object(&mut self, v: &PyValue, depth: usize) -> Value {
        let PyValue::Object {
            module,
            name,
            args,
            state,
            list_items,
            dict_items,
        } = v
        else {
            return Value::Nil;
        };
        let (m, n) = (module.as_str(), name.as_str());
        if let Some(known) = self.known(v, m, n, args, depth) {
            return known;
        }
        let single = |w: &mut Walk, form| {
            let payload = args.first().map_or(Value::Nil, |a| w.value(a, depth));
            PyObject::value(form, m, n, payload, None)
        };
        if let Some(secret) = state.as_ref().and_then(|st| st.get("_secret_value")) {
            // pydantic's SecretStr/SecretBytes: as jsonplus writes them (`get_secret_value()`),
            // which the view masks.
            let payload = self.value(secret, depth);
            return PyObject::value(ObjectForm::SingleArg, m, n, payload, None);
        }
        if let Some(state) = state {
            // pydantic v2: {'__dict__', '__pydantic_fields_set__', …}; v1: {'__dict__', '__fields_set__'}.
            let form = if state.get("__pydantic_fields_set__").is_some() {
                Some((ObjectForm::PydanticV2, Some(string("model_validate_json"))))
            } else if state.get("__fields_set__").is_some() {
                Some((ObjectForm::PydanticV1, None))
            } else {
                None
            };
            if let (Some((form, extra)), Some(dict)) = (form, state.get("__dict__")) {
                let payload = self.value(dict, depth);
                return PyObject::value(form, m, n, payload, extra);
            }
            let mut fields = self.fields(state, depth);
            self.extras(&mut fields, args, list_items, dict_items, depth);
            return PyObject::value(ObjectForm::KwArgs, m, n, Value::Map(fields), None);
        }
        if list_items.is_empty() && dict_items.is_empty() {
            return match args.len() {
                // Enum members, Decimal, IP addresses…: `cls(value)`.
                1 => single(self, ObjectForm::SingleArg),
                0 => PyObject::value(ObjectForm::KwArgs, m, n, Value::Map(Vec::new()), None),
                _ => {
                    let payload = self.seq(args, depth);
                    PyObject::value(ObjectForm::PosArgs, m, n, payload, None)
                }
            };
        }
        let mut fields = Vec::new();
        self.extras(&mut fields, args, list_items, dict_items, depth);
        PyObject::value(ObjectForm::KwArgs, m, n, Value::Map(fields), None)
    }

    /// Arguments and items of an object shown with its fields.
    fn extras(
        &mut self,
        fields: &mut Vec<(Value, Value)>,
        args: &[Arc<PyValue>],
        list_items: &[Arc<PyValue>],
        dict_items: &[(Arc<PyValue>, Arc<PyValue>)],
        depth: usize,
    ) {
        if !args.is_empty() {
            let v = self.seq(args, depth);
            fields.push((string("__args__"), v));
        }
        if !list_items.is_empty() {
            let v = self.seq(list_items, depth);
            fields.push((string("__items__"), v));
        }
        if !dict_items.is_empty() {
            let v = self.map(dict_items, depth);
            fields.push((string("__dict_items__"), v));
        }
    }
}

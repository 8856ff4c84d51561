//! The typed value tree.

use std::sync::Arc;

/// The string type of [`Value::Str`]: a `String` that keeps short strings inline.
pub type Str = compact_str::CompactString;

/// A decoded LangGraph value.
///
/// The tree mirrors the msgpack document Python wrote, with every extension type decoded into a
/// typed node that keeps the Python `(module, name)` pair. Encoding the tree again
/// ([`crate::msgpack::encode`]) gives back the exact bytes Python's `ormsgpack` produced,
/// because Python always uses the minimal msgpack form (see the crate docs).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `None`.
    Nil,
    /// `True` / `False`.
    Bool(bool),
    /// An integer that fits in `i64`.
    Int(i64),
    /// An integer above `i64::MAX` (msgpack uint64).
    UInt(u64),
    /// A float64 (Python floats are always encoded as float64).
    Float(f64),
    /// A float32 (never written by Python; kept so foreign documents round-trip).
    Float32(f32),
    /// A `str`. Strings up to 24 bytes (most keys, type names, ids) are stored inline without
    /// a heap allocation.
    Str(Str),
    /// A nested `bytes` (msgpack bin).
    Bin(Vec<u8>),
    /// A `list` (or a `tuple`, which Python revives as a list).
    Array(Vec<Value>),
    /// A `dict`, in stored order; keys can be any value.
    Map(Vec<(Value, Value)>),
    /// A Python object encoded with ext codes 0–5. Shared (`Arc`): identical objects in many
    /// checkpoints of a thread (every message, in every later state) are decoded once when a
    /// [`crate::msgpack::DecodeCache`] is used.
    Object(Arc<PyObject>),
    /// A numpy array (ext 6).
    NdArray(Box<NdArray>),
    /// A DeltaChannel snapshot wrapper (ext 7) around the channel value.
    DeltaSnapshot(Box<Value>),
    /// An extension value that could not be decoded (unknown code or malformed payload). Its
    /// bytes are kept so that the value round-trips. (Boxed: keeping every variant at most
    /// 24 bytes makes `Value` 32 bytes, which matters for long histories.)
    RawExt(Box<RawExt>),
    /// A value of a `json` document (LangGraph.js, Python's 2024 format) that the tree has no
    /// exact form for, kept as its stored text: written back into JSON unchanged.
    JsonText(Box<JsonText>),
}

/// A JSON value kept as its exact stored text (see [`JsonTextKind`]). JSON writers write the
/// text back as it is; msgpack has no form for it, so writers of Python's format refuse it
/// (encoding it as msgpack gives only what it shows).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonText {
    /// What it is.
    pub kind: JsonTextKind,
    /// The exact JSON text as stored: a string token with its quotes and escapes, a number
    /// token, or a whole list or dict.
    pub text: String,
}

/// What a [`JsonText`] holds.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonTextKind {
    /// A string holding a UTF-16 surrogate that is not half of a pair (`"great job \ud83d"`:
    /// JS's `JSON.stringify` of a string cut inside an emoji). JS reads it as it is; Rust
    /// strings cannot hold it. `shown` is the string with U+FFFD in place of each such
    /// surrogate, as the view shows it.
    LoneSurrogate {
        /// The string as shown.
        shown: String,
    },
    /// A number no 64-bit integer or float64 holds as stored: an integer beyond 64 bits
    /// (`123456789012345678901234567890`) or a number beyond float64's range (`1e400`).
    Number,
    /// A list or dict nested deeper than [`crate::msgpack::MAX_DEPTH`] levels: read past (its
    /// syntax checked) but not decoded.
    TooDeep,
}

/// An undecodable extension value, kept byte for byte.
#[derive(Debug, Clone, PartialEq)]
pub struct RawExt {
    /// The msgpack ext type code.
    pub code: i8,
    /// The raw ext payload.
    pub data: Vec<u8>,
    /// Why it could not be decoded.
    pub error: String,
}

/// How a Python object was encoded (the msgpack ext code used by `JsonPlusSerializer`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectForm {
    /// Ext 0: `cls(arg)` (UUID, Decimal, Enum, set, SecretStr, …).
    SingleArg,
    /// Ext 1: `cls(*args)` (date, timedelta, Path, Send, …).
    PosArgs,
    /// Ext 2: `cls(**kwargs)` (dataclasses, NamedTuples, time, Interrupt, Command, …).
    KwArgs,
    /// Ext 3: `cls.method(arg)` (datetime `fromisoformat`).
    Method,
    /// Ext 4: a pydantic v1 model (`obj.dict()`).
    PydanticV1,
    /// Ext 5: a pydantic v2 model (`obj.model_dump()`), including langchain messages.
    PydanticV2,
}

impl ObjectForm {
    /// The msgpack ext code of this form.
    pub fn code(self) -> i8 {
        match self {
            ObjectForm::SingleArg => 0,
            ObjectForm::PosArgs => 1,
            ObjectForm::KwArgs => 2,
            ObjectForm::Method => 3,
            ObjectForm::PydanticV1 => 4,
            ObjectForm::PydanticV2 => 5,
        }
    }

    /// The form for an ext code, if it is one of 0–5.
    pub fn from_code(code: i8) -> Option<Self> {
        Some(match code {
            0 => ObjectForm::SingleArg,
            1 => ObjectForm::PosArgs,
            2 => ObjectForm::KwArgs,
            3 => ObjectForm::Method,
            4 => ObjectForm::PydanticV1,
            5 => ObjectForm::PydanticV2,
            _ => return None,
        })
    }
}

/// A Python object: `[module, name, payload, (extra)]` inside an ext 0–5.
#[derive(Debug, Clone, PartialEq)]
pub struct PyObject {
    /// The ext code used.
    pub form: ObjectForm,
    /// Python module, e.g. `langchain_core.messages.ai`.
    pub module: Str,
    /// Class (or callable) name, e.g. `AIMessage`.
    pub name: Str,
    /// The argument: a single value (ext 0, 3), an args array (ext 1) or a kwargs map (2, 4, 5).
    pub payload: Value,
    /// The fourth array element when present: the method name of ext 3, and
    /// `"model_validate_json"` for ext 5.
    pub extra: Option<Value>,
}

impl PyObject {
    /// A [`Value::Object`] of this form, class and payload.
    pub fn value(
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

    /// `module.name`, the Python type name shown to users.
    pub fn type_name(&self) -> String {
        format!("{}.{}", self.module, self.name)
    }
}

/// A numpy array (ext 6): `[dtype.str, shape, order, buffer]`.
#[derive(Debug, Clone, PartialEq)]
pub struct NdArray {
    /// numpy dtype string, e.g. `<f8`.
    pub dtype: Str,
    /// The shape.
    pub shape: Vec<u64>,
    /// `"C"` or `"F"`.
    pub order: Str,
    /// The raw buffer in `order`.
    pub data: Vec<u8>,
}

impl Value {
    /// The string inside a [`Value::Str`].
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// Look a string key up in a [`Value::Map`].
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(entries) => entries
                .iter()
                .find(|(k, _)| k.as_str() == Some(key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The integer inside a [`Value::Int`].
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// A short Python-ish type name for messages and summaries.
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "None".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) | Value::UInt(_) => "int".into(),
            Value::Float(_) | Value::Float32(_) => "float".into(),
            Value::Str(_) => "str".into(),
            Value::Bin(_) => "bytes".into(),
            Value::Array(_) => "list".into(),
            Value::Map(_) => "dict".into(),
            Value::Object(o) => o.type_name(),
            Value::NdArray(_) => "numpy.ndarray".into(),
            Value::DeltaSnapshot(_) => "_DeltaSnapshot".into(),
            Value::RawExt(raw) => format!("msgpack.ext({})", raw.code),
            Value::JsonText(t) => match t.kind {
                JsonTextKind::LoneSurrogate { .. } => "str".into(),
                JsonTextKind::Number => "number".into(),
                JsonTextKind::TooDeep => "json".into(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn value_stays_small() {
        assert_eq!(
            std::mem::size_of::<super::Value>(),
            32,
            "Value size is part of the memory budget"
        );
    }
}

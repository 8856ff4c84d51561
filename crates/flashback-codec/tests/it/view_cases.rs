//! Values for checking the streamed JSON view against the collected one: hand-picked corner
//! cases and pseudo-random trees (shared by `json_view.rs`).

use flashback_codec::{Decoded, NdArray, ObjectForm, PyObject, RawExt, Value};

fn s(text: &str) -> Value {
    Value::Str(text.into())
}

fn obj(form: ObjectForm, module: &str, name: &str, payload: Value, extra: Option<Value>) -> Value {
    PyObject::value(form, module, name, payload, extra)
}

fn map(pairs: &[(&str, Value)]) -> Value {
    Value::Map(pairs.iter().map(|(k, v)| (s(k), v.clone())).collect())
}

/// Hand-picked corner cases of the mapping.
pub fn corner_cases() -> Vec<Decoded> {
    let floats = Value::Array(vec![
        Value::Float(f64::NAN),
        Value::Float(f64::INFINITY),
        Value::Float(f64::NEG_INFINITY),
        Value::Float(-0.0),
        Value::Float(1e300),
        Value::Float(0.1),
        Value::Float32(1.5),
        Value::Float32(f32::NAN),
        Value::Int(i64::MIN),
        Value::UInt(u64::MAX),
    ]);
    let many: Vec<(Value, Value)> = (0..40)
        .map(|i| (s(&format!("k{}", i % 23)), Value::Int(i)))
        .collect();
    let kw = |entries: Vec<(Value, Value)>| {
        obj(
            ObjectForm::PydanticV2,
            "m",
            "Model",
            Value::Map(entries),
            Some(s("model_validate_json")),
        )
    };
    let values = vec![
        floats,
        // Duplicate keys: a dict becomes $items; an object keeps the first place, last value.
        Value::Map(vec![
            (s("a"), Value::Int(1)),
            (s("b"), Value::Nil),
            (s("a"), Value::Int(2)),
        ]),
        kw(vec![
            (s("a"), Value::Int(1)),
            (s("b"), Value::Nil),
            (s("a"), Value::Int(2)),
        ]),
        kw(many.clone()),
        Value::Map(many),
        // `$` keys.
        map(&[("$type", s("x")), ("ok", Value::Bool(true))]),
        kw(vec![
            (s("$type"), s("x")),
            (s("$$v"), Value::Int(1)),
            (s("plain"), Value::Nil),
            (s("$type"), s("y")),
        ]),
        // Non-string keys.
        Value::Map(vec![
            (Value::Int(1), s("one")),
            (Value::Nil, s("none")),
            (
                Value::Array(vec![Value::Int(1), Value::Float(f64::NAN)]),
                s("tuple"),
            ),
            (s("str"), Value::Bin(vec![0, 1, 2, 255])),
        ]),
        kw(vec![(Value::Int(1), s("x"))]),
        obj(
            ObjectForm::KwArgs,
            "m",
            "NotAMap",
            Value::Array(vec![Value::Int(1)]),
            None,
        ),
        // Secrets (masked unless revealed) and look-alikes.
        obj(
            ObjectForm::SingleArg,
            "pydantic.types",
            "SecretStr",
            s("hunter2"),
            None,
        ),
        obj(
            ObjectForm::SingleArg,
            "pydantic.v1.types",
            "SecretBytes",
            Value::Bin(b"k".to_vec()),
            None,
        ),
        obj(ObjectForm::SingleArg, "mine", "SecretStr", s("shown"), None),
        obj(
            ObjectForm::Method,
            "pydantic.types",
            "SecretStr",
            s("hunter2"),
            Some(s("m")),
        ),
        // Methods.
        obj(
            ObjectForm::Method,
            "datetime",
            "datetime",
            s("2024-01-01T00:00:00"),
            Some(s("fromisoformat")),
        ),
        obj(ObjectForm::Method, "m", "C", s("x"), Some(s("other"))),
        obj(ObjectForm::Method, "m", "C", s("x"), None),
        obj(ObjectForm::Method, "m", "C", s("x"), Some(Value::Int(3))),
        // Positional forms.
        obj(
            ObjectForm::PosArgs,
            "datetime",
            "date",
            Value::Array(vec![Value::Int(2024), Value::Int(1), Value::Int(2)]),
            None,
        ),
        obj(ObjectForm::PosArgs, "m", "One", s("single"), None),
        // Nested objects.
        kw(vec![
            (
                s("messages"),
                Value::Array(vec![kw(vec![
                    (s("content"), s("hi \"there\"\n\u{1F600}")),
                    (s("extra"), map(&[])),
                ])]),
            ),
            (
                s("set"),
                obj(
                    ObjectForm::SingleArg,
                    "builtins",
                    "set",
                    Value::Array(vec![Value::Int(1)]),
                    None,
                ),
            ),
        ]),
        // numpy (valid and not), DeltaSnapshot, undecodable ext.
        Value::NdArray(Box::new(NdArray {
            dtype: "<f8".into(),
            shape: vec![2],
            order: "C".into(),
            data: [1.5f64.to_le_bytes(), f64::NAN.to_le_bytes()].concat(),
        })),
        Value::NdArray(Box::new(NdArray {
            dtype: "<i4".into(),
            shape: vec![2, 0],
            order: "F".into(),
            data: vec![],
        })),
        Value::NdArray(Box::new(NdArray {
            dtype: "?weird".into(),
            shape: vec![3],
            order: "C".into(),
            data: vec![1, 2],
        })),
        Value::DeltaSnapshot(Box::new(Value::Array(vec![
            s("a"),
            Value::Float(f64::INFINITY),
        ]))),
        Value::RawExt(Box::new(RawExt {
            code: 42,
            data: vec![1, 2, 3],
            error: "unknown ext".into(),
        })),
        Value::Array(vec![]),
        map(&[]),
    ];
    let mut out: Vec<Decoded> = values.into_iter().map(Decoded::Msgpack).collect();
    out.extend([
        Decoded::Null,
        Decoded::Empty,
        Decoded::Bytes(vec![1, 2, 3]),
        Decoded::ByteArray(vec![]),
        Decoded::Pickle(b"\x80\x04\x95garbage".to_vec()),
        Decoded::Encrypted {
            tag: "msgpack+aes".into(),
            data: vec![9; 40],
        },
        Decoded::Error {
            tag: "weird".into(),
            message: "unknown tag".into(),
            raw: vec![1],
        },
        flashback_codec::decode_typed(
            "json",
            Some(br#"{"lc": 1, "type": "constructor", "id": ["a", "B"], "kwargs": {"x": 1}}"#),
        ),
        flashback_codec::budget::too_large(
            "msgpack",
            1 << 30,
            "dict".into(),
            flashback_codec::TooLargeReason::Request,
        ),
    ]);
    out
}

/// Pseudo-random value trees (xorshift; the same every run).
pub fn random_trees(count: usize) -> Vec<Decoded> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    fn tree(next: &mut dyn FnMut(u64) -> u64, depth: u32) -> Value {
        let keys = ["a", "b", "$t", "$type", "content", "id"];
        let leaf = depth == 0 || next(3) == 0;
        match if leaf { next(7) } else { 7 + next(5) } {
            0 => Value::Nil,
            1 => Value::Bool(next(2) == 1),
            2 => Value::Int(next(1000) as i64 - 500),
            3 => Value::Float([0.5, f64::NAN, f64::INFINITY, -2.25][next(4) as usize]),
            4 => Value::Str(keys[next(6) as usize].into()),
            5 => Value::Bin(vec![next(256) as u8; next(5) as usize]),
            6 => Value::UInt(u64::MAX - next(10)),
            7 => Value::Array((0..next(4)).map(|_| tree(next, depth - 1)).collect()),
            8 | 9 => {
                let n = next(5);
                Value::Map(
                    (0..n)
                        .map(|_| {
                            let k = if next(6) == 0 {
                                Value::Int(next(3) as i64)
                            } else {
                                Value::Str(keys[next(6) as usize].into())
                            };
                            (k, tree(next, depth - 1))
                        })
                        .collect(),
                )
            }
            10 => Value::DeltaSnapshot(Box::new(tree(next, depth - 1))),
            _ => {
                let form = ObjectForm::from_code(next(6) as i8).unwrap_or(ObjectForm::KwArgs);
                let name = ["SecretStr", "AIMessage", "datetime"][next(3) as usize];
                let module = ["pydantic.types", "langchain_core.messages"][next(2) as usize];
                let extra = [
                    None,
                    Some(Value::Str("fromisoformat".into())),
                    Some(Value::Nil),
                ][next(3) as usize]
                    .clone();
                obj(form, module, name, tree(next, depth - 1), extra)
            }
        }
    }
    (0..count)
        .map(|_| Decoded::Msgpack(tree(&mut next, 5)))
        .collect()
}

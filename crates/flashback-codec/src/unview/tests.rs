//! Unit tests of the JSON view → value direction.

use super::*;
use crate::msgpack;
use crate::value::{NdArray, ObjectForm, PyObject, RawExt};
use crate::view::{view, SECRET_MASK};
use serde_json::json;

fn obj(form: ObjectForm, module: &str, name: &str, payload: Value, extra: Option<Value>) -> Value {
    PyObject::value(form, module, name, payload, extra)
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
            &json!({"$type": "builtins.dict", "$items": [[1, "a"], [null, {"$value": 1}], ["$x", 2]]}),
            None
        )
        .unwrap_err()
        .to_string(),
        "$items[1][1]: unexpected key \"$value\": a dict with this key is written as {\"$type\": \"builtins.dict\", \"$items\": [[key, value], …]}"
    );
    // A JSON schema's `$defs`/`$ref` are plain keys: the dict reads back as it is shown.
    let schema = json!({"$defs": {"A": {"type": "string"}}, "$ref": "#/$defs/A"});
    let back = from_view(&schema, None).unwrap();
    assert_eq!(crate::view::view(&back, Default::default()), schema);
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
    assert!(matches!(&dc, Value::Object(o) if o.form == ObjectForm::KwArgs && o.extra.is_none()));
    let v1 = from_view(&json!({"$type": "app.Point", "x": 1, "$ext": 4}), None).unwrap();
    assert!(matches!(&v1, Value::Object(o) if o.form == ObjectForm::PydanticV1));
    let hex = "0123456789abcdef0123456789abcdef";
    let uuid = from_view(&json!({"$type": "uuid.UUID", "$value": hex}), None).unwrap();
    assert_eq!(
        uuid,
        obj(ObjectForm::SingleArg, "uuid", "UUID", s(hex), None)
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
    let err = from_view(&json!({"$type": "app.Point", "$value": 1, "$ext": 2}), None).unwrap_err();
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

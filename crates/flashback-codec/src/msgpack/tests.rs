//! Unit tests of the msgpack reader and writer.

use super::*;
use crate::value::{ObjectForm, PyObject};
use std::sync::Arc;

fn rt(bytes: &[u8]) -> Value {
    let v = decode(bytes).expect("decodes");
    assert_eq!(encode(&v), bytes, "round trip of {bytes:02x?}");
    v
}

#[test]
fn ints_use_minimal_forms() {
    for (i, bytes) in [
        (0i64, vec![0x00]),
        (127, vec![0x7f]),
        (128, vec![0xcc, 0x80]),
        (256, vec![0xcd, 0x01, 0x00]),
        (65536, vec![0xce, 0, 1, 0, 0]),
        (1 << 32, vec![0xcf, 0, 0, 0, 1, 0, 0, 0, 0]),
        (-1, vec![0xff]),
        (-32, vec![0xe0]),
        (-33, vec![0xd0, 0xdf]),
        (-129, vec![0xd1, 0xff, 0x7f]),
        (-40000, vec![0xd2, 0xff, 0xff, 0x63, 0xc0]),
        (i64::MIN, vec![0xd3, 0x80, 0, 0, 0, 0, 0, 0, 0]),
    ] {
        assert_eq!(encode(&Value::Int(i)), bytes, "encoding {i}");
        assert_eq!(rt(&bytes), Value::Int(i));
    }
    let max = [0xcf, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    assert_eq!(rt(&max), Value::UInt(u64::MAX));
}

#[test]
fn containers_and_strings_round_trip() {
    let long = "x".repeat(40);
    let v = Value::Map(vec![
        (
            Value::Str("a".into()),
            Value::Array(vec![Value::Nil, Value::Bool(true)]),
        ),
        (Value::Int(3), Value::Float(1.5)),
        (Value::Str(long.into()), Value::Bin(vec![1, 2, 3])),
        (Value::Nil, Value::Array((0..20).map(Value::Int).collect())),
    ]);
    let bytes = encode(&v);
    assert_eq!(decode(&bytes).expect("decodes"), v);
}

#[test]
fn ext_uses_fixext_for_power_of_two_lengths() {
    // ext 0 ["uuid","UUID","00..01"] is longer than 16 bytes → ext8.
    let obj = Value::Object(Arc::new(PyObject {
        form: ObjectForm::SingleArg,
        module: "uuid".into(),
        name: "UUID".into(),
        payload: Value::Str("0".repeat(32).into()),
        extra: None,
    }));
    let bytes = encode(&obj);
    assert_eq!(bytes[0], 0xc7, "ext8 header");
    assert_eq!(rt(&bytes), obj);
    // ext 7 wrapping the int 5 → payload of 1 byte → fixext1.
    assert_eq!(
        rt(&[0xd4, 0x07, 0x05]),
        Value::DeltaSnapshot(Box::new(Value::Int(5)))
    );
}

#[test]
fn top_level_str_skips_other_values() {
    let doc = Value::Map(vec![
        (Value::Str("v".into()), Value::Int(4)),
        (
            Value::Str("big".into()),
            Value::Array(vec![Value::Bin(vec![0; 300]), Value::Float(1.0)]),
        ),
        (
            Value::Str("ts".into()),
            Value::Str("2026-01-01T00:00:00+00:00".into()),
        ),
    ]);
    let bytes = encode(&doc);
    assert_eq!(
        top_level_str(&bytes, "ts").as_deref(),
        Some("2026-01-01T00:00:00+00:00")
    );
    assert_eq!(top_level_str(&bytes, "nope"), None);
    assert_eq!(top_level_str(&bytes[..10], "ts"), None, "truncated");
}

#[test]
fn the_cache_shares_identical_objects_and_changes_nothing() {
    let msg = |content: &str| {
        Value::Object(Arc::new(PyObject {
            form: ObjectForm::PydanticV2,
            module: "langchain_core.messages.ai".into(),
            name: "AIMessage".into(),
            payload: Value::Map(vec![(
                Value::Str("content".into()),
                Value::Str(content.into()),
            )]),
            extra: Some(Value::Str("model_validate_json".into())),
        }))
    };
    let a = encode(&Value::Array(vec![msg("hello there"), msg("second")]));
    let b = encode(&Value::Array(vec![
        msg("hello there"),
        msg("second"),
        msg("third"),
    ]));
    let mut cache = DecodeCache::new();
    let da = decode_with_cache(&a, &mut cache).expect("a");
    let db = decode_with_cache(&b, &mut cache).expect("b");
    assert_eq!(da, decode(&a).expect("a"), "same result as without a cache");
    assert_eq!(db, decode(&b).expect("b"));
    let (Value::Array(xa), Value::Array(xb)) = (&da, &db) else {
        panic!("arrays")
    };
    let (Value::Object(oa), Value::Object(ob)) = (&xa[0], &xb[0]) else {
        panic!("objects")
    };
    assert!(
        Arc::ptr_eq(oa, ob),
        "the first message is decoded once and shared"
    );
    assert_eq!(encode(&db), b, "round trip");
}

#[test]
fn bad_input_is_an_error_or_raw_ext_never_a_panic() {
    assert!(decode(&[0x92, 0x01]).is_err(), "truncated array");
    assert!(decode(&[0xc1]).is_err(), "reserved marker");
    // Invalid UTF-8 damages only the string: an in-place value (tests/it/bad_strings.rs).
    assert!(
        matches!(decode(&[0xa2, 0xff, 0xfe]), Ok(Value::RawExt(r)) if super::is_invalid_str(&r)),
        "invalid utf-8"
    );
    assert!(decode(&[0x01, 0x02]).is_err(), "trailing bytes");
    assert!(
        decode(&[0xdd, 0xff, 0xff, 0xff, 0xff]).is_err(),
        "huge length"
    );
    let deep: Vec<u8> = std::iter::repeat_n(0x91, 10_000).chain([0x00]).collect();
    assert!(decode(&deep).is_err(), "deep nesting");
    // Unknown ext code 9 with payload 0x01: kept raw, re-encodes identically.
    match rt(&[0xd4, 0x09, 0x01]) {
        Value::RawExt(raw) => {
            assert_eq!(raw.code, 9);
            assert!(
                raw.error.contains("unknown msgpack ext code 9"),
                "{}",
                raw.error
            );
        }
        other => panic!("expected RawExt, got {other:?}"),
    }
    // ext 0 whose payload is not an array; ext 1 whose payload is truncated.
    assert!(matches!(rt(&[0xd4, 0x00, 0x05]), Value::RawExt(r) if r.code == 0));
    assert!(matches!(rt(&[0xd4, 0x01, 0x93]), Value::RawExt(r) if r.code == 1));
}

#[test]
fn an_array_index_finds_every_item_by_its_place() {
    for n in [0usize, 1, 63, 64, 65, 200] {
        let items: Vec<Value> = (0..n)
            .map(|i| match i % 3 {
                0 => Value::Int(i as i64),
                1 => Value::Str(format!("item {i}").repeat(i % 7 + 1).into()),
                _ => Value::Array(vec![Value::Nil, Value::Int(-(i as i64))]),
            })
            .collect();
        let bytes = encode(&Value::Array(items.clone()));
        let index = ArrayIndex::new(&bytes).unwrap().expect("an array");
        assert_eq!((index.len(), index.is_empty()), (n, n == 0));
        for (i, item) in items.iter().enumerate() {
            assert_eq!(
                &decode(index.get(i).unwrap()).unwrap(),
                item,
                "{n}: item {i}"
            );
        }
        assert_eq!(index.get(n), None);
        assert_eq!(index.get(usize::MAX), None);
    }
    // Not an array; malformed, truncated or followed by more: refused, never a panic.
    assert!(ArrayIndex::new(&encode(&Value::Int(3))).unwrap().is_none());
    let bytes = encode(&Value::Array(vec![Value::Str("abc".into()); 100]));
    assert!(ArrayIndex::new(&bytes[..bytes.len() - 1]).is_err());
    assert!(ArrayIndex::new(&[bytes.as_slice(), &[0x01]].concat()).is_err());
    assert!(ArrayIndex::new(&[0xdd, 0xff, 0xff, 0xff, 0xff, 0x01]).is_err());
    assert!(ArrayIndex::new(&[0x91, 0xc1]).is_err());
    assert!(ArrayIndex::new(&[]).is_err());
}

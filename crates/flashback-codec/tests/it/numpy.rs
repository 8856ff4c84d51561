//! numpy arrays of every dtype family, real (written by LangGraph's `dumps_typed`) and crafted
//! (thousands of dimensions, a `[1e9, 0]` shape, wrong buffer sizes): decoded without panics,
//! aborts or huge allocations, viewed as Python reads them, and stored back byte for byte.
//! Fixtures: `tests/fixtures/hostile/gen_numpy.py`.

use flashback_codec::unview::from_view;
use flashback_codec::{decode_typed, msgpack, view_decoded, Decoded, NdArray, Value, ViewOptions};
use serde_json::{json, Value as Json};
use std::path::Path;
use std::time::{Duration, Instant};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/hostile");

fn expected() -> serde_json::Map<String, Json> {
    let text = std::fs::read_to_string(Path::new(DIR).join("expected.json")).unwrap();
    match serde_json::from_str(&text).unwrap() {
        Json::Object(m) => m,
        other => panic!("expected.json is not an object: {other}"),
    }
}

fn blob(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(DIR).join(format!("{name}.msgpack"))).unwrap()
}

fn view_of(bytes: &[u8]) -> Json {
    let d = decode_typed("msgpack", Some(bytes));
    view_decoded(&d, ViewOptions::default()).unwrap()
}

#[test]
fn every_fixture_array_is_viewed_as_python_reads_it() {
    let cases = expected();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    for (name, case) in &cases {
        let bytes = blob(name);
        let started = Instant::now();
        let got = view_of(&bytes);
        assert!(
            started.elapsed() < Duration::from_secs(2),
            "{name}: {:?}",
            started.elapsed()
        );
        // Compared as parsed text: serde_json's float parser can be an ulp off (5.96e-8), the
        // same way on both sides, as Python and serde_json both print shortest round-trip digits.
        let reparsed: Json = serde_json::from_str(&got.to_string()).unwrap();
        assert_eq!(reparsed, case["view"], "{name}");
        // What Python cannot read, or Flashback cannot show, still has dtype, shape and bytes.
        if case["python"] == "None" {
            assert!(got.get("values").is_none(), "{name}: {got}");
        }
        for key in ["dtype", "shape", "order", "base64"] {
            assert!(got.get(key).is_some(), "{name}: no {key}");
        }
    }
}

#[test]
fn every_fixture_array_round_trips_through_the_view() {
    for name in expected().keys() {
        let bytes = blob(name);
        let Decoded::Msgpack(value) = decode_typed("msgpack", Some(&bytes)) else {
            panic!("{name}: not msgpack");
        };
        let view = view_of(&bytes);
        let back = from_view(&view, None).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(back, value, "{name}");
        assert_eq!(msgpack::encode(&back), bytes, "{name}: stored bytes");
    }
}

fn array_view(dtype: &str, shape: Vec<u64>, order: &str, data: Vec<u8>) -> Json {
    let arr = Value::NdArray(Box::new(NdArray {
        dtype: dtype.into(),
        shape,
        order: order.into(),
        data,
    }));
    flashback_codec::view(&arr, ViewOptions::default())
}

#[test]
fn shapes_cost_only_what_their_bytes_justify() {
    // 64 dimensions (numpy's maximum) nest 64 deep; 65 or 100,000 have no values.
    let one = 7.0f64.to_le_bytes().to_vec();
    let mut want = json!(7.0);
    for _ in 0..64 {
        want = json!([want]);
    }
    assert_eq!(
        array_view("<f8", vec![1; 64], "F", one.clone())["values"],
        want
    );
    for ndim in [65, 100_000] {
        let v = array_view("<f8", vec![1; ndim], "C", one.clone());
        assert!(v.get("values").is_none(), "{ndim} dimensions");
    }
    // Empty arrays: the nested empty lists, up to a bound; then none at all.
    let v = array_view("<f8", vec![1000, 0, 5], "C", vec![]);
    assert_eq!(v["values"].as_array().map(Vec::len), Some(1000));
    assert!(v["values"][999] == json!([]));
    for shape in [
        vec![1_000_000_000, 0],
        vec![u64::MAX, 0],
        vec![1 << 32, 1 << 32, 0],
        vec![u64::MAX, u64::MAX],
    ] {
        let started = Instant::now();
        let v = array_view("<f8", shape.clone(), "C", vec![]);
        assert!(v.get("values").is_none(), "{shape:?}");
        assert!(started.elapsed() < Duration::from_secs(1), "{shape:?}");
    }
    // Size-1 dimensions cannot multiply the lists beyond twice the elements (+ a spare).
    let bytes = vec![1u8; 100_000];
    let v = array_view("|u1", vec![100_000, 1, 1, 1], "C", bytes.clone());
    assert!(v.get("values").is_none());
    let v = array_view("|u1", vec![100_000, 1], "F", bytes);
    assert_eq!(v["values"][99_999], json!([1]));
}

#[test]
fn wrong_buffer_sizes_have_no_values() {
    for (dtype, shape, len) in [
        ("<c16", vec![2u64], 31usize),
        ("<c16", vec![2], 33),
        ("|S16", vec![3], 47),
        ("<U8", vec![1], 31),
        ("<M8[ns]", vec![2, 2], 24),
        ("|V12", vec![0], 12),
        ("<f8", vec![u64::MAX / 8 + 1], 0),
    ] {
        let v = array_view(dtype, shape.clone(), "C", vec![0; len]);
        assert!(v.get("values").is_none(), "{dtype} {shape:?} {len}");
    }
    // A code point outside Unicode: the array keeps its bytes and has no values.
    let v = array_view("<U1", vec![1], "C", 0x11_0000u32.to_le_bytes().to_vec());
    assert!(v.get("values").is_none());
    assert_eq!(v["base64"], "AAARAA==");
}

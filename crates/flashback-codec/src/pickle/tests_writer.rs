//! `dumps2`: CPython's exact bytes for trees without shared objects, sharing kept as memo
//! references, and what Python reads back.

use super::tests::{fixture, fixture_dir, read};
use super::*;

#[test]
fn golden_protocol_2_pickles_are_written_byte_for_byte() {
    let mut names: Vec<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with("p2_"))
        .collect();
    names.sort();
    assert!(names.len() >= 18, "{names:?}");
    for name in names {
        let bytes = fixture(&name);
        let v = read(&bytes);
        assert_eq!(dumps2(&v).unwrap(), bytes, "{name}");
    }
}

#[test]
fn real_dev_server_files_are_written_back_byte_for_byte() {
    // Shared memo entries (the same str, the same `uuid.UUID` class, the same timezone, the
    // one-character Latin-1 text CPython's bytes share) and objects (NEWOBJ + BUILD: UUIDs,
    // `Item`s, messages; REDUCE: datetimes) included; the InMemorySaver's three files
    // (`.langgraph_checkpoint.N.pckl`: checkpoints, writes, blobs) too.
    for name in [
        "devserver_store.pckl",
        "devserver_retry_counter.pckl",
        "devserver_ops.pckl",
        "memory_saver.1.pckl",
        "memory_saver.2.pckl",
        "memory_saver.3.pckl",
    ] {
        let bytes = fixture(name);
        assert_eq!(dumps2(&read(&bytes)).unwrap(), bytes, "{name}");
    }
}

#[test]
fn shared_nodes_are_written_once() {
    let big = Arc::new(PyValue::Dict(
        (0..100)
            .map(|i| (Arc::new(PyValue::Int(i)), Arc::new(PyValue::Int(i))))
            .collect(),
    ));
    let v = PyValue::List(vec![big.clone(); 10_000]);
    let bytes = dumps2(&v).unwrap();
    assert!(bytes.len() < 40_000, "{}", bytes.len());
    let back = read(&bytes);
    let seq = back.as_seq().unwrap();
    assert!(seq.iter().all(|x| Arc::ptr_eq(x, &seq[0])));
    assert_eq!(*seq[0], *big);
}

#[test]
fn objects_and_edge_values() {
    let obj = PyValue::Object {
        module: "builtins".into(),
        name: "ValueError".into(),
        args: vec![Arc::new(PyValue::Str("bad".into()))],
        state: None,
        list_items: vec![],
        dict_items: vec![],
    };
    let bytes = dumps2(&obj).unwrap();
    // As CPython: `pickle.dumps(ValueError('bad'), 2)`.
    assert_eq!(
        bytes,
        b"\x80\x02cexceptions\nValueError\nq\x00X\x03\x00\x00\x00badq\x01\x85q\x02Rq\x03."
    );
    assert_eq!(read(&bytes), obj);
    // An object with only a state: NEWOBJ + BUILD.
    let state = PyValue::Object {
        module: "uuid".into(),
        name: "UUID".into(),
        args: vec![],
        state: Some(Arc::new(PyValue::Dict(vec![(
            Arc::new(PyValue::Str("int".into())),
            Arc::new(PyValue::BigInt(
                "24197857161011715162171839636988778104".into(),
            )),
        )]))),
        list_items: vec![],
        dict_items: vec![],
    };
    let back = read(&dumps2(&state).unwrap());
    assert_eq!(back, state);
    assert_eq!(
        uuid_string(&back).as_deref(),
        Some("12345678-1234-5678-1234-567812345678")
    );
    assert!(dumps2(&PyValue::Recursive).is_err());
    assert!(dumps2(&PyValue::BigInt("12x".into())).is_err());
    // As deep as the reader reads: written and read back.
    let mut deep = PyValue::None;
    for _ in 0..255 {
        deep = PyValue::List(vec![Arc::new(deep)]);
    }
    assert_eq!(read(&dumps2(&deep).unwrap()), deep);
    // Deeper than the writer goes: an error, not a stack overflow.
    for _ in 0..4000 {
        deep = PyValue::List(vec![Arc::new(deep)]);
    }
    assert!(dumps2(&deep).is_err());
    assert!(matches!(to_value(&deep, 100_000), crate::Value::Array(_)));
    // Dropping it iteratively is the caller's business: unwrap level by level here.
    let mut cur = deep;
    while let PyValue::List(mut v) = cur {
        cur = v.pop().map_or(PyValue::None, |a| {
            Arc::try_unwrap(a).unwrap_or(PyValue::None)
        });
    }
}

//! The reader: every opcode family, pickles CPython wrote (protocols 0–5, cloudpickle), the
//! files of a real `langgraph dev` server, and the view of what they hold.

use super::*;
use crate::value::{ObjectForm, Value};
use std::path::PathBuf;

pub(super) fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pickle")
}

pub(super) fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(fixture_dir().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub(super) fn read(data: &[u8]) -> PyValue {
    loads(data, &Limits::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn s(v: &str) -> Arc<PyValue> {
    Arc::new(PyValue::Str(v.into()))
}

fn i(v: i64) -> Arc<PyValue> {
    Arc::new(PyValue::Int(v))
}

#[test]
fn scalars_of_every_protocol() {
    let v = read(&fixture("p2_scalars.pckl"));
    let items = v.as_seq().expect("a tuple");
    assert!(items[0].is_none());
    assert_eq!(*items[1], PyValue::Bool(true));
    assert_eq!(*items[2], PyValue::Bool(false));
    let ints: Vec<i64> = items[3..17]
        .iter()
        .map(|x| x.as_int().expect("int"))
        .collect();
    assert_eq!(
        ints,
        [
            0,
            1,
            255,
            256,
            65535,
            65536,
            -1,
            -128,
            (1 << 31) - 1,
            -(1 << 31),
            1 << 31,
            -(1 << 31) - 1,
            i64::MAX,
            i64::MIN
        ]
    );
    assert_eq!(*items[17], PyValue::Float(1.5));
    assert!(matches!(*items[18], PyValue::Float(f) if f == 0.0 && f.is_sign_negative()));
    for proto in [0, 1, 5] {
        for name in ["scalars", "nested", "tuples", "strings", "defaultdict"] {
            let other = read(&fixture(&format!("p{proto}_{name}.pckl")));
            assert_eq!(
                other,
                read(&fixture(&format!("p2_{name}.pckl"))),
                "protocol {proto} {name}"
            );
        }
    }
}

#[test]
fn big_ints_are_decimal() {
    let v = read(&fixture("p2_bigints.pckl"));
    let digits: Vec<String> = v
        .as_seq()
        .unwrap()
        .iter()
        .map(|x| match &**x {
            PyValue::BigInt(d) => d.clone(),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        digits,
        [
            "18446744073709551616",
            "-18446744073709551616",
            "1180591620717411303424",
            "-1180591620717411303424",
            "10000000000000000000000000000000000000000",
            "-9999999999999999999999999999999999999993",
            "170141183460469231731687303715884105727",
        ]
    );
    // Text forms (protocol 0): INT beyond i64, LONG with its L.
    assert_eq!(
        read(b"I123456789012345678901234\n."),
        PyValue::BigInt("123456789012345678901234".into())
    );
    assert_eq!(read(b"L-0012L\n."), PyValue::Int(-12));
    assert_eq!(read(b"I01\n."), PyValue::Bool(true));
}

#[test]
fn strings_bytes_and_bytearrays() {
    let v = read(&fixture("p2_strings.pckl"));
    let texts: Vec<&str> = v
        .as_seq()
        .unwrap()
        .iter()
        .map(|x| x.as_str().unwrap())
        .collect();
    assert_eq!(texts, ["héllo", "日本語", "", "a\nb", "🦀"]);
    let v = read(&fixture("p2_bytes.pckl"));
    let b: Vec<&[u8]> = v
        .as_seq()
        .unwrap()
        .iter()
        .map(|x| x.as_bytes().unwrap())
        .collect();
    assert_eq!(b[0], b"");
    assert_eq!(b[1], b"ab");
    assert_eq!(b[2], (0..=255u8).collect::<Vec<_>>());
    let v = read(&fixture("p2_bytearrays.pckl"));
    assert_eq!(*v.as_seq().unwrap()[0], PyValue::ByteArray(b"xyz".to_vec()));
    assert_eq!(*v.as_seq().unwrap()[1], PyValue::ByteArray(vec![]));
    // Protocol 0/1 text strings: STRING (escapes), SHORT_BINSTRING, UNICODE.
    assert_eq!(read(b"S'a\\x41\\n\\'b'\n."), PyValue::Str("aA\n'b".into()));
    assert_eq!(read(b"U\x02\xe9x."), PyValue::Str("éx".into()));
    assert_eq!(
        read(b"Vcaf\\u00e9 \\U0001f980\n."),
        PyValue::Str("café 🦀".into())
    );
    // Protocol 4/5: BINUNICODE8, BINBYTES8, BYTEARRAY8, SHORT_BINBYTES.
    assert_eq!(read(b"\x8d\x01\0\0\0\0\0\0\0z."), PyValue::Str("z".into()));
    assert_eq!(
        read(b"\x8e\x01\0\0\0\0\0\0\0z."),
        PyValue::Bytes(b"z".to_vec())
    );
    assert_eq!(
        read(b"\x96\x01\0\0\0\0\0\0\0z."),
        PyValue::ByteArray(b"z".to_vec())
    );
    assert_eq!(read(b"C\x01z."), PyValue::Bytes(b"z".to_vec()));
    assert_eq!(read(b"B\x01\0\0\0z."), PyValue::Bytes(b"z".to_vec()));
}

#[test]
fn containers_sets_and_defaultdicts() {
    let v = read(&fixture("p2_set.pckl"));
    assert_eq!(v, PyValue::Set(vec![i(1), i(2), i(3)]));
    let v = read(&fixture("p2_frozenset.pckl"));
    assert_eq!(v, PyValue::FrozenSet(vec![i(5)]));
    // protocol 4: EMPTY_SET + ADDITEMS, FROZENSET.
    assert_eq!(
        read(b"\x80\x04\x8f(K\x01K\x02\x90."),
        PyValue::Set(vec![i(1), i(2)])
    );
    assert_eq!(read(b"\x80\x04(K\x01\x91."), PyValue::FrozenSet(vec![i(1)]));
    let v = read(&fixture("p2_defaultdict.pckl"));
    let PyValue::DefaultDict { factory, items } = &v else {
        panic!("{v:?}")
    };
    assert_eq!(factory.class_path().as_deref(), Some("builtins.list"));
    assert_eq!(items.len(), 2);
    assert_eq!(v.as_items().unwrap()[0].0.as_str(), Some("a"));
    let v = read(&fixture("p2_defaultdict_none.pckl"));
    assert!(
        matches!(&v, PyValue::DefaultDict { factory, items } if factory.is_none() && items.is_empty())
    );
    let v = read(&fixture("o2_ordereddict.pckl"));
    assert_eq!(v, PyValue::Dict(vec![(s("z"), i(1)), (s("a"), i(2))]));
    assert_eq!(
        read(&fixture("p2_dict1001.pckl")).as_items().unwrap().len(),
        1001
    );
    assert_eq!(
        read(&fixture("p2_list2001.pckl")).as_seq().unwrap().len(),
        2001
    );
    // Protocol 0: LIST, DICT, TUPLE, POP, POP_MARK, DUP.
    assert_eq!(read(b"(I1\nI2\nl."), PyValue::List(vec![i(1), i(2)]));
    assert_eq!(read(b"(S'a'\nI1\nd."), PyValue::Dict(vec![(s("a"), i(1))]));
    assert_eq!(read(b"(I1\nt."), PyValue::Tuple(vec![i(1)]));
    assert_eq!(read(b"I1\nI2\n0."), PyValue::Int(1));
    assert_eq!(read(b"I1\n(I2\nI3\n1."), PyValue::Int(1));
    assert_eq!(read(b"]2K\x01a."), PyValue::List(vec![i(1)]));
}

#[test]
fn the_remaining_opcodes() {
    // Text PUT/GET (protocol 0): a list holding itself.
    assert_eq!(
        read(b"(lp0\ng0\na."),
        PyValue::List(vec![Arc::new(PyValue::Recursive)])
    );
    // LONG4, BINSTRING, FLOAT, READONLY_BUFFER (a no-op without out-of-band buffers).
    assert_eq!(read(b"\x8b\x01\0\0\0\x05."), PyValue::Int(5));
    assert_eq!(read(b"\x8b\x00\0\0\0."), PyValue::Int(0));
    assert_eq!(read(b"T\x02\0\0\0ab."), PyValue::Str("ab".into()));
    assert_eq!(read(b"F-2.5\n."), PyValue::Float(-2.5));
    assert!(matches!(read(b"Fnan\n."), PyValue::Float(f) if f.is_nan()));
    assert_eq!(read(b"\x80\x05C\x01z\x98."), PyValue::Bytes(b"z".to_vec()));
    // BINPERSID is refused like PERSID.
    let e = loads(b"NQ.", &Limits::default()).unwrap_err().to_string();
    assert_eq!(
        e,
        "pickle: a persistent id (the pickle refers to objects kept outside it; not supported) at byte 1 (BINPERSID)"
    );
    // copyreg._reconstructor (protocols 0–1 objects) and __newobj__ named by their class.
    let v = read(b"ccopy_reg\n_reconstructor\n(cm\nC\nc__builtin__\nobject\nNtR(dS'a'\nI1\nsb.");
    assert_eq!(v.class_path().as_deref(), Some("m.C"));
    assert!(matches!(&v, PyValue::Object { args, state: Some(_), .. } if args.is_empty()));
    let v = read(b"\x80\x02ccopyreg\n__newobj__\ncm\nC\nK\x01\x86R.");
    assert!(matches!(&v, PyValue::Object { name, args, .. } if name == "C" && args.len() == 1));
}

#[test]
fn shared_memo_entries_are_shared() {
    // One dict used as a key's tuple part and as two values: one node, not copies.
    let p = b"\x80\x02}q\x00(K\x01}q\x01X\x01\x00\x00\x00xK\x02sK\x02h\x01K\x03h\x01u.";
    let v = read(p);
    let items = v.as_items().unwrap();
    assert!(Arc::ptr_eq(&items[0].1, &items[1].1));
    assert!(Arc::ptr_eq(&items[1].1, &items[2].1));
    // A dict referenced 10,000 times stays one dict.
    let mut p = b"\x80\x02]q\x00}q\x010(".to_vec();
    p.extend(std::iter::repeat_n(&b"h\x01"[..], 10_000).flatten());
    p.extend(b"e.");
    let v = read(&p);
    let seq = v.as_seq().unwrap();
    assert_eq!(seq.len(), 10_000);
    assert!(seq.iter().all(|x| Arc::ptr_eq(x, &seq[0])));
    // … and its view is budgeted on the expanded tree.
    match to_value(&v, 50) {
        Value::Array(a) => assert!(a.len() <= 51, "{}", a.len()),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_self_referential_list_is_recursive() {
    // l = []; l.append(l)
    let v = read(b"\x80\x02]q\x00h\x00a.");
    assert_eq!(v, PyValue::List(vec![Arc::new(PyValue::Recursive)]));
    assert_eq!(
        to_value(&v, 100),
        Value::Array(vec![Value::Str("<recursive>".into())])
    );
    // d = {}; d['me'] = [d]
    let v = read(b"\x80\x02}q\x00X\x02\x00\x00\x00meq\x01]q\x02h\x00as.");
    let inner = v.as_items().unwrap()[0].1.as_seq().unwrap();
    assert_eq!(*inner[0], PyValue::Recursive);
}

#[test]
fn objects_are_named_never_run() {
    // os.system('echo hi') applied: an opaque object.
    let v = read(b"\x80\x02cos\nsystem\nX\x07\x00\x00\x00echo hi\x85R.");
    assert_eq!(v.class_path().as_deref(), Some("os.system"));
    let PyValue::Object { args, .. } = &v else {
        panic!()
    };
    assert_eq!(args[0].as_str(), Some("echo hi"));
    // STACK_GLOBAL + NEWOBJ_EX + BUILD + SETITEMS + APPENDS on an object.
    let p = b"\x80\x04\x8c\x01m\x8c\x01C\x93)}\x92(K\x01e(K\x02K\x03u}X\x01\x00\x00\x00aK\x04sb.";
    let v = read(p);
    let PyValue::Object {
        module,
        name,
        list_items,
        dict_items,
        state,
        ..
    } = &v
    else {
        panic!("{v:?}")
    };
    assert_eq!((module.as_str(), name.as_str()), ("m", "C"));
    assert_eq!(list_items, &[i(1)]);
    assert_eq!(dict_items, &[(i(2), i(3))]);
    assert_eq!(state.as_ref().unwrap().as_items().unwrap().len(), 1);
    // INST and OBJ (protocols 0 and 1).
    let v = read(b"(I1\nimod\nCls\n.");
    assert_eq!(v.class_path().as_deref(), Some("mod.Cls"));
    let v = read(b"(cmod\nCls\nK\x01o.");
    assert_eq!(v.class_path().as_deref(), Some("mod.Cls"));
    // __builtin__ read as builtins (protocol < 3).
    assert_eq!(
        read(b"\x80\x02c__builtin__\nlong\n.")
            .class_path()
            .as_deref(),
        Some("builtins.int")
    );
    // PERSID, NEXT_BUFFER, EXT1: refused with the reason.
    for (p, what) in [
        (&b"Pid\n."[..], "persistent id"),
        (b"\x80\x05\x97.", "out-of-band"),
        (b"\x82\x01.", "extension"),
    ] {
        let e = loads(p, &Limits::default()).unwrap_err().to_string();
        assert!(e.contains(what), "{e}");
    }
}

#[test]
fn datetimes_uuids_and_their_views() {
    let dt = read(&fixture("o2_datetime_utc.pckl"));
    assert_eq!(
        iso_datetime(&dt).as_deref(),
        Some("2024-05-06T07:08:09.123456+00:00")
    );
    assert_eq!(
        iso_datetime(&read(&fixture("o5_datetime_utc.pckl"))),
        iso_datetime(&dt)
    );
    let tz = read(&fixture("o2_datetime_tz.pckl"));
    assert_eq!(
        iso_datetime(&tz).as_deref(),
        Some("2024-05-06T07:08:09-05:30")
    );
    let naive = read(&fixture("o5_datetime_naive.pckl"));
    assert_eq!(iso_datetime(&naive).as_deref(), Some("1999-12-31T23:59:59"));
    assert_eq!(
        iso_datetime(&read(&fixture("o2_date.pckl"))).as_deref(),
        Some("2024-02-29")
    );
    assert_eq!(
        iso_datetime(&read(&fixture("o5_time.pckl"))).as_deref(),
        Some("13:14:15.000016")
    );
    let u = read(&fixture("o2_uuid.pckl"));
    assert_eq!(
        uuid_string(&u).as_deref(),
        Some("12345678-1234-5678-1234-567812345678")
    );
    assert_eq!(
        uuid_string(&read(&fixture("o5_uuid.pckl"))),
        uuid_string(&u)
    );
    // Views: as jsonplus's msgpack forms.
    let Value::Object(o) = to_value(&dt, 100) else {
        panic!()
    };
    assert_eq!(
        (o.form, o.type_name()),
        (ObjectForm::Method, "datetime.datetime".into())
    );
    assert_eq!(
        o.payload,
        Value::Str("2024-05-06T07:08:09.123456+00:00".into())
    );
    let Value::Object(o) = to_value(&u, 100) else {
        panic!()
    };
    assert_eq!(
        o.payload,
        Value::Str("12345678123456781234567812345678".into())
    );
    let Value::Object(o) = to_value(&read(&fixture("o2_timedelta.pckl")), 100) else {
        panic!()
    };
    assert_eq!(
        (o.form, &o.payload),
        (
            ObjectForm::PosArgs,
            &Value::Array(vec![Value::Int(-1), Value::Int(5), Value::Int(7)])
        )
    );
    let Value::Object(o) = to_value(&read(&fixture("o2_decimal.pckl")), 100) else {
        panic!()
    };
    assert_eq!(
        (o.form, &o.payload),
        (ObjectForm::SingleArg, &Value::Str("1.25".into()))
    );
    let Value::Object(o) = to_value(&read(&fixture("o2_date.pckl")), 100) else {
        panic!()
    };
    assert_eq!(
        o.payload,
        Value::Array(vec![Value::Int(2024), Value::Int(2), Value::Int(29)])
    );
}

#[test]
fn cloudpickle_by_value_classes_and_pydantic_messages() {
    let v = read(&fixture("cp5_main_dataclass.pckl"));
    assert_eq!(v.class_path().as_deref(), Some("__main__.Point"));
    let Value::Object(o) = to_value(&v, 1000) else {
        panic!("{v:?}")
    };
    assert_eq!(o.form, ObjectForm::KwArgs);
    assert_eq!(o.payload.get("x"), Some(&Value::Int(1)));
    assert_eq!(o.payload.get("y"), Some(&Value::Str("y".into())));
    let v = read(&fixture("cp5_main_plain.pckl"));
    assert_eq!(v.class_path().as_deref(), Some("__main__.Plain"));
    let Value::Object(o) = to_value(&v, 1000) else {
        panic!()
    };
    let Some(Value::Array(colors)) = o.payload.get("b") else {
        panic!("{o:?}")
    };
    let Value::Object(red) = &colors[0] else {
        panic!("{colors:?}")
    };
    assert_eq!(
        (red.type_name(), &red.payload),
        ("__main__.Color".into(), &Value::Int(1))
    );
    let v = read(&fixture("cp5_messages.pckl"));
    let Value::Array(msgs) = to_value(&v, 10_000) else {
        panic!()
    };
    let Value::Object(human) = &msgs[0] else {
        panic!()
    };
    assert_eq!(
        human.type_name(),
        "langchain_core.messages.human.HumanMessage"
    );
    assert_eq!(human.form, ObjectForm::PydanticV2);
    assert_eq!(human.extra, Some(Value::Str("model_validate_json".into())));
    assert_eq!(human.payload.get("content"), Some(&Value::Str("hi".into())));
    assert_eq!(human.payload.get("id"), Some(&Value::Str("h1".into())));
    let v = read(&fixture("cp5_state.pckl"));
    assert_eq!(
        iso_datetime(v.get("when").unwrap()).as_deref(),
        Some("2024-01-02T00:00:00+00:00")
    );
    assert_eq!(**v.get("raw").unwrap(), PyValue::Bytes(b"ba".to_vec()));
    let PyValue::Set(ids) = &**v.get("ids").unwrap() else {
        panic!()
    };
    assert_eq!(
        uuid_string(&ids[0]).as_deref(),
        Some("00000000-0000-0000-0000-000000000005")
    );
}

#[test]
fn a_dev_server_files_read() {
    let store = read(&fixture("devserver_store.pckl"));
    let (ns, items) = &store.as_items().unwrap()[0];
    assert_eq!(ns.as_seq().map(|t| t.len()), Some(2));
    let item = &items.as_items().unwrap()[0].1;
    assert_eq!(
        item.class_path().as_deref(),
        Some("langgraph.store.base.Item")
    );
    let Value::Object(o) = to_value(item, 1000) else {
        panic!()
    };
    assert_eq!(o.form, ObjectForm::KwArgs);
    let Some(Value::Object(created)) = o.payload.get("created_at") else {
        panic!("{o:?}")
    };
    assert_eq!(created.form, ObjectForm::Method);
    let counter = read(&fixture("devserver_retry_counter.pckl"));
    for (k, _) in counter.as_items().unwrap() {
        assert!(uuid_string(k).is_some(), "{k:?}");
    }
    let ops = read(&fixture("devserver_ops.pckl"));
    assert!(ops.as_items().is_some());
    let json = crate::view(&to_value(&ops, 1_000_000), crate::ViewOptions::default()).to_string();
    assert!(
        json.contains("langchain_core.messages.human.HumanMessage"),
        "{json:.300}"
    );
}

#[test]
fn a_memory_saver_files_hold_typed_values_the_codec_decodes() {
    // storage: {thread: defaultdict(dict, {ns: {id: ((type, checkpoint), (type, metadata), parent)}})}
    let storage = read(&fixture("memory_saver.1.pckl"));
    let (thread, namespaces) = &storage.as_items().unwrap()[0];
    assert_eq!(thread.as_str(), Some("t1"));
    let PyValue::DefaultDict { factory, items } = &**namespaces else {
        panic!("{namespaces:?}")
    };
    assert_eq!(factory.class_path().as_deref(), Some("builtins.dict"));
    let checkpoints = items[0].1.as_items().unwrap();
    assert!(checkpoints.len() >= 2);
    let mut decoded = 0;
    for (_, row) in checkpoints {
        let row = row.as_seq().unwrap();
        for typed in &row[..2] {
            let pair = typed.as_seq().unwrap();
            let d = crate::decode_typed(pair[0].as_str().unwrap(), pair[1].as_bytes());
            assert!(matches!(d, crate::Decoded::Msgpack(_)), "{d:?}");
            decoded += 1;
        }
    }
    assert_eq!(decoded, checkpoints.len() * 2);
    // writes: {(thread, ns, id): {(task, idx): (task, channel, (type, bytes), path)}}
    let writes = read(&fixture("memory_saver.2.pckl"));
    let (key, by_task) = &writes.as_items().unwrap()[0];
    assert_eq!(key.as_seq().map(|k| k.len()), Some(3));
    let (_, write) = &by_task.as_items().unwrap()[0];
    let typed = write.as_seq().unwrap()[2].as_seq().unwrap();
    let d = crate::decode_typed(typed[0].as_str().unwrap(), typed[1].as_bytes());
    assert!(format!("{d:?}").contains("HumanMessage"));
    // blobs: {(thread, ns, channel, version): (type, bytes)}
    let blobs = read(&fixture("memory_saver.3.pckl"));
    assert!(blobs
        .as_items()
        .unwrap()
        .iter()
        .all(|(k, v)| k.as_seq().map(|k| k.len()) == Some(4)
            && v.as_seq().is_some_and(|t| t.len() == 2)));
}

//! The streamed JSON view (`JsonView`) writes exactly the bytes of the collected one
//! (`serde_json::to_vec(&view_decoded(…))`), key order included: over every value Python wrote
//! in the committed fixture (`tests/fixtures/langgraph.sqlite`), hand-picked corner cases and
//! pseudo-random trees.

use crate::view_cases;

use flashback_codec::{decode_typed, view, view_decoded, Decoded, JsonView, Value, ViewOptions};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

const BOTH: [ViewOptions; 2] = [
    ViewOptions {
        reveal_secrets: false,
    },
    ViewOptions {
        reveal_secrets: true,
    },
];

/// Every stored value of the fixture: each checkpoint document, each of its channel values
/// and each pending write.
fn fixture_values() -> Vec<Decoded> {
    let conn =
        rusqlite::Connection::open_with_flags(FIXTURE, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open fixture");
    let mut out = Vec::new();
    let mut stmt = conn
        .prepare("SELECT type, checkpoint FROM checkpoints ORDER BY thread_id, checkpoint_ns, checkpoint_id")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .unwrap();
    for row in rows {
        let (tag, blob) = row.unwrap();
        let doc = decode_typed(&tag, Some(&blob));
        if let Decoded::Msgpack(doc) = &doc {
            if let Some(Value::Map(values)) = doc.get("channel_values") {
                out.extend(values.iter().map(|(_, v)| Decoded::Msgpack(v.clone())));
            }
        }
        out.push(doc);
    }
    let mut stmt = conn
        .prepare("SELECT type, value FROM writes ORDER BY thread_id, checkpoint_id, task_id, idx")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Option<Vec<u8>>>(1)?))
        })
        .unwrap();
    for row in rows {
        let (tag, blob) = row.unwrap();
        out.push(decode_typed(&tag, blob.as_deref()));
    }
    out
}

fn streamed(d: &Decoded, opts: ViewOptions) -> Vec<u8> {
    let mut out = Vec::new();
    serde_json::to_writer(&mut out, &JsonView::decoded(d, opts)).unwrap();
    out
}

fn assert_same(values: &[Decoded]) {
    for opts in BOTH {
        for d in values {
            let collected = serde_json::to_vec(&view_decoded(d, opts)).unwrap();
            let bytes = streamed(d, opts);
            assert_eq!(
                String::from_utf8_lossy(&bytes),
                String::from_utf8_lossy(&collected),
                "{d:?}"
            );
            if let Decoded::Msgpack(v) = d {
                let tree = serde_json::to_vec(&view(v, opts)).unwrap();
                assert_eq!(tree, bytes);
                let one = serde_json::to_vec(&JsonView::new(v, opts)).unwrap();
                assert_eq!(one, bytes);
            }
        }
    }
}

#[test]
fn fixture_values_stream_to_the_same_bytes() {
    let values = fixture_values();
    assert!(values.len() > 200, "only {} values", values.len());
    assert_same(&values);
}

#[test]
fn corner_cases_stream_to_the_same_bytes() {
    assert_same(&view_cases::corner_cases());
}

#[test]
fn random_trees_stream_to_the_same_bytes() {
    assert_same(&view_cases::random_trees(5000));
}

fn text(d: &Decoded, opts: ViewOptions) -> String {
    String::from_utf8(streamed(d, opts)).unwrap()
}

#[test]
fn the_mapping_in_bytes() {
    let cases = view_cases::corner_cases();
    let [masked, revealed] = BOTH;
    let line = |i: usize| text(&cases[i], masked);
    assert_eq!(
        line(0),
        r#"[{"$type":"builtins.float","$value":"nan"},{"$type":"builtins.float","$value":"inf"},{"$type":"builtins.float","$value":"-inf"},-0.0,1e+300,0.1,1.5,{"$type":"builtins.float","$value":"nan"},-9223372036854775808,18446744073709551615]"#
    );
    // A dict with a repeated key is shown by its items; an object keeps the first place of a
    // repeated field and its last value.
    assert_eq!(
        line(1),
        r#"{"$type":"builtins.dict","$items":[["a",1],["b",null],["a",2]]}"#
    );
    assert_eq!(line(2), r#"{"$type":"m.Model","a":2,"b":null}"#);
    assert_eq!(
        line(5),
        r#"{"$type":"builtins.dict","$items":[["$type","x"],["ok",true]]}"#
    );
    assert_eq!(
        line(6),
        r#"{"$type":"m.Model","$$type":"y","$$$v":1,"plain":null}"#
    );
    assert_eq!(
        line(8),
        r#"{"$type":"m.Model","$kwargs":{"$type":"builtins.dict","$items":[[1,"x"]]}}"#
    );
    assert_eq!(
        line(10),
        r#"{"$type":"pydantic.types.SecretStr","$value":"**********","$secret":true}"#
    );
    assert_eq!(
        text(&cases[10], revealed),
        r#"{"$type":"pydantic.types.SecretStr","$value":"hunter2"}"#
    );
    assert_eq!(line(12), r#"{"$type":"mine.SecretStr","$value":"shown"}"#);
    assert_eq!(
        line(21),
        r#"{"$type":"numpy.ndarray","dtype":"<f8","shape":[2],"order":"C","base64":"AAAAAAAA+D8AAAAAAAD4fw==","values":[1.5,{"$type":"builtins.float","$value":"nan"}]}"#
    );
    let empty = cases
        .iter()
        .position(|d| matches!(d, Decoded::Empty))
        .unwrap();
    assert_eq!(text(&cases[empty], masked), "null");
}

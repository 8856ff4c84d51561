use super::*;
use crate::view::{view, ViewOptions};
use crate::Decoded;
use serde_json::json;
use std::sync::Arc;

/// What is written, parsed back (the values of these tests are plain JSON).
fn to_json(v: &Value) -> Result<Json, NotJson> {
    to_json_text(v).map(|t| serde_json::from_str(&t).expect("written JSON parses"))
}

fn js_ai() -> Json {
    json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "AIMessage"],
           "kwargs": {"id": "ai-1", "content": "",
                      "tool_calls": [{"id": "call_add", "name": "add", "args": {"a": 2}, "type": "tool_call"}],
                      "invalid_tool_calls": [], "additional_kwargs": {}, "response_metadata": {}}})
}

#[test]
fn js_messages_revive_as_python_dumps_them() {
    let v = revive(&json!([js_ai(),
        {"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "ToolMessage"],
         "kwargs": {"id": "t-1", "tool_call_id": "call_add", "name": "add", "content": "5",
                    "additional_kwargs": {}, "response_metadata": {}}}]));
    assert_eq!(
        view(&v, ViewOptions::default()),
        json!([
            {"$type": "langchain_core.messages.ai.AIMessage", "content": "", "additional_kwargs": {},
             "response_metadata": {}, "type": "ai", "name": null, "id": "ai-1",
             "tool_calls": [{"name": "add", "args": {"a": 2}, "id": "call_add", "type": "tool_call"}],
             "invalid_tool_calls": [], "usage_metadata": null},
            {"$type": "langchain_core.messages.tool.ToolMessage", "content": "5", "additional_kwargs": {},
             "response_metadata": {}, "type": "tool", "name": "add", "id": "t-1",
             "tool_call_id": "call_add", "artifact": null, "status": "success"},
        ])
    );
}

#[test]
fn written_back_js_reads_the_same_message() {
    let v = revive(&js_ai());
    let back = to_json(&v).unwrap();
    assert_eq!(
        back["id"],
        json!(["langchain_core", "messages", "AIMessage"])
    );
    let kwargs = back["kwargs"].as_object().unwrap();
    // No Python-only defaults (`type`, `name: null`, `usage_metadata: null`) are added.
    let mut keys: Vec<&str> = kwargs.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "additional_kwargs",
            "content",
            "id",
            "invalid_tool_calls",
            "response_metadata",
            "tool_calls"
        ]
    );
    assert_eq!(kwargs["tool_calls"][0]["id"], "call_add");
    // Reviving what is written gives the same value.
    assert_eq!(revive(&back), v);
}

#[test]
fn legacy_python_envelopes_revive_too() {
    let stored = json!({
        "messages": [{"lc": 1, "type": "constructor", "id": ["langchain", "schema", "messages", "HumanMessage"],
                      "kwargs": {"content": "hi"}}],
        "when": {"lc": 2, "type": "constructor", "id": ["datetime", "datetime"], "method": "fromisoformat",
                 "args": ["2024-01-02T03:04:05"]},
        "doc": {"lc": 1, "type": "constructor", "id": ["langchain_core", "documents", "Document"],
                "kwargs": {"page_content": "x"}},
        "key": {"lc": 1, "type": "secret", "id": ["OPENAI_API_KEY"]},
    });
    let v = revive(&stored);
    assert_eq!(
        view(&v, ViewOptions::default()),
        json!({
            "messages": [{"$type": "langchain_core.messages.human.HumanMessage", "content": "hi",
                          "additional_kwargs": {}, "response_metadata": {}, "type": "human",
                          "name": null, "id": null}],
            "when": {"$type": "datetime.datetime", "$value": "2024-01-02T03:04:05"},
            "doc": {"$type": "langchain_core.documents.Document", "page_content": "x"},
            "key": {"$type": "langchain.secret", "$value": "OPENAI_API_KEY"},
        })
    );
    // An unknown envelope is written back as itself.
    assert_eq!(to_json(v.get("doc").unwrap()).unwrap(), stored["doc"]);
}

#[test]
fn sends_and_interrupts_get_their_types_in_their_channels_only() {
    let packet = json!({"node": "work", "args": {"item": "alpha"}});
    let send = for_channel(TASKS, revive(&packet));
    assert_eq!(
        view(&send, ViewOptions::default()),
        json!({"$type": "langgraph.types.Send", "$args": ["work", {"item": "alpha"}]})
    );
    assert_eq!(to_json(&send).unwrap(), packet);
    // The same shape in a state channel is data.
    assert_eq!(for_channel("items", revive(&packet)), revive(&packet));

    let raised = json!([{"id": "cfa4300b4c0f5618cdd0669d0702c783", "value": {"question": "ok?"}}]);
    let v = for_channel(INTERRUPT, revive(&raised));
    assert_eq!(
        view(&v, ViewOptions::default()),
        json!([{"$type": "langgraph.types.Interrupt", "value": {"question": "ok?"},
                "id": "cfa4300b4c0f5618cdd0669d0702c783"}])
    );
    assert_eq!(to_json(&v).unwrap(), raised);
}

#[test]
fn what_js_cannot_read_is_refused_with_its_path() {
    let point = Value::Object(Arc::new(PyObject {
        form: ObjectForm::KwArgs,
        module: "fixture_types".into(),
        name: "Point".into(),
        payload: Value::Map(vec![]),
        extra: None,
    }));
    let cases = [
        (
            Value::Map(vec![(
                Value::Str("a".into()),
                Value::Array(vec![Value::Int(1), Value::Float(f64::INFINITY)]),
            )]),
            "a[1]",
            "the float inf",
        ),
        (
            Value::Map(vec![(Value::Int(1), Value::Nil)]),
            "the value",
            "a dict with a int key",
        ),
        (
            Value::Array(vec![Value::Float(f64::NAN)]),
            "[0]",
            "the float NaN",
        ),
        (
            Value::Map(vec![(Value::Str("p".into()), point)]),
            "p",
            "a fixture_types.Point object",
        ),
    ];
    for (v, path, what) in cases {
        let e = to_json(&v).unwrap_err();
        assert_eq!((e.path.as_str(), e.what.as_str()), (path, what), "{e}");
        assert!(e.to_string().contains("LangGraph.js"), "{e}");
    }
}

#[test]
fn numbers_strings_and_nesting_round_trip() {
    let doc = json!({"n": 1, "f": 1.5, "big": u64::MAX, "s": "é", "l": [null, true, {"x": []}]});
    assert_eq!(to_json(&revive(&doc)).unwrap(), doc);
}

#[test]
fn js_records_revive_and_are_written_back() {
    let doc = json!({
        "bytes": {"lc": 2, "type": "constructor", "id": ["Uint8Array"], "method": "from", "args": [[1, 255]], "kwargs": {}},
        "tags": {"lc": 2, "type": "constructor", "id": ["Set"], "method": null, "args": [["a", "b"]], "kwargs": {}},
        "index": {"lc": 2, "type": "constructor", "id": ["Map"], "method": null, "args": [[[1, "one"]]], "kwargs": {}},
        "pattern": {"lc": 2, "type": "constructor", "id": ["RegExp"], "method": null, "args": ["a+", "g"], "kwargs": {}},
        "failure": {"lc": 2, "type": "constructor", "id": ["Error"], "method": null, "args": ["boom"], "kwargs": {}},
        "missing": {"lc": 2, "type": "undefined"},
        "delta": {"lc": 2, "type": "delta_snapshot", "value": [1, 2]},
    });
    let v = revive(&doc);
    assert_eq!(
        view(&v, ViewOptions::default()),
        json!({
            "bytes": {"$type": "builtins.bytes", "base64": "Af8="},
            "tags": {"$type": "builtins.set", "$value": ["a", "b"]},
            "index": {"$type": "js.Map", "$value": {"$type": "builtins.dict", "$items": [[1, "one"]]}},
            "pattern": {"$type": "js.RegExp", "$args": ["a+", "g"]},
            "failure": {"$type": "js.Error", "$args": ["boom"]},
            "missing": {"$type": "js.undefined"},
            "delta": {"$type": "langgraph.checkpoint.serde.types._DeltaSnapshot", "$value": [1, 2]},
        })
    );
    assert_eq!(to_json(&v).unwrap(), doc);
    // A Send with a timeout keeps it.
    let packet = json!({"node": "work", "args": 1, "timeout": 5});
    assert_eq!(
        to_json(&for_channel(TASKS, revive(&packet))).unwrap(),
        packet
    );
    // Any other lc:2 constructor is kept as the plain object JS keeps.
    let inert = json!({"lc": 2, "type": "constructor", "id": ["Function"], "method": null, "args": ["x"], "kwargs": {}});
    assert_eq!(to_json(&revive(&inert)).unwrap(), inert);
}

#[test]
fn what_js_reads_and_rust_cannot_hold_is_kept_as_its_text() {
    let deep = format!("{}0{}", "[".repeat(300), "]".repeat(300));
    let text = format!(
        r#"{{"said":"great job \ud83d","big":123456789012345678901234567890,"huge":1e400,"deep":{deep},"ok":[1.5,"😀",-7]}}"#
    );
    let v = revive_text(text.as_bytes()).expect("reads");
    // Written back exactly as stored.
    assert_eq!(to_json_text(&v).unwrap(), text);
    let shown = view(&v, ViewOptions::default());
    assert_eq!(shown["said"], "great job \u{fffd}");
    assert_eq!(
        shown["big"],
        json!({"$type": "json.number", "$value": "123456789012345678901234567890"})
    );
    assert_eq!(
        shown["huge"],
        json!({"$type": "json.number", "$value": "1e400"})
    );
    assert_eq!(shown["ok"], json!([1.5, "😀", -7]));
    // 255 levels under the document, then the rest as one value that says why.
    let mut at = &shown["deep"];
    let mut levels = 0;
    while let Json::Array(items) = at {
        levels += 1;
        at = &items[0];
    }
    assert_eq!(levels, crate::msgpack::MAX_DEPTH - 1);
    let why = at["$error"].as_str().unwrap_or_default();
    assert!(
        why.contains(&format!("deeper than {} levels", crate::msgpack::MAX_DEPTH)),
        "{at}"
    );
    // An edit that leaves them as shown keeps them; the view of a number is read back too.
    let back = crate::unview::from_view(&shown, Some(&v)).expect("unview");
    assert_eq!(to_json_text(&back).unwrap(), text);
    let typed =
        crate::unview::from_view(&json!({"$type": "json.number", "$value": "-1E+400"}), None)
            .unwrap();
    assert_eq!(to_json_text(&typed).unwrap(), "-1E+400");
    assert!(
        crate::unview::from_view(&json!({"$type": "json.number", "$value": "x"}), None).is_err()
    );
    // A key holding a lone surrogate is written back as its token.
    let keyed = r#"{"k\udc00":1,"a":2}"#;
    let v = revive_text(keyed.as_bytes()).unwrap();
    assert_eq!(to_json_text(&v).unwrap(), keyed);
}

#[test]
fn no_depth_overflows_the_stack() {
    for n in [256, 257, 100_000] {
        let text = format!("{}{}", "[".repeat(n), "]".repeat(n));
        let d = crate::decode_typed("json", Some(text.as_bytes()));
        let Decoded::Msgpack(v) = &d else {
            panic!("{n}: {d:?}")
        };
        let _ = view(v, ViewOptions::default());
        assert_eq!(
            to_json_text(v).unwrap(),
            text,
            "{n}: written back unchanged"
        );
        let mut cache = crate::DecodeCache::new();
        assert_eq!(
            crate::decode_typed_cached("json", Some(text.as_bytes()), &mut cache),
            d
        );
    }
}

//! Edited typed values are checked as Python's msgpack hook would revive them: what Python
//! would silently keep as a raw payload (a `str` where a `datetime` was) is refused with the
//! JSON path; everything Python reads back, and every value as the program wrote it, passes.

use flashback_codec::unview::{from_view, from_view_at, UnviewError};
use flashback_codec::{view, ObjectForm, PyObject, Value, ViewOptions};
use serde_json::{json, Value as Json};
use std::sync::Arc;

fn refused(j: Json) -> String {
    match from_view_at(&j, None, "values.x") {
        Err(e @ UnviewError::Invalid { .. }) => {
            assert!(e.path().starts_with("values.x"), "{e}");
            e.to_string()
        }
        other => panic!("{j} should be refused, got {other:?}"),
    }
}

fn accepted(j: Json) {
    if let Err(e) = from_view(&j, None) {
        panic!("{j} should be accepted: {e}");
    }
}

#[test]
fn datetimes_as_fromisoformat_reads_them() {
    for ok in [
        "2024-03-10T12:30:00",
        "2024-03-10 12:30",
        "2024-03-10T12",
        "2024-03-10",
        "20240310T123000",
        "2024-02-29T23:59:59.123456+05:30",
        "2024-03-10T12:30:00.5Z",
        "2024-03-10T12:30:00-08:00",
        "2024-03-10T12:30:00+00:00:30.000001",
    ] {
        accepted(json!({"$type": "datetime.datetime", "$value": ok}));
    }
    for bad in [
        "not a date",
        "",
        "2023-02-29T00:00:00",
        "2024-13-01",
        "2024-03-10T25:00",
        "2024-03-10T12:60",
        "2024-03-10T12:30:00+24:00",
        "2024-3-10",
        "2024-03-10T12:30:00 UTC",
    ] {
        let e = refused(json!({"$type": "datetime.datetime", "$value": bad}));
        assert!(e.contains("datetime"), "{e}");
    }
    let e = refused(json!({"$type": "datetime.datetime", "$value": 17}));
    assert!(
        e.starts_with("values.x: a datetime is an ISO 8601 string"),
        "{e}"
    );
}

#[test]
fn dates_times_timedeltas_and_timezones() {
    accepted(json!({"$type": "datetime.date", "$args": [2024, 2, 29]}));
    refused(json!({"$type": "datetime.date", "$args": [2023, 2, 29]}));
    refused(json!({"$type": "datetime.date", "$args": [2024, 0, 1]}));
    refused(json!({"$type": "datetime.date", "$args": ["2024", 1, 1]}));
    accepted(json!({"$type": "datetime.timedelta", "$args": [-1, 3600, 7]}));
    accepted(json!({"$type": "datetime.timedelta", "$args": [0, 1.5, 0]}));
    refused(json!({"$type": "datetime.timedelta", "$args": ["1 day", 0, 0]}));
    refused(json!({"$type": "datetime.timedelta", "$args": [1_000_000_000, 0, 0]}));
    accepted(
        json!({"$type": "datetime.time", "hour": 9, "minute": 30, "second": 0, "microsecond": 0, "tzinfo": null, "fold": 0}),
    );
    refused(json!({"$type": "datetime.time", "hour": 24, "minute": 0}));
    refused(json!({"$type": "datetime.time", "hour": 9, "tzinfo": "UTC"}));
    let td = |h: i64| json!({"$type": "datetime.timedelta", "$args": [0, h * 3600, 0]});
    accepted(json!({"$type": "datetime.timezone", "$args": [td(-5), "EST"]}));
    refused(json!({"$type": "datetime.timezone", "$args": [td(24)]}));
    refused(json!({"$type": "datetime.timezone", "$args": ["+02:00"]}));
}

#[test]
fn uuids_decimals_collections_and_addresses() {
    for ok in [
        "0123456789abcdef0123456789ABCDEF",
        "01234567-89ab-cdef-0123-456789abcdef",
        "{01234567-89ab-cdef-0123-456789abcdef}",
        "urn:uuid:01234567-89ab-cdef-0123-456789abcdef",
    ] {
        accepted(json!({"$type": "uuid.UUID", "$value": ok}));
    }
    for bad in [
        "",
        "xyz",
        "0123456789abcdef",
        "0123456789abcdef0123456789abcdeg",
    ] {
        refused(json!({"$type": "uuid.UUID", "$value": bad}));
    }
    for ok in [
        "1.50", "-0", "1e-7", "1_000.5", " 3 ", "Infinity", "-inf", "NaN", "sNaN12", ".5", "5.",
    ] {
        accepted(json!({"$type": "decimal.Decimal", "$value": ok}));
    }
    for bad in ["", "1.2.3", "abc", "1e", "_", ".", "1 000"] {
        refused(json!({"$type": "decimal.Decimal", "$value": bad}));
    }
    accepted(json!({"$type": "builtins.set", "$value": [1, 2]}));
    refused(json!({"$type": "builtins.frozenset", "$value": "ab"}));
    accepted(json!({"$type": "ipaddress.IPv4Address", "$value": "10.0.0.1"}));
    accepted(json!({"$type": "ipaddress.IPv6Network", "$value": "2001:db8::/32"}));
    refused(json!({"$type": "ipaddress.IPv4Address", "$value": "10.0.0.256"}));
    refused(json!({"$type": "ipaddress.IPv4Network", "$value": "10.0.0.0/33"}));
}

#[test]
fn messages_keep_the_fields_langchain_validates() {
    let ai = |extra: Json| {
        let mut m = json!({"$type": "langchain_core.messages.ai.AIMessage", "content": "hi", "type": "ai", "id": "m1", "tool_calls": []});
        m.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        m
    };
    accepted(ai(json!({})));
    accepted(ai(json!({"content": [{"type": "text", "text": "hi"}]})));
    accepted(ai(
        json!({"tool_calls": [{"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]}),
    ));
    let e = refused(ai(json!({"content": 5})));
    assert!(
        e.contains("AIMessage.content must be a string or a list"),
        "{e}"
    );
    let e = refused(ai(json!({"type": "human"})));
    assert!(e.contains("AIMessage.type must be \"ai\""), "{e}");
    refused(ai(json!({"tool_calls": [{"name": "add", "args": "a=1"}]})));
    refused(ai(json!({"tool_calls": "add"})));
    refused(ai(json!({"id": 5})));
    accepted(
        json!({"$type": "langchain_core.messages.ai.AIMessageChunk", "content": "", "type": "AIMessageChunk"}),
    );
    refused(
        json!({"$type": "langchain_core.messages.tool.ToolMessage", "content": "4", "type": "tool"}),
    );
    accepted(
        json!({"$type": "langchain_core.messages.tool.ToolMessage", "content": "4", "type": "tool", "tool_call_id": "c1"}),
    );
    accepted(
        json!({"$type": "langchain_core.messages.modifier.RemoveMessage", "id": "m1", "content": "", "type": "remove"}),
    );
}

#[test]
fn errors_carry_the_path_inside_the_value() {
    let j = json!({"log": [1, {"when": {"$type": "datetime.datetime", "$value": "soon"}}]});
    let e = from_view_at(&j, None, "values").unwrap_err();
    assert_eq!(e.path(), "values.log[1].when");
}

#[test]
fn an_enum_member_keeps_its_kind_of_value() {
    // `Color.RED` as Python writes it: ext 0 `[module, name, value]`.
    let red = from_view(&json!({"$type": "app.Color", "$value": "red"}), None).unwrap();
    accepted(json!({"$type": "app.Color", "$value": 1}));
    assert!(from_view(&json!({"$type": "app.Color", "$value": "blue"}), Some(&red)).is_ok());
    let e = from_view(&json!({"$type": "app.Color", "$value": 2}), Some(&red)).unwrap_err();
    assert!(e.to_string().contains("constructed from a str"), "{e}");
    // Unchanged values pass whatever they hold: the program wrote them.
    let odd = Value::Object(Arc::new(PyObject {
        form: ObjectForm::Method,
        module: "datetime".into(),
        name: "datetime".into(),
        payload: Value::Str("soon".into()),
        extra: Some(Value::Str("fromisoformat".into())),
    }));
    let v = view(&odd, ViewOptions::default());
    assert_eq!(from_view(&v, Some(&odd)).unwrap(), odd);
}

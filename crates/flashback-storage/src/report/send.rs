//! Where a `Send` packet goes: one reading for the msgpack and the JSON walks.

use flashback_codec::value::Value;

/// The node a `langgraph.types.Send` goes to (`None`: not a Send).
pub(crate) fn send_target(v: &Value) -> Option<String> {
    match v {
        Value::Object(o) if o.module == "langgraph.types" && o.name == "Send" => match &o.payload {
            Value::Array(args) => args.first().and_then(Value::as_str).map(str::to_owned),
            Value::Map(_) => o
                .payload
                .get("node")
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        },
        _ => None,
    }
}

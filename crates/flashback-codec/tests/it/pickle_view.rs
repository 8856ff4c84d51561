//! A value stored with the `pickle` tag is shown decoded, exactly as the same Python object
//! stored as LangGraph's msgpack; kept as its bytes (a fork writes them back unchanged); a
//! pickle that does not read stays opaque, with the reason.

use flashback_codec::unview::decoded_from_view;
use flashback_codec::{decode_typed, encode_typed, view_decoded, Decoded, JsonView, ViewOptions};
use std::path::PathBuf;

fn fixture(name: &str) -> Vec<u8> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pickle")
        .join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn shown(d: &Decoded) -> serde_json::Value {
    let collected = view_decoded(d, ViewOptions::default()).unwrap();
    let streamed = serde_json::to_vec(&JsonView::decoded(d, ViewOptions::default())).unwrap();
    assert_eq!(
        streamed,
        serde_json::to_vec(&collected).unwrap(),
        "stream = collect"
    );
    collected
}

#[test]
fn a_pickle_is_shown_as_the_same_object_stored_as_msgpack() {
    for name in [
        "cp5_state",
        "cp5_messages",
        "cp5_main_dataclass",
        "cp5_known",
    ] {
        let pickle = decode_typed("pickle", Some(&fixture(&format!("{name}.pckl"))));
        let msgpack = decode_typed("msgpack", Some(&fixture(&format!("{name}.msgpack"))));
        assert!(matches!(pickle, Decoded::Pickle(_)));
        assert!(matches!(msgpack, Decoded::Msgpack(_)), "{msgpack:?}");
        assert_eq!(shown(&pickle), shown(&msgpack), "{name}");
    }
    // Protocol 2 (pickle.dumps) of the same objects: Send, Command, deque, re.Pattern, IPv4,
    // ZoneInfo, Enum, SecretStr, time with tz, OrderedDict, defaultdict…
    let p2 = decode_typed("pickle", Some(&fixture("cp2_known.pckl")));
    let msgpack = decode_typed("msgpack", Some(&fixture("cp5_known.msgpack")));
    assert_eq!(shown(&p2), shown(&msgpack));
}

#[test]
fn a_pickle_keeps_its_bytes_through_the_view() {
    let bytes = fixture("cp5_state.pckl");
    let d = decode_typed("pickle", Some(&bytes));
    let json = shown(&d);
    let back = decoded_from_view(&json, Some(&d), "").unwrap();
    assert_eq!(encode_typed(&back), ("pickle".to_string(), bytes));
}

#[test]
fn a_pickle_that_does_not_read_stays_opaque_with_the_reason() {
    let d = Decoded::Pickle(b"\x80\x04\x95\x05\0\0\0\0\0\0\0\x8c\x02os\x94".to_vec());
    let json = shown(&d);
    assert_eq!(json["$type"], "pickle");
    assert_eq!(json["$opaque"], true);
    assert_eq!(json["reason"], "pickle: truncated at byte 16 (no STOP)");
    assert_eq!(decoded_from_view(&json, Some(&d), "").unwrap(), d);
}

#[test]
fn a_pickled_global_applied_is_shown_not_run() {
    let d = decode_typed(
        "pickle",
        Some(b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00idq\x00\x85R."),
    );
    assert_eq!(
        shown(&d),
        serde_json::json!({"$type": "os.system", "$value": "id"})
    );
}

#[test]
fn a_pickled_secret_is_masked_as_in_msgpack() {
    // pickle.dumps(pydantic.SecretStr('hunter2'), 2)
    let p = b"\x80\x02cpydantic.types\nSecretStr\nq\x00)\x81q\x01}q\x02X\r\x00\x00\x00_secret_valueq\x03X\x07\x00\x00\x00hunter2q\x04sb.";
    let d = decode_typed("pickle", Some(p));
    let json = shown(&d);
    assert_eq!(json["$type"], "pydantic.types.SecretStr");
    assert_eq!(json["$secret"], true);
    assert!(!json.to_string().contains("hunter2"), "{json}");
    let revealed = view_decoded(
        &d,
        ViewOptions {
            reveal_secrets: true,
        },
    )
    .unwrap();
    assert_eq!(revealed["$value"], "hunter2");
}

//! Hostile msgpack: a string whose bytes are not valid UTF-8 damages only itself.
//!
//! Python's msgpack (`raw=False`) refuses the whole document; Flashback decodes the rest and
//! shows that one string in place as an `$error` value that keeps its bytes.

use base64::Engine as _;
use flashback_codec::msgpack::{check, decode, encode, is_invalid_str};
use flashback_codec::{decode_typed, view_decoded, Decoded, Value, ViewOptions};

/// `{"messages": ["hi", <str "a\xffb">], "count": 2}` as Python's ormsgpack would lay it out
/// (had it accepted the bytes).
fn doc_with_bad_string() -> Vec<u8> {
    let mut b = vec![0x82];
    b.extend([0xa8]);
    b.extend(b"messages");
    b.extend([0x92, 0xa2]);
    b.extend(b"hi");
    b.extend([0xa3, b'a', 0xff, b'b']);
    b.extend([0xa5]);
    b.extend(b"count");
    b.push(0x02);
    b
}

#[test]
fn an_invalid_utf8_string_is_an_error_value_in_place() {
    let bytes = doc_with_bad_string();
    let v = decode(&bytes).expect("the document decodes");
    assert_eq!(v.get("count"), Some(&Value::Int(2)), "the rest is intact");
    let Some(Value::Array(items)) = v.get("messages") else {
        panic!("messages: {v:?}");
    };
    assert_eq!(items[0], Value::Str("hi".into()));
    let Value::RawExt(raw) = &items[1] else {
        panic!("the bad string: {:?}", items[1]);
    };
    assert!(is_invalid_str(raw));
    assert_eq!(raw.data, b"a\xffb", "its bytes are kept");

    // The JSON view shows it as an `$error` with the bytes, the rest as usual.
    let view = view_decoded(
        &decode_typed("msgpack", Some(&bytes)),
        ViewOptions::default(),
    )
    .expect("a view");
    assert_eq!(view["count"], 2);
    assert_eq!(view["messages"][0], "hi");
    let bad = &view["messages"][1];
    let message = bad["$error"].as_str().expect("an $error");
    assert!(message.contains("not valid UTF-8"), "{message}");
    assert_eq!(
        bad["raw_base64"],
        base64::engine::general_purpose::STANDARD.encode(b"a\xffb")
    );
    assert!(check(&bytes).is_ok(), "structurally sound");
}

#[test]
fn a_foreign_ext_is_not_mistaken_for_a_bad_string() {
    // ext -128 with two bytes, as some other writer could store it.
    let bytes = [0xd5, 0x80, 0x01, 0x02];
    let Value::RawExt(raw) = decode(&bytes).expect("decodes") else {
        panic!("a raw ext");
    };
    assert!(!is_invalid_str(&raw));
    assert_eq!(encode(&Value::RawExt(raw)), bytes, "and it round-trips");
}

#[test]
fn check_rejects_what_decode_rejects() {
    let good = doc_with_bad_string();
    for bad in [
        &good[..good.len() - 1],         // truncated
        &[0xc1][..],                     // reserved marker
        &[0x81, 0xa1, b'a', 0x01, 0x00], // trailing byte
        &[0x92, 0x01][..],               // array shorter than its header
    ] {
        assert!(decode(bad).is_err(), "{bad:?} does not decode");
        assert!(check(bad).is_err(), "{bad:?} does not check");
    }
    let mut deep = vec![0x91; 300];
    deep.push(0xc0);
    assert!(decode(&deep).is_err() && check(&deep).is_err(), "too deep");
    assert!(matches!(
        decode_typed("msgpack", Some(&good)),
        Decoded::Msgpack(_)
    ));
}

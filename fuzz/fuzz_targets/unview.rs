//! The JSON view back to a typed value (what edit & fork and merge do with user input): any
//! JSON, with and without a template decoded from the same bytes, must give a value or an error
//! with a path, never a panic; what it gives must encode.
#![no_main]

use flashback_codec::unview::{decoded_from_view, from_view};
use flashback_codec::{decode_typed, encode_typed, msgpack, view_decoded, Decoded, ViewOptions};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(json) = serde_json::from_str::<serde_json::Value>(text) else {
        return;
    };
    if let Ok(v) = from_view(&json, None) {
        let bytes = msgpack::encode(&v);
        msgpack::decode(&bytes).expect("an unviewed value encodes to valid msgpack");
    }
    let _ = decoded_from_view(&json, None, "values.x");
    // With a template: the view of the value itself must come back unchanged.
    let template = decode_typed("msgpack", Some(data));
    if let Decoded::Msgpack(_) = template {
        let view = view_decoded(
            &template,
            ViewOptions {
                reveal_secrets: true,
            },
        );
        if let Some(view) = view {
            let back = decoded_from_view(&view, Some(&template), "values.x")
                .expect("a value's own view converts back");
            assert_eq!(encode_typed(&back).1, encode_typed(&template).1);
        }
    }
});

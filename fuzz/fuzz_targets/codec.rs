//! The codec on any stored bytes: the first byte picks a serde tag, the rest is the payload.
//! Decoding, the JSON view, the one-line description and re-encoding must never panic; the
//! streamed JSON view must write the collected view's bytes; and a msgpack value must re-encode
//! to bytes that decode to the same value; the walk for large strings (`msgpack::scan`) stays
//! inside the payload and walks whatever decodes; a `json` value (LangGraph.js) revives the same
//! through a cache, and written back as JS's JSON (`jsvalue::to_json_text`) reads back as a value
//! that is written as the same JSON.
#![no_main]

use flashback_codec::{
    decode_typed, encode_typed, jsvalue, msgpack, view_decoded, Decoded, JsonView, ViewOptions,
};
use libfuzzer_sys::fuzz_target;

const TAGS: &[&str] = &[
    "msgpack",
    "msgpack",
    "msgpack",
    "json",
    "pickle",
    "bytes",
    "bytearray",
    "null",
    "empty",
    "msgpack+aes",
    "weird\u{0}tag",
];

fuzz_target!(|data: &[u8]| {
    let Some((&pick, payload)) = data.split_first() else {
        return;
    };
    let tag = TAGS[pick as usize % TAGS.len()];
    let decoded = decode_typed(tag, Some(payload));
    for opts in [
        ViewOptions::default(),
        ViewOptions {
            reveal_secrets: true,
        },
    ] {
        // The streamed view writes exactly the bytes of the collected one.
        let collected = serde_json::to_vec(&view_decoded(&decoded, opts)).expect("view");
        let streamed = serde_json::to_vec(&JsonView::decoded(&decoded, opts)).expect("stream");
        assert_eq!(collected, streamed, "streamed JSON view differs");
    }
    let line = decoded.to_string();
    assert!(line.len() < 4096, "a description is one short line");
    let (_, bytes) = encode_typed(&decoded);
    if let Decoded::Msgpack(v) = &decoded {
        let again = msgpack::decode(&bytes).expect("re-encoded msgpack decodes");
        // NaN payloads compare unequal; compare the encodings instead.
        assert_eq!(msgpack::encode(&again), bytes, "re-encoding is stable");
        let _ = v;
    }
    if tag == "json" {
        // Reviving through a cache (envelopes shared) gives what reviving alone gives.
        let mut cache = msgpack::DecodeCache::new();
        let cached = flashback_codec::decode_typed_cached(tag, Some(payload), &mut cache);
        match (&cached, &decoded) {
            // The same bytes are refused either way (the messages may word it differently).
            (Decoded::Error { .. }, Decoded::Error { .. }) => {}
            (a, b) => assert_eq!(a, b, "cached revive differs"),
        }
    }
    if let (true, Decoded::Msgpack(v)) = (tag == "json", &decoded) {
        for channel in ["values", jsvalue::TASKS, jsvalue::INTERRUPT] {
            let typed = jsvalue::for_channel(channel, v.clone());
            if let Ok(json) = jsvalue::to_json_text(&typed) {
                let read = jsvalue::revive_text(json.as_bytes()).expect("what is written reads");
                let again = jsvalue::for_channel(channel, read);
                let written = jsvalue::to_json_text(&again).expect("what was written is writable");
                assert_eq!(written, json, "writing JS's JSON is a fixpoint");
            }
        }
    }
    // The budgeted path gives the same answer or a placeholder.
    let mut cache = msgpack::DecodeCache::with_budget(flashback_codec::DecodeBudget {
        max_value_bytes: 64,
        max_request_bytes: 256,
    });
    let _ = flashback_codec::decode_typed_cached(tag, Some(payload), &mut cache);
    // The storage report's walk for large strings: what it finds lies inside the payload, and a
    // document the decoder reads whole is walked to its end.
    let range = payload.as_ptr_range();
    let walked = msgpack::scan::scan_large(payload, 1, &mut |path, found| {
        let r = found.bytes.as_ptr_range();
        assert!(r.start >= range.start && r.end <= range.end, "a slice of the payload");
        let _ = msgpack::scan::path_text(path);
    });
    if msgpack::decode(payload).is_ok() {
        assert!(walked.is_ok(), "a document that decodes is walked: {walked:?}");
    }
});

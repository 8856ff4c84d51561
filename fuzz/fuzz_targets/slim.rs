//! The streaming reader of oversized checkpoint documents (the decode budget): any bytes, any
//! limit; it must stop with an error or a document that decodes as well as the input does.
#![no_main]

use flashback_codec::budget::slim_document;
use flashback_codec::msgpack;
use libfuzzer_sys::fuzz_target;
use std::io::Cursor;

fuzz_target!(|data: &[u8]| {
    let Some((&limit, doc)) = data.split_first() else {
        return;
    };
    let limit = u64::from(limit) * 4;
    if let Ok(slim) = slim_document(Cursor::new(doc), limit) {
        assert!(
            slim.document.len() <= doc.len() + 1,
            "never larger than the input"
        );
        if msgpack::decode(doc).is_ok() {
            msgpack::decode(&slim.document).expect("a valid document stays valid");
        }
        for (_, bytes, _) in &slim.too_large {
            assert!(*bytes > limit);
        }
    }
});

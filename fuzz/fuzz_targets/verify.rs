//! The export verifier on any text: a report (never a panic, never "ok" for text that is not a
//! bundle Flashback wrote), one line per problem.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let report = flashback_engine::export::verify(&text);
    for p in &report.problems {
        assert!(!p.contains('\n'), "one line per problem: {p:?}");
    }
    if report.ok {
        // Only a sealed bundle verifies; it must parse as one.
        let json = if text.trim_start().starts_with('{') {
            Some(&*text)
        } else {
            None
        };
        if let Some(json) = json {
            flashback_engine::export::parse_bundle(json).expect("a verified bundle parses");
        }
    }
});

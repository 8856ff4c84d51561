//! The three-table store's deltas on any bytes: `diff` and `apply` must never panic, and a
//! delta `diff` offers must give back the new value's exact bytes.
#![no_main]

use flashback_codec::delta::{apply, diff, Kind};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // The first two bytes (little-endian) say where the base ends and the new value starts.
    let [lo, hi, rest @ ..] = data else {
        return;
    };
    let at = usize::from(u16::from_le_bytes([*lo, *hi])).min(rest.len());
    let (base, new) = rest.split_at(at);
    if let Some((kind, delta)) = diff(base, new) {
        assert!(delta.len() < new.len(), "a delta is smaller than the value");
        assert_eq!(apply(kind, base, &delta).as_deref(), Ok(new), "{kind:?}");
    }
    for kind in [Kind::Full, Kind::Append, Kind::Merge] {
        let _ = apply(kind, base, new);
    }
});

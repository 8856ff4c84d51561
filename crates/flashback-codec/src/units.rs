//! Sizes as people read them, the same at every door: decimal SI units, one decimal —
//! `999 B`, `1.5 kB`, `21.3 MB`, `4.0 GB`, `1.2 TB` (1 kB = 1,000 bytes, as disks and
//! network tools count). The app's `formatBytes` (ui/src/lib/state/format.ts) follows the same
//! rule; both are checked against `tests/fixtures/byte_units.json`.

const UNITS: [&str; 4] = ["kB", "MB", "GB", "TB"];

/// `n` bytes for people: `812 B`, `3.4 kB`, `21.3 MB`, `1.2 GB`, `7.0 TB`.
pub fn bytes(n: u64) -> String {
    if n < 1_000 {
        return format!("{n} B");
    }
    let mut v = n as f64 / 1e3;
    let mut unit = 0;
    // A value that would print as `1000.0` moves up a unit.
    while (v * 10.0).round() >= 10_000.0 && unit < UNITS.len() - 1 {
        v /= 1e3;
        unit += 1;
    }
    format!("{v:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::bytes;

    #[test]
    fn the_shared_cases() {
        let text = include_str!("../../../tests/fixtures/byte_units.json");
        let cases: Vec<(u64, String)> = serde_json::from_str(text).unwrap();
        assert!(cases.len() > 10);
        for (n, want) in cases {
            assert_eq!(bytes(n), want, "{n}");
        }
    }
}

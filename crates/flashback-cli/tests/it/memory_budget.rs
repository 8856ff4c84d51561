//! Memory stays bounded on a database holding a 200 MB value: `threads`, `state`, `history`
//! and `graph` each stay under 300 MB of resident memory (they used to need 0.6–6.8 GB), the
//! value showing as "too large". The peak is measured by GNU time around each command.

use flashback_testkit::bigvalue;
use std::process::Command;

const LIMIT_KB: i64 = 300 * 1024;

/// Runs `bin args…` under GNU time (`scripts/setup --test` installs it): its output, and its
/// peak resident memory in KB.
fn run_measured(bin: &str, args: &[&str]) -> (std::process::Output, i64) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak-rss-kb %M", bin])
        .args(args)
        .output()
        .expect("/usr/bin/time (Debian package `time`)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let peak = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("peak-rss-kb "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("no peak in {stderr}"));
    (out, peak)
}

#[test]
fn a_200_mb_value_is_read_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("big.sqlite");
    let fixture = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/langgraph.sqlite"
    );
    std::fs::copy(fixture, &db).unwrap();
    // A numpy-like 200 MB buffer in one thread, a 20 MB list of ints in another.
    bigvalue::splice(&db, "forked", "big", bigvalue::BigValue::Bytes(200 << 20)).unwrap();
    bigvalue::splice(
        &db,
        "reducers",
        "numbers",
        bigvalue::BigValue::Ints(4_000_000),
    )
    .unwrap();
    let db = db.to_str().unwrap();
    let bin = env!("CARGO_BIN_EXE_flashback");
    for args in [
        vec!["threads", db, "--json"],
        vec!["state", db, "forked", "--json"],
        vec!["state", db, "reducers", "--json"],
        vec!["history", db, "forked", "--json"],
        vec!["graph", db, "forked", "--json"],
    ] {
        let (out, peak) = run_measured(bin, &args);
        assert!(
            out.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        if args[0] == "state" {
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("\"$too_large\""), "{args:?}");
            assert!(
                text.len() < 1 << 20,
                "{args:?}: {} bytes of JSON",
                text.len()
            );
        }
        assert!(
            peak < LIMIT_KB,
            "{args:?}: peak resident memory {} MB",
            peak / 1024
        );
        eprintln!("{args:?}: peak {} MB", peak / 1024);
    }
}

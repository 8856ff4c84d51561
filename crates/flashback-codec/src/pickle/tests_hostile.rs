//! Hostile pickles: each is one clear error line (or an opaque value), fast, without a big
//! allocation or a stack overflow.

use super::*;
use std::time::{Duration, Instant};

fn error(data: &[u8]) -> String {
    let start = Instant::now();
    let e = loads(data, &Limits::default())
        .expect_err("an error")
        .to_string();
    assert!(start.elapsed() < Duration::from_secs(2), "slow: {e}");
    assert!(e.starts_with("pickle: ") && !e.contains('\n'), "{e}");
    e
}

#[test]
fn truncated_pickles_name_the_byte() {
    assert_eq!(
        error(b"\x80\x02X\x88\x13\x00\x00abcdefghijkl"),
        "pickle: truncated at byte 2 (BINUNICODE wants 5000 bytes, 12 left)"
    );
    assert_eq!(
        error(b"\x80\x02K\x01"),
        "pickle: truncated at byte 4 (no STOP)"
    );
    assert_eq!(error(b""), "pickle: truncated at byte 0 (no STOP)");
    assert!(error(b"\x80\x02cos\nsys").contains("wants a line"));
    let real = std::fs::read(super::tests::fixture_dir().join("p2_nested.pckl")).unwrap();
    for cut in 0..real.len() - 1 {
        error(&real[..cut]);
    }
}

#[test]
fn lying_lengths_do_not_allocate() {
    let mut p = b"\x80\x04\x8e".to_vec();
    p.extend((1u64 << 62).to_le_bytes());
    p.extend(b"abc.");
    assert_eq!(
        error(&p),
        "pickle: truncated at byte 2 (BINBYTES8 wants 4611686018427387904 bytes, 4 left)"
    );
    let mut p = b"\x80\x04\x95".to_vec();
    p.extend(u64::MAX.to_le_bytes());
    assert!(error(&p).contains("FRAME wants"));
    assert!(error(b"\x8b\xff\xff\xff\x7f.").contains("LONG4 wants"));
}

#[test]
fn huge_memo_indexes_do_not_allocate() {
    // LONG_BINPUT 0x40000000 then LONG_BINGET of it: one map entry.
    let v = loads(
        b"\x80\x02K\x07r\x00\x00\x00@0j\x00\x00\x00@.",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(v, PyValue::Int(7));
    let v = loads(
        b"\x80\x02K\x07r\xff\xff\xff\xff0j\xff\xff\xff\xff.",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(v, PyValue::Int(7));
    assert!(error(b"\x80\x02j\x00\x00\x00@.").contains("memo key 1073741824 was never stored"));
    let tight = Limits {
        max_memo: 2,
        ..Limits::default()
    };
    let e = loads(b"K\x01q\x00q\x01q\x02.", &tight)
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than 2 memo entries"), "{e}");
}

#[test]
fn os_system_stays_a_name() {
    let v = loads(
        b"cos\nsystem\n(S'touch /tmp/pwned'\ntR.",
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(v.class_path().as_deref(), Some("os.system"));
    assert!(!std::path::Path::new("/tmp/pwned").exists());
    let shown = crate::view(&to_value(&v, 100), crate::ViewOptions::default());
    assert_eq!(shown["$type"], "os.system");
}

#[test]
fn deep_nesting_fails_cleanly() {
    assert!(error(&[b'('; 100_000]).contains("more than 256 nested MARKs"));
    // EMPTY_LIST × 100k then APPEND × 100k: a 100k-deep list.
    let mut p = vec![b']'; 100_000];
    p.extend(vec![b'a'; 99_999]);
    p.push(b'.');
    assert!(error(&p).contains("nested deeper than 256 levels"));
    // The same depth built so that the reader's running heights go stale (lists filled after
    // they are nested): caught when the tree is built.
    let n = 5000u32;
    let mut p = Vec::new();
    for i in 0..n {
        p.push(b']');
        p.push(b'r');
        p.extend(i.to_le_bytes());
        p.push(b'0');
    }
    for i in 0..n - 1 {
        p.push(b'j');
        p.extend(i.to_le_bytes());
        p.push(b'j');
        p.extend((i + 1).to_le_bytes());
        p.extend(b"a0");
    }
    p.extend(b"j\x00\x00\x00\x00.");
    assert!(error(&p).starts_with("pickle: nested deeper than 256 levels (the value made at byte "));
    // Deep tuples (TUPLE1 chains) too.
    let mut p = b"N".to_vec();
    p.extend(vec![0x85; 100_000]);
    p.push(b'.');
    assert!(error(&p).contains("nested deeper"));
}

#[test]
fn too_many_objects_and_odd_stacks() {
    let tight = Limits {
        max_objects: 100,
        ..Limits::default()
    };
    let mut p = b"(".to_vec();
    p.extend(vec![b'N'; 200]);
    p.extend(b"l.");
    assert!(loads(&p, &tight)
        .unwrap_err()
        .to_string()
        .contains("more than 100 objects"));
    assert!(error(b"a.").contains("stack underflow"));
    assert!(error(b"(a.").contains("stack underflow"));
    assert!(error(b"N(u.").contains("setting items on a None"));
    assert!(error(b"}(Nu.").contains("odd number"));
    assert!(error(b"\x80\x06.").contains("unsupported protocol 6"));
    assert_eq!(error(b"\xff."), "pickle: unknown opcode 0xff at byte 0");
    assert!(error(b"NN\x86)R.").contains("applying a tuple"));
    assert!(error(b"NNR.").contains("arguments that are a None"));
    assert!(error(b"t.").contains("no MARK"));
}

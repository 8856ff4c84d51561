//! The `json` reader: what JS's `JSON.parse` reads, kept as it holds it.

use super::node::text_value;
use super::node::{number, Node};
use super::parse::{is_number, parse};
use crate::value::{JsonTextKind, Value};

fn ok(text: &str) -> Node<'_> {
    parse(text.as_bytes(), 256).unwrap_or_else(|e| panic!("{text:?}: {e}"))
}

#[test]
fn reads_what_serde_json_reads_the_same() {
    for text in [
        r#"{"a":[1,-2.5e3,"\u00e9\n\"",true,false,null],"b":{}}"#,
        " [ ] ",
        r#""\ud83d\ude00 ok""#,
        "0",
        "-0.5E+2",
    ] {
        let node = ok(text);
        let json: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(super::revive_node(&node), super::revive(&json), "{text}");
    }
}

#[test]
fn lone_surrogates_are_kept_with_their_token() {
    let text = r#"["great job \ud83d", "\ude00x", "\ud83d\u0041", "\uD83D\uDE00"]"#;
    let Node::Arr(items) = ok(text) else { panic!() };
    assert_eq!(
        items[0],
        Node::Lone(r#""great job \ud83d""#, "great job \u{fffd}".into())
    );
    assert_eq!(items[1], Node::Lone(r#""\ude00x""#, "\u{fffd}x".into()));
    assert_eq!(
        items[2],
        Node::Lone(r#""\ud83d\u0041""#, "\u{fffd}A".into())
    );
    assert_eq!(items[3], Node::Str("😀".into()));
}

#[test]
fn too_deep_values_are_kept_as_text_and_the_rest_reads() {
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    let text = format!(r#"{{"a":{deep},"b":2}}"#);
    let node = ok(&text);
    assert_eq!(node.get("b"), Some(&Node::Num("2".into())));
    // The document is level 1: 255 more levels are read, the 256th list opens too deep.
    let mut at = node.get("a").unwrap();
    let mut levels = 0;
    while let Node::Arr(items) = at {
        levels += 1;
        at = &items[0];
    }
    assert_eq!(levels, 255);
    let Node::Deep(rest) = at else {
        panic!("{at:?}")
    };
    assert_eq!(rest.len(), 2 * 45 + 1);
    // 100,000 levels: no recursion, and bad syntax deep inside is still an error.
    let huge = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(matches!(ok(&huge), Node::Arr(_)));
    let bad = format!("{}1,{}", "[".repeat(1000), "]".repeat(1000));
    assert!(parse(bad.as_bytes(), 256).is_err());
    let bad = format!("{}{{\"a\" 1}}{}", "[".repeat(1000), "]".repeat(1000));
    assert!(parse(bad.as_bytes(), 256).is_err());
    let unclosed = "[".repeat(100_000);
    assert!(parse(unclosed.as_bytes(), 256).is_err());
}

#[test]
fn repeated_keys_keep_their_first_place_and_last_value() {
    let many: String = (0..40).map(|i| format!(r#""k{i}":{i},"#)).collect();
    let text = format!(r#"{{"a":1,{many}"b":2,"a":3,"k5":"x"}}"#);
    let Node::Obj(o) = ok(&text) else { panic!() };
    assert_eq!(o.members.len(), 42);
    assert_eq!(o.members[0], (Node::Str("a".into()), Node::Num("3".into())));
    assert_eq!(o.get("k5"), Some(&Node::Str("x".into())));
    assert_eq!(o.text, Some(text.as_bytes()));
}

#[test]
fn numbers_keep_what_they_hold() {
    assert_eq!(number("12"), Value::Int(12));
    assert_eq!(number("18446744073709551615"), Value::UInt(u64::MAX));
    assert_eq!(number("-1.5e3"), Value::Float(-1500.0));
    assert_eq!(number("1e-400"), Value::Float(0.0));
    for big in [
        "123456789012345678901234567890",
        "1e400",
        "-1E+400",
        "-9223372036854775809",
    ] {
        assert_eq!(number(big), text_value(JsonTextKind::Number, big), "{big}");
    }
    assert!(is_number("1e400") && is_number("-0.5") && !is_number("01") && !is_number("1 "));
}

#[test]
fn bad_text_is_an_error_not_a_panic() {
    for text in [
        "",
        "[",
        "{",
        "{\"a\"}",
        "{\"a\":}",
        "[1,]",
        "[,1]",
        "{,}",
        "01",
        "1.",
        "1e",
        "-",
        "\"\\x\"",
        "\"\\u12\"",
        "\"a",
        "tru",
        "nul",
        "[1 2]",
        "{\"a\":1 \"b\":2}",
        "{1:2}",
        "\"\u{1}\"",
        "1 2",
        "[]]",
    ] {
        assert!(parse(text.as_bytes(), 256).is_err(), "{text:?}");
        assert!(parse(text.as_bytes(), 0).is_err(), "{text:?} read past");
    }
}

#[test]
fn string_runs_end_where_they_end_at_every_offset() {
    for n in 0..24 {
        let (head, tail) = ("é".repeat(n), "x".repeat(n));
        let text = format!(r#"["{head}\n{tail}", "{tail}\"{head}"]"#);
        let Node::Arr(items) = ok(&text) else {
            panic!()
        };
        assert_eq!(items[0], Node::Str(format!("{head}\n{tail}").into()), "{n}");
        assert_eq!(items[1], Node::Str(format!("{tail}\"{head}").into()), "{n}");
        let control = format!("\"{tail}\u{1f}{head}\"");
        assert!(parse(control.as_bytes(), 256).is_err(), "{n}");
        let mut bad = format!("\"{tail}").into_bytes();
        bad.extend_from_slice(&[0xff, b'"']);
        assert!(parse(&bad, 256).is_err(), "{n}: not UTF-8");
    }
}

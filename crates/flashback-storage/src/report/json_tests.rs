use super::*;
use flashback_codec::msgpack::scan::path_text;

/// `(path, stored text, escaped)` of each string found.
type Found = Vec<(String, String, bool)>;

fn found(data: &str, min: usize) -> (Found, Result<(), String>) {
    let mut out = Vec::new();
    let r = scan_large(data.as_bytes(), min, &mut |path, s| {
        let text = String::from_utf8(s.raw.to_vec()).unwrap();
        out.push((path_text(path), text, s.escaped));
    });
    (out, r)
}

#[test]
fn channel_values_are_the_exact_stored_slices_in_document_order() {
    let doc = br#"{"v":4,"id":"x","channel_values":{"zeta":[1, 2],"a":{"k":"v"},"n":null,"s":"t\"q"},"channel_versions":{"zeta":3,"a":"00000000000000000000000000000002.0.5"}}"#;
    let v = inline_values(doc).unwrap();
    let names: Vec<&str> = v.iter().map(|(c, _)| c.as_str()).collect();
    assert_eq!(names, ["zeta", "a", "n", "s"]);
    let text: Vec<&[u8]> = v.iter().map(|(_, b)| *b).collect();
    assert_eq!(
        text,
        [&b"[1, 2]"[..], br#"{"k":"v"}"#, b"null", br#""t\"q""#]
    );
    for (_, b) in &v {
        let at = b.as_ptr() as usize - doc.as_ptr() as usize;
        assert_eq!(&doc[at..at + b.len()], *b, "a slice of the document");
    }
    assert_eq!(
        versions(doc).unwrap(),
        [
            ("zeta".to_owned(), "3".to_owned()),
            (
                "a".to_owned(),
                "00000000000000000000000000000002.0.5".to_owned()
            )
        ]
    );
    assert!(inline_values(br#"{"v":4}"#).unwrap().is_empty());
}

#[test]
fn malformed_documents_are_errors_not_panics() {
    for bad in [
        &b""[..],
        b"{",
        b"[]",
        br#"{"channel_values":[1]}"#,
        br#"{"channel_values":{"a":1,}}"#,
        b"\xff\xfe",
        br#"{"channel_values":{"a":"\ud800"}"#,
    ] {
        assert!(inline_values(bad).is_err(), "{bad:?}");
    }
}

#[test]
fn the_walk_finds_large_strings_with_msgpack_paths() {
    let big = "x".repeat(20);
    let env = format!(
        r#"{{"messages":[{{"lc":1,"type":"constructor","id":["langchain_core","messages","HumanMessage"],"kwargs":{{"content":"{big}","id":"short"}}}}],"k\"ey":["{big}"],"esc":"{big}\n"}}"#
    );
    let (got, r) = found(&env, 20);
    r.unwrap();
    assert_eq!(
        got,
        [
            ("messages[0].content".to_owned(), big.clone(), false),
            ("k\\\"ey[0]".to_owned(), big.clone(), false),
            ("esc".to_owned(), format!("{big}\\n"), true),
        ]
    );
    // An lc: 2 record is walked through its args.
    let rec = format!(r#"{{"lc":2,"type":"constructor","id":["Set"],"args":[["{big}"]]}}"#);
    assert_eq!(found(&rec, 20).0[0].0, "[0][0]");
    // Not an envelope: kwargs is a key like any other.
    let plain = format!(r#"{{"kwargs":{{"a":"{big}"}}}}"#);
    assert_eq!(found(&plain, 20).0[0].0, "kwargs.a");
    // The whole value.
    let whole = format!(r#""{big}""#);
    assert_eq!(found(&whole, 20).0, [(String::new(), big.clone(), false)]);
    let s = JsonStr {
        raw: br#"a\nb\u00e9\"c"#,
        escaped: true,
    };
    assert_eq!(&*unescaped(&s), "a\nbé\"c".as_bytes());
}

#[test]
fn the_walk_stops_on_malformed_text_without_panicking() {
    let big = "y".repeat(30);
    let (got, r) = found(&format!(r#"["{big}", oops]"#), 10);
    assert_eq!(got.len(), 1, "found before the error");
    assert!(r.is_err());
    for bad in [
        "",
        "[",
        "{\"a\"",
        "{\"a\":}",
        "\"abc",
        "\"abc\\",
        "[1,]x",
        "nul",
        "{1:2}",
        "[1] 2",
        "\"\u{1}\"",
    ] {
        assert!(found(bad, 1).1.is_err(), "{bad:?}");
    }
    let deep = "[".repeat(10_000);
    assert!(found(&deep, 1).1.is_err());
}

#[test]
fn send_packets_are_typed_by_node() {
    assert_eq!(
        send_node(br#"{"node":"work","args":{"item":"alpha","index":0}}"#).as_deref(),
        Some("work")
    );
    assert_eq!(send_node(br#"{"node":"work","args":1,"extra":2}"#), None);
    assert_eq!(send_node(b"[not json"), None);
    let list = br#"[{"node":"a","args":1}, {"node":"b","args":[2]}]"#;
    let items = items(list).unwrap();
    assert_eq!(
        items,
        [
            &br#"{"node":"a","args":1}"#[..],
            br#"{"node":"b","args":[2]}"#
        ]
    );
    let nodes: Vec<Option<String>> = items.iter().map(|i| send_node(i)).collect();
    assert_eq!(nodes, [Some("a".to_owned()), Some("b".to_owned())]);
    assert_eq!(super::items(b"{}"), None);
}

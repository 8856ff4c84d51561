use super::*;
use crate::watch::KeyPath;
use serde_json::json;

fn needle(s: &str) -> Needle {
    Needle::new(s).expect("needle")
}

fn find(values: &Json, q: &str, cap: usize) -> Found {
    let o = values.as_object().expect("object");
    search_values(o.iter().map(|(k, v)| (k.as_str(), v)), &needle(q), cap)
}

fn paths(f: &Found) -> Vec<&str> {
    f.hits.iter().map(|h| h.path.as_str()).collect()
}

fn state() -> Json {
    json!({
        "messages": [
            {"$type": "langchain_core.messages.human.HumanMessage", "content": "What is 2+3?",
             "id": "human-1"},
            {"$type": "langchain_core.messages.ai.AIMessage",
             "content": "The ANSWER is five.\nThank you.", "id": "ai-1",
             "usage_metadata": {"input_tokens": 31}},
        ],
        "customer": {"$type": "fixture_types.Customer", "name": "Ada",
                     "address": {"city": "Lovelace", "zip": null},
                     "api_key": {"$type": "pydantic.types.SecretStr", "$value": "**********",
                                 "$secret": true},
                     "joined": {"$type": "datetime.datetime", "$value": "2021-05-04T03:02:01"}},
        "tags": {"$type": "builtins.set", "$value": ["red", "Purple"]},
        "by_int": {"$type": "builtins.dict", "$items": [[7, "seven"], [null, "none"],
                                                         ["k", "kay"]]},
        "span": {"$type": "datetime.timedelta", "$args": [-1, 3600, 7]},
        "weird": {"$type": "m.Obj", "$$value": "dollar field"},
        "raw": {"$type": "builtins.bytes", "base64": "bG92ZWxhY2U="},
        "sealed": {"$type": "encrypted", "$encrypted": "msgpack+aes", "$locked": true,
                   "size": 10, "sha256": "lovelace"},
        "big": {"$too_large": {"bytes": 99, "reason": "value"}, "$type": "str",
                "$message": "too large: lovelace"},
        "ratio": 0.125,
        "flag": true,
        "my channel": {"x y": ["needle here"]},
    })
}

#[test]
fn values_and_keys_match_in_any_case_with_their_paths() {
    let s = state();
    let f = find(&s, "answer", 5);
    assert_eq!(paths(&f), ["messages[1].content"]);
    // One line: the newline is a space.
    assert_eq!(f.hits[0].snippet, "The ANSWER is five. Thank you.");
    assert!(!f.more);

    assert_eq!(paths(&find(&s, "LOVELACE", 5)), ["customer.address.city"]);
    // A key: the snippet is `key: value`.
    let f = find(&s, "input_tok", 5);
    assert_eq!(paths(&f), ["messages[1].usage_metadata.input_tokens"]);
    assert_eq!(f.hits[0].snippet, "input_tokens: 31");
    let f = find(&s, "addr", 5);
    assert_eq!(f.hits[0].snippet, "address: {…}");
    // Numbers as their text; a channel name is a key.
    assert_eq!(paths(&find(&s, "0.12", 5)), ["ratio"]);
    assert_eq!(paths(&find(&s, "rati", 5)), ["ratio"]);
    // Set items by index, dict keys that are not text by index, a `$$` field by its name.
    assert_eq!(paths(&find(&s, "purple", 5)), ["tags[1]"]);
    assert_eq!(paths(&find(&s, "seven", 5)), ["by_int[7]"]);
    assert_eq!(paths(&find(&s, "kay", 5)), ["by_int.k"]);
    assert_eq!(paths(&find(&s, "dollar", 5)), ["weird.$value"]);
    // A typed value's scalar and its `$args` name the value itself.
    assert_eq!(paths(&find(&s, "2021-05", 5)), ["customer.joined"]);
    assert_eq!(paths(&find(&s, "3600", 5)), ["span"]);
    // Names that are not plain words are quoted.
    assert_eq!(
        paths(&find(&s, "needle", 5)),
        [r#"["my channel"]["x y"][0]"#]
    );
}

#[test]
fn every_path_resolves_to_where_the_match_is() {
    let s = state();
    for q in [
        "answer", "lovelace", "purple", "seven", "kay", "dollar", "needle", "ratio",
    ] {
        for hit in find(&s, q, 5).hits {
            let p = KeyPath::parse(&hit.path).unwrap_or_else(|e| panic!("{q}: {e}"));
            let at = p.resolve(&s[&p.channel]).expect(&hit.path);
            let text = at.to_string().to_lowercase();
            let key = p.steps.last().map_or(p.channel.clone(), |s| match s {
                Segment::Key(k) => k.to_lowercase(),
                Segment::Index(i) => i.to_string(),
            });
            assert!(
                text.contains(q) || key.contains(q),
                "{q} at {}: {at}",
                hit.path
            );
        }
    }
}

#[test]
fn what_the_view_adds_and_what_is_not_readable_is_not_searched() {
    let s = state();
    for q in [
        "langchain_core", // `$type`
        "bG92",           // base64
        "**********",     // a masked secret
        "msgpack+aes",    // a locked value
        "too large",      // a value over the budget
        "true",           // booleans
        "null",
    ] {
        assert_eq!(find(&s, q, 5), Found::default(), "{q}");
    }
    // Only the plain city matches, not the locked value's digest or the placeholder.
    assert_eq!(paths(&find(&s, "lovelace", 5)), ["customer.address.city"]);
}

#[test]
fn matches_are_capped_in_the_order_shown() {
    let v = json!({"items": (0..20).map(|i| format!("item {i}")).collect::<Vec<_>>()});
    let f = find(&v, "ITEM", 5);
    assert_eq!(
        paths(&f),
        ["items", "items[0]", "items[1]", "items[2]", "items[3]"]
    );
    assert!(f.more);
    let f = find(&v, "item 19", 5);
    assert_eq!(paths(&f), ["items[19]"]);
    assert!(!f.more);
}

#[test]
fn snippets_are_one_short_line_around_the_hit() {
    let long = format!("{}needle{}", "a".repeat(500), "b\n".repeat(300));
    let v = json!({"text": long});
    let f = find(&v, "NEEDLE", 5);
    let snip = &f.hits[0].snippet;
    assert!(snip.chars().count() <= SNIPPET_CHARS, "{snip}");
    assert!(snip.starts_with('…') && snip.ends_with('…'), "{snip}");
    assert!(snip.contains("needle") && !snip.contains('\n'), "{snip}");
    // At the start: no leading ellipsis.
    let v = json!({"text": format!("needle{}", "z".repeat(400))});
    let snip = &find(&v, "needle", 5).hits[0].snippet;
    assert!(snip.starts_with("needle") && snip.ends_with('…'));
    assert_eq!(snip.chars().count(), SNIPPET_CHARS - 1);
    // A long key's value is cut too.
    let v = json!({"k": {"needle": "x".repeat(1000)}});
    let snip = &find(&v, "needle", 5).hits[0].snippet;
    assert!(snip.starts_with("needle: \"xxx") && snip.chars().count() <= SNIPPET_CHARS);
}

#[test]
fn unicode_case_folding_keeps_the_hit_in_place() {
    // `İ` lowers to two chars; the snippet still centres on the hit.
    let text = format!("{}İİ Straße ÉCOLE{}", "İ".repeat(200), "x".repeat(200));
    let v = json!({"t": text});
    let snip = &find(&v, "école", 5).hits[0].snippet;
    assert!(snip.contains("ÉCOLE"), "{snip}");
    assert!(snip.chars().count() <= SNIPPET_CHARS);
    assert_eq!(find(&v, "STRASSE", 5), Found::default()); // no full folding, as documented
    assert_eq!(paths(&find(&v, "straße", 5)), ["t"]);
}

#[test]
fn queries_are_checked() {
    assert_eq!(Needle::new("  "), Err(QueryError::Empty));
    assert_eq!(
        Needle::new(&"x".repeat(MAX_QUERY_CHARS + 1)),
        Err(QueryError::TooLong(MAX_QUERY_CHARS + 1))
    );
    // Surrounding whitespace is ignored, inner kept.
    let v = json!({"t": "a b"});
    assert_eq!(paths(&find(&v, "  a b ", 5)), ["t"]);
}

#[test]
fn deep_values_do_not_overflow() {
    let nest = |depth: usize| {
        let mut v = json!("needle");
        for _ in 0..depth {
            v = Json::Array(vec![v]);
        }
        json!({"deep": v})
    };
    // Past the depth limit nothing is found, and nothing breaks.
    assert_eq!(find(&nest(MAX_DEPTH + 50), "needle", 5), Found::default());
    assert_eq!(find(&nest(MAX_DEPTH - 1), "needle", 5).hits.len(), 1);
}

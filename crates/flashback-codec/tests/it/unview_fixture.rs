//! The reverse JSON view over every value Python wrote in the committed fixture
//! (`tests/fixtures/langgraph.sqlite`): every channel value and every pending write goes
//! value → view → `from_view` (original as template) → the same value and the same bytes.

use flashback_codec::unview::{decoded_from_view, from_view};
use flashback_codec::{
    decode_typed, encode_typed, msgpack, view, view_decoded, Decoded, Value, ViewOptions,
};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../tests/fixtures/langgraph.sqlite"
);

const REVEAL: ViewOptions = ViewOptions {
    reveal_secrets: true,
};

/// A pending write: `(where, serde tag, bytes)`.
type Write = (String, String, Vec<u8>);

/// Every `(where, value)` Python stored: channel values (nested in the checkpoint document) and
/// pending writes (one typed value per row).
fn fixture_values() -> (Vec<(String, Value)>, Vec<Write>) {
    let conn =
        rusqlite::Connection::open_with_flags(FIXTURE, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .expect("open fixture");
    let mut channel_values = Vec::new();
    let mut stmt = conn
        .prepare("SELECT thread_id, checkpoint_ns, checkpoint_id, type, checkpoint FROM checkpoints ORDER BY 1, 2, 3")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                format!(
                    "{}/{}/{}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?
                ),
                r.get::<_, String>(3)?,
                r.get::<_, Vec<u8>>(4)?,
            ))
        })
        .unwrap();
    for row in rows {
        let (at, tag, blob) = row.unwrap();
        let Decoded::Msgpack(doc) = decode_typed(&tag, Some(&blob)) else {
            panic!("{at}: checkpoint is not msgpack");
        };
        let Some(Value::Map(values)) = doc.get("channel_values") else {
            panic!("{at}: no channel_values");
        };
        for (k, v) in values {
            channel_values.push((format!("{at} channel {:?}", k.as_str().unwrap()), v.clone()));
        }
    }
    let mut writes = Vec::new();
    let mut stmt = conn
        .prepare("SELECT thread_id, checkpoint_id, task_id, idx, channel, type, value FROM writes ORDER BY 1, 2, 3, 4")
        .unwrap();
    let rows = stmt
        .query_map([], |r| {
            Ok((
                format!(
                    "{}/{} write {}#{} {:?}",
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?
                ),
                r.get::<_, String>(5)?,
                r.get::<_, Option<Vec<u8>>>(6)?.unwrap_or_default(),
            ))
        })
        .unwrap();
    for row in rows {
        writes.push(row.unwrap());
    }
    (channel_values, writes)
}

/// `a == b`, treating NaN as equal to itself (bit for bit).
fn same(a: &Value, b: &Value) -> bool {
    a == b || msgpack::encode(a) == msgpack::encode(b)
}

#[test]
fn every_fixture_value_round_trips_through_the_view() {
    let (channel_values, writes) = fixture_values();
    assert!(
        channel_values.len() > 1000,
        "fixture has channel values: {}",
        channel_values.len()
    );
    assert!(writes.len() > 1000, "fixture has writes: {}", writes.len());

    let mut inferred_ok = 0;
    let mut inferred_differ = Vec::new();
    for (at, v) in &channel_values {
        let bytes = msgpack::encode(v);
        let shown = view(v, REVEAL);
        let back = from_view(&shown, Some(v)).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(same(&back, v), "{at}: {back:?} != {v:?}");
        assert_eq!(msgpack::encode(&back), bytes, "{at}: bytes");
        // Masked secrets come back from the template.
        let masked = view(v, ViewOptions::default());
        let back = from_view(&masked, Some(v)).unwrap_or_else(|e| panic!("{at} (masked): {e}"));
        assert_eq!(msgpack::encode(&back), bytes, "{at}: bytes (masked view)");
        // Without a template the encoding is inferred; count where that differs.
        match from_view(&shown, None) {
            Ok(b) if msgpack::encode(&b) == bytes => inferred_ok += 1,
            _ => inferred_differ.push(at.clone()),
        }
    }
    for (at, tag, raw) in &writes {
        let d = decode_typed(tag, Some(raw));
        assert!(!matches!(d, Decoded::Error { .. }), "{at}: decodes");
        let shown = view_decoded(&d, REVEAL).expect("not empty");
        let back = decoded_from_view(&shown, Some(&d), "").unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(
            encode_typed(&back),
            (tag.clone(), raw.clone()),
            "{at}: tag and bytes"
        );
        if let Decoded::Msgpack(v) = &d {
            let back = from_view(&shown, Some(v)).unwrap_or_else(|e| panic!("{at}: {e}"));
            assert!(same(&back, v), "{at}: {back:?} != {v:?}");
        }
    }
    eprintln!(
        "{} channel values and {} writes round-trip; without a template {inferred_ok} values re-encode identically, {} differ",
        channel_values.len(),
        writes.len(),
        inferred_differ.len()
    );
    for at in inferred_differ.iter().take(20) {
        eprintln!("  inferred form differs: {at}");
    }
}

#[test]
fn messages_round_trip_without_a_template() {
    // Messages are the values users edit most: they must come back as ext 5 even from a view
    // typed by hand.
    let (channel_values, _) = fixture_values();
    let mut n = 0;
    for (at, v) in &channel_values {
        if !at.ends_with("channel \"messages\"") {
            continue;
        }
        let shown = view(v, REVEAL);
        let back = from_view(&shown, None).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert_eq!(msgpack::encode(&back), msgpack::encode(v), "{at}");
        n += 1;
    }
    assert!(n >= 5, "messages values checked: {n}");
}

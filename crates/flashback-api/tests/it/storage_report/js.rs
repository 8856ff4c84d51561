//! The storage report on LangGraph.js databases (`tests/js-fixtures`), where every value is
//! stored with the `json` serde: the SQLite checkpoint documents are measured inside (each
//! channel value's bytes as stored in the JSON text), the JSON values are walked for repeats,
//! base64 files and `{"node", "args"}` Send packets — every figure cross-checked here against
//! the rows, split with serde_json and found in the stored bytes byte for byte. Postgres (the
//! JS dump) gives the same figures where its layout stores the same bytes.

use crate::common;
use common::space::report;
use common::*;
use flashback_api::storage_report::*;
use flashback_api::Initial;
use rusqlite::Connection;
use serde_json::{json, Value as Json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

fn js_fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/js-fixtures")
        .join(name)
}

/// One channel value inside a checkpoint document.
struct Inline {
    thread: String,
    id: String,
    channel: String,
    bytes: Vec<u8>,
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn occurrences(values: &[Vec<u8>], needle: &[u8]) -> u64 {
    values
        .iter()
        .map(|v| v.windows(needle.len()).filter(|w| *w == needle).count() as u64)
        .sum()
}

/// Every channel value of every checkpoint document, split with serde_json (compact, in
/// document order) and checked to be the document's own bytes.
fn inline_rows(c: &Connection) -> Vec<Inline> {
    let mut stmt = c
        .prepare("SELECT thread_id, checkpoint_id, type, checkpoint FROM checkpoints")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, Vec<u8>>(3)?,
            ))
        })
        .expect("query");
    let mut out = Vec::new();
    for row in rows {
        let (thread, id, tag, doc) = row.expect("row");
        assert_eq!(tag, "json");
        let Ok(parsed) = serde_json::from_slice::<Json>(&doc) else {
            continue;
        };
        for (channel, value) in parsed["channel_values"].as_object().expect("values") {
            let text = serde_json::to_vec(value).expect("json");
            let mut entry = serde_json::to_vec(channel).expect("key");
            entry.push(b':');
            entry.extend_from_slice(&text);
            assert!(find(&doc, &entry).is_some(), "{channel} in {id}: as stored");
            out.push(Inline {
                thread: thread.clone(),
                id: id.clone(),
                channel: channel.clone(),
                bytes: text,
            });
        }
    }
    out
}

/// `(thread, channel, value)` of every write.
fn write_rows(c: &Connection) -> Vec<(String, String, Vec<u8>)> {
    let mut stmt = c
        .prepare("SELECT thread_id, channel, value FROM writes")
        .expect("prepare");
    let rows = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .expect("query");
    rows.map(|r| r.expect("row")).collect()
}

fn tally<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Tally {
    values.into_iter().fold(Tally::default(), |t, v| Tally {
        count: t.count + 1,
        bytes: t.bytes + v.len() as u64,
    })
}

/// Whole values of 1 kB (1,000 bytes) or more stored more than once, summed as the report sums them.
fn repeated_values<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> RepeatTotals {
    let mut count: HashMap<&[u8], u64> = HashMap::new();
    for v in values.into_iter().filter(|v| v.len() >= 1_000) {
        *count.entry(v).or_default() += 1;
    }
    let mut t = RepeatTotals::default();
    for (v, n) in count.into_iter().filter(|(_, n)| *n > 1) {
        t.payloads += 1;
        t.copies += n;
        t.stored_bytes += n * v.len() as u64;
        t.saved_bytes += (n - 1) * v.len() as u64;
    }
    t
}

/// The items of a JSON array of Send packets, as stored (compact).
fn send_items(value: &[u8]) -> Vec<Vec<u8>> {
    let list: Vec<Json> = serde_json::from_slice(value).expect("a list");
    list.iter()
        .map(|s| {
            assert!(s["node"].is_string() && s.get("args").is_some(), "{s}");
            serde_json::to_vec(s).expect("json")
        })
        .collect()
}

fn inline_by_channel(r: &StorageReport) -> BTreeMap<String, Tally> {
    r.by_channel
        .iter()
        .filter(|c| c.inline.count > 0)
        .map(|c| (c.channel.clone(), c.inline))
        .collect()
}

#[tokio::test]
async fn the_js_sqlite_fixture_is_measured_inside_its_json_documents() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("langgraphjs.sqlite");
    std::fs::copy(js_fixture("langgraphjs.sqlite"), &path).expect("copy");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    let r = report(&api, &db.db, None, 1000).await;
    assert_eq!(r.layout, "langgraph-sqlite");
    assert_eq!(
        r.unmeasured,
        Unmeasured::default(),
        "every document measured"
    );
    assert_eq!(r.totals.checkpoints.count, 38);

    let c = Connection::open(&path).expect("sqlite");
    let inline = inline_rows(&c);
    let writes = write_rows(&c);
    assert_eq!(inline.len(), 144, "the fixture's channel values");

    // Per channel: the exact bytes of each value inside the documents.
    let mut expected: BTreeMap<String, Tally> = BTreeMap::new();
    for v in &inline {
        let t = expected.entry(v.channel.clone()).or_default();
        t.count += 1;
        t.bytes += v.bytes.len() as u64;
    }
    assert_eq!(inline_by_channel(&r), expected);
    let messages: Vec<&Inline> = inline
        .iter()
        .filter(|v| v.thread == "chat-tools" && v.channel == "messages")
        .collect();
    assert_eq!(messages.len(), 8);
    let lengths: Vec<u64> = messages.iter().map(|v| v.bytes.len() as u64).collect();
    assert_eq!(expected["messages"].bytes, lengths.iter().sum::<u64>());

    // The thread's report: each checkpoint's size, the messages stored whole every time.
    let one = report(&api, &db.db, Some("chat-tools"), 1000).await;
    assert_eq!(one.unmeasured.count, 0);
    assert_eq!(one.growth.len(), 8);
    let mut by_id: Vec<&Inline> = messages.clone();
    by_id.sort_by(|a, b| a.id.cmp(&b.id));
    let largest: Vec<(String, u64)> = one
        .largest_values
        .iter()
        .filter(|v| v.kind == ValueKind::Inline && v.channel == "messages")
        .map(|v| (v.checkpoint_id.clone().expect("id"), v.bytes))
        .collect();
    assert_eq!(largest.len(), 8);
    for (id, bytes) in &largest {
        let v = by_id.iter().find(|v| &v.id == id).expect("a checkpoint");
        assert_eq!(*bytes, v.bytes.len() as u64, "{id}");
    }
    assert_eq!(
        one.by_channel
            .iter()
            .find(|c| c.channel == "messages")
            .expect("messages")
            .inline,
        tally(messages.iter().map(|v| v.bytes.as_slice()))
    );
    let q = one
        .quadratic
        .iter()
        .find(|q| q.channel == "messages")
        .expect("the growing messages are flagged");
    assert_eq!(
        (q.stores, q.last_bytes),
        (8, *lengths.iter().max().unwrap())
    );

    // Repeats: the message list stored again unchanged in a later checkpoint.
    let values: Vec<&[u8]> = inline
        .iter()
        .map(|v| v.bytes.as_slice())
        .chain(writes.iter().map(|w| w.2.as_slice()))
        .collect();
    let repeats = repeated_values(values.iter().copied());
    assert!(repeats.payloads >= 1, "{repeats:?}");
    assert_eq!(r.duplicates.values, repeats);
    let top = &r.duplicates.largest[0];
    assert_eq!(
        (
            top.payload,
            top.place.kind,
            top.place.thread_id.as_str(),
            top.place.channel.as_str()
        ),
        (
            PayloadKind::Value,
            ValueKind::Inline,
            "chat-tools",
            "messages"
        )
    );
    assert!(top.copies >= 2);
    assert_eq!(
        r.duplicates.strings,
        RepeatTotals::default(),
        "no long strings"
    );
    assert!(!r.duplicates.approximate);
    assert_eq!(r.embedded_files.total, Tally::default());

    // Sends: three `{"node": "work", "args": …}` writes, and the checkpoint value holding them.
    let task_writes: Vec<&[u8]> = writes
        .iter()
        .filter(|w| w.1 == "__pregel_tasks")
        .map(|w| w.2.as_slice())
        .collect();
    assert_eq!(task_writes.len(), 3);
    assert_eq!(r.sends.writes, tally(task_writes.iter().copied()));
    let stored: Vec<&Inline> = inline
        .iter()
        .filter(|v| v.channel == "__pregel_tasks")
        .collect();
    assert_eq!(
        r.sends.stored,
        tally(stored.iter().map(|v| v.bytes.as_slice()))
    );
    let items: Vec<Vec<u8>> = stored.iter().flat_map(|v| send_items(&v.bytes)).collect();
    assert_eq!(items.len(), 3);
    assert!(items.iter().all(|i| task_writes.contains(&i.as_slice())));
    assert_eq!(
        r.sends.by_node,
        vec![SendTarget {
            node: "work".into(),
            writes: r.sends.writes,
            stored: tally(items.iter().map(Vec::as_slice)),
        }]
    );
    assert_eq!(r.sends.largest.len(), 3);
    assert!(r
        .sends
        .largest
        .iter()
        .all(|v| v.thread_id == "send-fanout" && v.task_path.as_deref() == Some("")));
}

/// Standard base64 (the test's own).
fn b64(bytes: &[u8]) -> String {
    const A: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for c in bytes.chunks(3) {
        let n = c
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, &b)| n | (b as u32) << (16 - 8 * i));
        for i in 0..4 {
            if i <= c.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn message(id: &str, content: Json) -> Json {
    json!({"lc": 1, "type": "constructor", "id": ["langchain_core", "messages", "HumanMessage"],
           "kwargs": {"id": id, "content": content, "additional_kwargs": {}, "response_metadata": {}}})
}

#[tokio::test]
async fn json_strings_files_and_damaged_documents_are_found_as_in_msgpack() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("langgraphjs.sqlite");
    std::fs::copy(js_fixture("langgraphjs.sqlite"), &path).expect("copy");
    // A JS-shaped thread: an image sent as a data URL and a long text with escapes, stored in
    // two checkpoints and one write; and a damaged document.
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend((0..3000).map(|i| (i * 7 % 251) as u8));
    let url = format!("data:image/png;base64,{}", b64(&png));
    let text = "Line \"one\"\n".repeat(150);
    let first = message(
        "h-1",
        json!([{"type": "text", "text": text},
                                       {"type": "image_url", "image_url": {"url": url}}]),
    );
    let c = Connection::open(&path).expect("sqlite");
    let doc = |id: &str, msgs: Json| {
        serde_json::to_vec(&json!({"v": 4, "id": id, "ts": "2026-01-01T00:00:00.000Z",
            "channel_values": {"messages": msgs, "__pregel_tasks": []},
            "channel_versions": {"messages": 2}, "versions_seen": {}}))
        .expect("json")
    };
    let docs = [
        ("1f0-a", doc("1f0-a", json!([first]))),
        (
            "1f0-b",
            doc("1f0-b", json!([first, message("h-2", json!("ok"))])),
        ),
        (
            "1f0-c",
            b"{\"v\":4,\"channel_values\":{\"messages\":[".to_vec(),
        ),
    ];
    for (id, d) in &docs {
        c.execute(
            "INSERT INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, \
             parent_checkpoint_id, type, checkpoint, metadata) \
             VALUES ('vision-js', '', ?1, NULL, 'json', ?2, ?3)",
            rusqlite::params![
                id,
                d,
                br#"{"source":"loop","step":1,"parents":{}}"#.to_vec()
            ],
        )
        .expect("insert");
    }
    let write = serde_json::to_vec(&json!([first])).expect("json");
    c.execute(
        "INSERT INTO writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, \
         type, value) VALUES ('vision-js', '', '1f0-a', 't', 0, 'messages', 'json', ?1)",
        [&write],
    )
    .expect("insert");
    drop(c);

    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    let r = report(&api, &db.db, Some("vision-js"), 1000).await;
    // The damaged document is noted, alone; its bytes are still counted.
    assert_eq!(r.unmeasured.count, 1, "{:?}", r.unmeasured);
    assert!(r.unmeasured.examples[0].starts_with("vision-js//1f0-c: "));
    assert_eq!(r.growth.len(), 3);
    assert_eq!(r.growth[2].document_bytes, docs[2].1.len() as u64);

    // Every stored value: the inline values of the two good documents, and the write.
    let c = Connection::open(&path).expect("sqlite");
    let values: Vec<Vec<u8>> = inline_rows(&c)
        .into_iter()
        .filter(|v| v.thread == "vision-js")
        .map(|v| v.bytes)
        .chain(std::iter::once(write.clone()))
        .collect();
    assert_eq!(values.len(), 5);

    // The image: three copies of its data URL, at the message's content path (the envelope's
    // kwargs is walked through, as a Python object's arguments).
    assert_eq!(occurrences(&values, url.as_bytes()), 3);
    assert_eq!(
        r.embedded_files.by_type,
        vec![EmbeddedType {
            media_type: "image/png".into(),
            count: 3,
            bytes: 3 * url.len() as u64,
        }]
    );
    let file = &r.embedded_files.largest[0];
    assert_eq!(
        (file.copies, file.bytes, file.decoded_bytes, file.data_url),
        (3, url.len() as u64, png.len() as u64, true)
    );
    assert_eq!(
        (file.place.channel.as_str(), file.place.path.as_str()),
        ("messages", "[0].content[1].image_url.url")
    );

    // The long text: counted as stored (its escapes included), previewed as it reads.
    let stored = serde_json::to_string(&text).expect("json");
    let stored = &stored[1..stored.len() - 1];
    assert!(stored.len() > text.len());
    let s = r
        .duplicates
        .largest
        .iter()
        .find(|d| d.payload == PayloadKind::String && d.preview.starts_with("Line \"one\"\nLine"))
        .expect("the repeated text");
    assert_eq!((s.bytes, s.copies), (stored.len() as u64, 3));
    assert_eq!(occurrences(&values, stored.as_bytes()), 3);
    assert_eq!(s.place.path, "[0].content[0].text");
    let urls = r
        .duplicates
        .largest
        .iter()
        .find(|d| d.payload == PayloadKind::String && d.preview.starts_with("data:image/png"))
        .expect("the repeated URL");
    assert_eq!((urls.bytes, urls.copies), (url.len() as u64, 3));
    assert_eq!(r.duplicates.strings.payloads, 2);
    // The first message list is stored whole twice (the first checkpoint, the write).
    let refs: Vec<&[u8]> = values.iter().map(Vec::as_slice).collect();
    assert_eq!(r.duplicates.values, repeated_values(refs));
    assert_eq!(r.duplicates.values.copies, 2);
    // No Sends: the empty task lists hold no packets.
    assert_eq!(r.sends.stored.count, 2);
    assert!(r.sends.by_node.is_empty());
}

#[tokio::test]
async fn the_js_postgres_dump_gives_the_same_figures_where_it_stores_the_same_bytes() {
    use sqlx::Row as _;
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(js_fixture("langgraphjs-postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    let r = report(&api, &db.db, None, 1000).await;
    assert_eq!(r.layout, "langgraph-postgres");
    assert_eq!(r.unmeasured, Unmeasured::default());
    assert_eq!(r.totals.checkpoints.count, 36);
    assert!(
        inline_by_channel(&r).is_empty(),
        "JS keeps no value in the JSONB"
    );
    assert_eq!(r.orphans.blobs, Tally::default());

    let pool = pg.pool().await.expect("pool");
    let rows = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query(sql)
                .fetch_all(&pool)
                .await
                .expect(sql)
                .iter()
                .map(|r| {
                    let (t, c): (String, String) = (r.get(0), r.get(1));
                    (t, c, r.get::<Option<Vec<u8>>, _>(2))
                })
                .filter_map(|(t, c, v)| Some((t, c, v?)))
                .collect::<Vec<_>>()
        }
    };
    let blobs = rows("SELECT thread_id, channel, blob FROM checkpoint_blobs").await;
    let writes = rows("SELECT thread_id, channel, blob FROM checkpoint_writes").await;

    // Sends: the same three writes as SQLite, byte for byte, and the stored list's packets.
    let sq = tempfile::tempdir().expect("tempdir");
    let path = sq.path().join("langgraphjs.sqlite");
    std::fs::copy(js_fixture("langgraphjs.sqlite"), &path).expect("copy");
    let c = Connection::open(&path).expect("sqlite");
    let sqlite_tasks: BTreeSet<Vec<u8>> = write_rows(&c)
        .into_iter()
        .filter(|w| w.1 == "__pregel_tasks")
        .map(|w| w.2)
        .collect();
    let task_writes: Vec<&[u8]> = writes
        .iter()
        .filter(|w| w.1 == "__pregel_tasks")
        .map(|w| w.2.as_slice())
        .collect();
    assert_eq!(
        task_writes
            .iter()
            .map(|w| w.to_vec())
            .collect::<BTreeSet<_>>(),
        sqlite_tasks
    );
    assert_eq!(r.sends.writes, tally(task_writes.iter().copied()));
    let task_blobs: Vec<&[u8]> = blobs
        .iter()
        .filter(|b| b.1 == "__pregel_tasks")
        .map(|b| b.2.as_slice())
        .collect();
    assert_eq!(r.sends.stored, tally(task_blobs.iter().copied()));
    let items: Vec<Vec<u8>> = task_blobs.iter().flat_map(|b| send_items(b)).collect();
    assert_eq!(items.len(), 3);
    assert_eq!(
        r.sends.by_node,
        vec![SendTarget {
            node: "work".into(),
            writes: r.sends.writes,
            stored: tally(items.iter().map(Vec::as_slice)),
        }]
    );

    // The messages of chat-tools: each distinct list SQLite stores inline is one blob here
    // (but the default `[]`, which SQLite writes before the channel has a version).
    let sqlite_lists: BTreeSet<Vec<u8>> = inline_rows(&c)
        .into_iter()
        .filter(|v| v.thread == "chat-tools" && v.channel == "messages" && v.bytes != b"[]")
        .map(|v| v.bytes)
        .collect();
    let pg_lists: BTreeSet<Vec<u8>> = blobs
        .iter()
        .filter(|b| b.0 == "chat-tools" && b.1 == "messages")
        .map(|b| b.2.clone())
        .collect();
    let text = |set: &BTreeSet<Vec<u8>>| -> Vec<String> {
        set.iter()
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .collect()
    };
    assert_eq!(text(&pg_lists), text(&sqlite_lists));
    let one = report(&api, &db.db, Some("chat-tools"), 1000).await;
    let blob_sizes: BTreeSet<u64> = one
        .largest_values
        .iter()
        .filter(|v| v.kind == ValueKind::Blob && v.channel == "messages")
        .map(|v| v.bytes)
        .collect();
    assert_eq!(
        blob_sizes,
        pg_lists
            .iter()
            .map(|l| l.len() as u64)
            .collect::<BTreeSet<_>>()
    );

    // Repeats: exactly what grouping the blob and write values by their bytes gives.
    let values: Vec<&[u8]> = blobs
        .iter()
        .chain(writes.iter())
        .map(|v| v.2.as_slice())
        .collect();
    assert_eq!(r.duplicates.values, repeated_values(values));
    assert_eq!(r.duplicates.strings, RepeatTotals::default());
    assert_eq!(r.embedded_files.total, Tally::default());
}

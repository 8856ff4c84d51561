//! The storage report's payload figures — repeated payloads, files stored as base64, Send
//! packets — on the real-library fixture `tests/fixtures/storage.sqlite` (and its Postgres dump
//! `storage-postgres.sql`): a chat carrying a base64 PNG data URL and a base64 PDF, a second
//! chat with the same system prompt and image, and a Send fan-out with 20 kB payloads. Every
//! figure is cross-checked against the rows read with SQL and counted here byte by byte (the
//! values split out of the documents by the test's own msgpack walk, not the codec's).

use crate::common;
use common::space::{inline_values, report};
use common::*;
use flashback_api::storage_report::*;
use flashback_api::Initial;
use rusqlite::Connection;
use std::collections::HashMap;

const PNG_URL: &[u8] = b"data:image/png;base64,";
/// `%PDF-` in base64.
const PDF_B64: &[u8] = b"JVBERi0";

/// The stored values the report reads, as SQL returns them.
struct Rows {
    /// Every stored value (inline values, blob rows, write values).
    values: Vec<Vec<u8>>,
    /// `__pregel_tasks` values stored in checkpoints.
    tasks_stored: Vec<Vec<u8>>,
    /// `__pregel_tasks` writes.
    tasks_written: Vec<Vec<u8>>,
}

fn find_all(hay: &[u8], needle: &[u8]) -> Vec<usize> {
    hay.windows(needle.len())
        .enumerate()
        .filter(|(_, w)| *w == needle)
        .map(|(i, _)| i)
        .collect()
}

fn is_b64(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'+' || b == b'/' || b == b'='
}

/// The length of each base64 string starting with `prefix` (prefix included) in the values.
fn encoded_runs(values: &[Vec<u8>], prefix: &[u8], head: usize) -> Vec<usize> {
    let mut out = Vec::new();
    for v in values {
        for at in find_all(v, prefix) {
            let body = v[at + head..].iter().take_while(|&&b| is_b64(b)).count();
            out.push(head + body);
        }
    }
    out
}

fn occurrences(values: &[Vec<u8>], needle: &[u8]) -> u64 {
    values
        .iter()
        .map(|v| find_all(v, needle).len() as u64)
        .sum()
}

/// Whole values of 1 kB (1,000 bytes) or more stored more than once, summed as the report sums them.
fn repeated_values(values: &[Vec<u8>]) -> RepeatTotals {
    let mut count: HashMap<&[u8], u64> = HashMap::new();
    for v in values.iter().filter(|v| v.len() >= 1_000) {
        *count.entry(v.as_slice()).or_default() += 1;
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

fn tally(values: &[Vec<u8>]) -> Tally {
    Tally {
        count: values.len() as u64,
        bytes: values.iter().map(|v| v.len() as u64).sum(),
    }
}

/// What every layout must show for the fixture's rows.
fn check(r: &StorageReport, rows: &Rows) {
    // Sends: five packets to `work`, written once each and stored in a checkpoint's value.
    assert_eq!(r.sends.writes, tally(&rows.tasks_written));
    assert_eq!(r.sends.writes.count, 5);
    assert_eq!(r.sends.stored, tally(&rows.tasks_stored));
    let items: Tally = rows
        .tasks_stored
        .iter()
        .filter(|v| v.len() > 1)
        .map(|v| {
            assert!((0x91..=0x9f).contains(&v[0]), "a short array of Sends");
            Tally {
                count: (v[0] & 0x0f) as u64,
                bytes: v.len() as u64 - 1,
            }
        })
        .fold(Tally::default(), |a, t| Tally {
            count: a.count + t.count,
            bytes: a.bytes + t.bytes,
        });
    assert_eq!(
        r.sends.by_node,
        vec![SendTarget {
            node: "work".into(),
            writes: r.sends.writes,
            stored: items,
        }]
    );
    assert_eq!(r.sends.largest.len(), 5);
    assert!(r
        .sends
        .largest
        .iter()
        .all(|v| v.bytes > 20_000 && v.task_path.as_deref() == Some("~__pregel_pull, plan")));

    // Files: every copy of the PNG data URL and of the bare base64 PDF.
    let png = encoded_runs(&rows.values, PNG_URL, PNG_URL.len());
    let pdf = encoded_runs(&rows.values, PDF_B64, 0);
    assert!(
        png.len() >= 3 && pdf.len() >= 2,
        "{} {}",
        png.len(),
        pdf.len()
    );
    let sum = |v: &[usize]| v.iter().sum::<usize>() as u64;
    assert_eq!(
        r.embedded_files.by_type,
        vec![
            EmbeddedType {
                media_type: "image/png".into(),
                count: png.len() as u64,
                bytes: sum(&png),
            },
            EmbeddedType {
                media_type: "application/pdf".into(),
                count: pdf.len() as u64,
                bytes: sum(&pdf),
            },
        ]
    );
    assert_eq!(r.embedded_files.total.count, (png.len() + pdf.len()) as u64);
    let image = &r.embedded_files.largest[0];
    assert_eq!(
        (
            image.media_type.as_str(),
            image.copies,
            image.bytes,
            image.data_url
        ),
        ("image/png", png.len() as u64, png[0] as u64, true)
    );
    assert_eq!(image.decoded_bytes, 24_713, "the fixture's PNG");
    assert_eq!(image.place.thread_id, "vision");
    assert!(
        image.place.path.ends_with(".image_url.url"),
        "{}",
        image.place.path
    );
    let file = &r.embedded_files.largest[1];
    assert_eq!(
        (file.media_type.as_str(), file.copies, file.decoded_bytes),
        ("application/pdf", pdf.len() as u64, 6_046)
    );

    // Repeated whole values: exactly what grouping the values by their bytes gives.
    assert_eq!(r.duplicates.values, repeated_values(&rows.values));
    assert!(!r.duplicates.approximate);
    // Repeated strings: each listed string is stored as many times as its text occurs.
    let strings: Vec<&RepeatedPayload> = r
        .duplicates
        .largest
        .iter()
        .filter(|d| d.payload == PayloadKind::String)
        .collect();
    assert!(strings.len() >= 3);
    for d in &strings {
        let head = d.preview.trim_end_matches('…');
        assert_eq!(
            occurrences(&rows.values, head.as_bytes()),
            d.copies,
            "{head}"
        );
        assert_eq!(d.saved_bytes, (d.copies - 1) * d.bytes);
    }
    let prompt = strings
        .iter()
        .find(|d| d.preview.starts_with("You are Lumen"))
        .expect("the shared system prompt");
    assert_eq!(prompt.bytes, 2_018);
    let threads: std::collections::BTreeSet<&str> = ["vision", "vision-2"].into();
    assert!(threads.contains(prompt.place.thread_id.as_str()));
    let image_text = strings
        .iter()
        .find(|d| d.preview.starts_with("data:image/png"))
        .expect("the image's text");
    assert_eq!(image_text.copies, png.len() as u64);
    assert!(r.duplicates.strings.saved_bytes >= strings.iter().map(|d| d.saved_bytes).sum());
}

#[tokio::test]
async fn payload_figures_of_the_sqlite_fixture_are_what_the_rows_hold() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("storage.sqlite");
    std::fs::copy(fixtures().join("storage.sqlite"), &path).expect("copy");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, path.to_str().expect("utf-8")).await;
    let r = report(&api, &db.db, None, 1000).await;

    let c = Connection::open(&path).expect("sqlite");
    let mut rows = Rows {
        values: Vec::new(),
        tasks_stored: Vec::new(),
        tasks_written: Vec::new(),
    };
    let mut q = c
        .prepare("SELECT checkpoint FROM checkpoints")
        .expect("sql");
    for doc in q.query_map([], |r| r.get::<_, Vec<u8>>(0)).expect("rows") {
        for (channel, v) in inline_values(&doc.expect("doc")) {
            if channel == "__pregel_tasks" {
                rows.tasks_stored.push(v.clone());
            }
            rows.values.push(v);
        }
    }
    let mut q = c.prepare("SELECT channel, value FROM writes").expect("sql");
    for w in q
        .query_map([], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, Vec<u8>>(1)?))
        })
        .expect("rows")
    {
        let (channel, v) = w.expect("write");
        if channel == "__pregel_tasks" {
            rows.tasks_written.push(v.clone());
        }
        rows.values.push(v);
    }
    let meta: i64 = c
        .query_row(
            "SELECT count(*) FROM checkpoints WHERE instr(metadata, 'base64') > 0",
            [],
            |r| r.get(0),
        )
        .expect("sql");
    assert_eq!(meta, 0, "no file in the metadata (the report reads values)");
    check(&r, &rows);

    // One thread: only its payloads (vision-2's copies of the image and prompt are not there).
    let one = report(&api, &db.db, Some("vision-2"), 1000).await;
    assert_eq!(one.sends.writes.count, 0);
    let png = one
        .embedded_files
        .by_type
        .iter()
        .find(|t| t.media_type == "image/png")
        .expect("vision-2 holds the image");
    assert!(png.count < r.embedded_files.by_type[0].count);
    assert!(one
        .embedded_files
        .largest
        .iter()
        .all(|f| f.place.thread_id == "vision-2"));
}

#[tokio::test]
async fn payload_figures_of_the_postgres_fixture_are_what_sql_says() {
    use sqlx::Row as _;
    let pg = flashback_testkit::pg_or_skip!();
    let dump = std::fs::read_to_string(fixtures().join("storage-postgres.sql")).expect("dump");
    flashback_testkit::load_sql_dump(pg.url(), &dump)
        .await
        .expect("load");
    let dir = tempfile::tempdir().expect("tempdir");
    let api = api_in(dir.path(), Initial::None);
    let db = open(&api, pg.url()).await;
    let r = report(&api, &db.db, None, 1000).await;
    assert_eq!(r.layout, "langgraph-postgres");

    let pool = pg.pool().await.expect("pool");
    let fetch = |sql: &'static str| {
        let pool = pool.clone();
        async move {
            sqlx::query(sql)
                .fetch_all(&pool)
                .await
                .expect(sql)
                .iter()
                .map(|r| (r.get::<String, _>(0), r.get::<Option<Vec<u8>>, _>(1)))
                .filter_map(|(c, v)| Some((c, v?)))
                .collect::<Vec<_>>()
        }
    };
    let blobs = fetch("SELECT channel, blob FROM checkpoint_blobs").await;
    let writes = fetch("SELECT channel, blob FROM checkpoint_writes").await;
    let pick = |rows: &[(String, Vec<u8>)]| -> Vec<Vec<u8>> {
        rows.iter()
            .filter(|(c, _)| c == "__pregel_tasks")
            .map(|(_, v)| v.clone())
            .collect()
    };
    let rows = Rows {
        tasks_stored: pick(&blobs),
        tasks_written: pick(&writes),
        values: blobs.into_iter().chain(writes).map(|(_, v)| v).collect(),
    };
    check(&r, &rows);

    // The whole-value figure is one SQL query (docs/storage.md).
    let t = sqlx::query(
        "SELECT count(*), coalesce(sum(c), 0)::int8, coalesce(sum(c * n), 0)::int8, \
           coalesce(sum((c - 1) * n), 0)::int8 \
         FROM (SELECT count(*) AS c, octet_length(v) AS n \
               FROM (SELECT blob AS v FROM checkpoint_blobs UNION ALL \
                     SELECT blob FROM checkpoint_writes) s \
               WHERE octet_length(v) >= 1000 GROUP BY v HAVING count(*) > 1) d",
    )
    .fetch_one(&pool)
    .await
    .expect("sql");
    let n = |i: usize| t.get::<i64, _>(i) as u64;
    assert_eq!(
        r.duplicates.values,
        RepeatTotals {
            payloads: n(0),
            copies: n(1),
            stored_bytes: n(2),
            saved_bytes: n(3),
        }
    );
}

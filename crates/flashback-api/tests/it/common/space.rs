//! Storage report helpers: run the job, and an independent msgpack walk (not the codec's) that
//! measures each channel value inside a LangGraph SQLite checkpoint document.

use super::finish;
use flashback_api::*;
use std::collections::BTreeMap;

/// The storage report of `db` (or one thread), as the job returns it.
pub async fn report(api: &Api, db: &str, thread: Option<&str>, top: u32) -> StorageReport {
    let job = api
        .start_storage_report(StorageRequest {
            db: db.to_owned(),
            thread_id: thread.map(str::to_owned),
            top: Some(top),
        })
        .await
        .expect("start");
    let done = finish(api, &job).await;
    assert_eq!(done.state, JobState::Succeeded, "{:?}", done.error);
    serde_json::from_value(done.result.expect("a report")).expect("a StorageReport")
}

/// The end of the msgpack item starting at `p`.
fn skip(b: &[u8], p: usize) -> usize {
    let be = |at: usize, n: usize| -> usize {
        b[at..at + n]
            .iter()
            .fold(0usize, |acc, x| (acc << 8) | *x as usize)
    };
    let m = b[p];
    let items = |mut at: usize, n: usize| {
        for _ in 0..n {
            at = skip(b, at);
        }
        at
    };
    match m {
        0x00..=0x7f | 0xe0..=0xff | 0xc0 | 0xc2 | 0xc3 => p + 1,
        0x80..=0x8f => items(p + 1, 2 * (m & 0x0f) as usize),
        0x90..=0x9f => items(p + 1, (m & 0x0f) as usize),
        0xa0..=0xbf => p + 1 + (m & 0x1f) as usize,
        0xc4 | 0xd9 => p + 2 + be(p + 1, 1),
        0xc5 | 0xda => p + 3 + be(p + 1, 2),
        0xc6 | 0xdb => p + 5 + be(p + 1, 4),
        0xc7 => p + 3 + be(p + 1, 1),
        0xc8 => p + 4 + be(p + 1, 2),
        0xc9 => p + 6 + be(p + 1, 4),
        0xca => p + 5,
        0xcb => p + 9,
        0xcc | 0xd0 => p + 2,
        0xcd | 0xd1 => p + 3,
        0xce | 0xd2 => p + 5,
        0xcf | 0xd3 => p + 9,
        0xd4 => p + 3,
        0xd5 => p + 4,
        0xd6 => p + 6,
        0xd7 => p + 10,
        0xd8 => p + 18,
        0xdc => items(p + 3, be(p + 1, 2)),
        0xdd => items(p + 5, be(p + 1, 4)),
        0xde => items(p + 3, 2 * be(p + 1, 2)),
        0xdf => items(p + 5, 2 * be(p + 1, 4)),
        _ => panic!("0xc1 at {p}"),
    }
}

/// The entries of the map at `p`: (key bytes range, value bytes range).
fn map_at(b: &[u8], p: usize) -> Vec<((usize, usize), (usize, usize))> {
    let (n, mut at) = match b[p] {
        m @ 0x80..=0x8f => ((m & 0x0f) as usize, p + 1),
        0xde => (((b[p + 1] as usize) << 8) | b[p + 2] as usize, p + 3),
        m => panic!("not a map: {m:#x}"),
    };
    let mut out = Vec::new();
    for _ in 0..n {
        let k = at;
        let v = skip(b, k);
        at = skip(b, v);
        out.push(((k, v), (v, at)));
    }
    out
}

/// Each channel value's stored bytes in a checkpoint document.
pub fn inline_values(doc: &[u8]) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    for ((ks, ke), (vs, _)) in map_at(doc, 0) {
        if doc[ks + 1..ke] != *b"channel_values" {
            continue;
        }
        for ((ks, ke), (vs, ve)) in map_at(doc, vs) {
            let head = if doc[ks] == 0xd9 { 2 } else { 1 };
            let name = String::from_utf8_lossy(&doc[ks + head..ke]).into_owned();
            out.insert(name, doc[vs..ve].to_vec());
        }
    }
    out
}

/// Each channel value's encoded length in a checkpoint document.
pub fn inline_lengths(doc: &[u8]) -> BTreeMap<String, u64> {
    inline_values(doc)
        .into_iter()
        .map(|(k, v)| (k, v.len() as u64))
        .collect()
}

/// The node of a task path, as `docs/storage.md` defines it.
pub fn node_of(path: &str) -> String {
    let p = path.trim_start_matches('~');
    let mut parts = p.split(", ");
    match parts.next() {
        Some("__pregel_pull") => parts.next().unwrap_or("").to_owned(),
        Some("__pregel_push") => "Send".to_owned(),
        Some(other) => other.to_owned(),
        None => String::new(),
    }
}

//! What the stored values hold (docs/storage.md "Duplicated payloads", "Embedded files",
//! "Sends"): every value is read once, as stored, and its bytes hashed (XXH3-128) to find
//! identical values; msgpack and JSON values are walked for their large strings (msgpack
//! `scan_large`, `json::scan_large`: the same units, whole values and the strings inside them,
//! each as stored), which are hashed too and looked at as base64 files; `__pregel_tasks` values
//! and writes are split by the node each `Send` goes to (a `langgraph.types.Send` object in
//! msgpack, a `{"node", "args"}` object in JSON).
//!
//! Memory is bounded: at most [`MAX_SEEN`] distinct payloads are remembered (past that, those met
//! only once are forgotten and the report says the figures are a lower bound), and the lists are
//! [`Top`]s.

use super::embedded;
use super::json::{self, JsonStr};
use super::model::*;
use super::pass::Top;
use super::send::send_target;
use flashback_codec::msgpack::scan::{self, Step};
use flashback_codec::msgpack::{self, RawParts};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use xxhash_rust::xxh3::{xxh3_128, Xxh3Builder};

/// Payloads smaller than this are not compared.
pub(crate) const MIN_PAYLOAD: usize = 1_000;
/// Distinct payloads remembered at most.
const MAX_SEEN: usize = 250_000;
/// Distinct embedded files remembered at most.
const MAX_FILES: usize = 20_000;
/// The channel holding Send packets.
use flashback_codec::reserved::TASKS;
/// Characters of a string's preview.
const PREVIEW: usize = 80;

/// Where a value is, as the passes meet it.
pub(crate) struct At<'a> {
    pub(crate) kind: ValueKind,
    pub(crate) thread: &'a str,
    pub(crate) ns: &'a str,
    pub(crate) checkpoint: Option<&'a str>,
    pub(crate) channel: &'a str,
    /// A write's task path.
    pub(crate) task_path: Option<&'a str>,
}

#[derive(Clone)]
struct Place {
    kind: ValueKind,
    thread: Arc<str>,
    ns: Arc<str>,
    checkpoint: Option<Arc<str>>,
    channel: Arc<str>,
    path: Box<str>,
}

impl Place {
    fn model(&self) -> PayloadPlace {
        PayloadPlace {
            kind: self.kind,
            thread_id: self.thread.to_string(),
            checkpoint_ns: self.ns.to_string(),
            checkpoint_id: self.checkpoint.as_deref().map(str::to_owned),
            channel: self.channel.to_string(),
            path: self.path.to_string(),
        }
    }
}

struct Seen {
    payload: PayloadKind,
    bytes: u64,
    copies: u64,
    place: Place,
    preview: Option<Box<str>>,
}

struct File {
    file: EmbeddedFile,
    copies: u64,
}

/// The last text made shared, so the values of one checkpoint share their strings.
#[derive(Default)]
struct Shared(Option<Arc<str>>);

impl Shared {
    fn get(&mut self, s: &str) -> Arc<str> {
        match &self.0 {
            Some(a) if **a == *s => a.clone(),
            _ => {
                let a: Arc<str> = Arc::from(s);
                self.0 = Some(a.clone());
                a
            }
        }
    }
}

/// The payload figures of a report, as its passes add to them.
pub(crate) struct Payloads {
    seen: HashMap<u128, Seen, Xxh3Builder>,
    approximate: bool,
    files: HashMap<u128, File, Xxh3Builder>,
    /// Large strings looked at and found not to be files.
    not_files: HashSet<u128, Xxh3Builder>,
    embedded_total: Tally,
    embedded_types: HashMap<String, Tally>,
    sends: Sends,
    send_nodes: HashMap<String, (Tally, Tally)>,
    largest_sends: Top<ValueSize>,
    shared: [Shared; 4],
}

impl Payloads {
    pub(crate) fn new(top: u32) -> Payloads {
        Payloads {
            seen: HashMap::default(),
            approximate: false,
            files: HashMap::default(),
            not_files: HashSet::default(),
            embedded_total: Tally::default(),
            embedded_types: HashMap::new(),
            sends: Sends::default(),
            send_nodes: HashMap::new(),
            largest_sends: Top::new(top, |v: &ValueSize| v.bytes),
            shared: Default::default(),
        }
    }

    /// One stored value (`tag`: its serde type; `msgpack` and `json` values are walked).
    pub(crate) fn value(&mut self, at: &At<'_>, tag: &str, bytes: &[u8]) {
        if at.channel == TASKS {
            self.sends(at, tag, bytes);
        }
        if bytes.len() < MIN_PAYLOAD {
            return;
        }
        let whole = || Cow::Borrowed(bytes);
        self.repeat(PayloadKind::Value, xxh3_128(bytes), bytes, &whole, at, &[]);
        // A value that is not what its tag says has no strings to find; what was found before
        // the error still counts.
        match tag {
            "msgpack" => {
                let _ = scan::scan_large(bytes, MIN_PAYLOAD, &mut |path, f| {
                    let kind = if f.is_str {
                        PayloadKind::String
                    } else {
                        PayloadKind::Bytes
                    };
                    self.found(at, path, kind, f.bytes, &|| Cow::Borrowed(f.bytes));
                });
            }
            "json" => {
                let _ = json::scan_large(bytes, MIN_PAYLOAD, &mut |path, s: JsonStr<'_>| {
                    let text = || json::unescaped(&s);
                    self.found(at, path, PayloadKind::String, s.raw, &text);
                });
            }
            _ => {}
        }
    }

    /// A large string or `bin` inside a value (`stored`: its bytes as stored, hashed and
    /// counted; `text`: what it says — a JSON string unescaped — previewed and sniffed).
    fn found<'t>(
        &mut self,
        at: &At<'_>,
        path: &[Step<'_>],
        kind: PayloadKind,
        stored: &[u8],
        text: &dyn Fn() -> Cow<'t, [u8]>,
    ) {
        // One hash per string, for both its repeats and its file.
        let hash = xxh3_128(stored);
        if !path.is_empty() {
            self.repeat(kind, hash, stored, text, at, path);
        }
        if kind == PayloadKind::String {
            self.file(hash, stored.len() as u64, text, at, path);
        }
    }

    fn place(&mut self, at: &At<'_>, path: &[Step<'_>]) -> Place {
        let [t, n, c, ch] = &mut self.shared;
        Place {
            kind: at.kind,
            thread: t.get(at.thread),
            ns: n.get(at.ns),
            checkpoint: at.checkpoint.map(|id| c.get(id)),
            channel: ch.get(at.channel),
            path: scan::path_text(path).into(),
        }
    }

    fn repeat<'t>(
        &mut self,
        payload: PayloadKind,
        hash: u128,
        bytes: &[u8],
        text: &dyn Fn() -> Cow<'t, [u8]>,
        at: &At<'_>,
        path: &[Step<'_>],
    ) {
        let key = hash ^ payload as u128;
        if let Some(s) = self.seen.get_mut(&key) {
            s.copies += 1;
            if s.preview.is_none() {
                s.preview = Some(preview(payload, &text()).into());
            }
            return;
        }
        if self.seen.len() >= MAX_SEEN {
            self.forget();
        }
        let place = self.place(at, path);
        self.seen.insert(
            key,
            Seen {
                payload,
                bytes: bytes.len() as u64,
                copies: 1,
                place,
                preview: None,
            },
        );
    }

    /// Forget the payloads met once (and, if that is not enough, the repeated ones that cost
    /// least), so the map stays bounded.
    fn forget(&mut self) {
        self.approximate = true;
        self.seen.retain(|_, s| s.copies > 1);
        if self.seen.len() >= MAX_SEEN / 2 {
            let mut saved: Vec<u64> = self.seen.values().map(saved_of).collect();
            saved.sort_unstable();
            let cut = saved[saved.len() / 2];
            self.seen.retain(|_, s| saved_of(s) > cut);
        }
    }

    /// A large string (`key`: its hash): a file? Each distinct string is looked at once; its
    /// copies are counted from what was found then.
    fn file<'t>(
        &mut self,
        key: u128,
        n: u64,
        text: &dyn Fn() -> Cow<'t, [u8]>,
        at: &At<'_>,
        path: &[Step<'_>],
    ) {
        if let Some(f) = self.files.get_mut(&key) {
            f.copies += 1;
            self.embedded_total.add(n);
            if let Some(t) = self.embedded_types.get_mut(&f.file.media_type) {
                t.add(n);
            }
            return;
        }
        if self.not_files.contains(&key) {
            return;
        }
        let Some(e) = embedded::sniff(&text()) else {
            if self.not_files.len() >= MAX_SEEN {
                self.not_files.clear();
            }
            self.not_files.insert(key);
            return;
        };
        self.embedded_total.add(n);
        self.embedded_types
            .entry(e.media_type.clone())
            .or_default()
            .add(n);
        if self.files.len() >= MAX_FILES {
            // Keep the larger half: the list shows the largest.
            let mut sizes: Vec<u64> = self.files.values().map(|f| f.file.bytes).collect();
            sizes.sort_unstable();
            let cut = sizes[sizes.len() / 2];
            self.files.retain(|_, f| f.file.bytes > cut);
            if n <= cut {
                return;
            }
        }
        let place = self.place(at, path).model();
        let file = EmbeddedFile {
            media_type: e.media_type,
            bytes: n,
            decoded_bytes: e.decoded_bytes,
            data_url: e.data_url,
            copies: 0,
            place,
        };
        self.files.insert(key, File { file, copies: 1 });
    }

    fn sends(&mut self, at: &At<'_>, tag: &str, bytes: &[u8]) {
        let n = bytes.len() as u64;
        let node = |bytes: &[u8]| {
            let node = if tag == "json" {
                json::send_node(bytes)
            } else {
                msgpack::decode(bytes).ok().as_ref().and_then(send_target)
            };
            node.unwrap_or_else(|| "?".to_owned())
        };
        if at.kind == ValueKind::Write {
            self.sends.writes.add(n);
            self.send_nodes.entry(node(bytes)).or_default().0.add(n);
            self.largest_sends.push(ValueSize {
                kind: ValueKind::Write,
                thread_id: at.thread.to_owned(),
                checkpoint_ns: at.ns.to_owned(),
                checkpoint_id: at.checkpoint.map(str::to_owned),
                channel: at.channel.to_owned(),
                version: None,
                task_path: at.task_path.map(str::to_owned),
                bytes: n,
            });
            return;
        }
        self.sends.stored.add(n);
        let items = if tag == "json" {
            json::items(bytes)
        } else {
            match msgpack::raw_parts(bytes) {
                Ok(RawParts::Array(items)) => Some(items),
                _ => None,
            }
        };
        for item in items.unwrap_or_default() {
            self.send_nodes
                .entry(node(item))
                .or_default()
                .1
                .add(item.len() as u64);
        }
    }

    /// The figures, each list cut to `top`.
    pub(crate) fn finish(self, top: u32) -> (Duplicates, EmbeddedFiles, Sends) {
        let mut dups = Duplicates {
            min_bytes: MIN_PAYLOAD as u64,
            approximate: self.approximate,
            ..Default::default()
        };
        let mut largest = Top::new(top, |r: &RepeatedPayload| r.saved_bytes);
        for s in self.seen.into_values().filter(|s| s.copies > 1) {
            let t = match s.payload {
                PayloadKind::Value => &mut dups.values,
                _ => &mut dups.strings,
            };
            t.payloads += 1;
            t.copies += s.copies;
            t.stored_bytes += s.copies * s.bytes;
            t.saved_bytes += saved_of(&s);
            largest.push(RepeatedPayload {
                payload: s.payload,
                bytes: s.bytes,
                copies: s.copies,
                saved_bytes: saved_of(&s),
                preview: s.preview.map(String::from).unwrap_or_default(),
                place: s.place.model(),
            });
        }
        dups.largest = largest.into_vec();
        sort_stable(&mut dups.largest, |r| (r.saved_bytes, r.place.path.clone()));

        let mut by_type: Vec<EmbeddedType> = self
            .embedded_types
            .into_iter()
            .map(|(media_type, t)| EmbeddedType {
                media_type,
                count: t.count,
                bytes: t.bytes,
            })
            .collect();
        by_type.sort_by(|a, b| (b.bytes, &a.media_type).cmp(&(a.bytes, &b.media_type)));
        let mut files = Top::new(top, |f: &EmbeddedFile| f.bytes * f.copies);
        for f in self.files.into_values() {
            files.push(EmbeddedFile {
                copies: f.copies,
                ..f.file
            });
        }
        let mut largest_files = files.into_vec();
        sort_stable(&mut largest_files, |f| {
            (f.bytes * f.copies, f.place.path.clone())
        });
        let files = EmbeddedFiles {
            min_bytes: embedded::MIN_ENCODED as u64,
            total: self.embedded_total,
            by_type,
            largest: largest_files,
        };

        let mut sends = self.sends;
        sends.by_node = self
            .send_nodes
            .into_iter()
            .map(|(node, (writes, stored))| SendTarget {
                node,
                writes,
                stored,
            })
            .collect();
        sends.by_node.sort_by(|a, b| {
            let size = |t: &SendTarget| t.writes.bytes + t.stored.bytes;
            (size(b), &a.node).cmp(&(size(a), &b.node))
        });
        sends.by_node.truncate(top as usize);
        sends.largest = self.largest_sends.into_vec();
        (dups, files, sends)
    }
}

fn saved_of(s: &Seen) -> u64 {
    (s.copies - 1) * s.bytes
}

/// Largest first; ties in a stable order (the maps are hash maps).
fn sort_stable<T, K: Ord>(v: &mut [T], key: impl Fn(&T) -> (u64, K)) {
    v.sort_by(|a, b| {
        let (ka, kb) = (key(a), key(b));
        kb.0.cmp(&ka.0).then_with(|| ka.1.cmp(&kb.1))
    });
}

/// A string's first characters (its text: a JSON string unescaped); bytes' first bytes in hex;
/// nothing for a whole value.
fn preview(kind: PayloadKind, bytes: &[u8]) -> String {
    match kind {
        PayloadKind::Value => String::new(),
        PayloadKind::String => {
            let text = String::from_utf8_lossy(&bytes[..bytes.len().min(4 * PREVIEW)]);
            let mut out: String = text.chars().take(PREVIEW).collect();
            if out.len() < bytes.len() {
                out.push('…');
            }
            out
        }
        PayloadKind::Bytes => {
            let hex: Vec<String> = bytes.iter().take(16).map(|b| format!("{b:02x}")).collect();
            format!("{}…", hex.join(" "))
        }
    }
}

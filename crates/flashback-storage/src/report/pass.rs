//! The backend-neutral part of the report: one thread's rows at a time (its blob keys and
//! lengths, its writes per checkpoint, then its checkpoints in order) give each checkpoint's
//! size, the blobs it introduced, the channels stored whole again while growing, the largest
//! checkpoints and values, and the blob rows nothing names. Memory is one thread's keys.

use super::model::*;
use super::sql::Layout;
use flashback_codec::reserved;
use std::collections::{HashMap, HashSet};

/// How many stores of a channel a growth flag needs at least.
const MIN_STORES: u64 = 4;
/// A value smaller than this stored again and again is not worth a flag.
const MIN_LAST_BYTES: u64 = 256;
/// Unmeasured rows named in the report.
const EXAMPLES: usize = 10;

/// One checkpoint row as the backends read it.
pub(crate) struct CpRow {
    /// The namespace key (the namespace, or its hash in the three-table store).
    pub(crate) ns_key: String,
    pub(crate) ns: String,
    pub(crate) id: String,
    pub(crate) parent: Option<String>,
    pub(crate) doc_bytes: u64,
    pub(crate) meta_bytes: u64,
    /// `channel_versions` as the blobs' version text.
    pub(crate) versions: Vec<(String, String)>,
    /// Values inside the document: channel and encoded length.
    pub(crate) inline: Vec<(String, u64)>,
    /// Why the document could not be measured.
    pub(crate) problem: Option<String>,
}

/// One blob row.
pub(crate) struct BlobRow {
    pub(crate) ns_key: String,
    pub(crate) channel: String,
    pub(crate) version: String,
    pub(crate) bytes: u64,
    pub(crate) base: Option<String>,
}

/// The largest `n` of something, kept bounded.
pub(crate) struct Top<T> {
    n: usize,
    items: Vec<T>,
    size: fn(&T) -> u64,
}

impl<T> Top<T> {
    pub(crate) fn new(n: u32, size: fn(&T) -> u64) -> Top<T> {
        Top {
            n: n as usize,
            items: Vec::new(),
            size,
        }
    }

    pub(crate) fn push(&mut self, item: T) {
        self.items.push(item);
        if self.items.len() > 4 * self.n.max(16) {
            self.cut();
        }
    }

    fn cut(&mut self) {
        let size = self.size;
        self.items.sort_by_key(|t| std::cmp::Reverse(size(t)));
        self.items.truncate(self.n);
    }

    pub(crate) fn into_vec(mut self) -> Vec<T> {
        self.cut();
        self.items
    }
}

/// Stores of one channel along a namespace, oldest first.
#[derive(Default)]
struct Stores {
    count: u64,
    bytes: u64,
    first: u64,
    last: u64,
    growing: bool,
}

impl Stores {
    fn store(&mut self, bytes: u64) {
        if self.count == 0 {
            self.first = bytes;
            self.growing = true;
        } else if bytes < self.last {
            self.growing = false;
        }
        self.count += 1;
        self.bytes += bytes;
        self.last = bytes;
    }

    /// Stored at least [`MIN_STORES`] times, never shrinking, at least doubling from the
    /// first store to the last (which is at least [`MIN_LAST_BYTES`]), and taking at least
    /// twice what storing the last value once would take.
    fn quadratic(&self) -> bool {
        self.count >= MIN_STORES
            && self.growing
            && self.last >= MIN_LAST_BYTES
            && self.last >= 2 * self.first
            && self.bytes >= 2 * self.last
    }
}

/// What the passes over every thread add up.
pub(crate) struct Acc {
    pub(crate) layout: Layout,
    /// Keep each checkpoint's size (a one-thread report).
    pub(crate) keep_growth: bool,
    pub(crate) growth: Vec<CheckpointSize>,
    pub(crate) quadratic: Top<QuadraticChannel>,
    pub(crate) largest_checkpoints: Top<CheckpointSize>,
    pub(crate) largest_values: Top<ValueSize>,
    pub(crate) inline: HashMap<String, Tally>,
    pub(crate) orphan_blobs: Tally,
    pub(crate) unmeasured: Unmeasured,
}

impl Acc {
    pub(crate) fn new(layout: Layout, keep_growth: bool, top: u32) -> Acc {
        Acc {
            layout,
            keep_growth,
            growth: Vec::new(),
            quadratic: Top::new(top, |q: &QuadraticChannel| q.stored_bytes),
            largest_checkpoints: Top::new(top, |c: &CheckpointSize| c.total_bytes),
            largest_values: Top::new(top, |v: &ValueSize| v.bytes),
            inline: HashMap::new(),
            orphan_blobs: Tally::default(),
            unmeasured: Unmeasured::default(),
        }
    }

    pub(crate) fn unmeasured(&mut self, what: String) {
        self.unmeasured.count += 1;
        if self.unmeasured.examples.len() < EXAMPLES {
            self.unmeasured.examples.push(what);
        }
    }
}

/// A blob row's key: namespace key, channel, version.
pub(crate) type BlobKey = (String, String, String);

/// Where a thread's rows are, once its checkpoints are read.
pub(crate) struct Placed {
    /// The oldest checkpoint naming each blob row.
    pub(crate) first: HashMap<BlobKey, String>,
    /// Namespace text per namespace key.
    pub(crate) names: HashMap<String, String>,
}

/// One thread being measured: feed its checkpoints in `(ns key, id)` order, then finish.
pub(crate) struct ThreadPass<'a> {
    acc: &'a mut Acc,
    thread: String,
    /// `(ns key, channel, version)` → bytes, base version, the oldest checkpoint naming it.
    blobs: HashMap<BlobKey, (u64, Option<String>, Option<String>)>,
    /// Unversioned three-table values (`~<checkpoint id>`): `(ns key, version)` → channels.
    unversioned: HashMap<(String, String), Vec<String>>,
    writes: HashMap<(String, String), Tally>,
    stores: HashMap<(String, String), Stores>,
    /// Namespace text per key.
    names: HashMap<String, String>,
}

impl<'a> ThreadPass<'a> {
    pub(crate) fn new(
        acc: &'a mut Acc,
        thread: &str,
        blobs: Vec<BlobRow>,
        writes: Vec<(String, String, Tally)>,
    ) -> ThreadPass<'a> {
        let mut unversioned: HashMap<(String, String), Vec<String>> = HashMap::new();
        let mut map = HashMap::with_capacity(blobs.len());
        for b in blobs {
            if b.version.starts_with('~') {
                unversioned
                    .entry((b.ns_key.clone(), b.version.clone()))
                    .or_default()
                    .push(b.channel.clone());
            }
            map.insert((b.ns_key, b.channel, b.version), (b.bytes, b.base, None));
        }
        ThreadPass {
            acc,
            thread: thread.to_owned(),
            blobs: map,
            unversioned,
            writes: writes.into_iter().map(|(n, c, t)| ((n, c), t)).collect(),
            stores: HashMap::new(),
            names: HashMap::new(),
        }
    }

    /// The next checkpoint (in `(ns key, id)` order).
    pub(crate) fn checkpoint(&mut self, row: CpRow) {
        let mut size = CheckpointSize {
            thread_id: self.thread.clone(),
            checkpoint_ns: row.ns.clone(),
            checkpoint_id: row.id.clone(),
            parent_checkpoint_id: row.parent.clone(),
            document_bytes: row.doc_bytes,
            metadata_bytes: row.meta_bytes,
            ..Default::default()
        };
        self.names.insert(row.ns_key.clone(), row.ns.clone());
        if let Some(problem) = &row.problem {
            let what = format!("{}/{}/{}: {problem}", self.thread, row.ns, row.id);
            self.acc.unmeasured(what);
        }
        let mut named: Vec<(String, String)> = row.versions;
        let tilde = format!("~{}", row.id);
        if let Some(channels) = self.unversioned.get(&(row.ns_key.clone(), tilde.clone())) {
            named.extend(channels.iter().map(|c| (c.clone(), tilde.clone())));
        }
        for (channel, version) in named {
            let key = (row.ns_key.clone(), channel, version);
            let Some((bytes, _, seen)) = self.blobs.get_mut(&key) else {
                continue;
            };
            if seen.is_some() {
                continue;
            }
            *seen = Some(row.id.clone());
            let bytes = *bytes;
            let (_, channel, version) = key;
            size.blobs.add(bytes);
            self.stores
                .entry((row.ns_key.clone(), channel.clone()))
                .or_default()
                .store(bytes);
            self.acc.largest_values.push(ValueSize {
                kind: ValueKind::Blob,
                thread_id: self.thread.clone(),
                checkpoint_ns: row.ns.clone(),
                checkpoint_id: Some(row.id.clone()),
                channel,
                version: Some(version),
                task_path: None,
                bytes,
            });
        }
        for (channel, bytes) in row.inline {
            if matches!(self.acc.layout, Layout::LanggraphSqlite | Layout::DevServer) {
                self.acc
                    .inline
                    .entry(channel.clone())
                    .or_default()
                    .add(bytes);
            }
            self.stores
                .entry((row.ns_key.clone(), channel.clone()))
                .or_default()
                .store(bytes);
            self.acc.largest_values.push(ValueSize {
                kind: ValueKind::Inline,
                thread_id: self.thread.clone(),
                checkpoint_ns: row.ns.clone(),
                checkpoint_id: Some(row.id.clone()),
                channel,
                version: None,
                task_path: None,
                bytes,
            });
        }
        if let Some(w) = self.writes.get(&(row.ns_key, row.id)) {
            size.writes = *w;
        }
        size.total_bytes =
            size.document_bytes + size.metadata_bytes + size.blobs.bytes + size.writes.bytes;
        if self.acc.keep_growth {
            self.acc.growth.push(size.clone());
        }
        self.acc.largest_checkpoints.push(size);
    }

    /// The thread's orphaned blobs and growing channels; then where its rows are.
    pub(crate) fn finish(self) -> Placed {
        // A delta's base is needed by whatever needs the delta.
        let mut needed: HashSet<BlobKey> = HashSet::new();
        for (key, (_, _, seen)) in &self.blobs {
            let mut at = key.clone();
            if seen.is_none() {
                continue;
            }
            while needed.insert(at.clone()) {
                match self.blobs.get(&at).and_then(|(_, base, _)| base.clone()) {
                    Some(base) => at.2 = base,
                    None => break,
                }
            }
        }
        for (key, (bytes, _, _)) in &self.blobs {
            if !needed.contains(key) {
                self.acc.orphan_blobs.add(*bytes);
            }
        }
        let mut flagged: Vec<QuadraticChannel> = self
            .stores
            .into_iter()
            .filter(|(_, s)| s.quadratic())
            .map(|((ns_key, channel), s)| QuadraticChannel {
                thread_id: self.thread.clone(),
                checkpoint_ns: self.names.get(&ns_key).cloned().unwrap_or(ns_key),
                channel,
                stores: s.count,
                stored_bytes: s.bytes,
                last_bytes: s.last,
            })
            .collect();
        // In a stable order (the stores are a hash map): largest first, then by name.
        flagged.sort_by(|a, b| {
            let key = |q: &QuadraticChannel| (q.checkpoint_ns.clone(), q.channel.clone());
            b.stored_bytes
                .cmp(&a.stored_bytes)
                .then_with(|| key(a).cmp(&key(b)))
        });
        for q in flagged {
            self.acc.quadratic.push(q);
        }
        Placed {
            first: self
                .blobs
                .into_iter()
                .filter_map(|(k, (_, _, first))| Some((k, first?)))
                .collect(),
            names: self.names,
        }
    }
}

/// The node a task path names (as the graph view names tasks).
pub(crate) fn node_of(task_path: &str) -> String {
    let path = task_path.strip_prefix('~').unwrap_or(task_path);
    let mut parts = path.split(", ");
    match parts.next() {
        Some(reserved::PULL) => parts.next().unwrap_or_default().to_owned(),
        Some(reserved::PUSH) => "Send".to_owned(),
        Some(first) => first.to_owned(),
        None => String::new(),
    }
}

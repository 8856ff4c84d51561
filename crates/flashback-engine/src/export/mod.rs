//! Audit export: a self-contained, hash-chained bundle of a thread's checkpoints, as JSON or as a
//! standalone HTML report, and its verification.
//!
//! ```text
//!  CheckpointStore ──build_bundle──▶ Bundle ──serde_json──▶ bundle.json ─┐
//!                                      └──────render_html──▶ report.html ─┴─verify──▶ VerifyReport
//! ```
//!
//! # What a bundle holds
//!
//! [`Bundle`] (`"format": "flashback-audit/1"`): when and by which tool it was made, the source
//! backend and schema (never a path, URL or password), the thread, the scope, and one
//! [`BundleCheckpoint`] per exported checkpoint — ids, parent, timestamp, metadata, channel
//! values and pending writes in the JSON view of `docs/json-view.md` — each with a `hash` and a
//! `chain`, then a `bundle_hash` over everything.
//!
//! * **Scope.** [`ExportOptions::checkpoint_id`] `Some(id)`: `"branch"`, the checkpoint and its
//!   ancestors (its lineage to the root, following effective parent links within its own
//!   namespace; subgraph namespaces are not included). The id is looked up in the root namespace
//!   first, then in the other namespaces in order. `None`: `"tree"`, every checkpoint of the
//!   thread in every namespace. `head` is the chosen checkpoint (branch) or the thread head,
//!   `max(checkpoint_id)` of the root namespace (tree).
//! * **Order.** Oldest first along parents: a checkpoint always comes after its parent. Within
//!   that constraint, entries are ordered by `(checkpoint_id, checkpoint_ns)`, so subgraph
//!   checkpoints sit between the parent-graph checkpoints they ran between.
//! * **Secrets.** Values are viewed with secrets masked (`pydantic` `SecretStr`/`SecretBytes`
//!   become `{"$value": "**********", "$secret": true}`); there is no way to reveal them in an
//!   export. Opaque payloads (`pickle` blobs, undecodable values' `raw_base64`) whose bytes
//!   mention `SecretStr`/`SecretBytes`, or contain every literal part of a redaction pattern,
//!   have their base64 replaced by `"[withheld]"` (their bytes could hold the secret in clear).
//! * **Redaction** ([`ExportOptions::redact`]): a pattern is a **case-insensitive glob** matched
//!   against the **whole key**: `*` matches any run of characters (also none), `?` exactly one
//!   character, everything else itself (`api_key` matches `API_KEY` only; `*token*` matches any
//!   key containing `token`). A value under a matching key is replaced by the string
//!   `"[redacted]"` wherever it occurs: metadata keys, channel names (the whole channel value;
//!   a pending write to that channel), dict keys and object fields inside values (messages,
//!   dataclasses, pydantic models…), and the string keys of `{"$type": "builtins.dict",
//!   "$items": [[key, value], …]}` dicts. In values, the view's own markers (`$type`, `$value`,
//!   `$args`, …, any key starting with a single `$`) are never matched; a field the view wrote
//!   as `$$name` is matched as `$name`. The patterns are listed in the bundle's `redactions`.
//!   Redaction happens before hashing, so the hashes cover what was exported.
//!
//! # Hashes
//!
//! * **Canonical form** of a JSON value, as UTF-8 bytes, no whitespace anywhere:
//!   `null`, `true`, `false`; numbers exactly as written in the bundle (the export writes them
//!   as `serde_json` prints them: integers as digits, floats in shortest round-trip form with a
//!   `.` or an exponent, e.g. `1.0`, `1e-7`, `1e+16`); strings in double quotes with `"` → `\"`,
//!   `\` → `\\`, U+0008 → `\b`, U+000C → `\f`, U+000A → `\n`, U+000D → `\r`, U+0009 → `\t`,
//!   every other character below U+0020 → `\u00xx` (lowercase hex), everything else as itself
//!   (raw UTF-8, `/` unescaped); arrays as `[a,b,…]`; objects as `{"k":v,…}` with members
//!   sorted by key in byte order of the keys' UTF-8 (= code point order). Duplicate keys make
//!   a bundle invalid.
//! * `hash` = lowercase hex SHA-256 of the canonical form of the checkpoint entry **without**
//!   its `hash` and `chain` members (every other member is covered, including any extra one).
//! * `chain` = lowercase hex SHA-256 of the 128 ASCII characters `prev + hash`, where `prev` is
//!   the `chain` of the entry's *chain predecessor*, or 64 `0`s when it has none. The chain
//!   predecessor is the **earlier** entry of the bundle with the same `checkpoint_ns` whose
//!   `checkpoint_id` equals this entry's `parent_checkpoint_id`. An entry without one is a
//!   *root of the export*: a root checkpoint, or one whose parent is not in the database (an
//!   orphan). Its parent may legitimately be missing from the bundle; any other entry whose
//!   parent is missing is reported by [`verify`] (the parent was removed from the bundle).
//! * `bundle_hash` = lowercase hex SHA-256 of the canonical form of the whole bundle object
//!   **without** its `bundle_hash` member (so it covers every entry's `hash` and `chain`, the
//!   entries' order and the header fields).
//!
//! The hashes make accidental or naive edits evident; they are not a signature (whoever edits
//! a bundle can recompute them). Keep the `bundle_hash` (or the bundle) somewhere trusted to
//! prove later that a copy is unchanged.
//!
//! # Verification
//!
//! [`verify`] accepts a JSON bundle or an HTML report made by [`render_html`] (whose
//! `<script type="application/json" id="flashback-bundle">` element embeds the bundle). It
//! parses the JSON with its own exact parser (numbers are kept as written), recomputes every
//! `hash`, `chain` link and the `bundle_hash`, and names each checkpoint that was modified
//! (content, `hash` field or `chain` field), removed (a child's parent is missing) or moved
//! before its parent. For an HTML report whose embedded bundle is intact, it also re-renders
//! the report from the embedded bundle and checks that the readable part was not edited. It
//! never panics; unparseable input gives a report with `ok: false` and the reason.

mod canonical;
mod html;
mod parse;
mod redact;
mod verify;

pub use canonical::ZERO_CHAIN;
pub use html::{render_html, HTML_BUNDLE_ID};
pub use parse::parse_bundle;
pub use redact::{REDACTED, WITHHELD};
pub use verify::{verify, VerifyReport};

use crate::error::EngineError;
use crate::ThreadDag;
use canonical::{canonical_of_value, chain_of, chain_predecessors, sha256_hex, ChainInput};
use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::{
    CheckpointHeader, CheckpointStore, CheckpointTuple, ListQuery, PendingWrite, StoreError,
};
use redact::Redactor;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// The bundle format identifier (`Bundle::format`).
pub const FORMAT: &str = "flashback-audit/1";

/// What to export.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ExportOptions {
    /// `Some(id)`: the branch ending at this checkpoint (its lineage to the root, in its own
    /// namespace); `None`: the whole tree (every checkpoint, all namespaces).
    pub checkpoint_id: Option<String>,
    /// Key patterns to redact: case-insensitive globs (`*` any run, `?` one character) matched
    /// against whole keys; see the [module docs](self).
    pub redact: Vec<String>,
    /// The exporting tool's version (`Bundle::tool.version`).
    pub tool_version: String,
    /// `generated_at` to record; `None` = now (UTC, ISO 8601). For reproducible bundles.
    pub generated_at: Option<String>,
}

/// Which part of the thread a bundle holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// One checkpoint and its ancestors.
    Branch,
    /// Every checkpoint of the thread, all namespaces.
    Tree,
}

impl Scope {
    /// `"branch"` or `"tree"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Branch => "branch",
            Scope::Tree => "tree",
        }
    }
}

/// The tool that made a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolInfo {
    /// `"flashback"`.
    pub name: String,
    /// Its version.
    pub version: String,
}

/// Where the data came from (never a path, URL or credential).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// `"sqlite"` or `"postgres"`.
    pub backend: String,
    /// The detected schema ([`flashback_storage::SchemaInfo::description`]).
    pub schema: String,
}

/// One pending write in a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleWrite {
    /// The task that wrote it.
    pub task_id: String,
    /// The task's path.
    pub task_path: String,
    /// Position in the task's batch.
    pub idx: i64,
    /// The channel written.
    pub channel: String,
    /// The serde type tag as stored.
    #[serde(rename = "type")]
    pub type_tag: String,
    /// The value (JSON view; `null` for an `empty` value), secrets masked, redacted.
    pub value: Json,
}

/// One checkpoint in a bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleCheckpoint {
    /// Namespace (`""` for the root graph).
    pub checkpoint_ns: String,
    /// Checkpoint id.
    pub checkpoint_id: String,
    /// Parent checkpoint id as stored.
    pub parent_checkpoint_id: Option<String>,
    /// Timestamp.
    pub ts: String,
    /// Metadata as stored, redacted.
    pub metadata: Json,
    /// Channel values in stored order (JSON view), secrets masked, redacted.
    pub values: Map<String, Json>,
    /// Pending writes, sorted as the saver returns them.
    pub pending_writes: Vec<BundleWrite>,
    /// SHA-256 (hex) of this entry's canonical form without `hash` and `chain`.
    pub hash: String,
    /// SHA-256 (hex) of the chain predecessor's `chain` (or 64 zeros) followed by `hash`.
    pub chain: String,
}

/// An audit export. Serialize it with `serde_json` (any formatting) to get the JSON bundle.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bundle {
    /// [`FORMAT`].
    pub format: String,
    /// When it was made (ISO 8601).
    pub generated_at: String,
    /// The tool that made it.
    pub tool: ToolInfo,
    /// Where the data came from.
    pub source: SourceInfo,
    /// Thread id.
    pub thread_id: String,
    /// Branch or tree.
    pub scope: Scope,
    /// The chosen checkpoint (branch) or the thread head (tree).
    pub head: Option<String>,
    /// The redaction patterns applied.
    pub redactions: Vec<String>,
    /// Number of entries in `checkpoints`.
    pub checkpoint_count: usize,
    /// The checkpoints, oldest first along parents.
    pub checkpoints: Vec<BundleCheckpoint>,
    /// SHA-256 (hex) of the canonical form of the bundle without `bundle_hash`.
    pub bundle_hash: String,
}

// ---------------------------------------------------------------------------------------------
// Building
// ---------------------------------------------------------------------------------------------

/// Build the audit bundle of one thread (see the [module docs](self)).
///
/// Errors: [`EngineError::Store`] with [`StoreError::NotFound`] when the thread has no
/// checkpoints, [`EngineError::UnknownCheckpoint`] when `opts.checkpoint_id` is not in it,
/// and storage errors.
pub async fn build_bundle(
    store: &dyn CheckpointStore,
    thread_id: &str,
    opts: &ExportOptions,
) -> Result<Bundle, EngineError> {
    build_bundle_observed(store, thread_id, opts, &mut |_| true).await
}

/// Where [`build_bundle_observed`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportProgress {
    /// Reading `total` checkpoints.
    Loading {
        /// Checkpoints to export.
        total: usize,
    },
    /// `done` of `total` checkpoints viewed, redacted and hashed.
    Hashing {
        /// Entries built.
        done: usize,
        /// Checkpoints to export.
        total: usize,
    },
}

/// [`build_bundle`] reporting progress to `observer`, which stops the export (with
/// [`EngineError::Cancelled`]) by returning `false`.
pub async fn build_bundle_observed(
    store: &dyn CheckpointStore,
    thread_id: &str,
    opts: &ExportOptions,
    observer: &mut (dyn FnMut(ExportProgress) -> bool + Send),
) -> Result<Bundle, EngineError> {
    let mut report = |p: ExportProgress| {
        if observer(p) {
            Ok(())
        } else {
            Err(EngineError::Cancelled)
        }
    };
    let headers = store.list_headers(&ListQuery::thread(thread_id)).await?;
    if headers.is_empty() {
        return Err(
            StoreError::NotFound(format!("thread {thread_id:?} has no checkpoints")).into(),
        );
    }
    let dag = ThreadDag::build(&headers)?;
    let redact = Redactor::new(&opts.redact);

    let (scope, head, order) = match &opts.checkpoint_id {
        Some(id) => {
            let ns = find_namespace(&dag, id).ok_or_else(|| EngineError::UnknownCheckpoint {
                ns: String::new(),
                id: id.clone(),
            })?;
            let mut lineage: Vec<(String, String)> = dag
                .lineage(&ns, id)
                .into_iter()
                .map(|n| (n.ns.clone(), n.checkpoint_id.clone()))
                .collect();
            lineage.reverse();
            (Scope::Branch, Some(id.clone()), lineage)
        }
        None => (Scope::Tree, dag.head().map(str::to_owned), tree_order(&dag)),
    };

    let total = order.len();
    report(ExportProgress::Loading { total })?;
    let mut tuples: HashMap<(String, String), CheckpointTuple> = HashMap::new();
    match scope {
        Scope::Tree => {
            for t in store.list_tuples(&ListQuery::thread(thread_id)).await? {
                let key = (
                    t.header.checkpoint_ns.clone(),
                    t.header.checkpoint_id.clone(),
                );
                tuples.entry(key).or_insert(t);
            }
        }
        Scope::Branch => {
            for (ns, id) in &order {
                if let Some(t) = store.get_tuple(thread_id, ns, Some(id)).await? {
                    tuples.insert((ns.clone(), id.clone()), t);
                }
            }
        }
    }

    let mut checkpoints = Vec::with_capacity(order.len());
    for (ns, id) in order {
        let tuple = tuples.remove(&(ns.clone(), id.clone())).ok_or_else(|| {
            EngineError::UnknownCheckpoint {
                ns: ns.clone(),
                id: id.clone(),
            }
        })?;
        checkpoints.push(entry_of(&tuple, &redact));
        report(ExportProgress::Hashing {
            done: checkpoints.len(),
            total,
        })?;
    }
    seal_checkpoints(&mut checkpoints);

    let schema = store.schema();
    let backend = serde_json::to_value(schema.backend)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut bundle = Bundle {
        format: FORMAT.to_owned(),
        generated_at: opts
            .generated_at
            .clone()
            .unwrap_or_else(flashback_storage::pyfmt::utc_now_isoformat),
        tool: ToolInfo {
            name: "flashback".to_owned(),
            version: opts.tool_version.clone(),
        },
        source: SourceInfo {
            backend,
            schema: schema.description.clone(),
        },
        thread_id: thread_id.to_owned(),
        scope,
        head,
        redactions: opts.redact.clone(),
        checkpoint_count: checkpoints.len(),
        checkpoints,
        bundle_hash: String::new(),
    };
    bundle.bundle_hash = compute_bundle_hash(&bundle);
    Ok(bundle)
}

/// Recompute every entry's `hash` and `chain` (in bundle order), then the `bundle_hash`.
/// Use after changing a bundle programmatically; [`build_bundle`] already does this.
pub fn seal(bundle: &mut Bundle) {
    bundle.checkpoint_count = bundle.checkpoints.len();
    seal_checkpoints(&mut bundle.checkpoints);
    bundle.bundle_hash = compute_bundle_hash(bundle);
}

fn seal_checkpoints(checkpoints: &mut [BundleCheckpoint]) {
    for cp in checkpoints.iter_mut() {
        cp.hash = entry_hash(cp);
    }
    let links: Vec<ChainInput> = checkpoints
        .iter()
        .map(|c| ChainInput {
            ns: &c.checkpoint_ns,
            id: &c.checkpoint_id,
            parent: c.parent_checkpoint_id.as_deref(),
        })
        .collect();
    let preds = chain_predecessors(&links);
    let mut chains: Vec<String> = Vec::with_capacity(checkpoints.len());
    for (i, cp) in checkpoints.iter().enumerate() {
        let prev = preds[i].map_or(ZERO_CHAIN, |j| chains[j].as_str());
        let c = chain_of(prev, &cp.hash);
        chains.push(c);
    }
    for (cp, c) in checkpoints.iter_mut().zip(chains) {
        cp.chain = c;
    }
}

fn entry_hash(cp: &BundleCheckpoint) -> String {
    let mut v = serde_json::to_value(cp).unwrap_or(Json::Null);
    if let Json::Object(m) = &mut v {
        m.shift_remove("hash");
        m.shift_remove("chain");
    }
    sha256_hex(canonical_of_value(&v).as_bytes())
}

fn compute_bundle_hash(bundle: &Bundle) -> String {
    let mut v = serde_json::to_value(bundle).unwrap_or(Json::Null);
    if let Json::Object(m) = &mut v {
        m.shift_remove("bundle_hash");
    }
    sha256_hex(canonical_of_value(&v).as_bytes())
}

/// The namespace holding `id`: the root namespace first, then the others in DAG order.
fn find_namespace(dag: &ThreadDag, id: &str) -> Option<String> {
    if dag.node("", id).is_some() {
        return Some(String::new());
    }
    dag.namespaces()
        .iter()
        .find(|n| dag.node(&n.ns, id).is_some())
        .map(|n| n.ns.clone())
}

/// Every checkpoint, parents before children, otherwise by `(checkpoint_id, ns)`.
fn tree_order(dag: &ThreadDag) -> Vec<(String, String)> {
    let mut children: HashMap<(&str, &str), Vec<(&str, &str)>> = HashMap::new();
    let mut ready: BinaryHeap<Reverse<(&str, &str)>> = BinaryHeap::new();
    for n in dag.nodes() {
        match n.parent.as_deref() {
            Some(p) if dag.node(&n.ns, p).is_some() => children
                .entry((n.ns.as_str(), p))
                .or_default()
                .push((n.checkpoint_id.as_str(), n.ns.as_str())),
            _ => ready.push(Reverse((n.checkpoint_id.as_str(), n.ns.as_str()))),
        }
    }
    let mut out = Vec::with_capacity(dag.len());
    while let Some(Reverse((id, ns))) = ready.pop() {
        out.push((ns.to_owned(), id.to_owned()));
        if let Some(kids) = children.remove(&(ns, id)) {
            ready.extend(kids.into_iter().map(Reverse));
        }
    }
    out
}

fn entry_of(t: &CheckpointTuple, redact: &Redactor) -> BundleCheckpoint {
    let h: &CheckpointHeader = &t.header;
    let view_opts = ViewOptions {
        reveal_secrets: false,
    };
    let mut metadata = h.metadata.clone();
    redact.apply(&mut metadata, false);
    let mut values = Map::new();
    for (channel, d) in &t.checkpoint.channel_values {
        let Some(mut v) = view_decoded(d, view_opts) else {
            continue;
        };
        if redact.matches(channel) {
            v = Json::String(REDACTED.to_owned());
        } else {
            redact.apply(&mut v, true);
        }
        values.insert(channel.clone(), v);
    }
    let pending_writes = t
        .pending_writes
        .iter()
        .map(|w: &PendingWrite| {
            let mut value = view_decoded(&w.value, view_opts).unwrap_or(Json::Null);
            if redact.matches(&w.channel) {
                value = Json::String(REDACTED.to_owned());
            } else {
                redact.apply(&mut value, true);
            }
            BundleWrite {
                task_id: w.task_id.clone(),
                task_path: w.task_path.clone(),
                idx: w.idx,
                channel: w.channel.clone(),
                type_tag: w.type_tag.clone(),
                value,
            }
        })
        .collect();
    BundleCheckpoint {
        checkpoint_ns: h.checkpoint_ns.clone(),
        checkpoint_id: h.checkpoint_id.clone(),
        parent_checkpoint_id: h.parent_checkpoint_id.clone(),
        ts: h.ts.clone(),
        metadata,
        values,
        pending_writes,
        hash: String::new(),
        chain: String::new(),
    }
}

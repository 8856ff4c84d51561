//! Building a bundle from a store ([`build_bundle`], [`build_bundle_observed`]): scope and
//! order of the entries, each checkpoint viewed and redacted, then sealed ([`seal`]) with its
//! hashes.

use super::canonical::{canonical_of_value, chain_of, chain_predecessors, sha256_hex, ChainInput};
use super::redact::Redactor;
use super::{
    Bundle, BundleCheckpoint, BundleWrite, ExportOptions, Scope, SourceInfo, ToolInfo, FORMAT,
    REDACTED, ZERO_CHAIN,
};
use crate::error::EngineError;
use crate::ThreadDag;
use flashback_codec::{view_decoded, ViewOptions};
use flashback_storage::{
    CheckpointHeader, CheckpointStore, CheckpointTuple, ListQuery, PendingWrite, StoreError,
};
use serde_json::{Map, Value as Json};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// Build the audit bundle of one thread (see the [module docs](super)).
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
    let mut loaded: Vec<CheckpointTuple> = match scope {
        Scope::Tree => store.list_tuples(&ListQuery::thread(thread_id)).await?,
        Scope::Branch => {
            let mut out = Vec::with_capacity(order.len());
            for (ns, id) in &order {
                if let Some(t) = store.get_tuple(thread_id, ns, Some(id)).await? {
                    out.push(t);
                }
            }
            out
        }
    };
    // DeltaChannels as the graph sees them (a branch holds every ancestor it needs).
    crate::delta::materialize_all(&mut loaded, &opts.delta);
    let mut tuples: HashMap<(String, String), CheckpointTuple> = HashMap::new();
    for t in loaded {
        let key = (
            t.header.checkpoint_ns.clone(),
            t.header.checkpoint_id.clone(),
        );
        tuples.entry(key).or_insert(t);
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
    sha256_hex(canonical_of_value(v).as_bytes())
}

fn compute_bundle_hash(bundle: &Bundle) -> String {
    let mut v = serde_json::to_value(bundle).unwrap_or(Json::Null);
    if let Json::Object(m) = &mut v {
        m.shift_remove("bundle_hash");
    }
    sha256_hex(canonical_of_value(v).as_bytes())
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
        problem: h.problem.clone(),
        hash: String::new(),
        chain: String::new(),
    }
}

//! Helpers shared by the integration tests.
#![allow(dead_code)]

use flashback_engine::{layout, render_text, LayoutOptions, ThreadDag};
use flashback_storage::CheckpointHeader;
use serde_json::json;

/// A root-namespace header.
pub fn h(id: &str, parent: Option<&str>) -> CheckpointHeader {
    sub("", id, parent, None)
}

/// A header in any namespace; `spawn` is `(parent_ns, parent_cid)` for `metadata.parents`.
pub fn sub(
    ns: &str,
    id: &str,
    parent: Option<&str>,
    spawn: Option<(&str, &str)>,
) -> CheckpointHeader {
    let mut parents = serde_json::Map::new();
    if let Some((pns, pid)) = spawn {
        parents.insert(pns.to_owned(), json!(pid));
    }
    CheckpointHeader {
        thread_id: "t".into(),
        checkpoint_ns: ns.into(),
        checkpoint_id: id.into(),
        parent_checkpoint_id: parent.map(str::to_owned),
        ts: String::new(),
        metadata: json!({"source": "loop", "step": 0, "parents": parents}),
        problem: None,
    }
}

/// A linear chain `prefix01 <- prefix02 <- …` of `n` root checkpoints.
pub fn chain(prefix: &str, n: usize, from: Option<&str>) -> Vec<CheckpointHeader> {
    let mut out = Vec::new();
    let mut parent = from.map(str::to_owned);
    for i in 1..=n {
        let id = format!("{prefix}{i:02}");
        out.push(h(&id, parent.as_deref()));
        parent = Some(id);
    }
    out
}

/// Render with a compact label: id, `(head)`, `[fork]`, orphan and cycle markers, namespace.
pub fn draw(headers: &[CheckpointHeader], opts: &LayoutOptions) -> String {
    let dag = ThreadDag::build(headers).expect("dag");
    let l = layout(&dag, opts).expect("layout");
    render_text(&l.rows, |r| {
        let mut s = r.id.clone();
        if !r.ns.is_empty() {
            s = format!("{s} @{}", r.ns);
        }
        if r.head {
            s.push_str(" (head)");
        }
        if r.fork_point {
            s.push_str(" [fork]");
        }
        if let Some(p) = &r.orphan_parent {
            s.push_str(&format!(" orphan of {p}"));
        }
        if let Some(p) = &r.broken_parent {
            s.push_str(&format!(" cycle-broken from {p}"));
        }
        s
    })
}

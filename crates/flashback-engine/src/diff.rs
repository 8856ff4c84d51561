//! Diff of two checkpoints (any two: same branch, other branches, other namespaces).
//!
//! ```text
//!  A ──┐                      channels: changed first (added, removed, changed in A's channel
//!      ├─ diff_tuples ──▶     order, then B's new ones), unchanged last
//!  B ──┘                      lists:    item by item — messages matched by `id`, other items
//!                                       by value (longest common subsequence)
//! ```
//!
//! Values are compared as decoded values (not their JSON view), so a changed `SecretStr` counts
//! as changed even though both sides are shown masked.

use crate::dag::ThreadDag;
use crate::delta::DeltaOptions;
use crate::error::EngineError;
use crate::fork::load_rebuilt;
use crate::merge::items;
use crate::reducer::item_key;
use flashback_codec::{view, view_decoded, Decoded, Value, ViewOptions};
use flashback_storage::{CheckpointStore, CheckpointTuple, ListQuery};
use serde::Serialize;
use serde_json::Value as Json;
use std::collections::HashMap;
use std::sync::Arc;

/// Above this many cells (`|a| * |b|` after trimming the common prefix and suffix), list items
/// are aligned by key position instead of a full longest-common-subsequence table.
const LCS_CELLS: usize = 4_000_000;

/// How a channel or list item differs between A and B.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "lowercase")]
pub enum Change {
    /// Only in B.
    Added,
    /// Only in A.
    Removed,
    /// In both, with different values.
    Changed,
    /// In both, equal.
    Unchanged,
}

/// One list item's fate.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ItemDiff {
    /// What happened to it.
    pub change: Change,
    /// Its index in A's list.
    pub a_index: Option<u32>,
    /// Its index in B's list.
    pub b_index: Option<u32>,
    /// The message id the items were matched by, if any.
    pub id: Option<String>,
    /// The item in A (JSON view; omitted for unchanged items, which equal `b`).
    pub a: Option<Json>,
    /// The item in B (JSON view).
    pub b: Option<Json>,
}

/// One channel's difference.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct ChannelDiff {
    /// The channel.
    pub channel: String,
    /// What happened to it.
    pub change: Change,
    /// Its version in A.
    pub version_a: Option<String>,
    /// Its version in B.
    pub version_b: Option<String>,
    /// The value in A (JSON view).
    pub a: Option<Json>,
    /// The value in B (JSON view; omitted when unchanged).
    pub b: Option<Json>,
    /// For a list on both sides that changed: item by item, in B's order with A's removed
    /// items at their old positions.
    pub items: Option<Vec<ItemDiff>>,
    /// A LangGraph control channel (see [`crate::is_control_channel`]).
    pub control: bool,
}

/// Counts per kind of change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DiffSummary {
    /// Channels only in B.
    pub added: u32,
    /// Channels only in A.
    pub removed: u32,
    /// Channels in both with different values.
    pub changed: u32,
    /// Equal channels.
    pub unchanged: u32,
}

/// Where the lines of two checkpoints meet: the newest checkpoint both are (or descend from).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CommonAncestor {
    /// Its id.
    pub checkpoint_id: String,
    /// Its `metadata.step`.
    pub step: Option<i64>,
}

/// The difference between two checkpoints.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct CheckpointDiff {
    /// A's namespace.
    pub a_ns: String,
    /// A's id.
    pub a_id: String,
    /// B's namespace.
    pub b_ns: String,
    /// B's id.
    pub b_id: String,
    /// Channels: added, removed and changed first, then unchanged.
    pub channels: Vec<ChannelDiff>,
    /// Counts.
    pub summary: DiffSummary,
    /// Where A's and B's lines meet (A or B itself when one descends from the other); `None`
    /// for checkpoints of two namespaces, lines that share no checkpoint, and [`diff_tuples`].
    pub common_ancestor: Option<CommonAncestor>,
}

/// Diff two loaded checkpoints.
pub fn diff_tuples(a: &CheckpointTuple, b: &CheckpointTuple, opts: ViewOptions) -> CheckpointDiff {
    let va = &a.checkpoint;
    let vb = &b.checkpoint;
    let mut names: Vec<&str> = va.channel_values.iter().map(|(c, _)| c.as_str()).collect();
    for (c, _) in &vb.channel_values {
        if va.value(c).is_none() {
            names.push(c);
        }
    }
    let mut changed = Vec::new();
    let mut unchanged = Vec::new();
    let mut summary = DiffSummary::default();
    for c in names {
        let (x, y) = (va.value(c), vb.value(c));
        let change = match (x, y) {
            (Some(_), None) => Change::Removed,
            (None, Some(_)) => Change::Added,
            (Some(x), Some(y)) if x == y => Change::Unchanged,
            _ => Change::Changed,
        };
        let shown = |d: Option<&Arc<Decoded>>| d.and_then(|d| view_decoded(d, opts));
        let entry = ChannelDiff {
            channel: c.to_owned(),
            control: crate::is_control_channel(c),
            change,
            version_a: va.version(c).map(|v| v.as_text()),
            version_b: vb.version(c).map(|v| v.as_text()),
            a: shown(x),
            b: if change == Change::Unchanged {
                None
            } else {
                shown(y)
            },
            items: match (change, items(x), items(y)) {
                (Change::Changed, Some(xs), Some(ys)) => Some(diff_items(xs, ys, opts)),
                _ => None,
            },
        };
        match change {
            Change::Added => summary.added += 1,
            Change::Removed => summary.removed += 1,
            Change::Changed => summary.changed += 1,
            Change::Unchanged => summary.unchanged += 1,
        }
        if change == Change::Unchanged {
            unchanged.push(entry);
        } else {
            changed.push(entry);
        }
    }
    changed.extend(unchanged);
    CheckpointDiff {
        a_ns: a.header.checkpoint_ns.clone(),
        a_id: a.header.checkpoint_id.clone(),
        b_ns: b.header.checkpoint_ns.clone(),
        b_id: b.header.checkpoint_id.clone(),
        channels: changed,
        summary,
        common_ancestor: None,
    }
}

/// Load and diff two checkpoints of a thread.
pub async fn diff_checkpoints(
    store: &dyn CheckpointStore,
    thread_id: &str,
    a: (&str, &str),
    b: (&str, &str),
    opts: ViewOptions,
    delta: &DeltaOptions,
) -> Result<CheckpointDiff, EngineError> {
    let ta = load_rebuilt(store, thread_id, a.0, a.1, delta).await?.0;
    let tb = load_rebuilt(store, thread_id, b.0, b.1, delta).await?.0;
    let mut diff = diff_tuples(&ta, &tb, opts);
    if diff.a_ns == diff.b_ns {
        diff.common_ancestor = meeting(store, thread_id, &diff.a_ns, &diff.a_id, &diff.b_id).await;
    }
    Ok(diff)
}

/// The newest common ancestor of `a` and `b` in namespace `ns` (its headers read, no value);
/// `None` when they share none, or the headers cannot be read (the diff stands without it).
async fn meeting(
    store: &dyn CheckpointStore,
    thread_id: &str,
    ns: &str,
    a: &str,
    b: &str,
) -> Option<CommonAncestor> {
    let query = ListQuery {
        checkpoint_ns: Some(ns.to_owned()),
        ..ListQuery::thread(thread_id)
    };
    let headers = store.list_headers(&query).await.ok()?;
    let dag = ThreadDag::build(&headers).ok()?;
    let id = crate::merge::common_ancestor(&dag, ns, a, b)?;
    let step = headers
        .iter()
        .find(|h| h.checkpoint_id == id)
        .and_then(|h| h.step());
    Some(CommonAncestor {
        checkpoint_id: id,
        step,
    })
}

fn message_id(v: &Value) -> Option<String> {
    let key = item_key(v);
    key.strip_prefix("id:").map(str::to_owned)
}

/// Align two lists: pairs `(Some(i), Some(j))` matched, `(Some(i), None)` only in A,
/// `(None, Some(j))` only in B, in B's order with A's leftovers at their old positions.
fn align(xs: &[Value], ys: &[Value]) -> Vec<(Option<usize>, Option<usize>)> {
    let kx: Vec<String> = xs.iter().map(item_key).collect();
    let ky: Vec<String> = ys.iter().map(item_key).collect();
    let mut pre = 0;
    while pre < kx.len() && pre < ky.len() && kx[pre] == ky[pre] {
        pre += 1;
    }
    let mut suf = 0;
    while suf < kx.len() - pre
        && suf < ky.len() - pre
        && kx[kx.len() - 1 - suf] == ky[ky.len() - 1 - suf]
    {
        suf += 1;
    }
    let (mx, my) = (&kx[pre..kx.len() - suf], &ky[pre..ky.len() - suf]);
    let mut pairs: Vec<(Option<usize>, Option<usize>)> =
        (0..pre).map(|i| (Some(i), Some(i))).collect();
    let middle = if mx.len().saturating_mul(my.len()) <= LCS_CELLS {
        lcs(mx, my)
    } else {
        greedy(mx, my)
    };
    pairs.extend(
        middle
            .into_iter()
            .map(|(i, j)| (i.map(|i| i + pre), j.map(|j| j + pre))),
    );
    pairs.extend((0..suf).map(|k| (Some(kx.len() - suf + k), Some(ky.len() - suf + k))));
    pairs
}

fn emit_gap(
    out: &mut Vec<(Option<usize>, Option<usize>)>,
    xs: std::ops::Range<usize>,
    ys: std::ops::Range<usize>,
) {
    out.extend(xs.map(|i| (Some(i), None)));
    out.extend(ys.map(|j| (None, Some(j))));
}

fn lcs(a: &[String], b: &[String]) -> Vec<(Option<usize>, Option<usize>)> {
    let (n, m) = (a.len(), b.len());
    // table[i][j] = LCS length of a[i..] and b[j..]
    let w = m + 1;
    let mut table = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * w + j] = if a[i] == b[j] {
                table[(i + 1) * w + j + 1] + 1
            } else {
                table[(i + 1) * w + j].max(table[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::with_capacity(n.max(m));
    let (mut gi, mut gj) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            emit_gap(&mut out, gi..i, gj..j);
            out.push((Some(i), Some(j)));
            i += 1;
            j += 1;
            gi = i;
            gj = j;
        } else if table[(i + 1) * w + j] >= table[i * w + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    emit_gap(&mut out, gi..n, gj..m);
    out
}

/// Matching for huge lists: each key of B matched to the next unused equal key of A, kept only
/// while A's indices increase.
fn greedy(a: &[String], b: &[String]) -> Vec<(Option<usize>, Option<usize>)> {
    let mut positions: HashMap<&str, std::collections::VecDeque<usize>> = HashMap::new();
    for (i, k) in a.iter().enumerate() {
        positions.entry(k.as_str()).or_default().push_back(i);
    }
    let mut out = Vec::new();
    let mut next_a = 0;
    for (j, k) in b.iter().enumerate() {
        let hit = positions.get_mut(k.as_str()).and_then(|q| {
            while q.front().is_some_and(|&i| i < next_a) {
                q.pop_front();
            }
            q.pop_front()
        });
        match hit {
            Some(i) => {
                emit_gap(&mut out, next_a..i, 0..0);
                out.push((Some(i), Some(j)));
                next_a = i + 1;
            }
            None => out.push((None, Some(j))),
        }
    }
    emit_gap(&mut out, next_a..a.len(), 0..0);
    out
}

fn diff_items(xs: &[Value], ys: &[Value], opts: ViewOptions) -> Vec<ItemDiff> {
    let index = |i: usize| u32::try_from(i).ok();
    align(xs, ys)
        .into_iter()
        .map(|pair| match pair {
            (Some(i), Some(j)) => {
                let same = xs[i] == ys[j];
                ItemDiff {
                    change: if same {
                        Change::Unchanged
                    } else {
                        Change::Changed
                    },
                    a_index: index(i),
                    b_index: index(j),
                    id: message_id(&ys[j]),
                    a: (!same).then(|| view(&xs[i], opts)),
                    b: Some(view(&ys[j], opts)),
                }
            }
            (Some(i), None) => ItemDiff {
                change: Change::Removed,
                a_index: index(i),
                b_index: None,
                id: message_id(&xs[i]),
                a: Some(view(&xs[i], opts)),
                b: None,
            },
            (None, Some(j)) => ItemDiff {
                change: Change::Added,
                a_index: None,
                b_index: index(j),
                id: message_id(&ys[j]),
                a: None,
                b: Some(view(&ys[j], opts)),
            },
            (None, None) => unreachable!("align never yields an empty pair"),
        })
        .collect()
}

/// The channels the step that made `tuple` updated: as recorded (`updated_channels`), else —
/// LangGraph.js and checkpoints before `v` 4 record none, nor do forks — those whose version
/// differs from the parent's (or that the parent has no version of). `None` for a root, or
/// when the parent cannot be read.
pub async fn updated_channels(
    store: &dyn CheckpointStore,
    tuple: &CheckpointTuple,
) -> Option<Vec<String>> {
    if let Some(recorded) = &tuple.checkpoint.updated_channels {
        return Some(recorded.clone());
    }
    let header = &tuple.header;
    let parent_id = header.parent_checkpoint_id.as_deref()?;
    // Its versions only: a selecting read that decodes no value.
    let key = (
        header.thread_id.as_str(),
        header.checkpoint_ns.as_str(),
        Some(parent_id),
    );
    let none: flashback_storage::ChannelFilter = Arc::new(|_| false);
    let parent = store
        .get_tuples_selecting(&[key], none)
        .await
        .ok()?
        .into_iter()
        .next()??;
    Some(
        tuple
            .checkpoint
            .channel_versions
            .iter()
            .filter(|(c, v)| parent.checkpoint.version(c) != Some(v))
            .map(|(c, _)| c.clone())
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(v: &[i64]) -> Vec<Value> {
        v.iter().map(|&i| Value::Int(i)).collect()
    }

    fn shape(xs: &[i64], ys: &[i64]) -> String {
        diff_items(&ints(xs), &ints(ys), ViewOptions::default())
            .iter()
            .map(|d| match d.change {
                Change::Added => format!("+{}", d.b.as_ref().unwrap()),
                Change::Removed => format!("-{}", d.a.as_ref().unwrap()),
                Change::Unchanged => format!("={}", d.b.as_ref().unwrap()),
                Change::Changed => "~".into(),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn appended_items_are_added_at_the_end() {
        assert_eq!(shape(&[1, 2], &[1, 2, 3]), "=1 =2 +3");
    }

    #[test]
    fn removed_and_inserted_items_keep_their_positions() {
        assert_eq!(shape(&[1, 2, 3, 4], &[1, 3, 5, 4]), "=1 -2 =3 +5 =4");
        assert_eq!(shape(&[], &[7]), "+7");
        assert_eq!(shape(&[7], &[]), "-7");
    }

    #[test]
    fn greedy_alignment_agrees_on_simple_lists() {
        let k = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            greedy(&k(&["a", "b", "c"]), &k(&["a", "c", "d"])),
            vec![
                (Some(0), Some(0)),
                (Some(1), None),
                (Some(2), Some(1)),
                (None, Some(2))
            ],
            "b removed, d added"
        );
    }
}

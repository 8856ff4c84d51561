//! Blob repair (the design note's fault recovery, `docs/three-table.md` "Repair"): which blob
//! rows a thread's checkpoints name but that cannot be read, and the whole rows that replace
//! them. Backend-neutral: each backend reads the rows and writes the fixes in one transaction.
//!
//! Which value a damaged row should hold is the engine's business (it replays the writes that
//! produced the version, `flashback_engine::repair`); this module only finds the damage and
//! turns a value into a row.

use super::rows::{materialise, ns_hash, Memo, NewBlob, StoredBlob, EMPTY};
use crate::maintenance::plan::CpRow;
use crate::serializer::Serde;
use crate::StoreError;
use flashback_codec::{decode_typed_keyed, AesKey, Decoded};
use std::collections::{BTreeMap, HashMap};

/// A blob row a checkpoint names (by its channel's version) that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
pub struct DamagedBlob {
    /// The namespace of the checkpoints that name it.
    pub checkpoint_ns: String,
    /// The channel.
    pub channel: String,
    /// The channel version (the row's key).
    pub version: String,
    /// Why it cannot be read, one line: no row, a broken delta chain, or bytes that do not
    /// decode.
    pub problem: String,
    /// The checkpoints whose `channel_versions` name this version, oldest first.
    pub checkpoints: Vec<String>,
    /// The damaged version this row is built on when its own row is intact (a delta whose
    /// base chain is broken): it reads again once that one is repaired. `None`: the damage is
    /// in this row.
    pub cause: Option<String>,
}

/// The value a damaged row gets back: stored whole (`kind = 'full'`), replacing the row.
#[derive(Debug, Clone)]
pub struct BlobFix {
    /// The namespace.
    pub checkpoint_ns: String,
    /// The channel.
    pub channel: String,
    /// The version (the row's key).
    pub version: String,
    /// The value.
    pub value: Decoded,
}

/// A thread's blob rows by `(ns hash, channel, version)`.
pub(super) type BlobMap = HashMap<(String, String, String), StoredBlob>;

/// The versions `rows` name that cannot be read from `blobs`, sorted by namespace, channel and
/// the first checkpoint naming them. A value stored encrypted is checked only with `key`.
pub(super) fn damaged(rows: &[CpRow], blobs: &BlobMap, key: Option<&AesKey>) -> Vec<DamagedBlob> {
    let mut named: BTreeMap<(String, String, String), Vec<String>> = BTreeMap::new();
    for r in rows {
        for (channel, version) in &r.versions {
            named
                .entry((r.ns.clone(), channel.clone(), version.clone()))
                .or_default()
                .push(r.id.clone());
        }
    }
    let mut memo = Memo::new();
    let mut out = Vec::new();
    for ((ns, channel, version), mut checkpoints) in named {
        let hash = ns_hash(&ns);
        let mut fetch = |v: &str| {
            Ok(blobs
                .get(&(hash.clone(), channel.clone(), v.to_owned()))
                .cloned())
        };
        let problem = match materialise(("", &hash, &channel), &version, &mut memo, &mut fetch) {
            Ok(None) => Some("no blob row".to_owned()),
            Err(e) => Some(e),
            Ok(Some(m)) if m.type_tag == EMPTY => None,
            Ok(Some(m)) => match decode_typed_keyed(&m.type_tag, Some(&m.bytes), key) {
                Decoded::Error { message, .. } => Some(format!("does not decode: {message}")),
                _ => None,
            },
        };
        if let Some(problem) = problem {
            checkpoints.sort();
            let root = root_cause(blobs, (&hash, &channel), &version, &mut memo, key);
            out.push(DamagedBlob {
                checkpoint_ns: ns,
                channel,
                cause: (root != version).then_some(root),
                version,
                problem,
                checkpoints,
            });
        }
    }
    out.sort_by(|a, b| {
        (&a.checkpoint_ns, &a.checkpoints.first(), &a.channel).cmp(&(
            &b.checkpoint_ns,
            &b.checkpoints.first(),
            &b.channel,
        ))
    });
    out
}

/// Whether `version` materialises and decodes.
fn readable(
    blobs: &BlobMap,
    (hash, channel): (&str, &str),
    version: &str,
    memo: &mut Memo,
    key: Option<&AesKey>,
) -> bool {
    let mut fetch = |v: &str| {
        Ok(blobs
            .get(&(hash.to_owned(), channel.to_owned(), v.to_owned()))
            .cloned())
    };
    match materialise(("", hash, channel), version, memo, &mut fetch) {
        Ok(Some(m)) => {
            m.type_tag == EMPTY
                || !matches!(
                    decode_typed_keyed(&m.type_tag, Some(&m.bytes), key),
                    Decoded::Error { .. }
                )
        }
        _ => false,
    }
}

/// The version whose own row breaks `version`: walking its base links back, the first row
/// that is missing, does not decode, or is a delta that does not apply to a readable base.
fn root_cause(
    blobs: &BlobMap,
    (hash, channel): (&str, &str),
    version: &str,
    memo: &mut Memo,
    key: Option<&AesKey>,
) -> String {
    let mut at = version.to_owned();
    for _ in 0..=super::delta::MAX_DEPTH {
        let row = blobs.get(&(hash.to_owned(), channel.to_owned(), at.clone()));
        let Some(base) = row.and_then(|r| (r.kind != "full").then_some(r.base_version.clone()))
        else {
            return at; // missing, or a full row that does not decode
        };
        match base {
            Some(b) if !readable(blobs, (hash, channel), &b, memo, key) => at = b,
            _ => return at, // the delta itself does not apply (or names no base)
        }
    }
    at
}

/// The row that replaces a damaged one: the value whole, sealed with `key` when the store
/// has one (as `put` stores it), with its namespace hash.
pub(super) fn fix_row(
    fix: &BlobFix,
    key: Option<&AesKey>,
) -> Result<(String, NewBlob), StoreError> {
    let (tag, bytes) = Serde::python(key).dumps_typed(&fix.channel, &fix.value)?;
    Ok((
        ns_hash(&fix.checkpoint_ns),
        NewBlob {
            channel: fix.channel.clone(),
            version: fix.version.clone(),
            type_tag: tag,
            kind: super::delta::Kind::Full,
            base_version: None,
            depth: 0,
            data: Some(bytes),
        },
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flashback_codec::{msgpack, Value};

    fn row(ns: &str, id: &str, versions: &[(&str, &str)]) -> CpRow {
        CpRow {
            thread: "t".into(),
            ns: ns.into(),
            id: id.into(),
            parent: None,
            v: Some(4),
            root: None,
            run_id: None,
            versions: versions
                .iter()
                .map(|(c, v)| (c.to_string(), v.to_string()))
                .collect(),
            stored: Vec::new(),
            delta: Vec::new(),
        }
    }

    fn blob(kind: &str, base: Option<&str>, data: Vec<u8>) -> StoredBlob {
        StoredBlob {
            type_tag: "msgpack".into(),
            kind: kind.into(),
            base_version: base.map(str::to_owned),
            depth: i64::from(base.is_some()),
            data: Some(data),
        }
    }

    #[test]
    fn missing_broken_and_undecodable_rows_are_found_and_nothing_else() {
        let h = ns_hash("");
        let good = msgpack::encode(&Value::Array(vec![Value::Str("a".into())]));
        let blobs: BlobMap = [
            ("a", "1", blob("full", None, good.clone())),
            ("b", "1", blob("full", None, vec![0xc1])),
            ("c", "2", blob("append", Some("1"), vec![0x90])),
            ("d", "1", blob("full", None, good)),
        ]
        .into_iter()
        .map(|(c, v, b)| ((h.clone(), c.to_owned(), v.to_owned()), b))
        .collect();
        let rows = [
            row("", "2", &[("a", "1"), ("b", "1"), ("c", "2"), ("e", "1")]),
            row("", "1", &[("a", "1"), ("d", "1")]),
        ];
        let found = damaged(&rows, &blobs, None);
        let got: Vec<(&str, &str)> = found
            .iter()
            .map(|d| (d.channel.as_str(), d.problem.as_str()))
            .collect();
        assert_eq!(got.len(), 3, "{found:?}");
        assert!(
            got[0].0 == "b" && got[0].1.starts_with("does not decode"),
            "{got:?}"
        );
        assert!(
            got[1].0 == "c" && got[1].1.contains("base version"),
            "{got:?}"
        );
        assert_eq!(got[2], ("e", "no blob row"));
        assert_eq!(found[2].checkpoints, vec!["2".to_owned()]);
        // c@2 is intact itself: its base row is what is missing.
        let causes: Vec<Option<&str>> = found.iter().map(|d| d.cause.as_deref()).collect();
        assert_eq!(causes, [None, Some("1"), None]);
    }

    #[test]
    fn a_delta_on_a_damaged_base_names_the_base_as_its_cause() {
        let h = ns_hash("");
        let list = msgpack::encode(&Value::Array(vec![Value::Int(1)]));
        let blobs: BlobMap = [
            ("g", "1", blob("full", None, vec![0xc1])),
            ("g", "2", blob("append", Some("1"), vec![0x91, 0x02])),
            ("h", "1", blob("full", None, list)),
            ("h", "2", blob("append", Some("1"), vec![0xc1])),
            ("h", "3", blob("append", Some("2"), vec![0x91, 0x03])),
        ]
        .into_iter()
        .map(|(c, v, b)| ((h.clone(), c.to_owned(), v.to_owned()), b))
        .collect();
        let rows = [
            row("", "1", &[("g", "2"), ("h", "3")]),
            row("", "0", &[("h", "2")]),
        ];
        let found = damaged(&rows, &blobs, None);
        let causes: Vec<(&str, &str, Option<&str>)> = found
            .iter()
            .map(|d| (d.channel.as_str(), d.version.as_str(), d.cause.as_deref()))
            .collect();
        assert_eq!(
            causes,
            [
                ("h", "2", None),
                ("g", "2", Some("1")),
                ("h", "3", Some("2"))
            ],
            "{found:#?}"
        );
    }

    #[test]
    fn a_fix_is_a_whole_row() {
        let fix = BlobFix {
            checkpoint_ns: "sub:1".into(),
            channel: "x".into(),
            version: "3".into(),
            value: Decoded::Msgpack(Value::Int(7)),
        };
        let (hash, row) = fix_row(&fix, None).expect("storable");
        assert_eq!(hash, ns_hash("sub:1"));
        assert_eq!(row.kind, super::super::delta::Kind::Full);
        assert_eq!(row.data.as_deref(), Some(&[7u8][..]));
        assert_eq!(row.type_tag, "msgpack");
    }
}

//! LangGraph's memory Store: what the `store_*` commands take and return.
//!
//! A namespace travels as its labels (`["users", "u-1"]`); a prefix of `[]` means the whole
//! store. Values are the stored JSON objects as they are (not the JSON view: the Store keeps
//! plain JSON).

use flashback_storage::memory::{MemoryItem, MemorySchema, MemorySummary};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use specta::Type;

/// What an open database holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum DbHolds {
    /// LangGraph checkpoints only.
    Checkpoints,
    /// Only a LangGraph memory Store (no threads).
    Store,
    /// Both.
    Mixed,
}

impl From<flashback_storage::Holds> for DbHolds {
    fn from(h: flashback_storage::Holds) -> Self {
        match h {
            flashback_storage::Holds::Checkpoints => DbHolds::Checkpoints,
            flashback_storage::Holds::Store => DbHolds::Store,
            flashback_storage::Holds::Mixed => DbHolds::Mixed,
        }
    }
}

/// The memory Store of a database at a glance (for a Memory screen).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct StoreSummary {
    /// Items.
    pub items: u32,
    /// Distinct namespaces.
    pub namespaces: u32,
    /// The store has vectors (`store_vectors`: it was set up with an index).
    pub vectors: bool,
    /// Items can have a TTL (`expires_at` / `ttl_minutes` exist).
    pub ttl: bool,
    /// e.g. `memory store (migrations ≤ 4, TTL, vectors)`.
    pub description: String,
}

impl StoreSummary {
    pub(crate) fn new(schema: &MemorySchema, counts: MemorySummary) -> StoreSummary {
        StoreSummary {
            items: super::count(counts.items),
            namespaces: super::count(counts.namespaces),
            vectors: schema.has_vectors,
            ttl: schema.has_ttl(),
            description: schema.description(),
        }
    }
}

/// One vector of an item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct StoreVector {
    /// The indexed field (`$` for the whole value, `text`, `tags.0`, …).
    pub field: String,
    /// Its dimensions (`null` when unknown).
    pub dims: Option<u32>,
}

/// The longest value preview of a Store item, in characters (`store ls`, the Memory list).
pub const STORE_PREVIEW_CHARS: usize = 60;

/// One item of the Store.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct StoreItem {
    /// Its namespace, e.g. `["users", "u-1"]`.
    pub namespace: Vec<String>,
    /// Its key.
    pub key: String,
    /// Its value (a JSON object; `null` when it could not be read, see `problem`).
    pub value: Json,
    /// The value on one line: its compact JSON text, cut to [`STORE_PREVIEW_CHARS`] with `…`
    /// (what `store ls` and the app's Memory list show).
    #[serde(default)]
    pub preview: String,
    /// Creation time (ISO 8601, UTC).
    pub created_at: Option<String>,
    /// Last update (ISO 8601, UTC).
    pub updated_at: Option<String>,
    /// When it expires (ISO 8601, UTC); only for items with a TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
    /// The TTL in minutes; only for items with one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_minutes: Option<f64>,
    /// `expires_at` has passed (a TTL sweep would delete it).
    pub expired: bool,
    /// Its vectors; only when it has any.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub vectors: Vec<StoreVector>,
    /// What could not be read; only for a damaged row.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// A Store value as one line of at most [`STORE_PREVIEW_CHARS`] characters. Only the start of
/// its JSON text is written (a value of many megabytes is not serialised whole for 60
/// characters).
pub fn store_preview(value: &Json) -> String {
    /// Takes bytes until it holds `cap`, then refuses the rest (ending the serialisation).
    struct Head {
        buf: Vec<u8>,
        cap: usize,
    }
    impl std::io::Write for Head {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let room = self.cap.saturating_sub(self.buf.len());
            if room == 0 {
                return Err(std::io::ErrorKind::WriteZero.into());
            }
            let n = room.min(b.len());
            self.buf.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // A UTF-8 character is at most 4 bytes: one more character than shown tells a cut.
    let mut head = Head {
        buf: Vec::new(),
        cap: (STORE_PREVIEW_CHARS + 1) * 4,
    };
    let _ = serde_json::to_writer(&mut head, value);
    flashback_engine::watch::clip(&String::from_utf8_lossy(&head.buf), STORE_PREVIEW_CHARS)
}

impl From<MemoryItem> for StoreItem {
    fn from(i: MemoryItem) -> Self {
        StoreItem {
            namespace: i.namespace,
            key: i.key,
            preview: store_preview(&i.value),
            value: i.value,
            created_at: i.created_at,
            updated_at: i.updated_at,
            expires_at: i.expires_at,
            ttl_minutes: i.ttl_minutes,
            expired: i.expired,
            vectors: i
                .vectors
                .into_iter()
                .map(|v| StoreVector {
                    field: v.field,
                    dims: v.dims,
                })
                .collect(),
            problem: i.problem,
        }
    }
}

/// List items under a namespace prefix, most recently updated first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StoreListRequest {
    /// Database handle.
    pub db: String,
    /// Namespace prefix on whole labels (`[]`: everything).
    #[serde(default)]
    pub prefix: Vec<String>,
    /// At most this many (default: all).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many first.
    #[serde(default)]
    pub offset: u32,
}

/// One item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StoreGetRequest {
    /// Database handle.
    pub db: String,
    /// Its namespace.
    pub namespace: Vec<String>,
    /// Its key.
    pub key: String,
}

/// Text search: items whose value's JSON text contains `query`, case-insensitively.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StoreSearchRequest {
    /// Database handle.
    pub db: String,
    /// Namespace prefix on whole labels (`[]`: everything).
    #[serde(default)]
    pub prefix: Vec<String>,
    /// The text to find in the values (compact JSON text, e.g. `"theme":"dark"`).
    pub query: String,
    /// At most this many matches (default: all).
    #[serde(default)]
    pub limit: Option<u32>,
    /// Skip this many matches first.
    #[serde(default)]
    pub offset: u32,
}

/// The namespaces under a prefix.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StoreNamespacesRequest {
    /// Database handle.
    pub db: String,
    /// Namespace prefix on whole labels (`[]`: everything).
    #[serde(default)]
    pub prefix: Vec<String>,
}

/// A namespace and how many items it holds (a tree is built from these).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type)]
pub struct StoreNamespace {
    /// The namespace.
    pub namespace: Vec<String>,
    /// Items in exactly this namespace.
    pub items: u32,
}

/// Store an item (as Python's `store.put(namespace, key, value, ttl=…)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StorePutRequest {
    /// Database handle.
    pub db: String,
    /// Its namespace (not empty; labels without dots; not rooted at `langgraph`).
    pub namespace: Vec<String>,
    /// Its key.
    pub key: String,
    /// The value: a JSON object.
    pub value: Json,
    /// Expire it after this many minutes (none: never).
    #[serde(default)]
    pub ttl_minutes: Option<f64>,
}

/// What a put did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct StorePutResult {
    /// The item as now stored.
    pub item: StoreItem,
    /// It did not exist before.
    pub created: bool,
    /// The fields of the vectors removed with the old value (Flashback cannot embed the new
    /// one; the program's store re-embeds it on its next put).
    pub removed_vectors: Vec<String>,
}

/// Delete an item (or, with `dry_run`, show what would go).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Type, JsonSchema)]
pub struct StoreDeleteRequest {
    /// Database handle.
    pub db: String,
    /// Its namespace.
    pub namespace: Vec<String>,
    /// Its key.
    pub key: String,
    /// Only say what would go.
    pub dry_run: bool,
}

/// What a delete removed (or would remove).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Type)]
pub struct StoreDeleteResult {
    /// The item as it was.
    pub item: StoreItem,
    /// Its vectors, removed with it.
    pub removed_vectors: u32,
    /// Nothing was written.
    pub dry_run: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_preview_reads_only_the_start_and_says_the_same() {
        for v in [
            json!({"a": 1}),
            json!({"text": "é∑😀".repeat(100_000), "n": [1, 2, 3]}),
            json!("x".repeat(60)),
            json!("x".repeat(61)),
        ] {
            assert_eq!(
                store_preview(&v),
                flashback_engine::watch::clip(&v.to_string(), STORE_PREVIEW_CHARS)
            );
        }
    }
}

//! LangGraph's long-term memory Store (`langgraph.store.sqlite.SqliteStore`,
//! `langgraph.store.postgres.PostgresStore`): its items read and written as Python does.
//!
//! ```text
//!  store         (prefix, key) → value, created_at, updated_at[, expires_at, ttl_minutes]
//!  store_vectors (prefix, key, field_name) → embedding      (only with an index configured)
//!  store_migrations, vector_migrations                       (applied migration numbers)
//! ```
//!
//! A namespace `("users", "u-1")` is stored dot-joined in `prefix` (`users.u-1`; labels may not
//! contain a dot), so a namespace prefix matches on whole labels: `users` matches `users` and
//! `users.u-1`, never `users2` (as Python's `search(namespace_prefix)` does). The value is a
//! JSON object: JSON text in a BLOB on SQLite (`orjson.dumps`), `jsonb` on Postgres.
//! `expires_at` / `ttl_minutes` came with later migrations and may be missing; `store_vectors`
//! exists only when the store was set up with an index.
//!
//! Reading ([`MemoryRead`]) never writes: it goes through the database's read-only checkpoint
//! connection ([`crate::CheckpointStore::memory`]). Writing ([`MemoryWrite`], from
//! [`crate::open_memory_writable`]) is explicit, one transaction per call, and writes the rows Python's store
//! writes (timestamps from the database's clock, `expires_at` from the TTL). Python keeps
//! `created_at` when Postgres updates an item (`ON CONFLICT … DO UPDATE`) but SQLite's
//! `INSERT OR REPLACE` resets it: each backend here does what Python does on it. Flashback
//! cannot embed, so a put removes the item's (now stale) vectors and says which; a delete
//! removes them too (Python's SQLite connection does not enforce the foreign key that would).
//!
//! **Search** here is text search, not semantic search: an item matches when the query, lower
//! cased, is a substring of its value's compact JSON text lower cased (`{"a":"b"}`: no spaces,
//! keys in stored order, non-ASCII as is, quotes inside strings escaped as `\"`). A row whose
//! value is not valid JSON is matched against its stored text.
//!
//! A row that cannot be read in full (a value that is not JSON, a timestamp that is not one, a
//! key that is not text) is returned with a `problem` note instead of failing the query.

use crate::model::Backend;
use crate::StoreError;
use async_trait::async_trait;
use serde::Serialize;
use serde_json::Value as Json;

pub(crate) mod items;
#[cfg(feature = "postgres")]
pub(crate) mod postgres;
pub(crate) mod sqlite;
pub(crate) mod time;

pub use time::Stamp;

/// The memory Store's tables as detected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct MemorySchema {
    /// The backend.
    pub backend: Backend,
    /// `store.expires_at` exists (SQLite migration 2, Postgres migration 2).
    pub has_expires_at: bool,
    /// `store.ttl_minutes` exists (SQLite migration 3, Postgres migration 2).
    pub has_ttl_minutes: bool,
    /// `store_vectors` exists (the store was set up with an index).
    pub has_vectors: bool,
    /// The highest version in `store_migrations`, if any.
    pub migration_version: Option<i64>,
    /// The highest version in `vector_migrations`, if any.
    pub vector_migration_version: Option<i64>,
    /// Postgres: the type of `store_vectors.embedding` (`vector(1536)`, …).
    pub embedding_type: Option<String>,
}

impl MemorySchema {
    /// A Store that is not a database's tables (a server's, read whole): no TTL columns, no
    /// vectors, no migrations.
    pub(crate) fn without_tables(backend: Backend) -> MemorySchema {
        MemorySchema {
            backend,
            has_expires_at: false,
            has_ttl_minutes: false,
            has_vectors: false,
            migration_version: None,
            vector_migration_version: None,
            embedding_type: None,
        }
    }

    /// Whether items can carry a TTL here.
    pub fn has_ttl(&self) -> bool {
        self.has_expires_at && self.has_ttl_minutes
    }

    /// A short human description, e.g. `memory store (migrations ≤ 4, TTL, vectors)`.
    pub fn description(&self) -> String {
        let mut parts = vec![match self.migration_version {
            Some(v) => format!("migrations ≤ {v}"),
            None => "no store_migrations".to_owned(),
        }];
        if self.has_ttl() {
            parts.push("TTL".into());
        }
        if self.has_vectors {
            parts.push("vectors".into());
        }
        format!("memory store ({})", parts.join(", "))
    }
}

/// One vector field of an item (`store_vectors` row).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct VectorField {
    /// `field_name`: the indexed path (`$` for the whole value, `text`, `tags.0`, …).
    pub field: String,
    /// The embedding's dimensions (`None`: NULL, or a form that was not understood).
    pub dims: Option<u32>,
}

/// One item of the Store.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MemoryItem {
    /// The namespace (`prefix` split on dots).
    pub namespace: Vec<String>,
    /// The key.
    pub key: String,
    /// The value (`null` when it could not be read; see `problem`).
    pub value: Json,
    /// Creation time (ISO 8601, UTC).
    pub created_at: Option<String>,
    /// Last update (ISO 8601, UTC).
    pub updated_at: Option<String>,
    /// When it expires (ISO 8601, UTC), for items with a TTL.
    pub expires_at: Option<String>,
    /// The TTL in minutes, for items with one.
    pub ttl_minutes: Option<f64>,
    /// `expires_at` has passed (a sweep would delete it; Python's reads may still return it).
    pub expired: bool,
    /// Its vectors, by field (empty without an index).
    pub vectors: Vec<VectorField>,
    /// What could not be read, if anything.
    pub problem: Option<String>,
    /// The text search looks in (not serialised).
    #[serde(skip)]
    pub(crate) search_text: String,
}

/// A namespace and its number of items.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NamespaceCount {
    /// The namespace.
    pub namespace: Vec<String>,
    /// Items in exactly this namespace.
    pub items: u64,
}

/// Counts for a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct MemorySummary {
    /// Items.
    pub items: u64,
    /// Distinct namespaces.
    pub namespaces: u64,
}

/// Which page of a listing: `offset` items skipped, then at most `limit` (all when `None`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Page {
    /// At most this many.
    pub limit: Option<u32>,
    /// Skip this many first.
    pub offset: u32,
}

/// What a put did.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PutOutcome {
    /// The item as now stored.
    pub item: MemoryItem,
    /// There was no such item before.
    pub created: bool,
    /// The fields of the vectors removed (they embedded the old value).
    pub removed_vectors: Vec<String>,
}

/// What a delete removed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DeleteOutcome {
    /// The item as it was.
    pub item: MemoryItem,
    /// Its vectors removed with it.
    pub removed_vectors: u64,
}

/// Reading the memory Store (never writes).
#[async_trait]
pub trait MemoryRead: Send + Sync {
    /// The detected tables.
    fn schema(&self) -> &MemorySchema;

    /// Items and namespaces.
    async fn summary(&self) -> Result<MemorySummary, StoreError>;

    /// Items under a namespace prefix (empty: all), most recently updated first (as Python's
    /// `search` without a query), then by namespace and key.
    async fn list(&self, prefix: &[String], page: Page) -> Result<Vec<MemoryItem>, StoreError>;

    /// One item, or `None`.
    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<MemoryItem>, StoreError>;

    /// [`list`](Self::list) narrowed to the items whose value's JSON text contains `query`
    /// (case-insensitive; see the module docs). The page applies to the matches.
    async fn search(
        &self,
        prefix: &[String],
        query: &str,
        page: Page,
    ) -> Result<Vec<MemoryItem>, StoreError>;

    /// The namespaces under a prefix (empty: all) with their item counts, sorted.
    async fn namespaces(&self, prefix: &[String]) -> Result<Vec<NamespaceCount>, StoreError>;
}

/// Writing the memory Store: each call one transaction.
#[async_trait]
pub trait MemoryWrite: MemoryRead {
    /// Store `value` (a JSON object) at `namespace`/`key`, with a TTL in minutes or none, as
    /// Python's `store.put(namespace, key, value, index=False, ttl=…)` does; the item's
    /// vectors are removed (Flashback cannot embed the new value).
    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: &Json,
        ttl_minutes: Option<f64>,
    ) -> Result<PutOutcome, StoreError>;

    /// Delete an item and its vectors; `None` when there is no such item.
    async fn delete(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<DeleteOutcome>, StoreError>;
}

/// The error for a database without a memory Store.
pub fn no_store(what: &str) -> StoreError {
    StoreError::UnsupportedSchema {
        found: format!(
            "{what} holds no LangGraph memory store (LangGraph's SqliteStore / PostgresStore \
             create a `store` table)"
        ),
    }
}

// ---- names and values ---------------------------------------------------------------------

/// The stored `prefix` of a namespace.
pub(crate) fn prefix_text(namespace: &[String]) -> String {
    namespace.join(".")
}

/// A stored `prefix` as a namespace (split on dots, as Python's `_decode_ns_text`).
pub(crate) fn namespace_of(prefix: &str) -> Vec<String> {
    prefix.split('.').map(str::to_owned).collect()
}

/// Check namespace labels as Python does (`_validate_namespace_labels`): non-empty, no dot,
/// no NUL.
pub(crate) fn check_labels(namespace: &[String], what: &str) -> Result<(), StoreError> {
    for label in namespace {
        let problem = if label.is_empty() {
            "is empty"
        } else if label.contains('.') {
            "contains a dot (namespaces are stored dot-joined)"
        } else if label.contains('\0') {
            "contains a NUL byte"
        } else {
            continue;
        };
        return Err(StoreError::InvalidInput(format!(
            "{what} {namespace:?}: the label {label:?} {problem}"
        )));
    }
    Ok(())
}

/// The longest TTL a put accepts (a thousand years, in minutes): beyond it the expiry would
/// not be a date Python can read.
pub const MAX_TTL_MINUTES: f64 = 525_960_000.0;

/// Check what a put is given, as Python's `put` does: a non-empty namespace not rooted at
/// `langgraph`, a JSON object, a finite positive TTL (and columns to hold it).
pub(crate) fn check_put(
    schema: &MemorySchema,
    namespace: &[String],
    value: &Json,
    ttl_minutes: Option<f64>,
) -> Result<(), StoreError> {
    if namespace.is_empty() {
        return Err(StoreError::InvalidInput(
            "the namespace cannot be empty".into(),
        ));
    }
    check_labels(namespace, "namespace")?;
    if namespace[0] == "langgraph" {
        return Err(StoreError::InvalidInput(
            "the namespace cannot start with \"langgraph\" (reserved by LangGraph)".into(),
        ));
    }
    if !value.is_object() {
        return Err(StoreError::InvalidInput(
            "the value must be a JSON object (LangGraph's store keeps dicts)".into(),
        ));
    }
    if let Some(ttl) = ttl_minutes {
        if !ttl.is_finite() || ttl <= 0.0 || ttl > MAX_TTL_MINUTES {
            return Err(StoreError::InvalidInput(format!(
                "the TTL must be a positive number of minutes up to {MAX_TTL_MINUTES} (a \
                 thousand years), not {ttl}"
            )));
        }
        if !schema.has_ttl() {
            return Err(StoreError::InvalidInput(
                "this store's tables predate TTLs (no store.expires_at / ttl_minutes): run \
                 the store's setup() in Python to migrate it first"
                    .into(),
            ));
        }
    }
    Ok(())
}

/// Whether a stored prefix is `prefix` or below it (whole labels).
pub(crate) fn under(stored: &str, prefix: &str) -> bool {
    prefix.is_empty()
        || stored == prefix
        || (stored.len() > prefix.len()
            && stored.starts_with(prefix)
            && stored.as_bytes()[prefix.len()] == b'.')
}

/// The lower-cased query (empty matches everything).
pub(crate) fn needle(query: &str) -> String {
    query.to_lowercase()
}

/// Whether an item matches a lower-cased query.
pub(crate) fn matches(item: &MemoryItem, needle: &str) -> bool {
    needle.is_empty() || item.search_text.to_lowercase().contains(needle)
}

/// Keep the page of an ordered sequence.
pub(crate) fn paged<T>(items: impl Iterator<Item = T>, page: Page) -> Vec<T> {
    let items = items.skip(page.offset as usize);
    match page.limit {
        Some(n) => items.take(n as usize).collect(),
        None => items.collect(),
    }
}

/// What a row holds before it becomes a [`MemoryItem`].
#[derive(Debug, Default)]
pub(crate) struct RawItem {
    pub(crate) prefix: String,
    pub(crate) key: String,
    /// The value's bytes (JSON text), or `None` for SQL NULL.
    pub(crate) value: Option<Vec<u8>>,
    pub(crate) created_at: Option<Stamp>,
    pub(crate) updated_at: Option<Stamp>,
    pub(crate) expires_at: Option<Stamp>,
    pub(crate) ttl_minutes: Option<f64>,
    /// Problems found reading the keys or columns.
    pub(crate) problems: Vec<String>,
}

impl RawItem {
    /// The item, its value parsed (a bad value damages only this item).
    pub(crate) fn into_item(self, now_micros: i64) -> MemoryItem {
        let mut problems = self.problems;
        let (value, search_text) = match &self.value {
            None => {
                problems.push("the value is NULL".into());
                (Json::Null, String::new())
            }
            Some(bytes) => match serde_json::from_slice::<Json>(bytes) {
                Ok(v) => {
                    if !v.is_object() {
                        problems.push(format!(
                            "the value is a JSON {}, not an object",
                            json_kind(&v)
                        ));
                    }
                    let text = serde_json::to_string(&v).unwrap_or_default();
                    (v, text)
                }
                Err(e) => {
                    let text = String::from_utf8_lossy(bytes).into_owned();
                    problems.push(format!(
                        "the value is not valid JSON ({e}): {}",
                        clip(&text, 80)
                    ));
                    (Json::Null, text)
                }
            },
        };
        let mut iso = |stamp: Option<Stamp>, column: &str| match stamp {
            None => None,
            Some(Stamp::At { micros }) => Some(time::iso(micros)),
            Some(Stamp::Unreadable(raw)) => {
                problems.push(format!("{column} {raw:?} is not a timestamp"));
                Some(raw)
            }
        };
        let expired = matches!(self.expires_at, Some(Stamp::At { micros }) if micros < now_micros);
        let created_at = iso(self.created_at, "created_at");
        let updated_at = iso(self.updated_at, "updated_at");
        let expires_at = iso(self.expires_at, "expires_at");
        MemoryItem {
            namespace: namespace_of(&self.prefix),
            key: self.key,
            value,
            created_at,
            updated_at,
            expires_at,
            ttl_minutes: self.ttl_minutes,
            expired,
            vectors: Vec::new(),
            problem: (!problems.is_empty()).then(|| problems.join("; ")),
            search_text,
        }
    }
}

/// A `store_vectors` row as read: field, dimensions, a problem.
pub(crate) type VectorRow = (String, Option<u32>, Option<String>);

/// Attach vector rows to an item.
pub(crate) fn add_vectors(item: &mut MemoryItem, rows: Vec<VectorRow>) {
    for (field, dims, problem) in rows {
        if let Some(p) = problem {
            item.problem = Some(match item.problem.take() {
                Some(before) => format!("{before}; {p}"),
                None => p,
            });
        }
        item.vectors.push(VectorField { field, dims });
    }
}

/// Values longer than this (as compact JSON) are listed and found by search as their size only
/// (the JSON view's `$too_large` placeholder), so a page of items stays small; `get` loads one
/// whole.
pub const LIST_VALUE_BYTES: usize = 1 << 20;

impl MemoryItem {
    /// The item as a list or a search shows it (see [`LIST_VALUE_BYTES`]).
    pub(crate) fn listed(mut self) -> MemoryItem {
        let bytes = self.search_text.len();
        if bytes > LIST_VALUE_BYTES {
            self.value = flashback_codec::view::too_large_view(
                bytes as u64,
                json_kind(&self.value),
                flashback_codec::TooLargeReason::Value,
            );
            self.search_text = String::new();
        }
        self
    }
}

fn json_kind(v: &Json) -> &'static str {
    match v {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(max).collect();
        format!("{cut}…")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_match_whole_labels() {
        assert!(under("users", "users"));
        assert!(under("users.u-1", "users"));
        assert!(!under("users2", "users"));
        assert!(!under("user", "users"));
        assert!(under("anything", ""));
        assert!(under("a.b.c", "a.b"));
        assert!(!under("a.bc", "a.b"));
    }

    #[test]
    fn labels_are_checked_as_python_does() {
        let ns = |v: &[&str]| v.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert!(check_labels(&ns(&["users", "u-1"]), "namespace").is_ok());
        assert!(check_labels(&ns(&["a.b"]), "namespace").is_err());
        assert!(check_labels(&ns(&[""]), "namespace").is_err());
        assert!(check_labels(&ns(&["a\0"]), "namespace").is_err());
        let schema = MemorySchema {
            backend: Backend::Sqlite,
            has_expires_at: false,
            has_ttl_minutes: false,
            has_vectors: false,
            migration_version: Some(1),
            vector_migration_version: None,
            embedding_type: None,
        };
        let obj = serde_json::json!({"a": 1});
        assert!(check_put(&schema, &ns(&["a"]), &obj, None).is_ok());
        assert!(check_put(&schema, &[], &obj, None).is_err());
        assert!(check_put(&schema, &ns(&["langgraph"]), &obj, None).is_err());
        assert!(check_put(&schema, &ns(&["a"]), &serde_json::json!([1]), None).is_err());
        // No TTL columns: a TTL cannot be stored.
        assert!(check_put(&schema, &ns(&["a"]), &obj, Some(5.0)).is_err());
        let ttl = MemorySchema {
            has_expires_at: true,
            has_ttl_minutes: true,
            ..schema
        };
        assert!(check_put(&ttl, &ns(&["a"]), &obj, Some(5.0)).is_ok());
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY, 1e300] {
            assert!(
                check_put(&ttl, &ns(&["a"]), &obj, Some(bad)).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_bad_value_damages_only_its_item() {
        let raw = RawItem {
            prefix: "a.b".into(),
            key: "k".into(),
            value: Some(b"{not json".to_vec()),
            created_at: Some(Stamp::Unreadable("yesterday".into())),
            ..RawItem::default()
        };
        let item = raw.into_item(0);
        assert_eq!(item.namespace, vec!["a", "b"]);
        assert_eq!(item.value, Json::Null);
        let problem = item.problem.expect("problem");
        assert!(problem.contains("not valid JSON"), "{problem}");
        assert!(problem.contains("yesterday"), "{problem}");
        assert!(matches(
            &RawItem {
                value: Some(br#"{"Name":"Ada"}"#.to_vec()),
                ..RawItem::default()
            }
            .into_item(0),
            &needle("name\":\"ADA")
        ));
    }
}

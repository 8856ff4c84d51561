//! The memory Store in a SQLite file (`langgraph-checkpoint-sqlite`'s `SqliteStore`): read
//! through the file's read-only connection (writing: `write.rs`).

use crate::escape::{key_or_note, RawKey};
use crate::memory::time::{now_micros, Stamp};
use crate::memory::{
    add_vectors, check_labels, matches, namespace_of, needle, paged, prefix_text, under,
    MemoryItem, MemoryRead, MemorySchema, MemorySummary, NamespaceCount, Page, RawItem,
};
use crate::model::Backend;
use crate::sqlite::connect::classify;
use crate::sqlite::reader::{read_shared, Reader};
use crate::StoreError;
use async_trait::async_trait;
use rusqlite::types::ValueRef;
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value as Json;
use std::sync::{Arc, Mutex};

/// The columns of `store` a LangGraph memory store always has.
const STORE_COLUMNS: [&str; 5] = ["prefix", "key", "value", "created_at", "updated_at"];

/// The Store's tables in the file, or `None` when it has none (no `store` table, or one that is
/// not LangGraph's).
pub(crate) fn detect(conn: &Connection, path: &str) -> Result<Option<MemorySchema>, StoreError> {
    let err = |e| {
        classify(path, e, |e| StoreError::NotADatabase {
            path: path.into(),
            detail: e.to_string(),
        })
    };
    let columns = |table: &str| -> Result<Vec<String>, StoreError> {
        let mut stmt = conn
            .prepare("SELECT name FROM pragma_table_info(?1)")
            .map_err(err)?;
        let cols = stmt
            .query_map([table], |r| r.get::<_, String>(0))
            .map_err(err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(err)?;
        Ok(cols)
    };
    let store = columns("store")?;
    if !STORE_COLUMNS.iter().all(|c| store.iter().any(|x| x == c)) {
        return Ok(None);
    }
    let vectors = columns("store_vectors")?;
    let has_vectors = ["prefix", "key", "field_name", "embedding"]
        .iter()
        .all(|c| vectors.iter().any(|x| x == c));
    let version = |table: &str| -> Option<i64> {
        // A missing table or a strange column is no version.
        conn.query_row(&format!("SELECT max(v) FROM {table}"), [], |r| {
            r.get::<_, Option<i64>>(0)
        })
        .ok()
        .flatten()
    };
    Ok(Some(MemorySchema {
        backend: Backend::Sqlite,
        has_expires_at: store.iter().any(|c| c == "expires_at"),
        has_ttl_minutes: store.iter().any(|c| c == "ttl_minutes"),
        has_vectors,
        migration_version: version("store_migrations"),
        vector_migration_version: version("vector_migrations"),
        embedding_type: None,
    }))
}

/// The memory Store of an open [`crate::sqlite::SqliteStore`] (its read-only connection).
pub(crate) struct SqliteMemory {
    reader: Arc<Mutex<Reader>>,
    path: String,
    schema: MemorySchema,
}

impl SqliteMemory {
    pub(crate) fn new(reader: Arc<Mutex<Reader>>, path: String, schema: MemorySchema) -> Self {
        SqliteMemory {
            reader,
            path,
            schema,
        }
    }

    async fn read<T, F>(&self, f: F) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: FnOnce(&Cx<'_>) -> Result<T, StoreError> + Send + 'static,
    {
        let schema = self.schema.clone();
        let path = self.path.clone();
        read_shared(&self.reader, &self.path, move |conn| {
            f(&Cx {
                conn,
                schema: &schema,
                path: &path,
            })
        })
        .await
    }
}

/// What the blocking reads need.
pub(super) struct Cx<'a> {
    pub(super) conn: &'a Connection,
    pub(super) schema: &'a MemorySchema,
    pub(super) path: &'a str,
}

impl Cx<'_> {
    fn err(&self) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
        move |e| classify(self.path, e, |e| StoreError::Query(e.to_string()))
    }

    /// `SELECT … FROM store` with the optional columns as NULL where missing.
    fn select(&self) -> String {
        format!(
            "SELECT prefix, key, value, created_at, updated_at, {}, {} FROM store",
            if self.schema.has_expires_at {
                "expires_at"
            } else {
                "NULL"
            },
            if self.schema.has_ttl_minutes {
                "ttl_minutes"
            } else {
                "NULL"
            },
        )
    }

    /// Items under `prefix`, newest update first, each passed to `keep` until it says stop.
    fn scan(
        &self,
        prefix: &str,
        page_in_sql: Option<Page>,
        mut keep: impl FnMut(MemoryItem) -> bool,
    ) -> Result<(), StoreError> {
        let (limit, offset) = match page_in_sql {
            Some(p) => (p.limit.map_or(-1, i64::from), i64::from(p.offset)),
            None => (-1, 0),
        };
        let sql = format!(
            "{} WHERE (?1 = '' OR prefix = ?1 OR substr(prefix, 1, length(?1) + 1) = ?1 || '.') \
             ORDER BY updated_at DESC, prefix, key LIMIT ?2 OFFSET ?3",
            self.select()
        );
        let mut stmt = self.conn.prepare(&sql).map_err(self.err())?;
        let mut rows = stmt
            .query(params![prefix, limit, offset])
            .map_err(self.err())?;
        let now = now_micros();
        while let Some(row) = rows.next().map_err(self.err())? {
            let raw = raw_item(row).map_err(self.err())?;
            if !under(&raw.prefix, prefix) {
                continue;
            }
            if !keep(raw.into_item(now)) {
                break;
            }
        }
        Ok(())
    }

    pub(super) fn get(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<MemoryItem>, StoreError> {
        check_labels(namespace, "namespace")?;
        let sql = format!("{} WHERE prefix = ?1 AND key = ?2", self.select());
        let raw = self
            .conn
            .query_row(&sql, params![prefix_text(namespace), key], raw_item)
            .optional()
            .map_err(self.err())?;
        let Some(raw) = raw else {
            return Ok(None);
        };
        let mut item = raw.into_item(now_micros());
        self.attach_vectors(std::slice::from_mut(&mut item))?;
        Ok(Some(item))
    }

    /// Each item's vector fields and their dimensions.
    fn attach_vectors(&self, items: &mut [MemoryItem]) -> Result<(), StoreError> {
        if !self.schema.has_vectors {
            return Ok(());
        }
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT field_name, embedding FROM store_vectors \
                 WHERE prefix = ?1 AND key = ?2 ORDER BY field_name",
            )
            .map_err(self.err())?;
        for item in items {
            let rows = stmt
                .query_map(params![prefix_text(&item.namespace), item.key], |r| {
                    let mut problems = Vec::new();
                    let field =
                        key_or_note("field_name", RawKey::from(r.get_ref(0)?), &mut problems);
                    let (dims, problem) = dims_of(&field, r.get_ref(1)?);
                    problems.extend(problem);
                    Ok((
                        field,
                        dims,
                        (!problems.is_empty()).then(|| problems.join("; ")),
                    ))
                })
                .map_err(self.err())?
                .collect::<Result<Vec<_>, _>>()
                .map_err(self.err())?;
            add_vectors(item, rows);
        }
        Ok(())
    }

    pub(super) fn list(
        &self,
        prefix: &[String],
        page: Page,
    ) -> Result<Vec<MemoryItem>, StoreError> {
        check_labels(prefix, "prefix")?;
        let mut out = Vec::new();
        self.scan(&prefix_text(prefix), Some(page), |item| {
            out.push(item.listed());
            true
        })?;
        self.attach_vectors(&mut out)?;
        Ok(out)
    }

    pub(super) fn search(
        &self,
        prefix: &[String],
        query: &str,
        page: Page,
    ) -> Result<Vec<MemoryItem>, StoreError> {
        check_labels(prefix, "prefix")?;
        let needle = needle(query);
        let wanted = page.limit.map(|l| l as usize + page.offset as usize);
        let mut found = Vec::new();
        self.scan(&prefix_text(prefix), None, |item| {
            if matches(&item, &needle) {
                found.push(item.listed());
            }
            wanted.is_none_or(|w| found.len() < w)
        })?;
        let mut out = paged(found.into_iter(), page);
        self.attach_vectors(&mut out)?;
        Ok(out)
    }

    pub(super) fn namespaces(&self, prefix: &[String]) -> Result<Vec<NamespaceCount>, StoreError> {
        check_labels(prefix, "prefix")?;
        let prefix = prefix_text(prefix);
        let mut stmt = self
            .conn
            .prepare("SELECT prefix, count(*) FROM store GROUP BY prefix")
            .map_err(self.err())?;
        let mut out: Vec<NamespaceCount> = stmt
            .query_map([], |r| {
                let shown = key_or_note("prefix", RawKey::from(r.get_ref(0)?), &mut Vec::new());
                Ok((shown, r.get::<_, i64>(1)?))
            })
            .map_err(self.err())?
            .collect::<Result<Vec<_>, _>>()
            .map_err(self.err())?
            .into_iter()
            .filter(|(p, _)| under(p, &prefix))
            .map(|(p, n)| NamespaceCount {
                namespace: namespace_of(&p),
                items: u64::try_from(n).unwrap_or(0),
            })
            .collect();
        out.sort_by(|a, b| a.namespace.cmp(&b.namespace));
        Ok(out)
    }

    pub(super) fn summary(&self) -> Result<MemorySummary, StoreError> {
        self.conn
            .query_row(
                "SELECT count(*), count(DISTINCT prefix) FROM store",
                [],
                |r| {
                    Ok(MemorySummary {
                        items: u64::try_from(r.get::<_, i64>(0)?).unwrap_or(0),
                        namespaces: u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
                    })
                },
            )
            .map_err(self.err())
    }
}

/// An embedding's dimensions: sqlite-vec's float32 BLOB (4 bytes each) or its JSON text form.
fn dims_of(field: &str, v: ValueRef<'_>) -> (Option<u32>, Option<String>) {
    let bad = |what: String| (None, Some(format!("vector {field:?}: {what}")));
    match v {
        ValueRef::Null => (None, None),
        ValueRef::Blob(b) if b.len() % 4 == 0 => (u32::try_from(b.len() / 4).ok(), None),
        ValueRef::Blob(b) => bad(format!("a {}-byte BLOB is not float32s", b.len())),
        ValueRef::Text(t) => match serde_json::from_slice::<Json>(t) {
            Ok(Json::Array(a)) => (u32::try_from(a.len()).ok(), None),
            _ => bad("text that is not a JSON array".into()),
        },
        ValueRef::Integer(_) | ValueRef::Real(_) => bad("a number, not an embedding".into()),
    }
}

/// A `store` row (columns as [`Cx::select`] lists them).
fn raw_item(r: &rusqlite::Row<'_>) -> rusqlite::Result<RawItem> {
    let mut problems = Vec::new();
    let prefix = key_or_note("prefix", RawKey::from(r.get_ref(0)?), &mut problems);
    let key = key_or_note("key", RawKey::from(r.get_ref(1)?), &mut problems);
    let value = match r.get_ref(2)? {
        ValueRef::Null => None,
        ValueRef::Text(b) | ValueRef::Blob(b) => Some(b.to_vec()),
        ValueRef::Integer(i) => Some(i.to_string().into_bytes()),
        ValueRef::Real(f) => Some(f.to_string().into_bytes()),
    };
    let stamp = |v: ValueRef<'_>| match v {
        ValueRef::Null => None,
        ValueRef::Text(b) => Some(Stamp::parse(&String::from_utf8_lossy(b))),
        ValueRef::Blob(b) => Some(Stamp::Unreadable(String::from_utf8_lossy(b).into_owned())),
        ValueRef::Integer(i) => Some(Stamp::Unreadable(i.to_string())),
        ValueRef::Real(f) => Some(Stamp::Unreadable(f.to_string())),
    };
    let ttl_minutes = match r.get_ref(6)? {
        ValueRef::Integer(i) => Some(i as f64),
        ValueRef::Real(f) => Some(f),
        ValueRef::Null => None,
        ValueRef::Text(t) | ValueRef::Blob(t) => {
            let text = String::from_utf8_lossy(t);
            let parsed = text.trim().parse::<f64>().ok();
            if parsed.is_none() {
                problems.push(format!("ttl_minutes {text:?} is not a number"));
            }
            parsed
        }
    };
    Ok(RawItem {
        prefix,
        key,
        value,
        created_at: stamp(r.get_ref(3)?),
        updated_at: stamp(r.get_ref(4)?),
        expires_at: stamp(r.get_ref(5)?),
        ttl_minutes,
        problems,
    })
}

/// The reads of both SQLite memory handles ([`SqliteMemory`] and the writer's own
/// connection): each type's `read(f)` runs `f` on a [`Cx`]. Names resolve where it is used.
macro_rules! memory_reads_through_cx {
    ($handle:ty) => {
        #[async_trait]
        impl MemoryRead for $handle {
            fn schema(&self) -> &MemorySchema {
                &self.schema
            }

            async fn summary(&self) -> Result<MemorySummary, StoreError> {
                self.read(|cx| cx.summary()).await
            }

            async fn list(
                &self,
                prefix: &[String],
                page: Page,
            ) -> Result<Vec<MemoryItem>, StoreError> {
                let prefix = prefix.to_vec();
                self.read(move |cx| cx.list(&prefix, page)).await
            }

            async fn get(
                &self,
                namespace: &[String],
                key: &str,
            ) -> Result<Option<MemoryItem>, StoreError> {
                let (namespace, key) = (namespace.to_vec(), key.to_owned());
                self.read(move |cx| cx.get(&namespace, &key)).await
            }

            async fn search(
                &self,
                prefix: &[String],
                query: &str,
                page: Page,
            ) -> Result<Vec<MemoryItem>, StoreError> {
                let (prefix, query) = (prefix.to_vec(), query.to_owned());
                self.read(move |cx| cx.search(&prefix, &query, page)).await
            }

            async fn namespaces(
                &self,
                prefix: &[String],
            ) -> Result<Vec<NamespaceCount>, StoreError> {
                let prefix = prefix.to_vec();
                self.read(move |cx| cx.namespaces(&prefix)).await
            }
        }
    };
}
pub(super) use memory_reads_through_cx;

pub(crate) mod write;

memory_reads_through_cx!(SqliteMemory);

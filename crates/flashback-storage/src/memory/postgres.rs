//! The memory Store in a Postgres database (`langgraph-checkpoint-postgres`'s
//! `PostgresStore`): reads in read-only transactions on the database's pool, each write in one
//! read-write transaction.

use super::time::{now_micros, Stamp};
use super::{
    add_vectors, check_labels, check_put, matches, namespace_of, needle, paged, prefix_text,
    DeleteOutcome, MemoryItem, MemoryRead, MemorySchema, MemorySummary, MemoryWrite,
    NamespaceCount, Page, PutOutcome, RawItem, VectorRow,
};
use crate::model::Backend;
use crate::postgres::target::Target;
use crate::postgres::target::BEGIN_READ_ONLY;
use crate::postgres::wait::Bounded as _;
use crate::StoreError;
use async_trait::async_trait;
use serde_json::Value as Json;
use sqlx::postgres::{PgArguments, PgConnection, PgPool, PgRow};
use sqlx::{AssertSqlSafe, Connection as _, Postgres, Row as _};
use std::collections::HashMap;

/// Rows fetched at a time when a search scans a namespace.
const SCAN_BATCH: usize = 500;

/// A prefix condition on `prefix` against `$1` (`''`: everything), on whole labels.
const UNDER: &str = "($1 = '' OR prefix = $1 OR starts_with(prefix, $1 || '.'))";

/// An unprepared query (it also works through transaction-pooling proxies).
fn query(sql: String) -> sqlx::query::Query<'static, Postgres, PgArguments> {
    sqlx::query(AssertSqlSafe(sql)).persistent(false)
}

/// The Store's tables in the `search_path`, or `None` when there is no LangGraph `store`.
pub(crate) async fn detect(
    conn: &mut PgConnection,
    target: &Target,
) -> Result<Option<MemorySchema>, StoreError> {
    let err = |e: sqlx::Error| target.error(e, false);
    let mut tx = conn.begin_with(BEGIN_READ_ONLY).bounded(target).await?;
    let rows = query(
        "SELECT t.name, a.attname::text AS column_name, \
         format_type(a.atttypid, a.atttypmod) AS data_type \
         FROM unnest($1::text[]) AS t(name) \
         JOIN pg_catalog.pg_attribute a ON a.attrelid = to_regclass(quote_ident(t.name)) \
         WHERE a.attnum > 0 AND NOT a.attisdropped"
            .into(),
    )
    .bind(vec![
        "store".to_owned(),
        "store_vectors".to_owned(),
        "store_migrations".to_owned(),
        "vector_migrations".to_owned(),
    ])
    .fetch_all(&mut *tx)
    .bounded(target)
    .await?;
    let mut tables: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for r in &rows {
        let table: String = r.try_get("name").map_err(err)?;
        tables.entry(table).or_default().push((
            r.try_get("column_name").map_err(err)?,
            r.try_get("data_type").map_err(err)?,
        ));
    }
    let has = |table: &str, column: &str| {
        tables
            .get(table)
            .is_some_and(|cols| cols.iter().any(|(c, _)| c == column))
    };
    if !["prefix", "key", "value", "created_at", "updated_at"]
        .iter()
        .all(|c| has("store", c))
    {
        target.end_read(tx).await;
        return Ok(None);
    }
    let migration_version = if has("store_migrations", "v") {
        max_v(&mut tx, "store_migrations").bounded(target).await?
    } else {
        None
    };
    let vector_migration_version = if has("vector_migrations", "v") {
        max_v(&mut tx, "vector_migrations").bounded(target).await?
    } else {
        None
    };
    target.end_read(tx).await;
    let has_vectors = ["prefix", "key", "field_name", "embedding"]
        .iter()
        .all(|c| has("store_vectors", c));
    let embedding_type = tables.get("store_vectors").and_then(|cols| {
        cols.iter()
            .find(|(c, _)| c == "embedding")
            .map(|(_, t)| t.clone())
    });
    Ok(Some(MemorySchema {
        backend: Backend::Postgres,
        has_expires_at: has("store", "expires_at"),
        has_ttl_minutes: has("store", "ttl_minutes"),
        has_vectors,
        migration_version,
        vector_migration_version,
        embedding_type: embedding_type.filter(|_| has_vectors),
    }))
}

/// The highest migration recorded in `table`.
async fn max_v(conn: &mut PgConnection, table: &str) -> Result<Option<i64>, sqlx::Error> {
    query(format!("SELECT max(v)::int8 AS v FROM {table}"))
        .fetch_one(conn)
        .await
        .and_then(|r| r.try_get("v"))
}

/// The memory Store of a Postgres database, on the database's pool.
#[derive(Clone)]
pub(crate) struct PgMemory {
    pool: PgPool,
    target: Target,
    schema: MemorySchema,
}

impl PgMemory {
    pub(crate) fn new(pool: PgPool, target: Target, schema: MemorySchema) -> PgMemory {
        PgMemory {
            pool,
            target,
            schema,
        }
    }

    fn err(&self, e: sqlx::Error) -> StoreError {
        self.target.error(e, false)
    }

    /// The columns every item read selects (times as microseconds since the epoch).
    fn select(&self) -> String {
        let micros = |c: &str| format!("(extract(epoch FROM {c}) * 1000000)::int8");
        format!(
            "SELECT prefix, key, value::text AS value, {} AS created, {} AS updated, \
             {} AS expires, {} AS ttl FROM store",
            micros("created_at"),
            micros("updated_at"),
            if self.schema.has_expires_at {
                micros("expires_at")
            } else {
                "NULL::int8".into()
            },
            if self.schema.has_ttl_minutes {
                "ttl_minutes::float8"
            } else {
                "NULL::float8"
            },
        )
    }

    /// The expression of an embedding's dimensions for its column type: pgvector's
    /// `vector_dims` (vector, halfvec), `array_length` for arrays, else unknown.
    fn dims_expr(&self) -> &'static str {
        match self.schema.embedding_type.as_deref() {
            Some(t) if t.starts_with("vector") || t.starts_with("halfvec") => {
                "vector_dims(v.embedding)"
            }
            Some(t) if t.ends_with("[]") => "array_length(v.embedding, 1)",
            _ => "NULL::int4",
        }
    }

    async fn read(&self) -> Result<sqlx::Transaction<'static, Postgres>, StoreError> {
        self.target.begin(&self.pool, BEGIN_READ_ONLY).await
    }

    async fn get_in(
        &self,
        conn: &mut PgConnection,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<MemoryItem>, StoreError> {
        check_labels(namespace, "namespace")?;
        let row = query(format!("{} WHERE prefix = $1 AND key = $2", self.select()))
            .bind(prefix_text(namespace))
            .bind(key.to_owned())
            .fetch_optional(&mut *conn)
            .bounded(&self.target)
            .await?;
        let Some(row) = row else {
            return Ok(None);
        };
        let mut items = vec![raw_item(&row)
            .map_err(|e| self.err(e))?
            .into_item(now_micros())];
        self.attach_vectors(conn, &mut items).await?;
        Ok(items.pop())
    }

    async fn attach_vectors(
        &self,
        conn: &mut PgConnection,
        items: &mut [MemoryItem],
    ) -> Result<(), StoreError> {
        if !self.schema.has_vectors || items.is_empty() {
            return Ok(());
        }
        let prefixes: Vec<String> = items.iter().map(|i| prefix_text(&i.namespace)).collect();
        let keys: Vec<String> = items.iter().map(|i| i.key.clone()).collect();
        let rows = query(format!(
            "SELECT v.prefix, v.key, v.field_name, ({})::int4 AS dims FROM store_vectors v \
             JOIN unnest($1::text[], $2::text[]) AS k(prefix, key) \
             ON v.prefix = k.prefix AND v.key = k.key \
             ORDER BY v.prefix, v.key, v.field_name",
            self.dims_expr()
        ))
        .bind(prefixes)
        .bind(keys)
        .fetch_all(&mut *conn)
        .bounded(&self.target)
        .await?;
        let mut by_item: HashMap<(String, String), Vec<VectorRow>> = HashMap::new();
        for r in &rows {
            let get = |c: &str| r.try_get::<String, _>(c);
            let dims: Option<i32> = r.try_get("dims").map_err(|e| self.err(e))?;
            by_item
                .entry((
                    get("prefix").map_err(|e| self.err(e))?,
                    get("key").map_err(|e| self.err(e))?,
                ))
                .or_default()
                .push((
                    get("field_name").map_err(|e| self.err(e))?,
                    dims.and_then(|d| u32::try_from(d).ok()),
                    None,
                ));
        }
        for item in items {
            if let Some(rows) = by_item.remove(&(prefix_text(&item.namespace), item.key.clone())) {
                add_vectors(item, rows);
            }
        }
        Ok(())
    }

    /// Rows under `prefix`, newest update first, through a cursor `SCAN_BATCH` at a time,
    /// each passed to `keep` until it says stop.
    async fn scan(
        &self,
        conn: &mut PgConnection,
        prefix: &str,
        mut keep: impl FnMut(MemoryItem) -> bool,
    ) -> Result<(), StoreError> {
        query(format!(
            "DECLARE flashback_store_scan NO SCROLL CURSOR FOR {} WHERE {UNDER} \
             ORDER BY updated_at DESC, prefix, key",
            self.select()
        ))
        .bind(prefix.to_owned())
        .execute(&mut *conn)
        .bounded(&self.target)
        .await?;
        let now = now_micros();
        loop {
            let rows = query(format!("FETCH {SCAN_BATCH} FROM flashback_store_scan"))
                .fetch_all(&mut *conn)
                .bounded(&self.target)
                .await?;
            for r in &rows {
                if !keep(raw_item(r).map_err(|e| self.err(e))?.into_item(now)) {
                    return Ok(());
                }
            }
            if rows.len() < SCAN_BATCH {
                return Ok(());
            }
        }
    }
}

/// A `store` row (columns as [`PgMemory::select`] names them).
fn raw_item(r: &PgRow) -> Result<RawItem, sqlx::Error> {
    let stamp = |c: &str| -> Result<Option<Stamp>, sqlx::Error> {
        Ok(r.try_get::<Option<i64>, _>(c)?
            .map(|micros| Stamp::At { micros }))
    };
    Ok(RawItem {
        prefix: r.try_get("prefix")?,
        key: r.try_get("key")?,
        value: r
            .try_get::<Option<String>, _>("value")?
            .map(String::into_bytes),
        created_at: stamp("created")?,
        updated_at: stamp("updated")?,
        expires_at: stamp("expires")?,
        ttl_minutes: r.try_get("ttl")?,
        problems: Vec::new(),
    })
}

#[async_trait]
impl MemoryRead for PgMemory {
    fn schema(&self) -> &MemorySchema {
        &self.schema
    }

    async fn summary(&self) -> Result<MemorySummary, StoreError> {
        let mut tx = self.read().await.map_err(reading_store)?;
        let r = query(
            "SELECT count(*)::int8 AS items, count(DISTINCT prefix)::int8 AS namespaces FROM store"
                .into(),
        )
        .fetch_one(&mut *tx)
        .bounded(&self.target)
        .await
        .map_err(reading_store)?;
        self.target.end_read(tx).await;
        let n = |c: &str| -> Result<u64, StoreError> {
            let v: i64 = r.try_get(c).map_err(|e| self.err(e))?;
            Ok(u64::try_from(v).unwrap_or(0))
        };
        Ok(MemorySummary {
            items: n("items")?,
            namespaces: n("namespaces")?,
        })
    }

    async fn list(&self, prefix: &[String], page: Page) -> Result<Vec<MemoryItem>, StoreError> {
        check_labels(prefix, "prefix")?;
        self.list_in(prefix, page).await.map_err(reading_store)
    }

    async fn get(&self, namespace: &[String], key: &str) -> Result<Option<MemoryItem>, StoreError> {
        let mut tx = self.read().await.map_err(reading_store)?;
        let item = self.get_in(&mut tx, namespace, key).await;
        if item.is_ok() {
            self.target.end_read(tx).await;
        }
        item.map_err(reading_store)
    }

    async fn search(
        &self,
        prefix: &[String],
        query: &str,
        page: Page,
    ) -> Result<Vec<MemoryItem>, StoreError> {
        check_labels(prefix, "prefix")?;
        self.search_in(prefix, query, page)
            .await
            .map_err(reading_store)
    }

    async fn namespaces(&self, prefix: &[String]) -> Result<Vec<NamespaceCount>, StoreError> {
        check_labels(prefix, "prefix")?;
        self.namespaces_in(prefix).await.map_err(reading_store)
    }
}

/// What reading the memory Store is called in messages.
fn reading_store(e: StoreError) -> StoreError {
    e.during(|| "reading the memory store".into())
}

impl PgMemory {
    async fn list_in(&self, prefix: &[String], page: Page) -> Result<Vec<MemoryItem>, StoreError> {
        let mut tx = self.read().await?;
        let rows = query(format!(
            "{} WHERE {UNDER} ORDER BY updated_at DESC, prefix, key LIMIT $2 OFFSET $3",
            self.select()
        ))
        .bind(prefix_text(prefix))
        .bind(page.limit.map(i64::from))
        .bind(i64::from(page.offset))
        .fetch_all(&mut *tx)
        .bounded(&self.target)
        .await?;
        let now = now_micros();
        let mut items = rows
            .iter()
            .map(|r| raw_item(r).map(|raw| raw.into_item(now).listed()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| self.err(e))?;
        self.attach_vectors(&mut tx, &mut items).await?;
        self.target.end_read(tx).await;
        Ok(items)
    }

    async fn search_in(
        &self,
        prefix: &[String],
        query: &str,
        page: Page,
    ) -> Result<Vec<MemoryItem>, StoreError> {
        let needle = needle(query);
        let wanted = page.limit.map(|l| l as usize + page.offset as usize);
        let mut found = Vec::new();
        let mut tx = self.read().await?;
        self.scan(&mut tx, &prefix_text(prefix), |item| {
            if matches(&item, &needle) {
                found.push(item.listed());
            }
            wanted.is_none_or(|w| found.len() < w)
        })
        .await?;
        let mut items = paged(found.into_iter(), page);
        self.attach_vectors(&mut tx, &mut items).await?;
        self.target.end_read(tx).await;
        Ok(items)
    }

    async fn namespaces_in(&self, prefix: &[String]) -> Result<Vec<NamespaceCount>, StoreError> {
        let mut tx = self.read().await?;
        let rows = query(format!(
            "SELECT prefix, count(*)::int8 AS n FROM store WHERE {UNDER} GROUP BY prefix"
        ))
        .bind(prefix_text(prefix))
        .fetch_all(&mut *tx)
        .bounded(&self.target)
        .await?;
        self.target.end_read(tx).await;
        let mut out = rows
            .iter()
            .map(|r| {
                let p: String = r.try_get("prefix")?;
                let n: i64 = r.try_get("n")?;
                Ok(NamespaceCount {
                    namespace: namespace_of(&p),
                    items: u64::try_from(n).unwrap_or(0),
                })
            })
            .collect::<Result<Vec<_>, sqlx::Error>>()
            .map_err(|e| self.err(e))?;
        out.sort_by(|a, b| a.namespace.cmp(&b.namespace));
        Ok(out)
    }
}

#[async_trait]
impl MemoryWrite for PgMemory {
    async fn put(
        &self,
        namespace: &[String],
        key: &str,
        value: &Json,
        ttl_minutes: Option<f64>,
    ) -> Result<PutOutcome, StoreError> {
        self.put_in(namespace, key, value, ttl_minutes)
            .await
            .map_err(|e| e.during(|| writing_item(namespace, key)))
    }

    async fn delete(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<DeleteOutcome>, StoreError> {
        self.delete_in(namespace, key)
            .await
            .map_err(|e| e.during(|| writing_item(namespace, key)))
    }
}

/// What writing an item of the memory Store is called in messages.
fn writing_item(namespace: &[String], key: &str) -> String {
    format!(
        "writing item {} of namespace {}",
        key.escape_debug(),
        prefix_text(namespace).escape_debug()
    )
}

impl PgMemory {
    async fn put_in(
        &self,
        namespace: &[String],
        key: &str,
        value: &Json,
        ttl_minutes: Option<f64>,
    ) -> Result<PutOutcome, StoreError> {
        check_put(&self.schema, namespace, value, ttl_minutes)?;
        let prefix = prefix_text(namespace);
        let text = serde_json::to_string(value)
            .map_err(|e| StoreError::InvalidInput(format!("the value cannot be stored: {e}")))?;
        let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
        let existed: bool =
            query("SELECT EXISTS (SELECT 1 FROM store WHERE prefix = $1 AND key = $2) AS e".into())
                .bind(prefix.clone())
                .bind(key.to_owned())
                .fetch_one(&mut *tx)
                .bounded(&self.target)
                .await?
                .try_get("e")
                .map_err(|e| self.err(e))?;
        let removed_vectors = self.remove_vectors(&mut tx, &prefix, key).await?;
        // Python: `INSERT … VALUES (…, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP, NOW() + '<ttl*60>
        // seconds'::interval, <ttl>) ON CONFLICT (prefix, key) DO UPDATE SET value, updated_at,
        // expires_at, ttl_minutes` (created_at kept). `ttl_minutes` is an INT column there.
        let (mut columns, mut values, mut updates) = (
            String::from("prefix, key, value, created_at, updated_at"),
            String::from("$1, $2, $3::text::jsonb, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP"),
            String::from("value = EXCLUDED.value, updated_at = CURRENT_TIMESTAMP"),
        );
        if self.schema.has_expires_at {
            columns.push_str(", expires_at");
            values.push_str(", NOW() + make_interval(secs => $4::float8 * 60)");
            updates.push_str(", expires_at = EXCLUDED.expires_at");
        }
        if self.schema.has_ttl_minutes {
            columns.push_str(", ttl_minutes");
            values.push_str(", $4::float8");
            updates.push_str(", ttl_minutes = EXCLUDED.ttl_minutes");
        }
        let sql = format!(
            "INSERT INTO store ({columns}) VALUES ({values}) \
             ON CONFLICT (prefix, key) DO UPDATE SET {updates}"
        );
        let mut q = query(sql).bind(prefix).bind(key.to_owned()).bind(text);
        if self.schema.has_expires_at || self.schema.has_ttl_minutes {
            q = q.bind(ttl_minutes);
        }
        q.execute(&mut *tx).bounded(&self.target).await?;
        let item = self
            .get_in(&mut tx, namespace, key)
            .await?
            .ok_or_else(|| StoreError::Query("the item just written cannot be read back".into()))?;
        tx.commit().bounded(&self.target).await?;
        Ok(PutOutcome {
            item,
            created: !existed,
            removed_vectors,
        })
    }

    async fn delete_in(
        &self,
        namespace: &[String],
        key: &str,
    ) -> Result<Option<DeleteOutcome>, StoreError> {
        check_labels(namespace, "namespace")?;
        let prefix = prefix_text(namespace);
        let mut tx = self.target.begin(&self.pool, "BEGIN").await?;
        let Some(item) = self.get_in(&mut tx, namespace, key).await? else {
            self.target.end_read(tx).await;
            return Ok(None);
        };
        // The foreign key would cascade; deleting them first also counts them.
        let removed = self.remove_vectors(&mut tx, &prefix, key).await?;
        query("DELETE FROM store WHERE prefix = $1 AND key = $2".into())
            .bind(prefix)
            .bind(key.to_owned())
            .execute(&mut *tx)
            .bounded(&self.target)
            .await?;
        tx.commit().bounded(&self.target).await?;
        Ok(Some(DeleteOutcome {
            item,
            removed_vectors: removed.len() as u64,
        }))
    }
}

impl PgMemory {
    async fn remove_vectors(
        &self,
        conn: &mut PgConnection,
        prefix: &str,
        key: &str,
    ) -> Result<Vec<String>, StoreError> {
        if !self.schema.has_vectors {
            return Ok(Vec::new());
        }
        let mut fields: Vec<String> = query(
            "DELETE FROM store_vectors WHERE prefix = $1 AND key = $2 RETURNING field_name".into(),
        )
        .bind(prefix.to_owned())
        .bind(key.to_owned())
        .fetch_all(&mut *conn)
        .bounded(&self.target)
        .await?
        .iter()
        .map(|r| r.try_get("field_name"))
        .collect::<Result<_, _>>()
        .map_err(|e| self.err(e))?;
        fields.sort();
        Ok(fields)
    }
}

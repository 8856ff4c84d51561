//! Schema detection: which generation of the Postgres saver's tables the `search_path`
//! resolves to.

use super::sql::{Arg, Sql};
use super::target::Target;
use super::target::BEGIN_READ_ONLY;
use crate::layout::SchemaKind;
use crate::model::{Backend, Holds, SchemaInfo};
use crate::postgres::wait::Bounded as _;
use crate::Dialect;
use crate::StoreError;
use sqlx::postgres::PgConnection;
use sqlx::{Connection as _, Row as _};
use std::collections::HashMap;

/// How a schema error about existing tables of an unknown layout starts (as opposed to
/// missing tables, which `setup()` creates).
pub(super) const UNKNOWN_LAYOUT: &str = "unknown checkpoint table layout";

/// The schema error of [`super::PostgresStore::connect`] for a database holding Flashback's
/// three-table store (`crate::three`), which [`crate::open`] opens as one.
pub(crate) const THREE_TABLE: &str = "Flashback's three-table store (docs/three-table.md), not \
     LangGraph's Postgres schema (checkpoints has a checkpoint_ns_hash column)";

const TABLES: [&str; 4] = [
    "checkpoints",
    "checkpoint_blobs",
    "checkpoint_writes",
    "checkpoint_migrations",
];

/// The checkpoint schema the `search_path` resolves to; `has_store`: the database holds a
/// memory Store, so that no checkpoint tables at all means a store-only database (no threads).
pub(super) async fn detect_schema(
    conn: &mut PgConnection,
    target: &Target,
    has_store: bool,
) -> Result<SchemaInfo, StoreError> {
    let err = |e: sqlx::Error| target.error(e, false);
    let mut tx = conn.begin_with(BEGIN_READ_ONLY).bounded(target).await?;

    // Columns of the tables the search_path resolves the four names to (as Python's
    // unqualified SQL would).
    let rows = Sql::new(
        "SELECT t.name, a.attname::text AS column_name, format_type(a.atttypid, a.atttypmod) AS data_type \
         FROM unnest($1::text[]) AS t(name) \
         JOIN pg_catalog.pg_attribute a ON a.attrelid = to_regclass(quote_ident(t.name)) \
         WHERE a.attnum > 0 AND NOT a.attisdropped \
         ORDER BY t.name, a.attnum",
    )
    .with(Arg::TextArray(TABLES.iter().map(|t| (*t).to_owned()).collect()))
    .query()
    .fetch_all(&mut *tx)
    .bounded(target)
    .await?;
    let mut tables: HashMap<String, Vec<(String, String)>> = HashMap::new();
    for r in &rows {
        let table: String = r.try_get("name").map_err(err)?;
        let column: String = r.try_get("column_name").map_err(err)?;
        let data_type: String = r.try_get("data_type").map_err(err)?;
        tables.entry(table).or_default().push((column, data_type));
    }

    if tables
        .get("checkpoints")
        .is_some_and(|cols| cols.iter().any(|(c, _)| c == "checkpoint_ns_hash"))
    {
        // Flashback's three-table store: `crate::open` opens it as one.
        let version = match Sql::new(crate::three::info::PG_VERSION)
            .query()
            .fetch_one(&mut *tx)
            .bounded(target)
            .await
        {
            // A database whose version table cannot be read is still readable.
            Ok(r) => r.try_get::<Option<i64>, _>("v").ok().flatten(),
            Err(e) if e.is_timeout() => return Err(e),
            Err(_) => None,
        };
        target.end_read(tx).await;
        return Ok(crate::three::info::postgres(version, true));
    }
    let missing: Vec<&str> = TABLES[..3]
        .iter()
        .copied()
        .filter(|t| !tables.contains_key(*t))
        .collect();
    if has_store && missing.len() == 3 {
        target.end_read(tx).await;
        return Ok(SchemaInfo {
            backend: Backend::Postgres,
            has_task_path: true,
            migration_version: None,
            kind: SchemaKind::StoreOnly,
            description: "postgres, memory store only (no checkpoint tables)".into(),
            holds: Holds::Store,
            dialect: Dialect::Python,
        });
    }
    if !missing.is_empty() {
        let present = Sql::new(
            "SELECT n.nspname::text AS schema_name, c.relname::text AS table_name \
             FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = ANY(current_schemas(false)) AND c.relkind IN ('r', 'p', 'v', 'm', 'f') \
             ORDER BY 1, 2",
        )
        .query()
        .fetch_all(&mut *tx)
        .bounded(target)
        .await?;
        let schemas: Vec<String> = Sql::new("SELECT unnest(current_schemas(false))::text AS s")
            .query()
            .fetch_all(&mut *tx)
            .bounded(target)
            .await?
            .iter()
            .filter_map(|r| r.try_get::<String, _>("s").ok())
            .collect();
        target.end_read(tx).await;
        let names: Vec<String> = present
            .iter()
            .filter_map(|r| {
                let s: String = r.try_get("schema_name").ok()?;
                let t: String = r.try_get("table_name").ok()?;
                Some(if schemas.len() > 1 {
                    format!("{s}.{t}")
                } else {
                    t
                })
            })
            .collect();
        let present = if names.is_empty() {
            "no tables".to_owned()
        } else if names.len() > 30 {
            format!(
                "tables present: {}, … ({} more)",
                names[..30].join(", "),
                names.len() - 30
            )
        } else {
            format!("tables present: {}", names.join(", "))
        };
        return Err(StoreError::UnsupportedSchema {
            found: format!(
                "{present} (search_path schemas: {}); missing {} — not a LangGraph Postgres \
                 checkpoint database (langgraph-checkpoint-postgres creates checkpoints, \
                 checkpoint_blobs, checkpoint_writes and checkpoint_migrations; its memory \
                 store a table `store`)",
                if schemas.is_empty() {
                    "none".to_owned()
                } else {
                    schemas.join(", ")
                },
                missing.join(", ")
            ),
        });
    }

    let has = |table: &str, column: &str| {
        tables
            .get(table)
            .is_some_and(|cols| cols.iter().any(|(c, _)| c == column))
    };
    let type_of = |table: &str, column: &str| {
        tables
            .get(table)
            .and_then(|cols| cols.iter().find(|(c, _)| c == column))
            .map(|(_, t)| t.clone())
    };
    let columns_of = |table: &str| {
        tables
            .get(table)
            .map(|cols| {
                cols.iter()
                    .map(|(c, _)| c.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default()
    };

    let shallow = !has("checkpoints", "checkpoint_id");
    let mut problems = Vec::new();
    let need_cp: &[&str] = if shallow {
        &["thread_id", "checkpoint_ns", "checkpoint", "metadata"]
    } else {
        &[
            "thread_id",
            "checkpoint_ns",
            "checkpoint_id",
            "parent_checkpoint_id",
            "checkpoint",
            "metadata",
        ]
    };
    let need_blobs: &[&str] = if shallow {
        &["thread_id", "checkpoint_ns", "channel", "type", "blob"]
    } else {
        &[
            "thread_id",
            "checkpoint_ns",
            "channel",
            "version",
            "type",
            "blob",
        ]
    };
    let need_writes: &[&str] = &[
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
        "channel",
        "type",
        "blob",
    ];
    for (table, need) in [
        ("checkpoints", need_cp),
        ("checkpoint_blobs", need_blobs),
        ("checkpoint_writes", need_writes),
    ] {
        let missing: Vec<&str> = need.iter().copied().filter(|c| !has(table, c)).collect();
        if !missing.is_empty() {
            problems.push(format!(
                "{table} has columns ({}) but lacks {}",
                columns_of(table),
                missing.join(", ")
            ));
        }
    }
    if shallow && has("checkpoint_blobs", "version") {
        problems.push(
            "checkpoints has no checkpoint_id column (the shallow saver's layout) but \
             checkpoint_blobs has a version column (the full saver's layout)"
                .to_owned(),
        );
    }
    for (table, column, expected) in [
        ("checkpoints", "checkpoint", "jsonb"),
        ("checkpoints", "metadata", "jsonb"),
        ("checkpoint_blobs", "blob", "bytea"),
        ("checkpoint_writes", "blob", "bytea"),
    ] {
        if let Some(t) = type_of(table, column) {
            if t != expected {
                problems.push(format!("{table}.{column} is {t}, expected {expected}"));
            }
        }
    }
    if !problems.is_empty() {
        target.end_read(tx).await;
        return Err(StoreError::UnsupportedSchema {
            found: format!("{UNKNOWN_LAYOUT}: {}", problems.join("; ")),
        });
    }

    let has_task_path = has("checkpoint_writes", "task_path");
    let migrations = if has("checkpoint_migrations", "v") {
        let r = Sql::new("SELECT min(v)::bigint AS lo, max(v)::bigint AS hi, count(*) AS n FROM checkpoint_migrations")
            .query()
            .fetch_one(&mut *tx)
            .bounded(target)
            .await?;
        let lo: Option<i64> = r.try_get("lo").map_err(err)?;
        let hi: Option<i64> = r.try_get("hi").map_err(err)?;
        let n: i64 = r.try_get("n").map_err(err)?;
        Some((lo, hi, n))
    } else {
        None
    };
    // LangGraph.js's PostgresSaver: integer channel versions (one row tells: a database is
    // written by one program); with no checkpoint yet, JS's migrations (0..4, no task_path).
    let version_kind = Sql::new(
        "SELECT jsonb_typeof(e.value) AS t FROM (SELECT checkpoint FROM checkpoints LIMIT 1) c, \
         jsonb_each(CASE WHEN jsonb_typeof(c.checkpoint -> 'channel_versions') = 'object' \
         THEN c.checkpoint -> 'channel_versions' ELSE '{}'::jsonb END) e LIMIT 1",
    );
    let version_kind: Option<String> = match version_kind
        .query()
        .fetch_optional(&mut *tx)
        .bounded(target)
        .await
    {
        Ok(row) => row.and_then(|r| r.try_get("t").ok()),
        // A row that cannot be read says nothing; a server that does not answer does.
        Err(e) if e.is_timeout() => return Err(e),
        Err(_) => None,
    };
    target.end_read(tx).await;

    let migration_version = migrations.and_then(|(_, hi, _)| hi);
    let dialect = match version_kind.as_deref() {
        _ if shallow || has_task_path => Dialect::Python,
        Some("number") => Dialect::Js,
        Some(_) => Dialect::Python,
        None if migration_version == Some(4) => Dialect::Js,
        None => Dialect::Python,
    };
    let migrations_text = match migrations {
        None => "no checkpoint_migrations table".to_owned(),
        Some((Some(lo), Some(hi), n)) if n == hi - lo + 1 => format!("migrations {lo}-{hi}"),
        Some((Some(lo), Some(hi), n)) => format!("migrations {lo}-{hi} ({n} recorded)"),
        Some(_) => "checkpoint_migrations is empty".to_owned(),
    };
    let mut description = if shallow {
        format!(
            "postgres shallow saver (one checkpoint per thread and namespace), {migrations_text}"
        )
    } else {
        format!("postgres, {migrations_text}")
    };
    if dialect == Dialect::Js {
        description
            .push_str(" (LangGraph.js: @langchain/langgraph-checkpoint-postgres, json serde)");
    }
    if !has_task_path {
        description.push_str(", no checkpoint_writes.task_path");
    }
    if has_store {
        description.push_str(", with a memory store");
    }
    Ok(SchemaInfo {
        backend: Backend::Postgres,
        has_task_path,
        migration_version,
        kind: if shallow {
            SchemaKind::Shallow
        } else {
            SchemaKind::LangGraph
        },
        description,
        holds: Holds::of(true, has_store),
        dialect,
    })
}

//! Schema detection: which generation of `langgraph-checkpoint-sqlite`'s tables a file holds.

use super::{classify, query_err};
use crate::layout::SchemaKind;
use crate::model::{Backend, Holds, SchemaInfo};
use crate::Dialect;
use crate::StoreError;
use rusqlite::Connection;

/// What [`detect_schema`] says of a file holding Flashback's three-table store.
pub(crate) const THREE_TABLE: &str = "Flashback's three-table store (docs/three-table.md), not \
                                      LangGraph's SQLite schema";

/// The checkpoint schema of the file; `has_store`: it holds a memory Store, so that missing
/// checkpoint tables mean a store-only file (no threads) rather than an unknown one.
pub(super) fn detect_schema(
    conn: &Connection,
    path: &str,
    has_store: bool,
) -> Result<SchemaInfo, StoreError> {
    let not_db = |e: rusqlite::Error| {
        classify(path, e, |e| StoreError::NotADatabase {
            path: path.into(),
            detail: e.to_string(),
        })
    };
    let query_err = query_err(path);
    let mut stmt = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .map_err(not_db)?;
    let tables: Vec<String> = stmt
        .query_map([], |r| r.get(0))
        .map_err(not_db)?
        .collect::<Result<_, _>>()
        .map_err(not_db)?;
    let columns = |table: &str| -> Result<Vec<String>, StoreError> {
        let mut stmt = conn
            .prepare(&format!("PRAGMA table_info({table})"))
            .map_err(&query_err)?;
        let cols = stmt
            .query_map([], |r| r.get::<_, String>(1))
            .map_err(&query_err)?
            .collect::<Result<Vec<_>, _>>()
            .map_err(&query_err)?;
        Ok(cols)
    };
    let has = |t: &str| tables.iter().any(|x| x == t);
    if has_store && !has("checkpoints") && !has("writes") {
        return Ok(SchemaInfo {
            backend: Backend::Sqlite,
            has_task_path: true,
            migration_version: None,
            kind: SchemaKind::StoreOnly,
            description: "sqlite, memory store only (no checkpoint tables)".into(),
            holds: Holds::Store,
            dialect: Dialect::Python,
        });
    }
    if has("checkpoints") && has("checkpoint_blobs") && has("three_table_migrations") {
        // Read by `three::sqlite::ThreeTableStore` (`crate::open` detects it first).
        return Err(StoreError::UnsupportedSchema {
            found: THREE_TABLE.into(),
        });
    }
    if !has("checkpoints") || !has("writes") {
        let found = if tables.is_empty() {
            "an empty SQLite database (no tables)".to_string()
        } else {
            format!("tables {}", tables.join(", "))
        };
        return Err(StoreError::UnsupportedSchema {
            found: format!(
                "{found}; a LangGraph SQLite checkpoint database has tables `checkpoints` and \
                 `writes`, a LangGraph memory store a table `store`"
            ),
        });
    }
    let cp_cols = columns("checkpoints")?;
    let w_cols = columns("writes")?;
    let need_cp = [
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "parent_checkpoint_id",
        "type",
        "checkpoint",
        "metadata",
    ];
    let need_w = [
        "thread_id",
        "checkpoint_ns",
        "checkpoint_id",
        "task_id",
        "idx",
        "channel",
        "type",
        "value",
    ];
    let missing: Vec<String> = need_cp
        .iter()
        .filter(|c| !cp_cols.iter().any(|x| x == *c))
        .map(|c| format!("checkpoints.{c}"))
        .chain(
            need_w
                .iter()
                .filter(|c| !w_cols.iter().any(|x| x == *c))
                .map(|c| format!("writes.{c}")),
        )
        .collect();
    if !missing.is_empty() {
        return Err(StoreError::UnsupportedSchema {
            found: format!(
                "columns missing: {} (checkpoints has {}; writes has {})",
                missing.join(", "),
                cp_cols.join(", "),
                w_cols.join(", ")
            ),
        });
    }
    let has_task_path = w_cols.iter().any(|c| c == "task_path");
    let dialect = if has_task_path {
        Dialect::Python
    } else {
        dialect(conn)
    };
    let mut description = match (has_task_path, dialect) {
        (true, _) => "sqlite (langgraph-checkpoint-sqlite >= 3.1.2 layout)".to_owned(),
        (false, Dialect::Js) => {
            "sqlite (LangGraph.js: @langchain/langgraph-checkpoint-sqlite, json serde)".to_owned()
        }
        (false, Dialect::Python) => {
            "sqlite (before langgraph-checkpoint-sqlite 3.1.2: no writes.task_path)".to_owned()
        }
    };
    if has_store {
        description.push_str(", with a memory store");
    }
    Ok(SchemaInfo {
        backend: Backend::Sqlite,
        has_task_path,
        migration_version: None,
        kind: SchemaKind::LangGraph,
        description,
        holds: Holds::of(true, has_store),
        dialect,
    })
}

/// Whether a file without `writes.task_path` was written by LangGraph.js's `SqliteSaver`: its
/// checkpoints are stored with the `json` serde (one row tells: a database is written by one
/// program), or, with no checkpoint yet, its tables were created by JS's `setup()` (whose
/// `CREATE TABLE` text indents by two spaces; Python's by sixteen). Bounded: one row.
fn dialect(conn: &Connection) -> Dialect {
    let tag: Option<String> = conn
        .query_row("SELECT type FROM checkpoints LIMIT 1", [], |r| r.get(0))
        .ok()
        .flatten();
    match tag.as_deref() {
        Some("json") => Dialect::Js,
        Some(_) => Dialect::Python,
        None => {
            let sql: Option<String> = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'",
                    [],
                    |r| r.get(0),
                )
                .ok();
            if sql.is_some_and(|s| s.contains("(\n  thread_id TEXT NOT NULL,")) {
                Dialect::Js
            } else {
                Dialect::Python
            }
        }
    }
}

//! What the three-table store's [`SchemaInfo`] says on Postgres, shared by LangGraph's
//! detection (`postgres/schema.rs`, which finds the store's tables) and the store's own
//! connect.

use crate::layout::{Dialect, SchemaKind};
use crate::model::{Backend, Holds, SchemaInfo};

/// The highest migration recorded (NULL without the version table).
pub(crate) const PG_VERSION: &str =
    "SELECT CASE WHEN to_regclass('three_table_migrations') IS NULL THEN NULL::int8 \
     ELSE (SELECT max(v)::int8 FROM three_table_migrations) END AS v";

/// The schema of a Postgres database holding the store (`set_up`: its tables exist).
pub(crate) fn postgres(version: Option<i64>, set_up: bool) -> SchemaInfo {
    let description = match (set_up, version) {
        (false, _) => "three-table store (postgres, not set up yet)".to_owned(),
        (true, Some(v)) => format!("three-table store (postgres, migrations 0-{v})"),
        (true, None) => "three-table store (postgres)".to_owned(),
    };
    SchemaInfo {
        backend: Backend::Postgres,
        has_task_path: true,
        migration_version: version,
        kind: SchemaKind::ThreeTable,
        description,
        holds: Holds::Checkpoints,
        dialect: Dialect::Python,
    }
}

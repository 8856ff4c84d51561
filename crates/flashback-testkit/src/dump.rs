//! Loading plain SQL dumps (`pg_dump --inserts` output) into a database.

use sqlx::{AssertSqlSafe, Connection as _};

use crate::connect::connect;
use crate::TestkitError;

/// Executes a plain SQL script (e.g. `pg_dump --inserts` output) on `url` as one
/// multi-statement simple query, on its own connection. psql's `\restrict`/`\unrestrict`
/// lines (written by recent pg_dump) are dropped; other backslash meta-commands and
/// `COPY … FROM stdin` data are not supported (dump with `--inserts`).
pub async fn load_sql_dump(url: &str, sql: &str) -> Result<(), TestkitError> {
    let script = prepare_dump(sql)?;
    let mut conn = connect(url).await?;
    sqlx::raw_sql(AssertSqlSafe(script))
        .execute(&mut conn)
        .await
        .map_err(|e| TestkitError::sql("loading SQL dump", e))?;
    let _ = conn.close().await;
    Ok(())
}

/// A fresh database holding `tests/fixtures/postgres.sql` (the database the real
/// `PostgresSaver` wrote), or `None` when no PostgreSQL can be had (see
/// [`crate::postgres_or_skip`]). Panics when the dump cannot be read or loaded.
pub async fn postgres_fixture_or_skip() -> Option<crate::TestPg> {
    let pg = crate::postgres_or_skip().await?;
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/postgres.sql");
    let dump = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    if let Err(e) = load_sql_dump(pg.url(), &dump).await {
        panic!("loading {}: {e}", path.display());
    }
    Some(pg)
}

pub(crate) fn prepare_dump(sql: &str) -> Result<String, TestkitError> {
    let mut out = String::with_capacity(sql.len());
    for line in sql.lines() {
        let trimmed = line.trim_end();
        if trimmed.starts_with("\\restrict ") || trimmed.starts_with("\\unrestrict ") {
            continue;
        }
        if trimmed.starts_with("\\connect ") || trimmed.starts_with("\\c ") {
            return Err(TestkitError::Other(
                "SQL dump switches databases (\\connect); dump one database without -C".into(),
            ));
        }
        if trimmed.starts_with("COPY ") && trimmed.ends_with("FROM stdin;") {
            return Err(TestkitError::Other(
                "SQL dump uses COPY … FROM stdin; make it with pg_dump --inserts".into(),
            ));
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

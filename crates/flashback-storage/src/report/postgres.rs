//! The storage report's reads on Postgres: one connection of its own (connected as every
//! Postgres store is, `postgres::connect_first`), one `REPEATABLE READ READ ONLY`
//! transaction, rolled back at the end. Rows are streamed.

use super::{Cell, Reader, Relation, Space};
use crate::postgres::target::Target;
use crate::postgres::target::BEGIN_READ_ONLY;
use crate::postgres::wait::Bounded as _;
use crate::StoreError;
use async_trait::async_trait;
use sqlx::postgres::{PgConnection, PgRow};
use sqlx::{AssertSqlSafe, Column as _, Row as _, TypeInfo as _};

/// The tables measured, as the layouts name them.
const TABLES: [&str; 3] = ["checkpoints", "checkpoint_blobs", "checkpoint_writes"];

pub(crate) struct PgReader {
    conn: PgConnection,
    target: Target,
    /// No wait on the connection timed out (it can be closed politely).
    healthy: bool,
}

impl PgReader {
    pub(crate) async fn open(url: &str) -> Result<PgReader, StoreError> {
        let (mut conn, _, target) = crate::postgres::connect_first(url).await?;
        sqlx::raw_sql(BEGIN_READ_ONLY)
            .execute(&mut conn)
            .bounded(&target)
            .await?;
        Ok(PgReader {
            conn,
            target,
            healthy: true,
        })
    }

    pub(crate) async fn close(self) {
        let mut conn = self.conn;
        let mut healthy = self.healthy;
        if healthy {
            let rollback = self
                .target
                .wait(sqlx::raw_sql("ROLLBACK").execute(&mut conn));
            healthy = !matches!(rollback.await, Err(e) if e.is_timeout());
        }
        self.target.close(conn, healthy).await;
    }
}

fn cell(r: &PgRow, i: usize) -> Cell {
    let ty = r.column(i).type_info().name().to_ascii_uppercase();
    let got = match ty.as_str() {
        "INT8" => r.try_get::<Option<i64>, _>(i).map(|v| v.map(Cell::Int)),
        "INT4" => r
            .try_get::<Option<i32>, _>(i)
            .map(|v| v.map(|n| Cell::Int(i64::from(n)))),
        "INT2" => r
            .try_get::<Option<i16>, _>(i)
            .map(|v| v.map(|n| Cell::Int(i64::from(n)))),
        "BYTEA" => r
            .try_get::<Option<Vec<u8>>, _>(i)
            .map(|v| v.map(Cell::Bytes)),
        _ => r.try_get::<Option<String>, _>(i).map(|v| v.map(Cell::Text)),
    };
    got.ok().flatten().unwrap_or(Cell::Null)
}

#[async_trait]
impl Reader for PgReader {
    async fn each(
        &mut self,
        sql: &str,
        param: Option<&str>,
        f: &mut (dyn for<'r> FnMut(&'r [Cell]) + Send),
    ) -> Result<(), StoreError> {
        let mut q = sqlx::query(AssertSqlSafe(sql.to_owned())).persistent(false);
        if let Some(p) = param {
            q = q.bind(p.to_owned());
        }
        let target = self.target.clone();
        let mut rows = q.fetch(&mut self.conn);
        let mut cells = Vec::new();
        loop {
            let next = std::future::poll_fn(|cx| rows.as_mut().poll_next(cx));
            let r = match target.wait_row(next).await {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(()),
                Err(e) => {
                    drop(rows);
                    self.healthy &= !e.is_timeout();
                    return Err(e.during(|| "reading the database for the storage report".into()));
                }
            };
            cells.clear();
            cells.extend((0..r.columns().len()).map(|i| cell(&r, i)));
            f(&cells);
        }
    }

    async fn space(&mut self) -> Result<Space, StoreError> {
        let mut relations = Vec::new();
        for table in TABLES {
            let sql = "SELECT pg_total_relation_size(c.oid), pg_relation_size(c.oid), \
                       coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0), \
                       pg_indexes_size(c.oid) FROM pg_class c WHERE c.oid = to_regclass($1)";
            let rows = self.rows(sql, Some(table)).await?;
            if let Some(r) = rows.first() {
                relations.push(Relation {
                    table: table.to_owned(),
                    total_bytes: r[0].int(),
                    table_bytes: r[1].int(),
                    toast_bytes: r[2].int(),
                    index_bytes: r[3].int(),
                });
            }
        }
        Ok(Space {
            sqlite: None,
            relations,
            files: Vec::new(),
        })
    }
}

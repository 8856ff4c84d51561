//! The storage report's reads on a SQLite file: its own read-only connection (opened as every
//! read is, `sqlite/access.rs`: nothing created beside the file), one read transaction.

use super::{Cell, Reader, Space};
use crate::sqlite::access::Source;
use crate::sqlite::query_err;
use crate::StoreError;
use async_trait::async_trait;
use rusqlite::types::ValueRef;
use rusqlite::Connection;

pub(crate) struct SqliteReader {
    conn: Connection,
    /// Keeps a private copy (a WAL snapshot) alive while it is read.
    _source: Source,
    path: String,
}

impl SqliteReader {
    /// Open `path` read-only and start the read transaction (its snapshot is taken by the
    /// first read).
    pub(crate) fn open(path: &str) -> Result<SqliteReader, StoreError> {
        let (source, conn) = crate::sqlite::connect::read_only(path)?;
        // Every page is read once: through SQLite's small page cache rather than a memory
        // map, whose pages would all count as resident.
        conn.query_row("PRAGMA mmap_size = 0", [], |r| r.get::<_, i64>(0))
            .map_err(query_err(path))?;
        conn.execute_batch("BEGIN").map_err(query_err(path))?;
        Ok(SqliteReader {
            conn,
            _source: source,
            path: path.to_owned(),
        })
    }

    /// End the read transaction.
    pub(crate) fn close(self) {
        let _ = self.conn.execute_batch("ROLLBACK");
    }

    fn pragma(&self, name: &str) -> Result<u64, StoreError> {
        self.conn
            .query_row(&format!("PRAGMA {name}"), [], |r| r.get::<_, i64>(0))
            .map(|n| u64::try_from(n).unwrap_or(0))
            .map_err(query_err(&self.path))
    }
}

fn cell(v: ValueRef<'_>) -> Cell {
    match v {
        ValueRef::Null => Cell::Null,
        ValueRef::Integer(i) => Cell::Int(i),
        ValueRef::Real(f) => Cell::Int(f as i64),
        ValueRef::Text(t) => match std::str::from_utf8(t) {
            Ok(s) => Cell::Text(s.to_owned()),
            Err(_) => Cell::Text(crate::escape::escape_bytes(t)),
        },
        ValueRef::Blob(b) => Cell::Bytes(b.to_vec()),
    }
}

#[async_trait]
impl Reader for SqliteReader {
    async fn each(
        &mut self,
        sql: &str,
        param: Option<&str>,
        f: &mut (dyn for<'r> FnMut(&'r [Cell]) + Send),
    ) -> Result<(), StoreError> {
        let err = query_err(&self.path);
        let mut stmt = self.conn.prepare_cached(sql).map_err(&err)?;
        let n = stmt.column_count();
        let mut rows = match param {
            Some(p) => stmt.query([p]),
            None => stmt.query([]),
        }
        .map_err(&err)?;
        let mut cells = Vec::with_capacity(n);
        while let Some(r) = rows.next().map_err(&err)? {
            cells.clear();
            for i in 0..n {
                cells.push(cell(r.get_ref(i).map_err(&err)?));
            }
            f(&cells);
        }
        Ok(())
    }

    async fn space(&mut self) -> Result<Space, StoreError> {
        let page_size = self.pragma("page_size")?;
        let free_pages = self.pragma("freelist_count")?;
        Ok(Space {
            sqlite: Some(super::SqliteFile {
                page_size,
                page_count: self.pragma("page_count")?,
                free_pages,
                free_bytes: free_pages * page_size,
            }),
            relations: Vec::new(),
            files: Vec::new(),
        })
    }
}

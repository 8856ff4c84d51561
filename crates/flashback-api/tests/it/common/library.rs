//! The databases the real libraries wrote, as one list per backend, for the tests that compare
//! a read against another over every checkpoint of all of them: Python's chats, interrupts,
//! errors, `Send`s, subgraphs and forks, the thread filters', the storage report's, encrypted
//! ones (read without their key), LangGraph.js's.

use flashback_storage::postgres::PostgresStore;
use flashback_storage::sqlite::SqliteStore;
use std::path::PathBuf;

/// The Postgres dumps.
pub fn pg_dumps() -> Vec<PathBuf> {
    let f = super::fixtures();
    vec![
        f.join("postgres.sql"),
        f.join("filters-postgres.sql"),
        f.join("storage-postgres.sql"),
        f.join("sealed-mixed-postgres.sql"),
        f.join("sealed-kms-postgres.sql"),
        super::js::js_fixtures().join("langgraphjs-postgres.sql"),
    ]
}

/// The SQLite files.
pub fn sqlite_files() -> Vec<PathBuf> {
    let f = super::fixtures();
    vec![
        f.join("langgraph.sqlite"),
        f.join("filters.sqlite"),
        f.join("storage.sqlite"),
        f.join("sealed-mixed.sqlite"),
        super::js::js_fixtures().join("langgraphjs.sqlite"),
        super::js::js_fixtures().join("langgraphjs-edge.sqlite"),
    ]
}

/// Each Postgres dump loaded into a fresh database and opened (`None`: no Postgres here, the
/// test skips), with its name.
pub async fn each_pg() -> Option<Vec<(String, PostgresStore, flashback_testkit::TestPg)>> {
    let mut out = Vec::new();
    for dump in pg_dumps() {
        let pg = flashback_testkit::postgres_or_skip().await?;
        let sql = std::fs::read_to_string(&dump).expect("read dump");
        flashback_testkit::load_sql_dump(pg.url(), &sql)
            .await
            .expect("load dump");
        let store = PostgresStore::connect(pg.url()).await.expect("connect");
        out.push((dump.display().to_string(), store, pg));
    }
    Some(out)
}

/// Each SQLite file copied into `dir` and opened, with its name.
pub async fn each_sqlite(dir: &std::path::Path) -> Vec<(String, SqliteStore)> {
    let mut out = Vec::new();
    for (i, file) in sqlite_files().iter().enumerate() {
        let copy = dir.join(format!("{i}.sqlite"));
        std::fs::copy(file, &copy).expect("copy fixture");
        let store = SqliteStore::open(copy.to_str().expect("utf-8 path"))
            .await
            .expect("open");
        out.push((file.display().to_string(), store));
    }
    out
}

//! LangGraph's memory Store in Postgres: the tables `PostgresStore.setup()` creates, and what
//! only Postgres does (its tables are in `tables.rs`; the shared behaviours, run here too, are in `behaviours.rs`). pgvector
//! is not needed: `store_vectors.embedding` is a `real[]` here (pgvector's `vector(N)` is read
//! with `vector_dims`, which these tests cannot reach without the extension).
//!
//! One fresh database per test, from flashback-testkit. Skipped when no PostgreSQL is
//! available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_storage::postgres::PostgresStore;
use flashback_storage::StoreError;
use flashback_testkit::pg_or_skip;

#[tokio::test]
async fn an_empty_database_is_refused() {
    let pg = pg_or_skip!();
    match PostgresStore::connect(pg.url()).await {
        Err(StoreError::UnsupportedSchema { found }) => {
            assert!(found.contains("memory store a table `store`"), "{found}")
        }
        Ok(_) => panic!("an empty database opened"),
        Err(e) => panic!("unexpected {e}"),
    }
}

//! LangGraph's memory Store in Postgres: the tables `PostgresStore.setup()` creates, and what
//! only Postgres does (the shared behaviours, run here too, are in `behaviours.rs`). pgvector
//! is not needed: `store_vectors.embedding` is a `real[]` here (pgvector's `vector(N)` is read
//! with `vector_dims`, which these tests cannot reach without the extension).
//!
//! One fresh database per test, from flashback-testkit. Skipped when no PostgreSQL is
//! available, unless CI=true or FLASHBACK_REQUIRE_PG=1.

use flashback_storage::postgres::PostgresStore;
use flashback_storage::StoreError;
use flashback_testkit::pg_or_skip;

/// `PostgresStore.setup()`'s tables (migrations 0–3), with vectors as `real[]`.
pub(super) const TABLES: &[&str] = &["
CREATE TABLE store_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store (
    prefix text NOT NULL, key text NOT NULL, value jsonb NOT NULL,
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    expires_at TIMESTAMP WITH TIME ZONE, ttl_minutes INT,
    PRIMARY KEY (prefix, key));
INSERT INTO store_migrations VALUES (0), (1), (2), (3);
CREATE TABLE vector_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store_vectors (
    prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, embedding real[],
    created_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    updated_at TIMESTAMP WITH TIME ZONE DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE);
INSERT INTO vector_migrations VALUES (0), (1)"];

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

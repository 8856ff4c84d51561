//! The tables `setup()` creates for LangGraph's memory Store, per backend.

/// `SqliteStore.setup()`'s tables (migrations 0–4), and with `vectors` the index's.
pub(super) const STORE: &str = "
CREATE TABLE store_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store (
    prefix text NOT NULL, key text NOT NULL, value text NOT NULL,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    expires_at TIMESTAMP, ttl_minutes REAL, PRIMARY KEY (prefix, key));
CREATE INDEX store_prefix_idx ON store (prefix);
INSERT INTO store_migrations VALUES (0), (1), (2), (3), (4);";
pub(super) const VECTORS: &str = "
CREATE TABLE vector_migrations (v INTEGER PRIMARY KEY);
CREATE TABLE store_vectors (
    prefix text NOT NULL, key text NOT NULL, field_name text NOT NULL, embedding BLOB,
    created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
    PRIMARY KEY (prefix, key, field_name),
    FOREIGN KEY (prefix, key) REFERENCES store(prefix, key) ON DELETE CASCADE);
INSERT INTO vector_migrations VALUES (0);";
/// The tables of a store with vectors, for the shared behaviours.
pub(super) const SQLITE: &[&str] = &[STORE, VECTORS];

/// `PostgresStore.setup()`'s tables (migrations 0–3), with vectors as `real[]`.
pub(super) const POSTGRES: &[&str] = &["
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

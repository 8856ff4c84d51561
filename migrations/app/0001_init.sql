-- Flashback's own state database (SQLite): saved connections, bookmarks, notes, settings.
-- Timestamps are UTC ISO-8601 text with milliseconds, e.g. 2026-11-22T06:28:00.123Z.
-- Foreign keys are enforced only with `PRAGMA foreign_keys = ON` (set per connection).

CREATE TABLE connections (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('sqlite', 'postgres')),
    display_name   TEXT NOT NULL,
    -- A file path (sqlite) or a connection URL/DSN with any password removed (postgres).
    -- Passwords are never stored here.
    location       TEXT NOT NULL,
    last_opened_at TEXT,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (kind, location)
);

CREATE TABLE bookmarks (
    id            INTEGER PRIMARY KEY,
    connection_id INTEGER NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    thread_id     TEXT NOT NULL,
    checkpoint_ns TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL,
    label         TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (connection_id, thread_id, checkpoint_ns, checkpoint_id)
);

CREATE TABLE notes (
    id            INTEGER PRIMARY KEY,
    connection_id INTEGER NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    thread_id     TEXT NOT NULL,
    -- NULL: a note on the whole thread.
    checkpoint_id TEXT,
    body          TEXT NOT NULL,
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    updated_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE INDEX notes_thread_idx ON notes (connection_id, thread_id, checkpoint_id);

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

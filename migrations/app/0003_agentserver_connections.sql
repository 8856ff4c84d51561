-- A remembered connection may be an Agent Server's URL (kind 'agentserver'; its API key is never
-- stored here: the keyring or the environment holds it).
-- SQLite cannot change a CHECK constraint in place: the table is rebuilt (foreign keys are off
-- while migrations run, so bookmarks and notes keep their rows and point at the new table).

CREATE TABLE connections_new (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('sqlite', 'postgres', 'devserver', 'agentserver')),
    display_name   TEXT NOT NULL,
    -- A file or folder path (sqlite, devserver), an Agent Server URL (agentserver) or a
    -- connection URL/DSN with any password removed (postgres). Passwords and API keys are never
    -- stored here.
    location       TEXT NOT NULL,
    last_opened_at TEXT,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (kind, location)
);

INSERT INTO connections_new (id, kind, display_name, location, last_opened_at, created_at)
SELECT id, kind, display_name, location, last_opened_at, created_at FROM connections;

DROP TABLE connections;

ALTER TABLE connections_new RENAME TO connections;

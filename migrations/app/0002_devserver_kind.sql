-- A `langgraph dev` project folder is a location too (`kind = 'devserver'`): the CHECK of
-- `connections.kind` admits it. SQLite cannot change a CHECK in place, so the table is rebuilt
-- (SQLite's documented procedure: the runner applies migrations with foreign keys off, so
-- dropping the old table deletes no bookmark or note; their references name `connections`,
-- which the new table is renamed to).

CREATE TABLE connections_new (
    id             INTEGER PRIMARY KEY,
    kind           TEXT NOT NULL CHECK (kind IN ('sqlite', 'postgres', 'devserver')),
    display_name   TEXT NOT NULL,
    -- A file path (sqlite), a folder (devserver) or a connection URL/DSN with any password
    -- removed (postgres). Passwords are never stored here.
    location       TEXT NOT NULL,
    last_opened_at TEXT,
    created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (kind, location)
);

INSERT INTO connections_new (id, kind, display_name, location, last_opened_at, created_at)
    SELECT id, kind, display_name, location, last_opened_at, created_at FROM connections;

DROP TABLE connections;

ALTER TABLE connections_new RENAME TO connections;

-- How langgraph-checkpoint-sqlite 3.1.2 upgrades files created before 3.1.2 (no task_path).
-- On a database that already has the column, SQLite fails with "duplicate column name":
-- ignore that error (Python does). SQLite stores the new column's definition as typed here.
ALTER TABLE writes ADD COLUMN task_path TEXT NOT NULL DEFAULT ''

// The databases the browser e2e test opens: copies of the fixture written by the real LangGraph
// in a temporary directory (removed at the end by the caller).

import { spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** { work, db, broken, damagedIds, many, wide, similar, notes, storageDb, retentionDb, jsDb }, or exit 2 when a copy cannot be made. */
export function makeFixtures(repo) {
  const work = mkdtempSync(join(tmpdir(), "flashback-e2e-"));
  const fixture = join(repo, "tests", "fixtures", "langgraph.sqlite");
  const db = join(work, "agents.sqlite");
  copyFileSync(fixture, db);

  // A copy with undecodable pending writes (bad msgpack) in one thread.
  const broken = join(work, "broken.sqlite");
  copyFileSync(fixture, broken);
  const py = spawnSync(
    "python3",
    [
      "-c",
      "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); n=c.execute(\"UPDATE writes SET value=x'c1c1c1' WHERE thread_id='chat-tools' AND channel='messages'\").rowcount; c.commit(); print(n)",
      broken,
    ],
    { encoding: "utf8" },
  );
  if (py.status !== 0 || !(Number(py.stdout) > 0)) {
    console.error(`browser e2e: cannot corrupt the test copy: ${py.stderr}`);
    process.exit(2);
  }
  // In the same copy, two damaged checkpoints: the latest of "reducers" (its thread-list row is
  // marked) and an older one of "chat-tools" (its DAG row is marked; the rest stays usable).
  const damaged = spawnSync(
    "python3",
    [
      "-c",
      `import json, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
def corrupt(thread, offset):
    (cid,) = c.execute("SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = '' ORDER BY checkpoint_id DESC LIMIT 1 OFFSET ?", (thread, offset)).fetchone()
    c.execute("UPDATE checkpoints SET checkpoint = x'c1c1c1' WHERE thread_id = ? AND checkpoint_ns = '' AND checkpoint_id = ?", (thread, cid))
    return cid
ids = {"latest": corrupt("reducers", 0), "older": corrupt("chat-tools", 3)}
c.commit()
print(json.dumps(ids))`,
      broken,
    ],
    { encoding: "utf8" },
  );
  if (damaged.status !== 0) {
    console.error(`browser e2e: cannot damage the test copy: ${damaged.stderr}`);
    process.exit(2);
  }
  const damagedIds = JSON.parse(damaged.stdout);
  // A copy where the thread "forked" is repeated 3,000 times (t0000-forked …): the threads list
  // must stay quick (only the rows in view are in the DOM) and searchable.
  const many = join(work, "many.sqlite");
  copyFileSync(fixture, many);
  copyThread(many, "forked", "t%04d-forked", 3000, 3012, "the 3,000-thread copy");
  // A copy where the thread "forked" is repeated as "wide" with its fork point forked 5,000
  // more times (an eval harness): 5,001 lanes, which the DAG scrolls sideways.
  const wide = join(work, "wide.sqlite");
  copyFileSync(fixture, wide);
  const forks = spawnSync(
    "python3",
    [
      "-c",
      `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in c.execute("PRAGMA table_info(checkpoints)")]
fp = c.execute("SELECT parent_checkpoint_id FROM checkpoints WHERE thread_id = 'forked' AND checkpoint_ns = '' AND parent_checkpoint_id IS NOT NULL GROUP BY parent_checkpoint_id HAVING COUNT(*) > 1").fetchone()[0]
copy = ",".join("'wide'" if x == "thread_id" else x for x in cols)
c.execute(f"INSERT INTO checkpoints ({','.join(cols)}) SELECT {copy} FROM checkpoints WHERE thread_id = 'forked'")
child = ",".join({"thread_id": "'wide'", "checkpoint_id": "?", "parent_checkpoint_id": "?"}.get(x, x) for x in cols)
tmpl = c.execute("SELECT MIN(checkpoint_id) FROM checkpoints WHERE thread_id = 'forked' AND parent_checkpoint_id = ?", (fp,)).fetchone()[0]
for i in range(5000):
    c.execute(f"INSERT INTO checkpoints ({','.join(cols)}) SELECT {child} FROM checkpoints WHERE thread_id = 'forked' AND checkpoint_id = ?", (f"1f1e7000-{i:04x}-6000-8000-000000000000", fp, tmpl))
c.commit()
print(c.execute("SELECT COUNT(*) FROM checkpoints WHERE thread_id = 'wide'").fetchone()[0])`,
      wide,
    ],
    { encoding: "utf8" },
  );
  if (forks.status !== 0 || Number(forks.stdout) !== 5014) {
    console.error(`browser e2e: cannot make the 5,000-fork copy: ${forks.stdout}${forks.stderr}`);
    process.exit(2);
  }
  const notes = join(work, "notes.txt");
  writeFileSync(notes, "these are notes, not a database\n".repeat(100));
  // A copy where "reducers" is repeated 25 times as bulk-0000 … bulk-0024 (a load test's
  // threads): the list folds them into one group row.
  const similar = join(work, "similar.sqlite");
  copyFileSync(fixture, similar);
  copyThread(similar, "reducers", "bulk-%04d", 25, 37, "the similar-threads copy");
  // The storage report's fixture (tests/fixtures/storage_fixture.py, the real LangGraph):
  // repeated payloads, a base64 PNG data URL and a base64 PDF in "vision", Sends in
  // "fanout-large".
  const storageDb = join(work, "storage.sqlite");
  copyFileSync(join(repo, "tests", "fixtures", "storage.sqlite"), storageDb);
  // A copy of its own for retention (issue 15 item 3), whose threads it deletes: the checks
  // after it still find every thread of the served copy.
  const retentionDb = join(work, "retention.sqlite");
  copyFileSync(fixture, retentionDb);
  // The LangGraph.js fixture (issue 16: tests/js-fixtures/, written by the real LangGraph.js
  // SqliteSaver), which langgraphjs.mjs opens and forks into.
  const jsDb = join(work, "langgraphjs.sqlite");
  copyFileSync(join(repo, "tests", "js-fixtures", "langgraphjs.sqlite"), jsDb);
  return { work, db, broken, damagedIds, many, wide, similar, notes, storageDb, retentionDb, jsDb };
}

/** Copy thread `source` of the SQLite file `path` `n` times, as `idFormat % i` (Python's
 * `%`), checkpoints and writes; exit 2 unless the file then holds `threads` threads. */
function copyThread(path, source, idFormat, n, threads, what) {
  const copied = spawnSync(
    "python3",
    [
      "-c",
      `import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
source, fmt, n = sys.argv[2], sys.argv[3], int(sys.argv[4])
for t in ("checkpoints", "writes"):
    cols = [r[1] for r in c.execute(f"PRAGMA table_info({t})")]
    sel = ",".join("?" if x == "thread_id" else x for x in cols)
    for i in range(n):
        c.execute(f"INSERT INTO {t} ({','.join(cols)}) SELECT {sel} FROM {t} WHERE thread_id = ?", (fmt % i, source))
c.commit()
print(c.execute("SELECT COUNT(DISTINCT thread_id) FROM checkpoints").fetchone()[0])`,
      path,
      source,
      idFormat,
      String(n),
    ],
    { encoding: "utf8" },
  );
  if (copied.status !== 0 || Number(copied.stdout) !== threads) {
    console.error(`browser e2e: cannot make ${what}: ${copied.stdout}${copied.stderr}`);
    process.exit(2);
  }
}

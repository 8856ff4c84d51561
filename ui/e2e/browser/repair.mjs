// Repair from writes (issue 14 item 5): a three-table copy of the fixture whose head checkpoint
// of chat-tools lost its `messages` blob row. The header says the checkpoint was not read in
// full and offers the repair; its preview names the channel and the reducer, Write rebuilds the
// row from the writes in one transaction and the chat is whole again. A row whose bytes do not
// decode (in "reducers") is offered the same from the state view's decode-problem box.

import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { expect, tid } from "./harness.mjs";

/** The root graph's namespace hash (MD5 of ""). */
const ROOT_NS = "d41d8cd98f00b204e9800998ecf8427e";

/** The head checkpoint's version of a channel, read with the CLI. */
function headVersion(bin, path, thread, channel) {
  const state = spawnSync(bin, ["state", path, thread, "--json"], { encoding: "utf8" });
  expect(state.status === 0, `flashback state: ${state.stderr}`);
  const version = JSON.parse(state.stdout).channel_versions[channel];
  expect(typeof version === "string", `the head's ${channel} version of ${thread}: ${version}`);
  return version;
}

/** A three-table copy of the fixture where chat-tools' head lost its `messages` blob row (a
 * header problem) and the bytes of the head's `last` row of "reducers" are not msgpack (a
 * value that does not decode). */
function damagedCopy(bin, repo, path) {
  rmSync(path, { force: true });
  const made = spawnSync(bin, ["convert", join(repo, "tests", "fixtures", "langgraph.sqlite"), path, "--to", "three-table"], { encoding: "utf8" });
  expect(made.status === 0, `flashback convert: ${made.stderr}`);
  const messages = headVersion(bin, path, "chat-tools", "messages");
  const last = headVersion(bin, path, "reducers", "last");
  const damaged = spawnSync(
    "python3",
    [
      "-c",
      `import sqlite3, sys
ns, messages, last = sys.argv[2:5]
c = sqlite3.connect(sys.argv[1])
key = "thread_id = ? AND checkpoint_ns_hash = ? AND channel = ? AND version = ?"
n = c.execute(f"DELETE FROM checkpoint_blobs WHERE {key}", ("chat-tools", ns, "messages", messages)).rowcount
n += c.execute(f"UPDATE checkpoint_blobs SET blob_data = x'c1c1c1' WHERE {key}", ("reducers", ns, "last", last)).rowcount
c.commit()
print(n)`,
      path,
      ROOT_NS,
      messages,
      last,
    ],
    { encoding: "utf8" },
  );
  expect(damaged.status === 0 && Number(damaged.stdout) === 2, `cannot damage the blob rows: ${damaged.stdout}${damaged.stderr}`);
}

export const repairFromWrites = {
  name: "repair from writes: a lost or undecodable blob row of a three-table store is previewed, rebuilt and the state is whole again",
  run: async ({ page, shot, openDb, openThread, db, work, repo, bin }) => {
    const path = join(work, "three-table.sqlite");
    damagedCopy(bin, repo, path);
    await openDb(path);
    await openThread("chat-tools");
    await page.locator(`${tid("dag-row")}[data-head="true"]`).click();
    const problem = page.locator(tid("checkpoint-problem"));
    await problem.waitFor();
    expect((await problem.textContent()).includes("messages"), `the problem names the channel: ${await problem.textContent()}`);

    // The preview: the row, how it is rebuilt, the value; nothing written yet.
    await problem.locator(tid("repair-open")).click();
    const dialog = page.locator(tid("repair-dialog"));
    await dialog.locator(tid("repair-summary")).waitFor();
    const rows = dialog.locator(tid("repair-row"));
    expect((await rows.count()) === 1, `one damaged row (${await rows.count()})`);
    const row = (await rows.first().textContent()) ?? "";
    expect(row.includes("messages") && row.includes("no blob row"), `the row and its problem: ${row}`);
    const outcome = (await rows.first().locator(tid("repair-outcome")).textContent()) ?? "";
    expect(/^rebuilt with add_messages from 1 write of the step to /.test(outcome), `how it is rebuilt: ${outcome}`);
    expect(((await dialog.locator(tid("repair-value")).textContent()) ?? "").includes("What is 2+3"), "the value's preview");
    const write = dialog.locator(tid("repair-write"));
    expect((await write.textContent()).trim() === "Write 1 row" && !(await write.isDisabled()), `the write button: ${await write.textContent()}`);
    await shot("repair.png");

    // Write: one row, nothing left; the header's problem goes and the chat ends as it did.
    await write.click();
    const done = dialog.locator(tid("repair-done"));
    await done.waitFor();
    expect((await done.textContent()).includes("wrote 1 row; 0 still damaged"), `the result: ${await done.textContent()}`);
    await dialog.locator(tid("repair-close")).click();
    await dialog.waitFor({ state: "detached" });
    await problem.waitFor({ state: "detached" });
    await page.locator(tid("tab-state")).click();
    await page.locator(tid("chat-text")).getByText("5 × 20 = 100.", { exact: true }).waitFor();
    expect((await page.locator(tid("graph-unreadable")).count()) === 0, "no damaged checkpoint left in the DAG");

    // A row whose bytes do not decode shows in the state view, which offers the same repair.
    await openThread("reducers");
    await page.locator(`${tid("dag-row")}[data-head="true"]`).click();
    const undecoded = page.locator(tid("decode-problems"));
    await undecoded.waitFor();
    expect((await undecoded.textContent()).includes("last"), `the value that does not decode: ${await undecoded.textContent()}`);
    await undecoded.locator(tid("decode-repair-open")).click();
    await dialog.locator(tid("repair-summary")).waitFor();
    const outcomes = await dialog.locator(tid("repair-outcome")).allTextContents();
    expect(outcomes.length === 1 && outcomes[0].startsWith("rebuilt with last from 1 write"), `how it is rebuilt: ${outcomes}`);
    await dialog.locator(tid("repair-write")).click();
    await dialog.locator(tid("repair-done")).waitFor();
    await dialog.locator(tid("repair-close")).click();
    await undecoded.waitFor({ state: "detached" });
    await page.locator(`${tid("channel")}[data-channel="last"]`).getByText("collect").waitFor();
    await openDb(db);
  },
};

import { describe, expect, it } from "vitest";
import type { BlobRepair, RepairReport } from "../ipc/bindings";
import {
  canRepair,
  fixable,
  isFixable,
  previewSummary,
  rowOutcome,
  rowPlace,
  shortVersion,
  writeLabel,
  writtenSummary,
} from "./repair";

const VERSION = "00000000000000000000000000000010.0.6577018971616833";
const CHECKPOINT = "1f1e641e-e387-6e5b-8008-a728a060a3d3";

const row = (over: Partial<BlobRepair> = {}): BlobRepair => ({
  checkpoint_ns: "",
  channel: "messages",
  version: VERSION,
  problem: "no blob row",
  checkpoints: [CHECKPOINT],
  produced_at: CHECKPOINT,
  reducer: "add_messages",
  writes: 1,
  preview: '[{"type":"human"}]',
  cannot: null,
  cause: null,
  note: null,
  ...over,
});

const cannot = row({ channel: "topic", reducer: null, writes: 0, preview: null, produced_at: null, cannot: "written by the input, not a step" });

const report = (damaged: BlobRepair[], over: Partial<RepairReport> = {}): RepairReport => ({
  thread_id: "chat-tools",
  dry_run: true,
  damaged,
  repaired: 0,
  left: damaged.filter((d) => d.cannot !== null).length,
  ...over,
});

describe("repair", () => {
  it("is offered on the three-table store only", () => {
    expect(canRepair({ schema_kind: "three_table" })).toBe(true);
    expect(canRepair({ schema_kind: "langgraph" })).toBe(false);
    expect(canRepair({ schema_kind: "shallow" })).toBe(false);
    expect(canRepair({ schema_kind: "store_only" })).toBe(false);
    expect(canRepair(null)).toBe(false);
    expect(canRepair(undefined)).toBe(false);
  });

  it("writes the rows with a reducer and no reason against", () => {
    expect(isFixable(row())).toBe(true);
    expect(isFixable(cannot)).toBe(false);
    expect(isFixable(row({ reducer: null }))).toBe(false);
    expect(fixable(report([row(), cannot, row({ channel: "log", reducer: "list_append" })])).map((d) => d.channel)).toEqual(["messages", "log"]);
  });

  it("shortens versions to their counter, and names subgraph namespaces", () => {
    expect(shortVersion(VERSION)).toBe("v10");
    expect(shortVersion("~1f1e641e-e387-6e5b-8008-a728a060a3d3")).toBe("~1f1e641e-e387-6…");
    expect(shortVersion("7")).toBe("v7");
    expect(rowPlace(row())).toBe("messages");
    expect(rowPlace(row({ checkpoint_ns: "tools:abc" }))).toBe("messages [tools:abc]");
  });

  it("says how each row is rebuilt, or why it cannot be", () => {
    expect(rowOutcome(row())).toBe("rebuilt with add_messages from 1 write of the step to e387-6e5b-a728");
    expect(rowOutcome(row({ reducer: "list_append", writes: 3 }))).toBe("rebuilt with append from 3 writes of the step to e387-6e5b-a728");
    expect(rowOutcome(row({ produced_at: null }))).toContain("of the step to ?");
    expect(rowOutcome(cannot)).toBe("cannot rebuild: written by the input, not a step");
    expect(rowOutcome(row({ reducer: null, cause: "00000000000000000000000000000002.0.5" }))).toBe(
      "its own row is intact: it reads again once v2 is rebuilt",
    );
  });

  it("sums the preview up", () => {
    expect(previewSummary(report([]))).toBe("Thread chat-tools has no damaged blob rows: nothing to repair.");
    expect(previewSummary(report([row()]))).toBe(
      "1 damaged blob row; 1 can be rebuilt from the writes. Writing replaces it in one transaction.",
    );
    expect(previewSummary(report([row(), row({ channel: "log" }), cannot]))).toBe(
      "3 damaged blob rows; 2 can be rebuilt from the writes, 1 cannot. Writing replaces them in one transaction.",
    );
    expect(previewSummary(report([cannot]))).toBe("1 damaged blob row; 0 can be rebuilt from the writes, 1 cannot. Nothing can be written.");
    expect(previewSummary(report([row(), row({ reducer: null, cause: "1" })]))).toBe(
      "2 damaged blob rows; 1 can be rebuilt from the writes, 1 read again through a rebuilt row. Writing replaces it in one transaction.",
    );
  });

  it("labels the write button and the result", () => {
    expect(writeLabel(null)).toBe("Write 0 rows");
    expect(writeLabel(report([row()]))).toBe("Write 1 row");
    expect(writeLabel(report([row(), row(), cannot]))).toBe("Write 2 rows");
    expect(writtenSummary(report([row()], { dry_run: false, repaired: 1, left: 0 }))).toBe("wrote 1 row; 0 still damaged");
    expect(writtenSummary(report([row(), cannot], { dry_run: false, repaired: 2, left: 1 }))).toBe("wrote 2 rows; 1 still damaged");
  });
});

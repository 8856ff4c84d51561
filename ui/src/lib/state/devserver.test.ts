import { describe, expect, it } from "vitest";
import type { ServerRun, ServerSummary, ServerThread, ThreadSummary } from "../ipc/bindings";
import {
  kindLabel,
  runCount,
  runDuration,
  runLine,
  runsNewestFirst,
  serverBannerTone,
  serverLabel,
  serverNotes,
  serverSearchText,
  serverStatusClass,
  userMetadata,
} from "./devserver";
import { filterThreads } from "./threadfilter";

const run = (id: string, status: string, created: string, updated?: string): ServerRun => ({
  run_id: id,
  status,
  assistant_id: "a",
  created_at: created,
  updated_at: updated ?? created,
});

const serverThread = (extra: Partial<ServerThread> = {}): ServerThread => ({
  thread_id: "t1",
  status: "error",
  metadata: { fixture: "chat-failed", user_id: "u-2", graph_id: "chat", assistant_id: "a" },
  created_at: "2026-11-29T02:11:17.579614+00:00",
  updated_at: "2026-11-29T02:11:18.628579+00:00",
  assistant_id: "a",
  graph_id: "chat",
  has_checkpoints: true,
  runs: [run("r1", "success", "2026-11-29T02:11:17+00:00"), run("r2", "error", "2026-11-29T02:11:18+00:00")],
  ...extra,
});

const thread = (id: string, server: ServerThread | null): ThreadSummary => ({
  thread_id: id,
  namespaces: [""],
  checkpoint_count: 2,
  latest_checkpoint_id: "c",
  latest_ts: "2026-11-29T02:11:18+00:00",
  latest_step: 1,
  status: "failed",
  interrupts: [],
  error: null,
  next: [],
  problem: null,
  locked: false,
  server,
});

const summary = (extra: Partial<ServerSummary> = {}): ServerSummary => ({
  server: "langgraph dev (Python)",
  saved_at: "2026-11-29T02:00:00+00:00",
  running: false,
  notes: [],
  threads: 6,
  threads_without_checkpoints: 0,
  ...extra,
});

describe("devserver", () => {
  it("colours the server's statuses like the app's", () => {
    expect(serverStatusClass("idle")).toBe("finished");
    expect(serverStatusClass("busy")).toBe("pending");
    expect(serverStatusClass("interrupted")).toBe("interrupted");
    expect(serverStatusClass("error")).toBe("failed");
    expect(serverStatusClass("timeout")).toBe("failed");
    expect(serverStatusClass(null)).toBe("");
    expect(serverStatusClass("something new")).toBe("");
  });

  it("counts runs and the failed ones", () => {
    expect(runCount(serverThread())).toEqual({ total: 2, failed: 1, text: "2 runs · 1 failed" });
    expect(runCount(serverThread({ runs: [run("r", "success", "x")] }))?.text).toBe("1 run");
    expect(runCount(serverThread({ runs: [] }))?.text).toBe("0 runs");
    expect(runCount(null)).toBeNull();
  });

  it("lists runs newest first and says how long each took", () => {
    const runs = [run("a", "success", "2026-01-01T00:00:00Z"), run("b", "error", "2026-01-02T00:00:00Z")];
    expect(runsNewestFirst(runs).map((r) => r.run_id)).toEqual(["b", "a"]);
    expect(runs.map((r) => r.run_id)).toEqual(["a", "b"]);
    expect(runDuration(run("a", "success", "2026-01-01T00:00:00Z", "2026-01-01T00:00:00.250Z"))).toBe("250 ms");
    expect(runDuration(run("a", "success", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01.500Z"))).toBe("1.5 s");
    expect(runDuration(run("a", "success", "2026-01-01T00:00:00Z", "2026-01-01T00:03:04Z"))).toBe("3m 4s");
    expect(runDuration({ run_id: "x" })).toBe("");
    expect(runDuration(run("a", "success", "2026-01-02T00:00:00Z", "2026-01-01T00:00:00Z"))).toBe("");
    const line = runLine(run("a", "error", "2026-11-29T02:11:17.5+00:00", "2026-11-29T02:11:18+00:00"));
    expect(line).toEqual({ status: "error", cls: "failed", when: "2026-11-29 02:11:17", took: "500 ms" });
    expect(runLine({ run_id: "x" }).status).toBe("unknown");
  });

  it("keeps the user's metadata, without graph and assistant", () => {
    expect(userMetadata(serverThread())).toEqual([
      ["fixture", "chat-failed"],
      ["user_id", "u-2"],
    ]);
    expect(userMetadata(serverThread({ metadata: { n: 3, o: { a: 1 } } }))).toEqual([
      ["n", "3"],
      ["o", '{"a":1}'],
    ]);
    expect(userMetadata(serverThread({ metadata: null }))).toEqual([]);
    expect(userMetadata(undefined)).toEqual([]);
  });

  it("makes server metadata searchable by the thread filter", () => {
    const threads = [thread("t1", serverThread()), thread("t2", serverThread({ metadata: { user_id: "u-1" }, graph_id: "approval", status: "idle", runs: [] })), thread("t3", null)];
    expect(serverSearchText(threads[2])).toBe("");
    expect(filterThreads(threads, "u-2", "all").map((t) => t.thread_id)).toEqual(["t1"]);
    expect(filterThreads(threads, "user_id:u-1", "all").map((t) => t.thread_id)).toEqual(["t2"]);
    expect(filterThreads(threads, "approval", "all").map((t) => t.thread_id)).toEqual(["t2"]);
    expect(filterThreads(threads, "user_id", "all").map((t) => t.thread_id)).toEqual(["t1", "t2"]);
    expect(filterThreads(threads, "idle", "all").map((t) => t.thread_id)).toEqual(["t2"]);
  });

  it("labels a devserver location with when it was saved", () => {
    const now = Date.parse("2026-11-29T02:03:00+00:00");
    expect(serverLabel({ kind: "devserver", server: summary() }, now)).toBe("langgraph dev · saved 3m ago");
    expect(serverLabel({ kind: "devserver", server: summary({ running: true }) }, now)).toBe("langgraph dev · saved 3m ago · running");
    expect(serverLabel({ kind: "devserver", server: summary({ saved_at: null }) }, now)).toBe("langgraph dev");
    expect(serverLabel({ kind: "sqlite", server: null }, now)).toBeNull();
    expect(serverLabel(null, now)).toBeNull();
    expect(serverLabel({ kind: "agentserver", server: summary({ running: true }) }, now)).toBe("Agent Server · live");
  });

  it("gives the banner one line per note and a calm tone unless threads are missing", () => {
    expect(serverNotes(summary())).toEqual([]);
    expect(serverNotes(summary({ notes: ["a", " ", "b "] }))).toEqual(["a", "b"]);
    expect(serverNotes(null)).toEqual([]);
    expect(serverBannerTone(summary({ running: true, threads_without_checkpoints: 1 }))).toBe("info");
    expect(serverBannerTone(summary({ threads_without_checkpoints: 1 }))).toBe("warn");
    expect(serverBannerTone(summary())).toBe("info");
  });

  it("labels recent connections by kind", () => {
    expect(kindLabel("devserver")).toEqual({ icon: "📁", label: "langgraph dev" });
    expect(kindLabel("agentserver")).toEqual({ icon: "📡", label: "Agent Server" });
    expect(kindLabel("sqlite").label).toBe("sqlite");
    expect(kindLabel("postgres").label).toBe("postgres");
  });
});

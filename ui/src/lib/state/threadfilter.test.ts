import { describe, expect, it } from "vitest";
import type { ThreadSummary } from "../ipc/bindings";
import { filterThreads, rowNoteText } from "./threadfilter";

const t = (id: string, extra: Partial<ThreadSummary> = {}): ThreadSummary => ({
  thread_id: id,
  namespaces: [""],
  checkpoint_count: 3,
  latest_checkpoint_id: null,
  latest_ts: "2026-01-01",
  latest_step: 1,
  status: "finished",
  interrupts: [],
  error: null,
  next: [],
  problem: null,
  locked: false,
  ...extra,
});

const error = "ValueError('upstream returned HTTP 500 for item 42')";
const list = [
  t("chat-tools"),
  t("parallel-failure", { status: "failed", error, next: ["fetch_bad", "merge"] }),
  t("ask", { status: "interrupted", interrupts: [{ $type: "langgraph.types.Interrupt", value: { question: "Ship it?" }, id: "i" }] }),
];
const ids = (xs: ThreadSummary[]) => xs.map((x) => x.thread_id);

describe("the thread search", () => {
  it("finds the nodes that ran, once their activity is known", () => {
    const nodes = new Map([
      ["chat-tools", ["agent", "tools"]],
      ["parallel-failure", ["fetch_ok"]],
    ]);
    expect(ids(filterThreads(list, "agent", "all", { nodes }))).toEqual(["chat-tools"]);
    expect(ids(filterThreads(list, "agent", "all"))).toEqual([]);
    expect(ids(filterThreads(list, "FETCH_ok", "all", { nodes }))).toEqual(["parallel-failure"]);
    // Nodes due next, as before.
    expect(ids(filterThreads(list, "merge", "all"))).toEqual(["parallel-failure"]);
  });

  it("finds the error or interrupt text the row shows", () => {
    expect(rowNoteText(list[1])).toBe("ValueError: upstream returned HTTP 500 for item 42");
    expect(ids(filterThreads(list, "HTTP 500", "all"))).toEqual(["parallel-failure"]);
    expect(ids(filterThreads(list, "valueerror: upstream", "all"))).toEqual(["parallel-failure"]);
    expect(rowNoteText(list[2])).toBe("Ship it?");
    expect(ids(filterThreads(list, "ship it?", "all"))).toEqual(["ask"]);
    expect(rowNoteText(list[0])).toBe("");
  });

  it("keeps the threads a value search found for the text, within the status chosen", () => {
    const found = new Set(["parallel-failure", "chat-tools"]);
    expect(ids(filterThreads(list, "weather", "all"))).toEqual([]);
    expect(ids(filterThreads(list, "weather", "all", { found }))).toEqual(["chat-tools", "parallel-failure"]);
    expect(ids(filterThreads(list, "weather", "failed", { found }))).toEqual(["parallel-failure"]);
  });
});

import { describe, expect, it } from "vitest";
import type { JobEvent, ValueSearchSummary } from "../ipc/bindings";
import { formatRoute } from "./route";
import { canSearch, highlight, progressText, resultRoute, resultsOf, summaryOf, summaryText } from "./valuesearch";

const hit = (thread: string, path = "messages[1].content"): JobEvent => ({
  type: "search_hit",
  thread_id: thread,
  checkpoint_id: `cp-${thread}`,
  matches: [{ path, snippet: "the Answer is 5" }],
  more: false,
});

const summary = (over: Partial<ValueSearchSummary> = {}): ValueSearchSummary => ({
  threads_total: 12,
  threads_searched: 12,
  threads_matched: 1,
  truncated: false,
  threads_locked: 0,
  threads_unreadable: 0,
  ...over,
});

describe("value search", () => {
  it("takes the search hits among a job's events", () => {
    const events: JobEvent[] = [hit("a"), { type: "output", stream: "stdout", line: "x" }, hit("b")];
    expect(resultsOf(events)).toEqual([
      { threadId: "a", checkpointId: "cp-a", matches: [{ path: "messages[1].content", snippet: "the Answer is 5" }], more: false },
      { threadId: "b", checkpointId: "cp-b", matches: [{ path: "messages[1].content", snippet: "the Answer is 5" }], more: false },
    ]);
  });

  it("searches only real text", () => {
    expect(canSearch("")).toBe(false);
    expect(canSearch("   ")).toBe(false);
    expect(canSearch(" lovelace ")).toBe(true);
    expect(canSearch("x".repeat(200))).toBe(true);
    expect(canSearch("x".repeat(201))).toBe(false);
  });

  it("reads the summary and says what was not searched", () => {
    expect(summaryOf(null)).toBeNull();
    expect(summaryOf("x")).toBeNull();
    expect(summaryOf({ path: "/x" })).toBeNull();
    expect(summaryOf(summary() as unknown as Record<string, number>)).toEqual(summary());
    expect(summaryText(summary())).toEqual(["1 thread found (12 threads searched)."]);
    expect(summaryText(summary({ threads_matched: 0 }))).toEqual(["No thread's latest state holds it (12 threads searched)."]);
    expect(
      summaryText(summary({ threads_total: 5000, threads_searched: 1800, threads_matched: 200, truncated: true, threads_locked: 2, threads_unreadable: 1 })),
    ).toEqual([
      "200 threads found (1,800 threads searched).",
      "Stopped at 200 matches: 3,200 threads not searched.",
      "2 threads with encrypted values: unlock the database to search them.",
      "1 thread skipped: the latest checkpoint cannot be read.",
    ]);
  });

  it("shows progress", () => {
    expect(progressText(null)).toBe("Searching…");
    expect(progressText({ done: 0, total: 0, label: "listing threads" })).toBe("Searching…");
    expect(progressText({ done: 200, total: 1500, label: "searching values" })).toBe("Searching 200 of 1,500 threads…");
  });

  it("opens a result at its checkpoint on the state tab", () => {
    const [r] = resultsOf([hit("chat/1")]);
    expect(resultRoute(r)).toEqual({ screen: "thread", thread: "chat/1", checkpoint: { ns: "", id: "cp-chat/1" }, tab: "state" });
    expect(formatRoute(resultRoute(r))).toBe("#/thread/chat%2F1?checkpoint=cp-chat%2F1");
  });

  it("marks every hit in a snippet, any case", () => {
    expect(highlight("Ada Lovelace, lovelace", "LOVELACE")).toEqual([
      { text: "Ada ", hit: false },
      { text: "Lovelace", hit: true },
      { text: ", ", hit: false },
      { text: "lovelace", hit: true },
    ]);
    expect(highlight("city: Lovelace", " city ")).toEqual([
      { text: "city", hit: true },
      { text: ": Lovelace", hit: false },
    ]);
    expect(highlight("abc", "")).toEqual([{ text: "abc", hit: false }]);
    // Lower-casing that changes the length: shown plain rather than marked in the wrong place.
    expect(highlight("İstanbul", "stan")).toEqual([{ text: "İstanbul", hit: false }]);
  });
});

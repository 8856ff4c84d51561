import { describe, expect, it } from "vitest";
import type { PruneSummary } from "../ipc/bindings";
import { breakdown, confirmPhrase } from "./prune";

const summary = (keys: [string, string][]): PruneSummary =>
  ({
    checkpoints: keys.map(([thread_id, checkpoint_ns], i) => ({ thread_id, checkpoint_ns, checkpoint_id: `c${i}` })),
    writes: 0,
    blobs: 0,
    dry_run: true,
  }) as unknown as PruneSummary;

describe("prune", () => {
  it("breaks the preview down per thread, in the chosen order", () => {
    const got = breakdown(
      ["b", "a", "empty"],
      summary([
        ["a", ""],
        ["b", ""],
        ["a", "sub:1"],
        ["a", "sub:1"],
        ["b", "other:2"],
      ]),
    );
    expect(got).toEqual([
      { thread_id: "b", checkpoints: 2, namespaces: 1 },
      { thread_id: "a", checkpoints: 3, namespaces: 1 },
      { thread_id: "empty", checkpoints: 0, namespaces: 0 },
    ]);
  });

  it("asks to type the thread id, or how many threads, before deleting whole threads", () => {
    expect(confirmPhrase("keep_latest", ["a", "b"])).toBeNull();
    expect(confirmPhrase("delete", ["chat-1"])).toBe("chat-1");
    expect(confirmPhrase("delete", ["a", "b", "c"])).toBe("delete 3 threads");
  });
});

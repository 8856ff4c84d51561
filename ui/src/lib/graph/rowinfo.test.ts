import { describe, expect, it } from "vitest";
import { duration, MARKS, modelsLabel, nodeName, ranLabel, sinceParent, tokenCount, tokensLabel, tokensTitle } from "./rowinfo";
import { row as graphRow } from "./testrows";

const row = (id: string, ts: string, parent_row: number | null) => graphRow(id, 0, { ts, parent_row });

describe("rowinfo", () => {
  it("names each node once, with a count when it ran several times", () => {
    expect(ranLabel([])).toBe("");
    expect(ranLabel(["agent"])).toBe("agent");
    expect(ranLabel(["Send", "Send", "Send", "collect"])).toBe("Send ×3, collect");
  });

  it("shows durations at a readable unit", () => {
    expect(duration(4)).toBe("4 ms");
    expect(duration(820)).toBe("820 ms");
    expect(duration(4200)).toBe("4.2 s");
    expect(duration(42_000)).toBe("42 s");
    expect(duration(180_000)).toBe("3 min");
    expect(duration(7_200_000)).toBe("2 h");
    expect(duration(5 * 86_400_000)).toBe("5 d");
  });

  it("measures the time since the parent row, and nothing without one", () => {
    const rows = [row("c", "2026-01-01T00:00:04.2+00:00", 1), row("b", "2026-01-01T00:00:00+00:00", 2), row("a", "bad", null)];
    expect(sinceParent(rows, 0)).toBe("+4.2 s");
    expect(sinceParent(rows, 1)).toBe("");
    expect(sinceParent(rows, 2)).toBe("");
    expect(sinceParent(rows, 9)).toBe("");
  });

  it("has a badge for every mark", () => {
    for (const m of ["failed", "recovered", "interrupted", "resumed"] as const) expect(MARKS[m].text.length).toBeGreaterThan(0);
  });

  it("shows tokens compactly, with the breakdown in the title", () => {
    expect(tokenCount(950)).toBe("950");
    expect(tokenCount(1234)).toBe("1.2k");
    expect(tokenCount(12_345)).toBe("12k");
    expect(tokenCount(2_500_000)).toBe("2.5M");
    const t = { input: 1000, output: 234, total: 1234, messages: 2, cached: 0, reasoning: 0 };
    expect(tokensLabel(t)).toBe("1.2k tok");
    expect(tokensTitle(t)).toBe("Tokens used by this step (usage_metadata of 2 messages): 1,000 in, 234 out, 1,234 total");
    // Cached and reasoning tokens when the provider reports them.
    expect(tokensTitle({ ...t, cached: 800, reasoning: 100, messages: 1 })).toBe(
      "Tokens used by this step (usage_metadata of 1 message): 1,000 in (800 cached), 234 out (100 reasoning), 1,234 total",
    );
  });

  it("names the models that answered", () => {
    expect(modelsLabel([])).toBe("");
    expect(modelsLabel(["gpt-4o"])).toBe("gpt-4o");
    expect(modelsLabel(["gpt-4o", "claude-sonnet-4"])).toBe("gpt-4o +1");
  });

  it("names two Sends to one node once, counted", () => {
    expect(ranLabel(["tools", "tools"])).toBe("tools ×2");
  });

  it("reads a middleware hook as what it is", () => {
    expect(nodeName("SummarizationMiddleware.before_model")).toBe("Summarization · before model");
    expect(nodeName("TodoListMiddleware.after_model")).toBe("TodoList · after model");
    expect(nodeName("_ParentNotifierMiddleware.after_agent")).toBe("_ParentNotifier · after agent");
    expect(nodeName("Middleware.before_agent")).toBe("Middleware · before agent");
    // Not a hook: as it is.
    expect(nodeName("tools")).toBe("tools");
    expect(nodeName("pkg.module.fn")).toBe("pkg.module.fn");
    expect(nodeName(".before_model")).toBe(".before_model");
    expect(ranLabel(["model", "TodoListMiddleware.after_model"])).toBe("model, TodoList · after model");
  });
});

describe("node and mark labels", () => {
  it("reads a middleware hook as what it is, and names the node a mark is about", async () => {
    const { nodeName, markText, ranLabel } = await import("./rowinfo");
    expect(nodeName("SummarizationMiddleware.before_model")).toBe("Summarization · before model");
    expect(nodeName("TodoListMiddleware.after_model")).toBe("TodoList · after model");
    expect(nodeName("tools")).toBe("tools");
    expect(nodeName("a.b")).toBe("a.b");
    expect(ranLabel(["tools", "tools", "HumanInTheLoopMiddleware.after_model"])).toBe("tools ×2, HumanInTheLoop · after model");
    expect(markText("recovered", ["flaky"])).toBe("↻ flaky retried");
    expect(markText("failed", [])).toBe("✕ raised");
  });
});

import { describe, expect, it } from "vitest";
import { messageModel, messageUsage, totalLabel, totalTitle, usageLabel, usageTitle } from "./usage";

const t = { input: 10_000, output: 2_345, total: 12_345, messages: 3, cached: 0, reasoning: 0 };

describe("usage", () => {
  it("says a thread's total compactly, cached and reasoning only when there are some", () => {
    expect(totalLabel(t)).toBe("12k tokens · 10k in · 2.3k out");
    expect(totalLabel({ ...t, cached: 1_100, reasoning: 40 })).toBe("12k tokens · 10k in · 2.3k out · 1.1k cached · 40 reasoning");
    expect(totalTitle(t, ["gpt-4o", "gpt-4o-mini"])).toBe(
      "Tokens used by the thread's 3 model answers (gpt-4o, gpt-4o-mini), each counted once: 10,000 in, 2,345 out, 12,345 total",
    );
    expect(totalTitle({ ...t, messages: 1 }, [])).toMatch(/^Tokens used by the thread's 1 model answer, each/);
  });

  it("reads a message's model and usage", () => {
    const ai = {
      $type: "langchain_core.messages.ai.AIMessage",
      response_metadata: { model_name: "gpt-4o-2024-08-06" },
      usage_metadata: {
        input_tokens: 900,
        output_tokens: 120,
        total_tokens: 1020,
        input_token_details: { cache_read: 600 },
        output_token_details: { reasoning: 64 },
      },
    };
    expect(messageModel(ai)).toBe("gpt-4o-2024-08-06");
    const u = messageUsage(ai)!;
    expect(u).toEqual({ input: 900, output: 120, total: 1020, cached: 600, reasoning: 64 });
    expect(usageLabel(u)).toBe("1.0k tok");
    expect(usageTitle(u)).toBe("usage_metadata: 900 in (600 cached), 120 out (64 reasoning), 1,020 total");
    // Anthropic's `model`; a total left out is input + output.
    expect(messageModel({ response_metadata: { model: "claude-sonnet-4" } })).toBe("claude-sonnet-4");
    expect(messageUsage({ usage_metadata: { input_tokens: 5, output_tokens: 7 } })?.total).toBe(12);
    // Nothing said: nothing shown.
    expect(messageModel({ response_metadata: {} })).toBeNull();
    expect(messageModel("text")).toBeNull();
    expect(messageUsage({ content: "hi" })).toBeNull();
  });
});

import { describe, expect, it } from "vitest";
import { addedIds, messageIds, touchesMessages } from "./chatfollow";

const msg = (type: string, id: string | null) => ({ $type: `langchain_core.messages.${type}`, id, content: "…" });

describe("chat follow (pure)", () => {
  it("collects the ids of every message list", () => {
    const values = {
      messages: [msg("human.HumanMessage", "h1"), msg("ai.AIMessage", "a1"), msg("ai.AIMessage", null)],
      summary: [msg("system.SystemMessage", "s1")],
      count: 3,
      notes: ["not", "messages"],
    };
    expect([...messageIds(values)]).toEqual(["h1", "a1", "s1"]);
    expect(messageIds(null).size).toBe(0);
  });

  it("tells whether the step changed a message list", () => {
    const values = { messages: [msg("human.HumanMessage", "h1")], count: 1 };
    expect(touchesMessages(["messages"], values)).toBe(true);
    expect(touchesMessages(["count"], values)).toBe(false);
    // Older checkpoints do not say: maybe.
    expect(touchesMessages(null, values)).toBe(true);
    // No message list at all: nothing to show.
    expect(touchesMessages(null, { count: 1 })).toBe(false);
  });

  it("finds what is new, in order", () => {
    expect([...addedIds(new Set(["a", "b"]), new Set(["a", "b", "c", "d"]))]).toEqual(["c", "d"]);
    // A summarised list (messages removed, one added) adds just the new one.
    expect([...addedIds(new Set(["a", "b", "c"]), new Set(["s", "c"]))]).toEqual(["s"]);
    expect(addedIds(new Set(["a"]), new Set(["a"])).size).toBe(0);
  });
});

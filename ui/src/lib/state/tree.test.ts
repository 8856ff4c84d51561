import { describe, expect, it } from "vitest";
import { buildTree, decodeErrors, foldText, initiallyOpen, isMessageList, preview, toChatMessage, tooLargeValues, type Json } from "./tree";

const ai: Json = {
  $type: "langchain_core.messages.ai.AIMessage",
  content: "",
  type: "ai",
  id: "ai-1",
  tool_calls: [{ name: "add", args: { a: 2, b: 3 }, id: "call_1", type: "tool_call" }],
};

describe("value tree", () => {
  it("keeps Python type names", () => {
    const t = buildTree({ messages: [ai], n: 1, x: 1.5, ok: true, none: null }, "state");
    expect(t.typeName).toBe("dict");
    const [messages, n, x, ok, none] = t.children;
    expect(messages.typeName).toBe("list");
    expect(messages.children[0].typeName).toBe("langchain_core.messages.ai.AIMessage");
    expect(messages.children[0].path).toBe("state.messages[0]");
    expect(messages.children[0].children.map((c) => c.key)).not.toContain("$type");
    expect([n.typeName, x.typeName, ok.preview, none.preview]).toEqual(["int", "float", "True", "None"]);
  });

  it("folds long strings but keeps the full text", () => {
    const long = "word ".repeat(100);
    const node = buildTree(long);
    expect(node.folded).toBe(true);
    expect(node.preview.length).toBeLessThan(170);
    expect(node.fullText).toBe(long);
    expect(foldText("a\nb\nc\nd").folded).toBe(true);
    expect(foldText("short").folded).toBe(false);
  });

  it("masks secrets and shows undecodable values in place", () => {
    const t = buildTree({
      key: { $type: "pydantic.types.SecretStr", $value: "**********", $secret: true },
      bad: { $error: "truncated msgpack", $type: "msgpack", raw_base64: "wcE=" },
      ok: "fine",
    });
    expect(t.children[0].kind).toBe("secret");
    expect(t.children[1].kind).toBe("error");
    expect(t.children[1].preview).toContain("truncated msgpack");
    expect(t.children[2].kind).toBe("string");
    expect(decodeErrors({ a: [1, { $error: "x", $type: "msgpack" }] })).toEqual([{ path: "a[1]", message: "x" }]);
  });

  it("shows values left undecoded by the decode budget as their size, and finds them", () => {
    const big = {
      $too_large: { bytes: 209583749, reason: "value" },
      $type: "list",
      $message: "too large: 199.9 MB (over the per-value decode budget); open it to load it",
    };
    const t = buildTree({ log: big, n: 1 });
    expect(t.children[0].kind).toBe("too_large");
    expect(t.children[0].typeName).toBe("list");
    expect(t.children[0].preview).toBe("too large: 199.9 MB");
    expect(t.children[0].children).toEqual([]);
    expect(tooLargeValues({ log: big, n: 1, deep: [{ x: big }] })).toEqual([
      { path: "log", bytes: 209583749 },
      { path: "deep[0].x", bytes: 209583749 },
    ]);
    expect(tooLargeValues({ a: [1, 2] })).toEqual([]);
  });

  it("renders scalars, sets, bytes, non-string-key dicts and opaque values", () => {
    expect(buildTree({ $type: "uuid.UUID", $value: "abc" }).preview).toBe("abc");
    expect(buildTree({ $type: "uuid.UUID", $value: "12345678123456781234567812345678" }).preview).toBe("12345678-1234-5678-1234-567812345678");
    expect(buildTree({ $type: "datetime.timedelta", $args: [1, 3600, 0] }).preview).toBe("1 day, 1:00:00");
    expect(buildTree({ $type: "datetime.date", $args: [2026, 1, 2] }).preview).toBe("2026-01-02");
    const set = buildTree({ $type: "builtins.set", $value: [1, 2] });
    expect([set.kind, set.typeName, set.children.length]).toEqual(["list", "builtins.set", 2]);
    const bytes = buildTree({ $type: "builtins.bytes", base64: "AAEC" });
    expect([bytes.preview, bytes.size]).toEqual(["00 01 02  |...|", 3]);
    const d = buildTree({ $type: "builtins.dict", $items: [[1, "one"], [null, "none"]] });
    expect(d.children.map((c) => c.key)).toEqual(["1", "None"]);
    expect(buildTree({ $type: "pickle", $opaque: true, size: 12, class: "x.Y" }).kind).toBe("opaque");
    const send = buildTree({ $type: "langgraph.types.Send", $args: ["worker", { item: 1 }] });
    expect([send.kind, send.preview]).toEqual(["object", '"worker", {1 key}']);
    expect(buildTree({ $type: "x.HumanMessage", content: "hi" }).preview).toBe('"hi"');
    expect(send.children[1].children[0].key).toBe("item");
  });

  it("opens the first level", () => {
    const t = buildTree({ a: { b: { c: 1 } } }, "v");
    expect([...initiallyOpen(t)]).toEqual(["v", "v.a"]);
  });

  it("previews values on one line", () => {
    expect(preview("a\nb")).toBe('"a\\nb"');
    expect(preview([1, 2])).toBe("[2 items]");
    expect(preview(ai)).toBe("AIMessage");
    expect(preview({ $type: "x.HumanMessage", content: "hi" })).toBe('HumanMessage: "hi"');
    expect(preview("x".repeat(200), 10)).toHaveLength(10);
  });
});

describe("messages", () => {
  it("recognises message lists and their parts", () => {
    const human: Json = { $type: "langchain_core.messages.human.HumanMessage", content: "What is 2+3?", type: "human", id: "h" };
    const tool: Json = { $type: "langchain_core.messages.tool.ToolMessage", content: "5", type: "tool", tool_call_id: "call_1", name: "add", status: "success" };
    expect(isMessageList([human, ai, tool])).toBe(true);
    expect(isMessageList([human, 3])).toBe(false);
    expect(isMessageList([])).toBe(false);
    const m = toChatMessage(ai);
    expect(m.role).toBe("ai");
    expect(m.toolCalls).toEqual([{ name: "add", id: "call_1", args: { a: 2, b: 3 } }]);
    expect(toChatMessage(tool).toolCallId).toBe("call_1");
    const parts = toChatMessage({ $type: "langchain_core.messages.ai.AIMessage", content: [{ type: "text", text: "hi" }, { type: "image_url" }] });
    expect(parts.text).toBe("hi\n[image_url]");
    expect(parts.role).toBe("ai");
  });
});


import { describe, expect, it } from "vitest";
import { typeBadge } from "./badge";
import { buildTree, type Json } from "./tree";

const badge = (v: Json) => typeBadge(buildTree(v));

describe("one type badge per node", () => {
  it("names containers with their size", () => {
    expect(badge([1, 2, 3])).toEqual({ text: "list[3]", title: "list" });
    expect(badge({ a: 1, b: 2, c: 3, d: 4 })).toEqual({ text: "dict{4}", title: "dict" });
    expect(badge({ $type: "builtins.dict", $items: [[1, "one"]] })).toEqual({ text: "dict{1}", title: "builtins.dict" });
    expect(badge({ $type: "builtins.set", $value: [1, 2] })).toEqual({ text: "set{2}", title: "builtins.set" });
    expect(badge({ $type: "builtins.frozenset", $value: [1] }).text).toBe("frozenset{1}");
    expect(badge({ $type: "collections.deque", $value: ["a", "b"] }).text).toBe("deque[2]");
  });

  it("names typed values by their short name, the full type in the title", () => {
    expect(badge({ $type: "datetime.datetime", $value: "2024-01-02T03:04:05" })).toEqual({ text: "datetime", title: "datetime.datetime" });
    expect(badge({ $type: "uuid.UUID", $value: "12345678123456781234567812345678" })).toEqual({ text: "UUID", title: "uuid.UUID" });
    expect(badge({ $type: "langchain_core.messages.ai.AIMessage", content: "hi", type: "ai" })).toEqual({
      text: "AIMessage",
      title: "langchain_core.messages.ai.AIMessage",
    });
    expect(badge({ $type: "pydantic.types.SecretStr", $value: "**********", $secret: true }).text).toBe("SecretStr");
  });

  it("gives bytes their length and numpy arrays their shape", () => {
    expect(badge({ $type: "builtins.bytes", base64: btoa("hello world!") })).toEqual({ text: "bytes 12 B", title: "builtins.bytes, 12 bytes" });
    expect(badge({ $type: "builtins.bytearray", base64: btoa("x".repeat(2048)) }).text).toBe("bytearray 2.0 kB");
    expect(badge({ $type: "numpy.ndarray", dtype: "<f8", shape: [2, 3], order: "C", base64: "", values: [] }).text).toBe("ndarray[2×3]");
  });

  it("names plain values as Python does", () => {
    expect(badge("text").text).toBe("str");
    expect(badge("x".repeat(500))).toEqual({ text: "str", title: "str, 500 characters" });
    expect([badge(1).text, badge(1.5).text, badge(true).text, badge(null).text]).toEqual(["int", "float", "bool", "NoneType"]);
  });

  it("says what was not decoded", () => {
    expect(badge({ $error: "truncated", $type: "msgpack" }).text).toBe("undecodable");
    const big = badge({ $too_large: { bytes: 9e8 }, $type: "list", $message: "too large: 858.3 MB" });
    expect(big.text).toBe("list");
    expect(big.title).toContain("too large");
    expect(badge({ $type: "pickle", $opaque: true, size: 3 }).text).toBe("pickle");
  });
});

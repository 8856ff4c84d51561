import { describe, expect, it } from "vitest";
import { errorLine, errorText, pyStrLiteral } from "./errorvalue";

describe("an error as its type and message (issue 33)", () => {
  it("reads the repr LangGraph stores for a task's error", () => {
    expect(errorText("ValueError('upstream returned HTTP 500 for item 42')")).toEqual({ type: "ValueError", message: "upstream returned HTTP 500 for item 42" });
    expect(errorText(`RuntimeError("it's broken")`)).toEqual({ type: "RuntimeError", message: "it's broken" });
    expect(errorText("ValueError('line one\\nline two \\'quoted\\' \\x41')")).toEqual({ type: "ValueError", message: "line one\nline two 'quoted' A" });
    expect(errorText("httpx.HTTPStatusError('Server error 500')")).toEqual({ type: "HTTPStatusError", message: "Server error 500" });
    expect(errorText("GraphRecursionError()")).toEqual({ type: "GraphRecursionError", message: "" });
    expect(errorText("KeyError('a', 2)")).toEqual({ type: "KeyError", message: "'a', 2" });
    expect(errorText("KeyError('a'),")).toEqual({ type: null, message: "KeyError('a')," });
  });
  it("reads `Type: message` and plain text", () => {
    expect(errorText("TimeoutError: the model did not answer")).toEqual({ type: "TimeoutError", message: "the model did not answer" });
    expect(errorText("something went wrong")).toEqual({ type: null, message: "something went wrong" });
    expect(errorText("Note: not an error type")).toEqual({ type: null, message: "Note: not an error type" });
  });
  it("reads LangGraph.js errors and typed values", () => {
    expect(errorText({ $type: "js.Error", $args: ["fetch failed"] })).toEqual({ type: "Error", message: "fetch failed" });
    expect(errorText({ $type: "builtins.ValueError", $args: ["bad", 3] })).toEqual({ type: "ValueError", message: "bad, 3" });
    expect(errorText({ name: "TypeError", message: "x is undefined" })).toEqual({ type: "TypeError", message: "x is undefined" });
    expect(errorText({ message: "no name" })).toEqual({ type: null, message: "no name" });
    expect(errorText(42)).toEqual({ type: null, message: "42" });
  });
  it("gives one line for lists", () => {
    expect(errorLine("ValueError('upstream returned HTTP 500 for item 42')")).toBe("ValueError: upstream returned HTTP 500 for item 42");
    expect(errorLine("ValueError('a\\nb')")).toBe("ValueError: a ⏎ b");
    expect(errorLine("GraphRecursionError()")).toBe("GraphRecursionError");
    expect(errorLine(`ValueError('${"x".repeat(200)}')`, 20)).toBe(`ValueError: ${"x".repeat(7)}…`);
  });
  it("reads Python str literals, and only one", () => {
    expect(pyStrLiteral("'a'")).toBe("a");
    expect(pyStrLiteral("'a', 'b'")).toBeNull();
    expect(pyStrLiteral("a")).toBeNull();
    expect(pyStrLiteral("'\\u00e9'")).toBe("é");
  });
});

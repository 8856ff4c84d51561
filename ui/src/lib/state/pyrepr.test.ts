import { describe, expect, it } from "vitest";
import { offersPython, pyStr, toPython } from "./pyrepr";

describe("copy as Python", () => {
  it("writes Python literals", () => {
    expect(toPython(null)).toBe("None");
    expect(toPython([true, false, 1, 2.5])).toBe("[True, False, 1, 2.5]");
    expect(toPython({ a: "x", b: { c: [] } })).toBe("{'a': 'x', 'b': {'c': []}}");
    expect(pyStr("it's")).toBe(`"it's"`);
    expect(pyStr('a\'b"c\n\\')).toBe(`'a\\'b"c\\n\\\\'`);
    expect(pyStr("\x01é")).toBe("'\\x01é'");
  });

  it("writes the typed values of the JSON view as constructors", () => {
    expect(toPython({ $type: "uuid.UUID", $value: "12345678123456781234567812345678" })).toBe("UUID('12345678123456781234567812345678')");
    expect(toPython({ $type: "datetime.datetime", $value: "2026-01-02T03:04:05+00:00" })).toBe("datetime.fromisoformat('2026-01-02T03:04:05+00:00')");
    expect(toPython({ $type: "datetime.timedelta", $args: [1, 30, 0] })).toBe("timedelta(1, 30, 0)");
    expect(toPython({ $type: "builtins.float", $value: "nan" })).toBe("float('nan')");
    expect(toPython({ $type: "builtins.bytes", base64: btoa("hi\x00'") })).toBe("b'hi\\x00\\''");
    expect(toPython({ $type: "builtins.set", $value: [1, 2] })).toBe("{1, 2}");
    expect(toPython({ $type: "builtins.set", $value: [] })).toBe("set()");
    expect(toPython({ $type: "builtins.dict", $items: [[1, "one"], [null, "none"]] })).toBe("{1: 'one', None: 'none'}");
    expect(toPython({ $type: "langgraph.types.Send", $args: ["work", { n: 1 }] })).toBe("Send('work', {'n': 1})");
    expect(toPython({ $type: "langchain_core.messages.ai.AIMessage", content: "hi", id: "a-1", tool_calls: [] })).toBe(
      "AIMessage(content='hi', id='a-1', tool_calls=[])",
    );
    expect(toPython({ $type: "fixture_types.Weird", $$ref: 1 })).toBe("Weird($ref=1)");
    expect(toPython({ $type: "pydantic.types.SecretStr", $value: "**********", $secret: true })).toBe("SecretStr('**********')");
    expect(toPython({ $type: "pickle", $opaque: true, size: 3 })).toBe("...  # pickle not decoded here");
  });
});

describe("where copy as Python is offered", () => {
  it("for a Python program's database, not a LangGraph.js one", () => {
    expect(offersPython({ dialect: "python" })).toBe(true);
    expect(offersPython({ dialect: "js" })).toBe(false);
    // No database open yet: Python, as everywhere else (forkhint's snippets).
    expect(offersPython(null)).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { allowedOf, approvalsOf, modeLabel, readableJson, splitWaiting } from "./approvals";
import { action, batched, perCall, waitingOn } from "./testapprovals";

describe("approvalsOf", () => {
  it("reads the detail's approvals, none from a backend that sends no such field", () => {
    const a = batched([action()]);
    expect(approvalsOf({ approvals: [a] })).toEqual([a]);
    expect(approvalsOf({})).toEqual([]);
    expect(approvalsOf(null)).toEqual([]);
  });
});

describe("allowedOf", () => {
  it("keeps the known decisions in the middleware's order", () => {
    expect(allowedOf({ allowed_decisions: ["reject", "approve", "later"] })).toEqual(["approve", "reject"]);
    expect(allowedOf({ allowed_decisions: ["respond"] })).toEqual(["respond"]);
  });
  it("offers all four when none is named", () => {
    expect(allowedOf({ allowed_decisions: [] })).toEqual(["approve", "edit", "reject", "respond"]);
  });
});

describe("splitWaiting", () => {
  const a = perCall(action({ tool_call_id: "a" }));
  const b = perCall(action({ tool_call_id: "b" }));
  it("keeps the approvals still waiting (a step record lists answered ones too) and the other interrupts", () => {
    const ask = waitingOn("i-ask", "t-ask", "ask");
    const split = splitWaiting([a, b], [waitingOn("i-b", "t-b"), ask]);
    expect(split.approvals).toEqual([b]);
    expect(split.generic).toEqual([ask]);
  });
  it("matches by task when the interrupts have no ids", () => {
    const old = { ...a, interrupt_id: null };
    expect(splitWaiting([old], [waitingOn(null, "t-a")])).toEqual({ approvals: [old], generic: [] });
    expect(splitWaiting([old], [waitingOn(null, "t-x")]).approvals).toEqual([]);
  });
});

describe("modeLabel", () => {
  it("says how the middleware pauses", () => {
    expect(modeLabel(perCall(action()))).toBe("per tool call");
    expect(modeLabel(batched([action(), action()]))).toBe("batched: 2 tool calls");
    expect(modeLabel(batched([action()]))).toBe("batched: 1 tool call");
  });
});

describe("readableJson", () => {
  it("indents, and writes a string's line breaks as line breaks", () => {
    const text = readableJson({ path: "notes.md", content: "# Title\nsaid \"hi\"\n\tend", tags: ["a"], n: 1, empty: {}, none: [] });
    expect(text).toBe(['{', '  "path": "notes.md",', '  "content": "# Title', 'said \\"hi\\"', '\\tend",', '  "tags": [', '    "a"', "  ],", '  "n": 1,', '  "empty": {},', '  "none": []', "}"].join("\n"));
  });
  it("keeps a backslash followed by n as it is", () => {
    expect(readableJson("a\\nb")).toBe('"a\\\\nb"');
    expect(readableJson(null)).toBe("null");
  });
});

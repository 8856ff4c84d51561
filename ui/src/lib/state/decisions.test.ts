import { describe, expect, it } from "vitest";
import { buildPayload, checkPayload, decisionOf, formPath, initialChoice, NO_IDS, slotsOf, type Choice } from "./decisions";
import { action, batched, perCall, waitingOn } from "./testapprovals";
import { REJECT_ONLY, WEATHER_DECISION } from "./testschemas";

const choice = (type: Choice["type"], over: Partial<Choice> = {}): Choice => ({ type, args: "{}", message: "", ...over });

describe("initialChoice", () => {
  it("approves when allowed, with the arguments as the model gave them", () => {
    expect(initialChoice(action())).toEqual({ type: "approve", args: '{\n  "city": "Paris"\n}', message: "" });
    expect(initialChoice(action({ allowed_decisions: ["respond", "reject"] })).type).toBe("reject");
  });
});

describe("decisionOf", () => {
  const a = action({ allowed_decisions: ["approve", "edit", "reject", "respond"] });
  it("makes each decision in the middleware's format", () => {
    expect(decisionOf(a, choice("approve"), null)).toEqual({ value: { type: "approve" }, errors: [] });
    expect(decisionOf(a, choice("edit", { args: '{"city": "Oslo"}' }), null).value).toEqual({
      type: "edit",
      edited_action: { name: "get_weather", args: { city: "Oslo" } },
    });
    expect(decisionOf(a, choice("reject"), null).value).toEqual({ type: "reject" });
    expect(decisionOf(a, choice("reject", { message: "too far" }), null).value).toEqual({ type: "reject", message: "too far" });
    expect(decisionOf(a, choice("respond", { message: "Sunny, 21°C" }), null).value).toEqual({ type: "respond", message: "Sunny, 21°C" });
  });

  it("says what is wrong, once per field", () => {
    expect(decisionOf(a, choice("respond", { message: "  " }), null).errors).toEqual([
      { path: "message", message: "required: the answer the model gets instead of the tool's result" },
    ]);
    expect(decisionOf(a, choice("edit", { args: '{"city": }' }), null).errors[0].path).toBe("arguments");
    expect(decisionOf(a, choice("edit", { args: '{"city": }' }), null).errors[0].message).toMatch(/^not JSON: .*\(line 1, column 10\)$/);
    expect(decisionOf(a, choice("edit", { args: "[1]" }), null).errors).toEqual([{ path: "arguments", message: "must be an object" }]);
    expect(decisionOf(action(), choice("respond", { message: "x" }), null).errors).toEqual([
      { path: "type", message: "not allowed for this call (allowed: approve, edit, reject)" },
    ]);
  });

  it("checks against the interrupt's response_schema: the tool's argument model", () => {
    const bad = decisionOf(a, choice("edit", { args: '{"days": "two"}' }), WEATHER_DECISION);
    expect(bad.errors).toEqual([
      { path: "arguments.city", message: "required" },
      { path: "arguments.days", message: "must be a whole number" },
    ]);
    expect(decisionOf(a, choice("approve"), REJECT_ONLY).errors).toEqual([{ path: "type", message: 'must be "reject"' }]);
  });
});

describe("formPath", () => {
  it("names the edit's fields as the form shows them", () => {
    expect(formPath("edited_action.args.city")).toBe("arguments.city");
    expect(formPath("edited_action.args[\"a b\"]")).toBe('arguments["a b"]');
    expect(formPath("edited_action.args")).toBe("arguments");
    expect(formPath("edited_action.name")).toBe("tool name");
    expect(formPath("message")).toBe("message");
  });
});

describe("buildPayload", () => {
  const a1 = action({ tool_call_id: "c1" });
  const a2 = action({ name: "send_email", args: { to: "x@y.z" }, tool_call_id: "c2", allowed_decisions: ["approve", "reject"] });

  it("batched: one decision per action, in order", () => {
    const slots = slotsOf([batched([a1, a2])], []);
    const built = buildPayload(slots, [[choice("edit", { args: '{"city": "Rome"}' }), choice("reject", { message: "no" })]], []);
    expect(built).toEqual({
      value: { decisions: [{ type: "edit", edited_action: { name: "get_weather", args: { city: "Rome" } } }, { type: "reject", message: "no" }] },
      errors: [],
    });
  });

  it("per_call, one interrupt: the decision itself", () => {
    const slots = slotsOf([perCall(a1, { response_schema: WEATHER_DECISION })], []);
    expect(buildPayload(slots, [[choice("approve")]], [])).toEqual({ value: { type: "approve" }, errors: [] });
  });

  it("several interrupts: keyed by interrupt id; a generic one answered with its JSON", () => {
    const slots = slotsOf([perCall(a1), perCall(a2)], [waitingOn("i-ask", "t-ask", "ask")]);
    const built = buildPayload(slots, [[choice("approve")], [choice("reject")], []], ["", "", '"yes"']);
    expect(built.value).toEqual({ "i-c1": { type: "approve" }, "i-c2": { type: "reject" }, "i-ask": "yes" });
    expect(built.errors).toEqual([]);
  });

  it("gives no value while a choice is wrong, each error on its slot and tool call", () => {
    const slots = slotsOf([batched([a1, a2], { interrupt_id: "b" })], [waitingOn("g", "t-ask", "ask")]);
    const built = buildPayload(slots, [[choice("approve"), choice("edit")]], ["", "yes"]);
    expect(built.value).toBeNull();
    expect(built.errors.map((e) => [e.slot, e.action, e.path])).toEqual([
      [0, 1, "type"],
      [1, null, ""],
    ]);
    expect(buildPayload(slots, [[choice("approve"), choice("approve")]], ["", ""]).errors[0].message).toBe(
      "required: the value to resume it with, as JSON",
    );
  });

  it("refuses to key several interrupts when one has no id", () => {
    const slots = slotsOf([perCall(a1, { interrupt_id: null }), perCall(a2)], []);
    expect(buildPayload(slots, [[choice("approve")], [choice("approve")]], []).errors).toEqual([{ slot: -1, action: null, path: "", message: NO_IDS }]);
  });
});

describe("checkPayload (the resume value edited by hand)", () => {
  const a1 = action({ tool_call_id: "c1", allowed_decisions: ["approve", "edit", "reject", "respond"] });
  const a2 = action({ name: "send_email", tool_call_id: "c2", allowed_decisions: ["approve", "reject"] });

  it("checks a batched answer's decisions, one per call", () => {
    const slots = slotsOf([batched([a1, a2])], []);
    expect(checkPayload({ decisions: [{ type: "approve" }, { type: "reject", message: "no" }] }, slots)).toEqual([]);
    expect(checkPayload({ decisions: [{ type: "approve" }] }, slots)).toEqual(["decisions: needs 2 decisions, one per tool call in order (has 1)"]);
    expect(checkPayload({ decisions: [{ type: "approve" }, { type: "respond", message: "hi" }] }, slots)).toEqual([
      'decisions[1].type: must be one of "approve", "reject"',
    ]);
    expect(checkPayload({ decisions: [{ type: "edit", edited_action: { name: "other", args: [] } }, { type: "approve" }] }, slots)).toEqual([
      'decisions[0].edited_action.name: must be "get_weather"',
      "decisions[0].edited_action.args: must be an object",
    ]);
    expect(checkPayload({ approved: true }, slots)).toEqual(["decisions: required: a list of decisions, one per tool call, in order"]);
    expect(checkPayload("yes", slots)).toEqual(['must be an object: {"decisions": […]}']);
  });

  it("checks a per-call answer against its schema, and a map by interrupt id", () => {
    const one = slotsOf([perCall(a1, { response_schema: WEATHER_DECISION })], []);
    expect(checkPayload({ type: "respond" }, one)).toEqual(["message: required"]);
    const two = slotsOf([perCall(a1, { response_schema: WEATHER_DECISION }), perCall(a2)], [waitingOn("g", "t-g")]);
    expect(checkPayload({ "i-c1": { type: "approve" }, g: { anything: 1 } }, two)).toEqual([]);
    expect(checkPayload({ "i-c1": { type: "respond" }, "i-c2": { type: "edit" }, nope: 1 }, two)).toEqual([
      '["i-c1"].message: required',
      '["i-c2"].type: must be one of "approve", "reject"',
      '["nope"]: no waiting interrupt has this id',
    ]);
    expect(checkPayload("yes", two)).toEqual(['several interrupts wait: answer them as {"<interrupt id>": answer, …}']);
  });
});

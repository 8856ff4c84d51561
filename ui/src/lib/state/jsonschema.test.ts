import { describe, expect, it } from "vitest";
import type { Json } from "./json";
import { joinPath, validate } from "./jsonschema";
import { FORECAST_ARGS, REJECT_ONLY, WEATHER_DECISION } from "./testschemas";

describe("validate: the per-call decision schema (discriminated union, $defs/$ref)", () => {
  it("accepts every allowed decision", () => {
    expect(validate(WEATHER_DECISION, { type: "approve" })).toEqual([]);
    expect(validate(WEATHER_DECISION, { type: "reject" })).toEqual([]);
    expect(validate(WEATHER_DECISION, { type: "reject", message: "not now" })).toEqual([]);
    expect(validate(WEATHER_DECISION, { type: "respond", message: "It is sunny." })).toEqual([]);
    expect(validate(WEATHER_DECISION, { type: "edit", edited_action: { name: "get_weather", args: { city: "Oslo", days: 2 } } })).toEqual([]);
  });

  it("names the one bad field of the branch the type picks", () => {
    expect(validate(WEATHER_DECISION, { type: "respond" })).toEqual([{ path: "message", message: "required" }]);
    expect(validate(WEATHER_DECISION, { type: "respond", message: 3 })).toEqual([{ path: "message", message: "must be text" }]);
    expect(validate(WEATHER_DECISION, { type: "edit", edited_action: { name: "get_time", args: {} } })).toEqual([
      { path: "edited_action.name", message: 'must be "get_weather"' },
      { path: "edited_action.args.city", message: "required" },
    ]);
    expect(validate(WEATHER_DECISION, { type: "edit", edited_action: { name: "get_weather", args: { city: "Oslo", days: 1.5 } } })).toEqual([
      { path: "edited_action.args.days", message: "must be a whole number" },
    ]);
    expect(validate(WEATHER_DECISION, { type: "edit", edited_action: { name: "get_weather", args: "Oslo" } })).toEqual([
      { path: "edited_action.args", message: "must be an object" },
    ]);
  });

  it("says which types there are when the type is missing or unknown", () => {
    expect(validate(WEATHER_DECISION, {})).toEqual([{ path: "type", message: 'required: one of "approve", "edit", "reject", "respond"' }]);
    expect(validate(WEATHER_DECISION, { type: "accept" })).toEqual([{ path: "type", message: 'must be one of "approve", "edit", "reject", "respond"' }]);
    expect(validate(WEATHER_DECISION, "approve")).toEqual([{ path: "", message: "must be an object" }]);
  });

  it("checks a one-decision tool's plain object schema", () => {
    expect(validate(REJECT_ONLY, { type: "reject" })).toEqual([]);
    expect(validate(REJECT_ONLY, { type: "approve" })).toEqual([{ path: "type", message: 'must be "reject"' }]);
  });
});

describe("validate: tool arguments", () => {
  it("checks enums, optionals (anyOf) and list items", () => {
    expect(validate(FORECAST_ARGS, { city: "Oslo", unit: "F", note: null, days: [1, 2] })).toEqual([]);
    expect(validate(FORECAST_ARGS, { city: "Oslo", note: "warm" })).toEqual([]);
    expect(validate(FORECAST_ARGS, { city: "Oslo", unit: "K", note: 4, days: [1, "2"] })).toEqual([
      { path: "unit", message: 'must be one of "C", "F"' },
      { path: "note", message: "must be text or null" },
      { path: "days[1]", message: "must be a whole number" },
    ]);
  });

  it("passes keys the schema does not declare, unless additionalProperties forbids them", () => {
    expect(validate(FORECAST_ARGS, { city: "Oslo", extra: true })).toEqual([]);
    const strict = { type: "object", properties: { a: { type: "string" } }, additionalProperties: false };
    expect(validate(strict, { a: "x", b: 1, "odd key": 2 })).toEqual([
      { path: "b", message: "not allowed here" },
      { path: '["odd key"]', message: "not allowed here" },
    ]);
  });

  it("keeps one message per field", () => {
    const twice: Json = { allOf: [{ type: "object", required: ["a"] }, { required: ["a"] }] };
    expect(validate(twice, {})).toEqual([{ path: "a", message: "required" }]);
  });
});

describe("validate: schemas it cannot follow", () => {
  it("says so for a dangling or outside $ref instead of passing", () => {
    expect(validate({ $ref: "#/$defs/Missing" }, 1)).toEqual([{ path: "", message: "the schema's $ref #/$defs/Missing points at nothing" }]);
    expect(validate({ $ref: "https://example.com/s.json" }, 1)).toEqual([
      { path: "", message: "cannot follow $ref https://example.com/s.json (only refs into the schema itself)" },
    ]);
  });

  it("stops on a schema that refers to itself without end", () => {
    const loop = { $defs: { A: { $ref: "#/$defs/A" } }, $ref: "#/$defs/A" };
    expect(validate(loop, 1)).toEqual([{ path: "", message: "the schema refers to itself too deeply to check" }]);
  });

  it("follows a recursive schema as deep as the value goes", () => {
    const tree = { $defs: { N: { type: "object", properties: { kids: { type: "array", items: { $ref: "#/$defs/N" } }, v: { type: "integer" } } } }, $ref: "#/$defs/N" };
    expect(validate(tree, { v: 1, kids: [{ v: 2, kids: [{ v: "3" }] }] })).toEqual([{ path: "kids[0].kids[0].v", message: "must be a whole number" }]);
  });

  it("accepts anything for no schema or a boolean one", () => {
    expect(validate(null, { any: 1 })).toEqual([]);
    expect(validate(true, 1)).toEqual([]);
  });
});

describe("joinPath", () => {
  it("writes keys as a reader would", () => {
    expect(joinPath("", "a")).toBe("a");
    expect(joinPath("a", "b")).toBe("a.b");
    expect(joinPath("a", 0)).toBe("a[0]");
    expect(joinPath("a", "x-y")).toBe('a["x-y"]');
  });
});

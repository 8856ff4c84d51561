import { describe, expect, it } from "vitest";
import { parseJson } from "./jsontext";

describe("JSON editor parsing", () => {
  it("parses what JSON.parse parses", () => {
    for (const text of ['{"a": [1, 2.5e3, -0, true, null], "b": "\\u00e9\\n"}', "[]", '"x"', " 3 "]) {
      expect(parseJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
    }
  });

  it("reports where the error is", () => {
    const r = parseJson('{\n  "a": 1,\n  "b": oops\n}');
    expect(r).toMatchObject({ ok: false, line: 3, column: 8 });
    expect(parseJson('{"a": 1,}')).toMatchObject({ ok: false, message: 'expected a "key" but found character "}"' });
    expect(parseJson("[1 2]")).toMatchObject({ ok: false, message: 'expected "," or "]" but found character "2"' });
    expect(parseJson('"abc')).toMatchObject({ ok: false, message: "unterminated string", column: 1 });
    expect(parseJson('{"a": 1, "a": 2}')).toMatchObject({ ok: false, message: 'duplicate key "a"' });
    expect(parseJson("")).toMatchObject({ ok: false, message: "unexpected end of input" });
    expect(parseJson("1 2")).toMatchObject({ ok: false, message: 'unexpected character "2" after the value' });
  });
});

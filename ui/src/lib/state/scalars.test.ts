import { describe, expect, it } from "vitest";
import { bytesPreview, dashedUuid, scalarText, scalarValue, timedeltaText } from "./scalars";
import type { Json } from "./tree";

describe("python scalars", () => {
  it("dashes UUIDs", () => {
    expect(dashedUuid("12345678123456781234567812345678")).toBe("12345678-1234-5678-1234-567812345678");
    expect(dashedUuid("ABCDEF00ABCDEF00ABCDEF00ABCDEF00")).toBe("abcdef00-abcd-ef00-abcd-ef00abcdef00");
    expect(dashedUuid("not a uuid")).toBe("not a uuid");
  });

  it("prints timedeltas as str(timedelta)", () => {
    // Python: str(timedelta(days=d, seconds=s, microseconds=us))
    expect(timedeltaText(0, 0, 0)).toBe("0:00:00");
    expect(timedeltaText(0, 3725, 0)).toBe("1:02:05");
    expect(timedeltaText(0, 0, 500000)).toBe("0:00:00.500000");
    expect(timedeltaText(1, 1, 0)).toBe("1 day, 0:00:01");
    expect(timedeltaText(2, 11045, 250000)).toBe("2 days, 3:04:05.250000");
    expect(timedeltaText(-1, 86399, 0)).toBe("-1 day, 23:59:59");
    expect(timedeltaText(-3, 0, 0)).toBe("-3 days, 0:00:00");
  });

  it("previews bytes as hex and ASCII", () => {
    expect(bytesPreview(btoa("hello"))).toBe("68 65 6c 6c 6f  |hello|");
    expect(bytesPreview(btoa("\x00\x01ab\xff"))).toBe("00 01 61 62 ff  |..ab.|");
    expect(bytesPreview(btoa("x".repeat(40)))).toBe(`${Array(16).fill("78").join(" ")}  |${"x".repeat(16)}|`);
    expect(bytesPreview("")).toBe("");
    expect(bytesPreview("!!!")).toBe("");
  });

  it("knows the typed scalars Python prints its own way", () => {
    expect(scalarText("uuid.UUID", { $type: "uuid.UUID", $value: "12345678123456781234567812345678" })).toBe("12345678-1234-5678-1234-567812345678");
    expect(scalarText("datetime.timedelta", { $type: "datetime.timedelta", $args: [0, 90, 0] })).toBe("0:01:30");
    expect(scalarText("decimal.Decimal", { $type: "decimal.Decimal", $value: "1.5" })).toBeNull();
  });
});

describe("typed scalars without their type", () => {
  it("shows the value only", () => {
    const s = (type: string, rest: { [key: string]: Json }) => scalarValue(type, { $type: type, ...rest });
    expect(s("uuid.UUID", { $value: "12345678123456781234567812345678" })).toBe("12345678-1234-5678-1234-567812345678");
    expect(s("uuid.UUID", { $value: "abc" })).toBe("abc");
    expect(s("datetime.date", { $args: [2026, 1, 2] })).toBe("2026-01-02");
    expect(s("datetime.datetime", { $value: "2024-01-02T03:04:05.600000" })).toBe("2024-01-02T03:04:05.600000");
    expect(s("decimal.Decimal", { $value: "-0.000120" })).toBe("-0.000120");
    expect(s("fixture_types.Priority", { $value: 1 })).toBe("1");
    expect(s("builtins.float", { $value: "nan" })).toBe("nan");
    expect(s("pathlib.PosixPath", { $args: ["/", "var"] })).toBe('"/", "var"');
    expect(s("datetime.timezone", { $args: [null] })).toBe("None");
  });
});

import { describe, expect, it } from "vitest";
import type { ValueSize } from "../ipc/bindings";
import { TICK_LABEL_MAX, tickLabel, valueKind } from "./storage";

describe("a chart's axis labels", () => {
  it("draws a short label whole", () => {
    expect(tickLabel("messages")).toBe("messages");
    expect(tickLabel("dc444e0b-c533-5adb-9655-f71515d20469")).toBe("dc444e0b-c533-5adb-9655-f71515d20469");
    expect(tickLabel("dc444e0b-c533-5adb-9655-f71515d20469-copy")).toBe("dc444e0b-c533-5adb-9655-f71515d2046…");
  });

  it("ends a long one in … at the limit, counting characters, not UTF-16 units", () => {
    const long = "SummarizationMiddleware.before_model · retry";
    expect([...tickLabel(long)].length).toBe(TICK_LABEL_MAX);
    expect(tickLabel(long).endsWith("…")).toBe(true);
    expect(tickLabel("a".repeat(TICK_LABEL_MAX))).toBe("a".repeat(TICK_LABEL_MAX));
    expect(tickLabel("🙂".repeat(40), 5)).toBe("🙂🙂🙂🙂…");
  });
});

describe("a stored value's kind", () => {
  it("names a blob's version as the state view does", () => {
    const blob = { kind: "blob", version: "00000000000000000000000000000002.0.4362514285236581" } as unknown as ValueSize;
    expect(valueKind(blob)).toBe("blob v2");
    expect(valueKind({ kind: "blob", version: "7" } as unknown as ValueSize)).toBe("blob v7");
  });
});

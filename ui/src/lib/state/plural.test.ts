import { describe, expect, it } from "vitest";
import { plural } from "./format";

describe("plural", () => {
  it("says one in the singular and every other count in the plural", () => {
    expect(plural(1, "namespace")).toBe("1 namespace");
    expect(plural(0, "namespace")).toBe("0 namespaces");
    expect(plural(2, "subgraph namespace")).toBe("2 subgraph namespaces");
  });

  it("groups thousands and takes an irregular plural", () => {
    expect(plural(1204, "checkpoint")).toBe("1,204 checkpoints");
    expect(plural(1, "match", "matches")).toBe("1 match");
    expect(plural(3, "match", "matches")).toBe("3 matches");
  });
});

import { describe, expect, it } from "vitest";
import { menuKey, nextEnabled } from "./menu";

describe("the ⋯ menu's keys", () => {
  const none = [false, false, false];

  it("moves down and up, wrapping around", () => {
    expect(menuKey("ArrowDown", 0, none)).toEqual({ kind: "focus", index: 1 });
    expect(menuKey("ArrowDown", 2, none)).toEqual({ kind: "focus", index: 0 });
    expect(menuKey("ArrowUp", 0, none)).toEqual({ kind: "focus", index: 2 });
    expect(menuKey("ArrowUp", 2, none)).toEqual({ kind: "focus", index: 1 });
  });

  it("starts at the first item (down) or the last (up) when none has focus", () => {
    expect(menuKey("ArrowDown", -1, none)).toEqual({ kind: "focus", index: 0 });
    expect(menuKey("ArrowUp", -1, none)).toEqual({ kind: "focus", index: 2 });
  });

  it("goes to the first and the last item with Home and End", () => {
    expect(menuKey("Home", 1, none)).toEqual({ kind: "focus", index: 0 });
    expect(menuKey("End", 1, none)).toEqual({ kind: "focus", index: 2 });
  });

  it("skips disabled items", () => {
    const d = [false, true, false];
    expect(menuKey("ArrowDown", 0, d)).toEqual({ kind: "focus", index: 2 });
    expect(menuKey("ArrowUp", 2, d)).toEqual({ kind: "focus", index: 0 });
    expect(menuKey("Home", 2, [true, false, false])).toEqual({ kind: "focus", index: 1 });
    expect(menuKey("End", 0, [false, false, true])).toEqual({ kind: "focus", index: 1 });
  });

  it("moves nowhere when every item is disabled", () => {
    expect(nextEnabled([true, true], 0, 1)).toBe(-1);
    expect(menuKey("ArrowDown", -1, [true, true])).toBeNull();
  });

  it("closes on Escape and Tab, and ignores other keys", () => {
    expect(menuKey("Escape", 1, none)).toEqual({ kind: "close" });
    expect(menuKey("Tab", 1, none)).toEqual({ kind: "close" });
    expect(menuKey("a", 1, none)).toBeNull();
    expect(menuKey("Enter", 1, none)).toBeNull();
  });
});

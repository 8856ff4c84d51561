import { describe, expect, it } from "vitest";
import { channelPath, pagedBadge, clampOffset, folded, foldedText, lastOffset, pageLabel, pageOffset, stepHit } from "./paging";

describe("paging a long list", () => {
  it("finds the page that holds an item", () => {
    expect(pageOffset(0, 100)).toBe(0);
    expect(pageOffset(99, 100)).toBe(0);
    expect(pageOffset(100, 100)).toBe(100);
    expect(pageOffset(9_999, 100)).toBe(9_900);
    expect(pageOffset(-3, 100)).toBe(0);
    expect(pageOffset(5, 0)).toBe(0);
  });

  it("keeps an offset within the list", () => {
    expect(lastOffset(10_002, 100)).toBe(10_000);
    expect(lastOffset(100, 100)).toBe(0);
    expect(lastOffset(0, 100)).toBe(0);
    expect(clampOffset(20_000, 100, 10_002)).toBe(10_000);
    expect(clampOffset(150, 100, 10_002)).toBe(100);
    expect(clampOffset(-1, 100, 10_002)).toBe(0);
    expect(clampOffset(Number.NaN, 100, 10_002)).toBe(0);
  });

  it("labels a page as people count", () => {
    expect(pageLabel(0, 100, 10_002)).toBe("1–100 of 10,002");
    expect(pageLabel(10_000, 2, 10_002)).toBe("10,001–10,002 of 10,002");
    expect(pageLabel(0, 0, 0)).toBe("none of 0");
  });

  it("steps through the hits, wrapping", () => {
    expect(stepHit(null, 3, 1)).toBe(0);
    expect(stepHit(null, 3, -1)).toBe(2);
    expect(stepHit(2, 3, 1)).toBe(0);
    expect(stepHit(0, 3, -1)).toBe(2);
    expect(stepHit(1, 0, 1)).toBe(null);
  });

  it("reads a folded string", () => {
    const v = { $folded: { chars: 812_345, path: "messages[6].content[1].image_url.url" }, $type: "builtins.str", $value: "data:image/png;base64,iVBOR" };
    const f = folded(v)!;
    expect(f.path).toBe("messages[6].content[1].image_url.url");
    expect(foldedText(f)).toBe("data:image/png;base64,iVBOR… (812,345 characters, folded)");
    expect(folded({ $type: "builtins.str", $value: "x" })).toBe(null);
    expect(folded("text")).toBe(null);
    expect(folded({ $folded: "odd" })).toBe(null);
  });
});

describe("a channel as a path", () => {
  it("quotes what is not a plain word", () => {
    expect(channelPath("messages")).toBe("messages");
    expect(channelPath("branch:to:agent")).toBe("branch:to:agent");
    expect(channelPath("my channel")).toBe('["my channel"]');
  });
});

describe("a paged list's badge", () => {
  it("says the whole length", () => {
    expect(pagedBadge(10_002).text).toBe("list[10,002]");
  });
});

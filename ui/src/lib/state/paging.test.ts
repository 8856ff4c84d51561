import { describe, expect, it } from "vitest";
import type { Json } from "./json";
import { channelPath, pagedBadge, clampOffset, folded, foldedIn, foldedLabel, foldedText, lastOffset, pageLabel, pageOffset, stepHit, unfolded } from "./paging";

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

describe("folded strings", () => {
  const fold = (path: string, chars: number, head = "data:image/png;base64,iVBOR"): Json => ({
    $folded: { chars, path },
    $type: "builtins.str",
    $value: head,
  });
  const item: { [k: string]: Json } = {
    type: "human",
    content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: fold("messages[3].content[1].image_url.url", 900_000) } }],
    additional_kwargs: { note: fold("messages[3].additional_kwargs.note", 20_000, "long") },
  };

  it("are found inside an item with the path that fetches each whole", () => {
    const found = foldedIn(item);
    expect(found.map((f) => [f.path, f.chars])).toEqual([
      ["messages[3].content[1].image_url.url", 900_000],
      ["messages[3].additional_kwargs.note", 20_000],
    ]);
    expect(found.map(foldedLabel)).toEqual(["content[1].image_url.url", "additional_kwargs.note"]);
    expect(foldedIn("plain")).toEqual([]);
    expect(foldedIn([1, null, { a: [] }])).toEqual([]);
    expect(foldedIn(item, 1)).toHaveLength(1);
  });

  it("are replaced in place by the string fetched, the rest kept as it was", () => {
    const whole = "data:image/png;base64," + "A".repeat(50);
    const out = unfolded(item, "messages[3].content[1].image_url.url", whole) as { [k: string]: Json[] };
    const content = item.content as Json[];
    expect(out.content[1]).toEqual({ type: "image_url", image_url: { url: whole } });
    expect(out.content[0]).toBe(content[0]);
    expect(out.additional_kwargs).toBe(item.additional_kwargs);
    expect(foldedIn(out).map((f) => f.path)).toEqual(["messages[3].additional_kwargs.note"]);
    // A path it does not hold: the very same value.
    expect(unfolded(item, "messages[9].x", "y")).toBe(item);
  });
});

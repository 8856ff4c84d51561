import { describe, expect, it } from "vitest";
import type { MetadataKey } from "../ipc/bindings";
import { chipValue, EMPTY_FIND, findRequest, fromLocalInput, isActive, parseChip, readFind, suggest, toLocalInput, writeFind, type ThreadFind } from "./metafilter";

describe("metafilter", () => {
  it("reads a chip as `flashback threads --where` does", () => {
    expect(parseChip("user_id=u-48213")).toEqual({ key: "user_id", value: "u-48213" });
    expect(parseChip(" assistant_id = a=b ")).toEqual({ key: "assistant_id", value: "a=b" });
    expect(parseChip("user_id")).toHaveProperty("error");
    expect(parseChip("user id=x")).toHaveProperty("error");
    expect(chipValue("3")).toBe(3);
    expect(chipValue("true")).toBe(true);
    expect(chipValue('"3"')).toBe("3");
    expect(chipValue("u-48213")).toBe("u-48213");
  });

  it("builds the request of a page", () => {
    const f: ThreadFind = { where: [{ key: "user_id", value: "u-48213" }, { key: "step", value: "3" }], since: "2026-11-26T12:00:00.000Z", until: "", status: ["interrupted"] };
    expect(findRequest("db1", f, 200, "c/t")).toEqual({
      db: "db1",
      limit: 200,
      filter: { user_id: "u-48213", step: 3 },
      since: "2026-11-26T12:00:00.000Z",
      until: null,
      status: ["interrupted"],
      after: "c/t",
    });
    expect(isActive(EMPTY_FIND)).toBe(false);
    expect(isActive(f)).toBe(true);
  });

  it("keeps the filter in the URL", () => {
    const f: ThreadFind = { where: [{ key: "user_id", value: "u 48/213&x" }], since: "2026-11-26T12:00:00.000Z", until: "2026-11-27T00:00:00.000Z", status: ["failed", "pending"] };
    const q = new URLSearchParams();
    writeFind(f, q);
    expect(readFind(new URLSearchParams(q.toString()))).toEqual(f);
    expect(readFind(new URLSearchParams("db=x"))).toBeNull();
    // What does not read is left out.
    expect(readFind(new URLSearchParams("where=nokey&status=done&where=a=1"))).toEqual({ where: [{ key: "a", value: "1" }], since: "", until: "", status: [] });
  });

  it("turns the time inputs into UTC and back", () => {
    const iso = fromLocalInput("2026-11-26T12:00");
    expect(iso).toBe(new Date(2026, 10, 26, 12, 0).toISOString());
    expect(toLocalInput(iso)).toBe("2026-11-26T12:00");
    expect(fromLocalInput("")).toBe("");
    expect(toLocalInput("nonsense")).toBe("");
  });

  it("suggests the keys present, then their values", () => {
    const keys: MetadataKey[] = [
      { key: "step", count: 40, values: [1, 2] },
      { key: "source", count: 40, values: ["loop", "input"] },
      { key: "parents", count: 40, values: [] },
      { key: "user_id", count: 30, values: ["u-48213", "u-77"] },
      { key: "assistant_id", count: 30, values: ["asst-support"] },
      { key: "run_id", count: 12, values: ["run-1"] },
    ];
    expect(suggest(keys, "")).toEqual(["user_id=", "assistant_id=", "run_id=", "step=", "source="]);
    expect(suggest(keys, "us")).toEqual(["user_id="]);
    expect(suggest(keys, "user_id=")).toEqual(["user_id=u-48213", "user_id=u-77"]);
    expect(suggest(keys, "user_id=77")).toEqual(["user_id=u-77"]);
    expect(suggest(keys, "step=")).toEqual(["step=1", "step=2"]);
    expect(suggest(keys, "nope=")).toEqual([]);
  });
});

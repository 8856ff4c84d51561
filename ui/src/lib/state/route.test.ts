import { describe, expect, it } from "vitest";
import { formatRoute, isNewPlace, parseRoute, type Route } from "./route";

describe("route", () => {
  it("round-trips every screen", () => {
    const routes: Route[] = [
      { screen: "open" },
      { screen: "threads", db: "/data/agents.sqlite" },
      { screen: "threads", db: "/x.sqlite", find: { where: [{ key: "user_id", value: "u-48213" }], since: "2026-11-26T12:00:00.000Z", until: "", status: ["interrupted"] } },
      { screen: "memory", db: "postgresql://app@db.example:5432/agents" },
      { screen: "memory", db: "/x.sqlite", item: { namespace: ["users", "u-1"], key: "prefs" } },
      { screen: "memory", db: "/x.sqlite", item: { namespace: ["a/b", "c d", "é?&#"], key: "k/1 ?" } },
      { screen: "storage", db: "/data/agents.sqlite" },
      { screen: "thread", db: "/x.sqlite", thread: "t", checkpoint: { ns: "", id: "1f0-cc" }, tab: "storage" },
      { screen: "thread", db: "/data/a b.sqlite", thread: "chat/42 é?&#" },
      { screen: "thread", db: "/x.sqlite", thread: "t", checkpoint: { ns: "", id: "1f0-aa" }, tab: "writes" },
      { screen: "thread", db: "/x.sqlite", thread: "t", checkpoint: { ns: "mid:9|inner:3", id: "1f0-bb" } },
    ];
    for (const r of routes) expect(parseRoute(formatRoute(r))).toEqual(r);
  });

  it("formats readable fragments", () => {
    expect(formatRoute({ screen: "threads", db: "/tmp/a.sqlite" })).toBe("#/threads?db=%2Ftmp%2Fa.sqlite");
    expect(formatRoute({ screen: "thread", thread: "t1", checkpoint: { ns: "", id: "c1" }, tab: "state" })).toBe("#/thread/t1?checkpoint=c1");
  });

  it("carries the selected Memory item: a deep link opens it", () => {
    const r: Route = { screen: "memory", db: "/tmp/a.sqlite", item: { namespace: ["users", "u-1"], key: "prefs" } };
    expect(formatRoute(r)).toBe("#/memory?db=%2Ftmp%2Fa.sqlite&ns=users&ns=u-1&key=prefs");
    expect(parseRoute("#/memory?ns=users&key=prefs")).toEqual({ screen: "memory", item: { namespace: ["users"], key: "prefs" } });
    // Half an item is none.
    expect(parseRoute("#/memory?key=prefs")).toEqual({ screen: "memory" });
    expect(parseRoute("#/memory?ns=users")).toEqual({ screen: "memory" });
    // Another item is the same place (the entry is replaced).
    expect(isNewPlace(r, { ...r, item: { namespace: ["users"], key: "other" } })).toBe(false);
  });

  it("ignores what is not a route", () => {
    expect(parseRoute("")).toBeNull();
    expect(parseRoute("#token=abc")).toBeNull();
    expect(parseRoute("#/nowhere")).toBeNull();
    expect(parseRoute("#/thread/")).toBeNull();
    expect(parseRoute("#/thread/t?tab=bogus")).toEqual({ screen: "thread", thread: "t", db: undefined });
    expect(parseRoute("#/thread/%E0%A4%A")?.thread).toBe("%E0%A4%A");
  });

  it("pushes a new history entry for another screen or thread, replaces it within one", () => {
    const a: Route = { screen: "thread", db: "d", thread: "t", checkpoint: { ns: "", id: "1" } };
    expect(isNewPlace(null, a)).toBe(true);
    expect(isNewPlace(a, { ...a, checkpoint: { ns: "", id: "2" } })).toBe(false);
    expect(isNewPlace(a, { ...a, tab: "writes" })).toBe(false);
    expect(isNewPlace(a, { ...a, thread: "u" })).toBe(true);
    expect(isNewPlace(a, { screen: "threads", db: "d" })).toBe(true);
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { call, cancelJob, Failure, followJob, toFailure } from "./api";
import { installHttpTransport } from "./host";

describe("calling commands", () => {
  it("unwraps data and turns every error shape into a Failure", async () => {
    expect(await call(Promise.resolve({ status: "ok" as const, data: 5 }))).toBe(5);
    await expect(call(Promise.resolve({ status: "error" as const, error: { code: "auth" as const, message: "no" } }))).rejects.toMatchObject({
      code: "auth",
      message: "no",
    });
    // Tauri's own failures are strings.
    await expect(call(Promise.resolve({ status: "error" as const, error: "command x not found" }))).rejects.toMatchObject({ code: "ipc" });
    await expect(call(Promise.reject(new Error("boom")))).rejects.toBeInstanceOf(Failure);
    expect(toFailure({ code: "io", message: "disk full" }).message).toBe("disk full");
  });
});

describe("following a job", () => {
  afterEach(() => {
    vi.unstubAllGlobals();
    delete window.__TAURI_INTERNALS__;
  });

  it("polls with the cursor until the job stops and keeps every event", async () => {
    const snapshots = [
      { id: "j", kind: "rerun", state: "running", progress: null, events: [{ type: "output", stream: "stdout", line: "a" }], cursor: 1, result: null, error: null },
      { id: "j", kind: "rerun", state: "running", progress: null, events: [], cursor: 1, result: null, error: null },
      { id: "j", kind: "rerun", state: "succeeded", progress: null, events: [{ type: "output", stream: "stdout", line: "b" }], cursor: 2, result: { ok: 1 }, error: null },
    ];
    const bodies: unknown[] = [];
    vi.stubGlobal(
      "fetch",
      vi.fn(async (_url: string, init: RequestInit) => {
        bodies.push(JSON.parse(init.body as string));
        return new Response(JSON.stringify(snapshots.shift()), { status: 200 });
      }),
    );
    installHttpTransport("t");
    const updates: number[] = [];
    const final = await followJob("j", { sleep: async () => {}, onUpdate: (s) => updates.push(s.events.length) });
    expect(final.state).toBe("succeeded");
    expect(final.events.map((e) => (e.type === "output" ? e.line : ""))).toEqual(["a", "b"]);
    expect(updates).toEqual([1, 0, 1]);
    expect(bodies.map((b) => (b as { req: { cursor: number } }).req.cursor)).toEqual([0, 1, 1]);
  });

  it("ignores a cancel of a job that already finished", async () => {
    vi.stubGlobal("fetch", vi.fn(async () => new Response(JSON.stringify({ code: "not_found", message: "no job" }), { status: 400 })));
    installHttpTransport("t");
    await expect(cancelJob("old")).resolves.toBeUndefined();
  });
});

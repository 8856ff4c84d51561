import { describe, expect, it } from "vitest";
import { Action } from "./action.svelte";

describe("Action", () => {
  it("is busy while the work runs and clears the last error", async () => {
    const a = new Action();
    a.fail("invalid_input", "bad");
    let release!: () => void;
    const p = a.run(() => new Promise<void>((r) => (release = r)));
    expect(a.busy).toBe(true);
    expect(a.error).toBeNull();
    release();
    expect(await p).toBe(true);
    expect(a.busy).toBe(false);
  });

  it("ignores a second press while the first runs", async () => {
    const a = new Action();
    let calls = 0;
    let release!: () => void;
    const first = a.run(() => {
      calls++;
      return new Promise<void>((r) => (release = r));
    });
    expect(await a.run(async () => void calls++)).toBe(false);
    release();
    await first;
    expect(calls).toBe(1);
  });

  it("keeps the backend's code and message when the work fails", async () => {
    const a = new Action();
    const ok = await a.run(async () => {
      throw { code: "invalid_input", message: "values.log: expected a list" };
    });
    expect(ok).toBe(false);
    expect(a.busy).toBe(false);
    expect(a.error?.code).toBe("invalid_input");
    expect(a.error?.message).toBe("values.log: expected a list");
  });
});

import { describe, expect, it } from "vitest";
import { canRetry, Retry } from "./retry.svelte";
import { errorTitle } from "./format";

describe("canRetry", () => {
  it("offers a retry where the failure may pass by itself", () => {
    expect(canRetry("timeout")).toBe(true);
    expect(canRetry("connection")).toBe(true);
    expect(canRetry("locked")).toBe(true);
    // Trying the same thing again cannot help these.
    for (const code of ["not_found", "auth", "needs_password", "invalid_input", "corrupt", "unsupported_schema", "not_open", "internal"]) {
      expect(canRetry(code)).toBe(false);
    }
  });

  it("names a timeout", () => {
    expect(errorTitle("timeout")).toBe("The server did not answer.");
  });
});

describe("Retry", () => {
  it("runs the read again, once at a time", async () => {
    let calls = 0;
    let release!: () => void;
    const r = new Retry(() => {
      calls++;
      return new Promise<void>((done) => (release = done));
    });
    const first = r.run();
    expect(r.running).toBe(true);
    expect(await r.run()).toBe(false);
    expect(calls).toBe(1);
    release();
    expect(await first).toBe(true);
    expect(r.running).toBe(false);
    const second = r.run();
    expect(calls).toBe(2);
    release();
    expect(await second).toBe(true);
  });

  it("is ready again after an attempt that throws", async () => {
    let fail = true;
    const r = new Retry(async () => {
      if (fail) throw { code: "timeout", message: "Postgres at db:5432/app did not answer within 30 s" };
    });
    expect(await r.run()).toBe(false);
    expect(r.running).toBe(false);
    fail = false;
    expect(await r.run()).toBe(true);
  });

  it("leaves the screen usable: a stalled read does not hold up others", async () => {
    // The retried read never answers; other reads of the view-model still do.
    const r = new Retry(() => new Promise<void>(() => {}));
    void r.run();
    expect(r.running).toBe(true);
    const other = new Retry(async () => {});
    expect(await other.run()).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import { latest } from "./latest";

function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

describe("latest", () => {
  it("applies only the newest load when answers come back out of order", async () => {
    const gate = latest();
    const applied: number[] = [];
    const old = deferred<number>();
    const fresh = deferred<number>();
    const a = gate(old.promise, (v) => applied.push(v), () => applied.push(-1));
    const b = gate(fresh.promise, (v) => applied.push(v), () => applied.push(-1));
    fresh.resolve(2);
    old.resolve(1);
    expect(await Promise.all([a, b])).toEqual([false, true]);
    expect(applied).toEqual([2]);
  });

  it("drops a superseded load's error and reports the current one's", async () => {
    const gate = latest();
    const errors: unknown[] = [];
    const old = deferred<number>();
    const fresh = deferred<number>();
    const a = gate(old.promise, () => {}, (e) => errors.push(e));
    const b = gate(fresh.promise, () => {}, (e) => errors.push(e));
    old.reject("stale");
    fresh.reject("current");
    await Promise.all([a, b]);
    expect(errors).toEqual(["current"]);
  });

  it("applies every load that finishes before the next one starts", async () => {
    const gate = latest();
    const applied: string[] = [];
    await gate(Promise.resolve("a"), (v) => applied.push(v), () => {});
    await gate(Promise.resolve("b"), (v) => applied.push(v), () => {});
    expect(applied).toEqual(["a", "b"]);
  });
});

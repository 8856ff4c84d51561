import { describe, expect, it } from "vitest";
import type { ServerThread, ThreadSummary } from "../ipc/bindings";
import { row } from "../graph/testrows";
import { chain } from "./testthread";
import {
  anyBusy,
  busyLabel,
  FAST_MS,
  graphSignature,
  isBusy,
  mergePage,
  nextDelay,
  Poller,
  pollsLive,
  SLOW_MS,
  threadsSignature,
  type PollEnv,
  type TickResult,
} from "./live";

const server = (status: string, extra: Partial<ServerThread> = {}): ServerThread => ({
  thread_id: "t",
  status,
  metadata: {},
  created_at: "2026-11-29T02:00:00+00:00",
  updated_at: "2026-11-29T02:00:01+00:00",
  has_checkpoints: true,
  runs: [],
  ...extra,
});

const thread = (id: string, s: ServerThread | null = null, extra: Partial<ThreadSummary> = {}): ThreadSummary => ({
  thread_id: id,
  namespaces: [""],
  checkpoint_count: 2,
  latest_checkpoint_id: "c",
  latest_ts: null,
  latest_step: 1,
  status: "finished",
  interrupts: [],
  error: null,
  next: [],
  problem: null,
  locked: false,
  server: s,
  ...extra,
});

/** Timers run by hand, and a window that can be hidden. */
function fakeEnv() {
  let nextId = 1;
  const timers = new Map<number, { fn: () => void; ms: number }>();
  let hidden = false;
  let listener: (() => void) | null = null;
  const env: PollEnv = {
    setTimer: (fn, ms) => {
      const id = nextId++;
      timers.set(id, { fn, ms });
      return id;
    },
    clearTimer: (h) => void timers.delete(h as number),
    hidden: () => hidden,
    onVisibility: (fn) => {
      listener = fn;
      return () => (listener = null);
    },
  };
  return {
    env,
    timers,
    /** Fire the one pending timer; returns its wait. */
    async fire(): Promise<number> {
      expect(timers.size).toBe(1);
      const [[id, t]] = [...timers];
      timers.delete(id);
      t.fn();
      await new Promise((r) => setTimeout(r, 0));
      return t.ms;
    },
    setHidden(h: boolean) {
      hidden = h;
      listener?.();
    },
    get listening() {
      return listener !== null;
    },
  };
}

describe("which sessions poll", () => {
  it("polls an Agent Server and a dev folder whose server runs, not a database or a stopped folder", () => {
    expect(pollsLive({ kind: "agentserver", server: null })).toBe(true);
    const summary = { server: "langgraph dev", running: true, notes: [], threads: 1, threads_without_checkpoints: 0 };
    expect(pollsLive({ kind: "devserver", server: summary })).toBe(true);
    expect(pollsLive({ kind: "devserver", server: { ...summary, running: false } })).toBe(false);
    expect(pollsLive({ kind: "sqlite", server: null })).toBe(false);
    expect(pollsLive({ kind: "postgres" })).toBe(false);
    expect(pollsLive(null)).toBe(false);
  });
});

describe("busy detection", () => {
  it("marks only busy threads", () => {
    expect(isBusy(server("busy"))).toBe(true);
    for (const s of ["idle", "interrupted", "error"]) expect(isBusy(server(s))).toBe(false);
    expect(isBusy(null)).toBe(false);
    expect(isBusy({ status: null })).toBe(false);
    expect(anyBusy([thread("a", server("idle")), thread("b")])).toBe(false);
    expect(anyBusy([thread("a", server("idle")), thread("b", server("busy"))])).toBe(true);
    expect(anyBusy(null)).toBe(false);
    expect(busyLabel("t-1")).toBe("Thread t-1 is running now");
  });
});

describe("backoff schedule", () => {
  it("starts fast, doubles while nothing changes, up to 30 s, and is fast again on a change or a run", () => {
    const waits: number[] = [];
    let d: number | null = null;
    for (let i = 0; i < 8; i++) waits.push((d = nextDelay(d, false, false)));
    expect(waits).toEqual([1500, 3000, 6000, 12000, 24000, 30000, 30000, 30000]);
    expect(nextDelay(SLOW_MS, true, false)).toBe(FAST_MS);
    expect(nextDelay(SLOW_MS, false, true)).toBe(FAST_MS);
  });
});

describe("signatures", () => {
  it("change with a new checkpoint, a status, a run; not with the same list again", () => {
    const list = [thread("a", server("idle", { runs: [{ run_id: "r1", status: "success" }] })), thread("b")];
    const same = threadsSignature(structuredClone(list));
    expect(threadsSignature(list)).toBe(same);
    expect(threadsSignature([{ ...list[0], latest_checkpoint_id: "d" }, list[1]])).not.toBe(same);
    expect(threadsSignature([thread("a", server("busy", { runs: [{ run_id: "r1", status: "success" }] })), list[1]])).not.toBe(same);
    expect(threadsSignature([thread("a", server("idle", { runs: [{ run_id: "r1", status: "running" }] })), list[1]])).not.toBe(same);
    expect(threadsSignature([...list, thread("c")])).not.toBe(same);
    expect(threadsSignature(null)).toBe("");
  });

  it("a graph changes with a new checkpoint or a step mark", () => {
    const g = chain();
    expect(graphSignature(chain())).toBe(graphSignature(g));
    expect(graphSignature(chain([row("c4", 0, { parent_row: 1, head: true })]))).not.toBe(graphSignature(g));
    const marked = chain();
    marked.rows[0] = { ...marked.rows[0], marks: ["interrupted"] };
    expect(graphSignature(marked)).not.toBe(graphSignature(g));
    expect(graphSignature(null)).toBe("");
  });
});

describe("mergePage", () => {
  it("replaces the recent threads, adds new ones, keeps the rest", () => {
    const current = [thread("a"), thread("b"), thread("c")];
    const page = [thread("c", server("busy")), thread("d")];
    const merged = mergePage(current, page, 2);
    expect(merged.map((t) => t.thread_id)).toEqual(["a", "b", "c", "d"]);
    expect(merged[2].server?.status).toBe("busy");
    expect(merged[0]).toBe(current[0]);
  });

  it("a short page is the whole list: threads gone from the server go", () => {
    expect(mergePage([thread("a"), thread("b")], [thread("b")], 200).map((t) => t.thread_id)).toEqual(["b"]);
  });
});

describe("Poller", () => {
  it("backs off while nothing changes and speeds up on a change", async () => {
    const f = fakeEnv();
    const answers: TickResult[] = [
      { changed: false, busy: false },
      { changed: false, busy: false },
      { changed: true, busy: false },
      { changed: false, busy: true },
    ];
    let ticks = 0;
    const p = new Poller(async () => answers[ticks++], f.env);
    p.start();
    expect(await f.fire()).toBe(1500);
    expect(await f.fire()).toBe(3000);
    expect(await f.fire()).toBe(6000);
    expect(await f.fire()).toBe(1500); // after the change
    expect(p.delay).toBe(1500); // a run in progress: still fast
    expect(ticks).toBe(4);
    p.stop();
  });

  it("never runs two ticks at once, and stops for good", async () => {
    const f = fakeEnv();
    let inFlight = 0;
    let most = 0;
    let release!: () => void;
    const p = new Poller(async () => {
      inFlight++;
      most = Math.max(most, inFlight);
      await new Promise<void>((r) => (release = r));
      inFlight--;
      return { changed: false, busy: false };
    }, f.env);
    p.start();
    await f.fire();
    expect(f.timers.size).toBe(0); // nothing scheduled while a tick runs
    p.poke(); // ignored while running
    expect(f.timers.size).toBe(0);
    release();
    await new Promise((r) => setTimeout(r, 0));
    expect(f.timers.size).toBe(1);
    expect(most).toBe(1);
    p.stop();
    expect(f.timers.size).toBe(0);
    expect(f.listening).toBe(false);
    p.poke();
    expect(f.timers.size).toBe(0);
  });

  it("pauses while the window is hidden and polls fast when it shows again", async () => {
    const f = fakeEnv();
    let ticks = 0;
    const p = new Poller(async () => (ticks++, { changed: false, busy: false }), f.env);
    p.start();
    await f.fire();
    await f.fire();
    expect(p.delay).toBe(6000);
    f.setHidden(true);
    expect(f.timers.size).toBe(0);
    f.setHidden(false);
    expect(p.delay).toBe(1500);
    await f.fire();
    expect(ticks).toBe(3);
    p.stop();
  });

  it("a failing tick slows down like an unchanged one", async () => {
    const f = fakeEnv();
    const p = new Poller(async () => {
      throw new Error("unreachable");
    }, f.env);
    p.start();
    await f.fire();
    expect(p.delay).toBe(3000);
    p.stop();
  });

  it("poke brings a slow poller back to fast", async () => {
    const f = fakeEnv();
    const p = new Poller(async () => ({ changed: false, busy: false }), f.env);
    p.start();
    await f.fire();
    await f.fire();
    expect(p.delay).toBe(6000);
    p.poke();
    expect(p.delay).toBe(1500);
    expect(f.timers.size).toBe(1);
    p.stop();
  });
});

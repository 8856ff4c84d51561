// Runes in a test: the file name has the `.svelte.` infix, so Svelte compiles it.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ReplayStep } from "../ipc/bindings";
import type { Failure } from "../ipc/api";
import { Replay, REPLAY_INTERVAL, type ReplayTrack } from "./replay.svelte";

/** A branch of four rows (root first) and a selection on it, reactive like ThreadView. */
class Track implements ReplayTrack {
  branch = $state<number[]>([0, 1, 2, 3]);
  selected = $state(3);
  current = $derived(this.selected >= 0 ? { id: `c${this.selected}` } : null);
  selects: number[] = [];
  select(i: number) {
    this.selects.push(i);
    this.selected = i;
  }
}

const step = (from: number, to: number | null, changed: string[] = []) =>
  ({
    index: from,
    checkpoint_id: `c${from}`,
    next_checkpoint_id: to === null ? null : `c${to}`,
    changed_channels: changed,
    tasks: { next: [], tasks: [{ name: `node${from}` }] },
  }) as unknown as ReplayStep;

const STEPS = [step(0, 1, ["a"]), step(1, 2, ["b"]), step(2, 3, ["c", "d"]), step(3, null)];

describe("Replay", () => {
  let track: Track;
  let loads: number;
  let failures: Failure[];
  let replay: Replay;

  beforeEach(() => {
    vi.useFakeTimers();
    track = new Track();
    loads = 0;
    failures = [];
    replay = new Replay(
      track,
      async () => {
        loads++;
        return STEPS;
      },
      (f) => failures.push(f),
    );
  });

  afterEach(() => {
    replay.stop();
    vi.useRealTimers();
  });

  it("started at the tip, plays from the root one step per interval and stops at the tip", async () => {
    await replay.toggle();
    expect(loads).toBe(1);
    expect(replay.playing).toBe(true);
    expect(track.selects).toEqual([0]);
    vi.advanceTimersByTime(REPLAY_INTERVAL - 1);
    expect(track.selects).toEqual([0]);
    vi.advanceTimersByTime(1);
    expect(track.selects).toEqual([0, 1]);
    vi.advanceTimersByTime(2 * REPLAY_INTERVAL);
    expect(track.selects).toEqual([0, 1, 2, 3]);
    expect(replay.playing).toBe(true);
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    expect(replay.playing).toBe(false);
    vi.advanceTimersByTime(10 * REPLAY_INTERVAL);
    expect(track.selects).toEqual([0, 1, 2, 3]);
  });

  it("started inside the branch, goes on from there", async () => {
    track.selected = 1;
    await replay.toggle();
    expect(track.selects).toEqual([]);
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    expect(track.selects).toEqual([2]);
  });

  it("pauses on a second toggle and the timer stops", async () => {
    await replay.toggle();
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    await replay.toggle();
    expect(replay.playing).toBe(false);
    vi.advanceTimersByTime(10 * REPLAY_INTERVAL);
    expect(track.selects).toEqual([0, 1]);
    expect(loads).toBe(1);
  });

  it("runs one timer when Play is pressed again while the steps load", async () => {
    track.selected = 0;
    await Promise.all([replay.toggle(), replay.toggle()]);
    expect(loads).toBe(2);
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    expect(track.selects).toEqual([1]);
    await replay.toggle(); // pause
    vi.advanceTimersByTime(10 * REPLAY_INTERVAL);
    expect(track.selects).toEqual([1]);
  });

  it("stops when the selection leaves the branch", async () => {
    track.selected = 1;
    await replay.toggle();
    track.selected = 42;
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    expect(replay.playing).toBe(false);
    expect(track.selects).toEqual([]);
  });

  it("pauses where the person selects a row while it plays", async () => {
    await replay.toggle();
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    expect(track.selects).toEqual([0, 1]);
    replay.interrupt();
    track.select(3);
    expect(replay.playing).toBe(false);
    vi.advanceTimersByTime(10 * REPLAY_INTERVAL);
    expect(track.selects).toEqual([0, 1, 3]);
    // Not playing: nothing to pause.
    replay.interrupt();
    expect(replay.playing).toBe(false);
  });

  it("pauses, without moving on, when the selection moved on the branch since the last tick", async () => {
    await replay.toggle();
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    track.selected = 0; // moved by the person (a key, the scrubber, Back) on the same branch
    vi.advanceTimersByTime(REPLAY_INTERVAL);
    expect(replay.playing).toBe(false);
    expect(track.selected).toBe(0);
    expect(track.selects).toEqual([0, 1]);
  });

  it("reports a failed load and does not play", async () => {
    replay = new Replay(
      track,
      async () => {
        throw { code: "not_found", message: "no such checkpoint" };
      },
      (f) => failures.push(f),
    );
    await replay.toggle();
    expect(replay.playing).toBe(false);
    expect(replay.steps).toBeNull();
    expect(failures.map((f) => [f.code, f.message])).toEqual([["not_found", "no such checkpoint"]]);
    vi.advanceTimersByTime(10 * REPLAY_INTERVAL);
    expect(track.selects).toEqual([]);
  });

  it("does nothing without a branch or when there is nothing to load", async () => {
    track.branch = [];
    await replay.toggle();
    expect(loads).toBe(0);
    expect(replay.playing).toBe(false);
    track.branch = [0, 1, 2, 3];
    replay = new Replay(track, async () => null, (f) => failures.push(f));
    await replay.toggle();
    expect(replay.playing).toBe(false);
    expect(track.selects).toEqual([]);
  });

  it("knows what runs next from the selected checkpoint and what changed on the way in", async () => {
    expect(replay.step).toBeNull();
    expect([...replay.changed]).toEqual([]);
    track.selected = 2;
    await replay.toggle();
    expect(replay.step?.checkpoint_id).toBe("c2");
    expect([...replay.changed]).toEqual(["b"]);
    track.selected = 3;
    expect(replay.step?.checkpoint_id).toBe("c3");
    expect([...replay.changed]).toEqual(["c", "d"]);
    track.selected = 0;
    expect([...replay.changed]).toEqual([]);
    track.selected = -1;
    expect(replay.step).toBeNull();
  });
});

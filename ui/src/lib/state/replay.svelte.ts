// Play: replays the selected branch one checkpoint at a time (a step every 1.1 s), from the
// root when started at the tip, stopping at the tip. While it has the branch's replay steps,
// the current checkpoint's step (what runs next, which channels it changes) and the channels
// that changed on the way into it are known, for the scrubber and the state panel.

import type { ReplayStep } from "../ipc/bindings";
import { toFailure, type Failure } from "../ipc/api";

/** What the replay walks: the selected branch and the selection on it. */
export interface ReplayTrack {
  /** Row indices of the selected branch, root first. */
  readonly branch: number[];
  /** The selected row (-1: none). */
  readonly selected: number;
  /** The selected checkpoint. */
  readonly current: { id: string } | null;
  select(i: number): void;
}

export const REPLAY_INTERVAL = 1100;

export class Replay {
  playing = $state(false);
  /** The branch's replay steps (from the last Play). */
  steps = $state<ReplayStep[] | null>(null);
  /** The current checkpoint's step: what runs next from it. */
  readonly step: ReplayStep | null = $derived.by(() => this.find((s) => s.checkpoint_id === this.track.current?.id));
  /** The channels the step into the current checkpoint changed. */
  readonly changed: Set<string> = $derived.by(
    () => new Set(this.find((s) => s.next_checkpoint_id === this.track.current?.id)?.changed_channels ?? []),
  );

  private timer: ReturnType<typeof setInterval> | null = null;
  /** The row the replay selected last: a selection elsewhere was the person's, and pauses it. */
  private at = -1;
  private readonly track: ReplayTrack;
  private readonly load: () => Promise<ReplayStep[] | null>;
  private readonly fail: (f: Failure) => void;
  private readonly interval: number;

  /**
   * `load` fetches the replay steps of the selected branch (null: nothing to replay); `fail`
   * reports a load that failed.
   */
  constructor(
    track: ReplayTrack,
    load: () => Promise<ReplayStep[] | null>,
    fail: (f: Failure) => void,
    interval = REPLAY_INTERVAL,
  ) {
    this.track = track;
    this.load = load;
    this.fail = fail;
    this.interval = interval;
  }

  private find(pred: (s: ReplayStep) => boolean): ReplayStep | null {
    if (!this.steps || !this.track.current) return null;
    return this.steps.find(pred) ?? null;
  }

  stop() {
    this.playing = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** Play, or pause when playing. */
  async toggle() {
    if (this.playing) return this.stop();
    if (this.track.branch.length === 0) return;
    let steps: ReplayStep[] | null;
    try {
      steps = await this.load();
    } catch (e) {
      this.fail(toFailure(e));
      return;
    }
    if (steps === null) return;
    this.steps = steps;
    // From the start when at the tip.
    const branch = this.track.branch;
    if (branch.indexOf(this.track.selected) === branch.length - 1) this.track.select(branch[0]);
    this.at = this.track.selected;
    this.playing = true;
    // A second Play pressed while the steps loaded must not leave a second timer running.
    if (this.timer) clearInterval(this.timer);
    this.timer = setInterval(() => this.advance(), this.interval);
  }

  /** The person selected a checkpoint (a click on a row, a key, the scrubber): Play pauses
   * there, as a player's does when you grab its position. */
  interrupt() {
    if (this.playing) this.stop();
  }

  /** One tick: the next checkpoint on the branch, or stop at its tip (or off the branch), or
   * where the person moved the selection since the last tick. */
  advance() {
    const b = this.track.branch;
    const p = b.indexOf(this.track.selected);
    if (this.track.selected !== this.at || p < 0 || p >= b.length - 1) return this.stop();
    this.track.select(b[p + 1]);
    this.at = this.track.selected;
  }
}

// A backend job followed to its end, with Cancel: what the app's job-backed panels share (the
// value search, the storage report). A new run replaces the one running, which is cancelled;
// whatever it still reports is dropped.

import type { JobProgress, JobSnapshot } from "../ipc/bindings";
import { toFailure, type Failure } from "../ipc/api";

/** What a job runs on (the IPC commands; fakes in tests). */
export interface JobBackend<Req> {
  start(req: Req): Promise<string>;
  follow(job: string, onUpdate: (s: JobSnapshot) => void): Promise<JobSnapshot>;
  cancel(job: string): Promise<void>;
}

export class JobRun<Req> {
  running = $state(false);
  progress = $state<JobProgress | null>(null);
  cancelled = $state(false);
  error = $state<Failure | null>(null);

  private job: string | null = null;
  private generation = 0;
  private stopAsked = false;
  private readonly backend: JobBackend<Req>;

  constructor(backend: JobBackend<Req>) {
    this.backend = backend;
  }

  /** Run `req`: `onUpdate` sees each snapshot and `onDone` the result of a job that succeeded,
   * both only while this run is the current one (`onDone` may throw: that is the run's error).
   * `failed` says what failed when the job reports no error of its own. */
  protected async run(
    req: Req,
    failed: string,
    onUpdate: (s: JobSnapshot) => void,
    onDone: (result: JobSnapshot["result"]) => void,
  ): Promise<void> {
    this.stopRunning();
    const gen = ++this.generation;
    const current = () => gen === this.generation;
    this.running = true;
    this.progress = null;
    this.cancelled = false;
    this.error = null;
    this.stopAsked = false;
    try {
      const job = await this.backend.start(req);
      if (!current()) return void this.backend.cancel(job);
      this.job = job;
      if (this.stopAsked) void this.backend.cancel(job);
      const final = await this.backend.follow(job, (s) => {
        if (!current()) return;
        this.progress = s.progress;
        onUpdate(s);
      });
      if (!current()) return;
      if (final.state === "succeeded") onDone(final.result);
      else if (final.state === "cancelled") this.cancelled = true;
      else this.error = toFailure(final.error ?? failed);
    } catch (e) {
      if (current()) this.error = toFailure(e);
    } finally {
      if (current()) {
        this.running = false;
        this.job = null;
      }
    }
  }

  /** Stop the running job (what it reported so far stays). */
  cancel() {
    if (!this.running) return;
    this.stopAsked = true;
    if (this.job) void this.backend.cancel(this.job);
  }

  /** Stop whatever runs and drop what it still reports. */
  protected stop() {
    this.stopRunning();
    this.generation++;
    this.running = false;
  }

  private stopRunning() {
    if (this.running && this.job) void this.backend.cancel(this.job);
    this.job = null;
  }
}

// The storage report as a job (Storage screen, a thread's Storage tab): runs the backend's
// `start_storage_report` (one read snapshot, never writes), following its progress, with
// Cancel. A new run replaces the one running (which is cancelled; what it still reports is
// dropped). The last whole-database report of each database is kept, so that coming back from
// a thread does not measure a big database again.

import type { JobProgress, JobSnapshot, StorageReport, StorageRequest } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, cancelJob, followJob, toFailure, type Failure } from "../ipc/api";
import { reportOf } from "./storage";

/** What the report runs on (the IPC commands; fakes in tests). */
export interface StorageBackend {
  start(req: StorageRequest): Promise<string>;
  follow(job: string, onUpdate: (s: JobSnapshot) => void): Promise<JobSnapshot>;
  cancel(job: string): Promise<void>;
}

export const ipcStorage: StorageBackend = {
  start: (req) => call(commands.startStorageReport(req)),
  follow: (job, onUpdate) => followJob(job, { interval: 200, onUpdate }),
  cancel: cancelJob,
};

/** The last whole-database report per database handle. */
const kept = new Map<string, StorageReport>();

export class StorageJob {
  running = $state(false);
  progress = $state<JobProgress | null>(null);
  report = $state.raw<StorageReport | null>(null);
  cancelled = $state(false);
  error = $state<Failure | null>(null);

  private job: string | null = null;
  private generation = 0;
  private stopAsked = false;
  private readonly backend: StorageBackend;

  constructor(backend: StorageBackend = ipcStorage) {
    this.backend = backend;
  }

  /** Show the kept report of database `db` (whole database), if there is one. */
  restore(db: string): boolean {
    const r = kept.get(db);
    if (r) this.report = r;
    return r !== undefined;
  }

  /** Measure database `db`, or one thread of it. */
  async start(db: string, threadId: string | null = null, top = 20): Promise<void> {
    this.stopRunning();
    const gen = ++this.generation;
    const current = () => gen === this.generation;
    this.running = true;
    this.progress = null;
    this.cancelled = false;
    this.error = null;
    this.stopAsked = false;
    try {
      const job = await this.backend.start({ db, thread_id: threadId, top });
      if (!current()) return void this.backend.cancel(job);
      this.job = job;
      if (this.stopAsked) void this.backend.cancel(job);
      const final = await this.backend.follow(job, (s) => {
        if (current()) this.progress = s.progress;
      });
      if (!current()) return;
      if (final.state === "succeeded") {
        const report = reportOf(final.result);
        if (!report) throw new Error("the storage report is not one");
        this.report = report;
        if (threadId === null) kept.set(db, report);
      } else if (final.state === "cancelled") this.cancelled = true;
      else this.error = toFailure(final.error ?? "the storage report failed");
    } catch (e) {
      if (current()) this.error = toFailure(e);
    } finally {
      if (current()) {
        this.running = false;
        this.job = null;
      }
    }
  }

  /** Stop the running report (the last finished one stays shown). */
  cancel() {
    if (!this.running) return;
    this.stopAsked = true;
    if (this.job) void this.backend.cancel(this.job);
  }

  /** Stop whatever runs (the screen or tab goes away). */
  dispose() {
    this.stopRunning();
    this.generation++;
    this.running = false;
  }

  private stopRunning() {
    if (this.running && this.job) void this.backend.cancel(this.job);
    this.job = null;
  }
}

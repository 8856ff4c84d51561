// The storage report as a job (Storage screen, a thread's Storage tab): runs the backend's
// `start_storage_report` (one read snapshot, never writes), following its progress, with
// Cancel. A new run replaces the one running (which is cancelled; what it still reports is
// dropped). The last whole-database report of each database is kept, so that coming back from
// a thread does not measure a big database again.

import type { StorageReport, StorageRequest } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, cancelJob, followJob } from "../ipc/api";
import { JobRun, type JobBackend } from "./jobrun.svelte";
import { reportOf } from "./storage";

/** What the report runs on (the IPC commands; fakes in tests). */
export type StorageBackend = JobBackend<StorageRequest>;

export const ipcStorage: StorageBackend = {
  start: (req) => call(commands.startStorageReport(req)),
  follow: (job, onUpdate) => followJob(job, { interval: 200, onUpdate }),
  cancel: cancelJob,
};

/** The last whole-database report per database handle. */
const kept = new Map<string, StorageReport>();

export class StorageJob extends JobRun<StorageRequest> {
  report = $state.raw<StorageReport | null>(null);

  constructor(backend: StorageBackend = ipcStorage) {
    super(backend);
  }

  /** Show the kept report of database `db` (whole database), if there is one. */
  restore(db: string): boolean {
    const r = kept.get(db);
    if (r) this.report = r;
    return r !== undefined;
  }

  /** Measure database `db`, or one thread of it. */
  start(db: string, threadId: string | null = null, top = 20): Promise<void> {
    const req = { db, thread_id: threadId, top };
    return this.run(req, "the storage report failed", () => {}, (result) => {
      const report = reportOf(result);
      if (!report) throw new Error("the storage report is not one");
      this.report = report;
      if (threadId === null) kept.set(db, report);
    });
  }

  /** Stop whatever runs (the screen or tab goes away). */
  dispose() {
    this.stop();
  }
}

// Building the index advisor's indexes as a job (Storage screen): the backend's
// `start_index_apply`, followed with its progress per statement ("creating flashback_…") and a
// Stop that cancels the build — SQLite rolls its transaction back, Postgres cancels the
// `CREATE INDEX CONCURRENTLY` and drops what it began — so nothing is left half-built.

import type { IndexApplyReport, IndexApplyRequest } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, cancelJob, followJob } from "../ipc/api";
import { JobRun, type JobBackend } from "./jobrun.svelte";

/** What a build runs on (the IPC commands; fakes in tests). */
export type IndexBackend = JobBackend<IndexApplyRequest>;

export const ipcIndexes: IndexBackend = {
  start: (req) => call(commands.startIndexApply(req)),
  follow: (job, onUpdate) => followJob(job, { interval: 200, onUpdate }),
  cancel: cancelJob,
};

/** Whether a job's result is an index build's report. */
function isReport(v: unknown): v is IndexApplyReport {
  return typeof v === "object" && v !== null && "plan" in v && "before" in v && "after" in v;
}

export class IndexBuild extends JobRun<IndexApplyRequest> {
  report = $state.raw<IndexApplyReport | null>(null);

  constructor(backend: IndexBackend = ipcIndexes) {
    super(backend);
  }

  /** Create the indexes `names` (`["all"]`: every one missing) on database `db`. */
  start(db: string, names: string[]): Promise<void> {
    const req: IndexApplyRequest = { db, action: "create", names, dry_run: false };
    return this.run(req, "the index build failed", () => {}, (result) => {
      if (!isReport(result)) throw new Error("the index build's result is not a report");
      this.report = result;
    });
  }

  /** Stop whatever runs (the screen goes away): a build running is cancelled. */
  dispose() {
    this.stop();
  }
}

/** "creating flashback_checkpoints_recent (1 of 2)", or "starting…". */
export function buildProgressText(p: { done: number; total: number; label: string } | null): string {
  if (!p || p.total === 0) return "starting…";
  const n = Math.min(p.done + 1, p.total);
  return p.done >= p.total ? p.label : `${p.label} (${n} of ${p.total})`;
}

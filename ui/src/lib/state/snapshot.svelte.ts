// "Keep a snapshot…" of an Agent Server session: the existing `start_convert` job copying every
// thread into a SQLite file in LangGraph's own schema, followed to its end with Cancel. The
// dialog (SnapshotDialog.svelte) only lays it out.

import { plural } from "./format";
import type { ConvertReport, ConvertRequest } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, cancelJob, followJob } from "../ipc/api";
import { JobRun, type JobBackend } from "./jobrun.svelte";

export type SnapshotBackend = JobBackend<ConvertRequest>;

export const ipcSnapshot: SnapshotBackend = {
  start: (req) => call(commands.startConvert(req)),
  follow: (job, onUpdate) => followJob(job, { interval: 250, onUpdate }),
  cancel: cancelJob,
};

/** The convert request of a snapshot: every thread, LangGraph's schema, into `target`. */
export function snapshotRequest(db: string, target: string): ConvertRequest {
  return { db, target: target.trim(), to: "langgraph" };
}

/**
 * A path that says where it goes (absolute, Unix or Windows). The desktop app asks where to
 * save a bare file name (its working folder means nothing to a user); `flashback serve` puts
 * one inside its `--export-dir`.
 */
export function isAbsolutePath(p: string): boolean {
  return /^(\/|[A-Za-z]:[\\/]|\\\\)/.test(p.trim());
}

/** What a finished snapshot says: `Kept 12 threads, 84 checkpoints in x.sqlite (1 skipped).` */
export function snapshotText(r: ConvertReport, target: string): string {
  const skipped = r.skipped.length ? ` (${r.skipped.length} skipped)` : "";
  return `Kept ${plural(r.threads, "thread")}, ${plural(r.checkpoints, "checkpoint")} in ${target}${skipped}.`;
}

export class SnapshotJob extends JobRun<ConvertRequest> {
  report = $state.raw<ConvertReport | null>(null);
  /** Where the finished snapshot was written. */
  target = $state<string | null>(null);

  constructor(backend: SnapshotBackend = ipcSnapshot) {
    super(backend);
  }

  start(db: string, target: string): Promise<void> {
    const req = snapshotRequest(db, target);
    this.report = null;
    this.target = null;
    return this.run(req, "the snapshot failed", () => {}, (result) => {
      const r = result as unknown as ConvertReport | null;
      if (!r || typeof r.threads !== "number") throw new Error("the snapshot's report is not one");
      this.report = r;
      this.target = req.target;
    });
  }

  dispose() {
    this.stop();
  }
}

// The retention dialog's pure logic (issue 15 item 3): the form as the user fills it, the
// request it makes (`prune_database`), the preview's totals and rows, the words a destructive
// run asks to be typed, and the toast after it.

import type { PruneStrategy, RetentionReport, RetentionRequest, RetentionThread, RetentionTotals, StatusFilter } from "../ipc/bindings";
import { formatBytes, formatTs } from "./format";
import { confirmPhrase } from "./prune";

/** The statuses a retention prune can choose, in the order the form shows them. */
export const STATUSES: StatusFilter[] = ["finished", "failed", "interrupted", "pending"];

export interface RetentionForm {
  /** `30d`, `12h`, …; empty: any age. */
  olderThan: string;
  /** None: any status. */
  statuses: StatusFilter[];
  strategy: PruneStrategy;
  /** With keep_latest: checkpoints kept per namespace (at least 1). */
  keepLast: number | null;
  /** VACUUM after a real run. */
  vacuum: boolean;
}

export function defaultForm(): RetentionForm {
  return { olderThan: "30d", statuses: [], strategy: "keep_latest", keepLast: 1, vacuum: false };
}

/**
 * What is wrong with an age, as the backend reads it (a whole number above zero and a unit,
 * s, m, h, d or w); null when it is fine or empty (no age condition).
 */
export function ageProblem(text: string): string | null {
  const t = text.trim();
  if (t === "") return null;
  const m = /^(\d+)([smhdw])$/.exec(t);
  if (!m) return "Give a whole number and a unit (s, m, h, d or w), e.g. 90m, 12h, 30d or 2w.";
  if (/^0+$/.test(m[1])) return "Give an age above zero.";
  return null;
}

/** What is wrong with the keep-last count (keep_latest only); null when fine. */
export function keepLastProblem(form: RetentionForm): string | null {
  if (form.strategy !== "keep_latest") return null;
  const n = form.keepLast;
  if (n === null || !Number.isInteger(n) || n < 1) return "Keep at least 1 checkpoint of each namespace.";
  return null;
}

/**
 * The request the form makes, or the problem that stops it (shown under the form; no call).
 * A form with no condition at all is still sent: the backend says what is missing.
 */
export function buildRequest(db: string, form: RetentionForm, dryRun: boolean): { request: RetentionRequest } | { problem: string } {
  const problem = ageProblem(form.olderThan) ?? keepLastProblem(form);
  if (problem) return { problem };
  const age = form.olderThan.trim();
  return {
    request: {
      db,
      thread_ids: [],
      older_than: age === "" ? null : age,
      statuses: STATUSES.filter((s) => form.statuses.includes(s)),
      strategy: form.strategy,
      keep_last: form.strategy === "keep_latest" ? form.keepLast : null,
      vacuum: !dryRun && form.vacuum,
      dry_run: dryRun,
    },
  };
}

/** The same selection (what a preview showed is what a run would prune). */
export function sameSelection(a: RetentionRequest, b: RetentionRequest): boolean {
  const key = (r: RetentionRequest) => JSON.stringify([r.db, r.thread_ids ?? [], r.older_than ?? null, r.statuses ?? [], r.strategy, r.keep_last ?? null]);
  return key(a) === key(b);
}

const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** `3 threads, 40 checkpoints, 12 writes, 0 blobs, 1.5 KB would go; 3 kept`. */
export function totalsLine(t: RetentionTotals): string {
  return `${plural(t.threads, "thread")}, ${plural(t.checkpoints, "checkpoint")}, ${plural(t.writes, "write")}, ${plural(t.blobs, "blob")}, ${formatBytes(t.bytes)} would go; ${t.kept.toLocaleString("en-US")} kept`;
}

/** The cutoff line: which threads the age chose. */
export function cutoffLine(report: RetentionReport): string {
  return report.cutoff ? `Threads whose latest checkpoint is before ${formatTs(report.cutoff)} UTC` : "Threads of any age";
}

export interface RetentionRow {
  thread_id: string;
  status: RetentionThread["status"];
  /** The latest checkpoint's time, as the thread list shows it. */
  last: string;
  checkpoints: number;
  kept: number;
  bytes: string;
}

/** The preview's per-thread table, largest first (ties by thread id). */
export function retentionRows(report: RetentionReport): RetentionRow[] {
  return [...report.threads]
    .sort((a, b) => b.bytes - a.bytes || (a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0))
    .map((t) => ({ thread_id: t.thread_id, status: t.status, last: formatTs(t.last_checkpoint_ts), checkpoints: t.checkpoints, kept: t.kept, bytes: formatBytes(t.bytes) }));
}

/** What must be typed before the run: as the prune dialog asks (nothing for keep_latest). */
export function retentionPhrase(strategy: PruneStrategy, report: RetentionReport | null): string | null {
  if (!report || report.threads.length === 0) return null;
  return confirmPhrase(strategy, report.threads.map((t) => t.thread_id));
}

/** The toast after a real run. */
export function doneText(report: RetentionReport): string {
  const t = report.totals;
  const what =
    report.filters.strategy === "delete"
      ? `Deleted ${plural(t.threads, "thread")} (${plural(t.checkpoints, "checkpoint")})`
      : `Pruned ${plural(t.checkpoints, "checkpoint")} from ${plural(t.threads, "thread")}`;
  return report.vacuum ? `${what}; VACUUM returned ${formatBytes(report.vacuum.bytes_returned)}.` : `${what}.`;
}

// The retention dialog's pure logic (issue 15 item 3): the form as the user fills it, the
// request it makes (`prune_database`), the preview's totals and rows, the words a destructive
// run asks to be typed, and the toast after it. Issue 28: threads LangGraph wrote to after
// they were chosen are skipped (each row says so), the preview says how long a VACUUM stops
// writers, and a VACUUM that failed after the prune committed is said beside it.

import type { PruneStrategy, RetentionReport, RetentionRequest, RetentionThread, RetentionTotals, StatusFilter } from "../ipc/bindings";
import { formatBytes, formatTs, plural } from "./format";
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
  /** VACUUM after a real run (a preview says what it would cost). */
  vacuum: boolean;
  /** VACUUM even while another program has the file open (it waits for the whole VACUUM). */
  forceVacuum: boolean;
}

export function defaultForm(): RetentionForm {
  return { olderThan: "30d", statuses: [], strategy: "keep_latest", keepLast: 1, vacuum: false, forceVacuum: false };
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
      vacuum: form.vacuum,
      force_vacuum: form.vacuum && form.forceVacuum,
      dry_run: dryRun,
    },
  };
}

/** The same selection (what a preview showed is what a run would prune, and VACUUM). */
export function sameSelection(a: RetentionRequest, b: RetentionRequest): boolean {
  const key = (r: RetentionRequest) => JSON.stringify([r.db, r.thread_ids ?? [], r.older_than ?? null, r.statuses ?? [], r.strategy, r.keep_last ?? null, r.vacuum ?? false]);
  return key(a) === key(b);
}

/** `3 threads, 40 checkpoints, 12 writes, 0 blobs, 1.5 kB would go; 3 kept`. */
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
  /** Why it was left alone (LangGraph wrote to it after it was chosen), or null. */
  skipped: string | null;
}

/** Why a thread was left alone, for people. */
export function skipText(reason: RetentionThread["skipped"]): string | null {
  if (reason === "changed") return "skipped: written to after it was chosen";
  if (reason === "gone") return "skipped: gone before the prune reached it";
  return null;
}

/** The threads left alone, in a line; null when none was. */
export function skippedLine(report: RetentionReport): string | null {
  const n = report.totals.skipped ?? 0;
  if (n === 0) return null;
  return `${plural(n, "thread")} of ${report.totals.threads} left alone: LangGraph wrote to ${n === 1 ? "it" : "them"} after ${n === 1 ? "it was" : "they were"} chosen (or ${n === 1 ? "it was" : "they were"} gone), so nothing went from ${n === 1 ? "it" : "them"}.`;
}

/** What the VACUUM asked for would cost (from the preview), and why it would be refused now. */
export function vacuumLines(report: RetentionReport): { warning: string; refused: string | null } | null {
  const p = report.vacuum_preview;
  if (!p) return null;
  if (!p.blocks_writers) return { warning: `VACUUM ANALYZE works through ${formatBytes(p.bytes)}; writers go on meanwhile.`, refused: null };
  const warning = `VACUUM rewrites the whole ${formatBytes(p.bytes)} file and stops every writer for about ${p.seconds} s; a LangGraph program waits 5 s, then fails with "database is locked".`;
  const others = p.open_elsewhere ?? [];
  const pids = others.filter((x) => x !== 0);
  const who = pids.length ? `Another program (pid ${pids.join(", ")})` : "Another program";
  const refused = others.length ? `${who} has the database open now: the VACUUM is refused unless forced.` : null;
  return { warning, refused };
}

/** The preview's per-thread table, largest first (ties by thread id). */
export function retentionRows(report: RetentionReport): RetentionRow[] {
  return [...report.threads]
    .sort((a, b) => b.bytes - a.bytes || (a.thread_id < b.thread_id ? -1 : a.thread_id > b.thread_id ? 1 : 0))
    .map((t) => ({ thread_id: t.thread_id, status: t.status, last: formatTs(t.last_checkpoint_ts), checkpoints: t.checkpoints, kept: t.kept, bytes: formatBytes(t.bytes), skipped: skipText(t.skipped) }));
}

/** What must be typed before the run: as the prune dialog asks (nothing for keep_latest). */
export function retentionPhrase(strategy: PruneStrategy, report: RetentionReport | null): string | null {
  if (!report || report.threads.length === 0) return null;
  return confirmPhrase(strategy, report.threads.map((t) => t.thread_id));
}

/** The toast after a real run: what went (committed), what was left alone, the VACUUM. */
export function doneText(report: RetentionReport): string {
  const t = report.totals;
  const skipped = t.skipped ?? 0;
  const pruned = t.threads - skipped;
  let what =
    report.filters.strategy === "delete"
      ? `Deleted ${plural(pruned, "thread")} (${plural(t.checkpoints, "checkpoint")})`
      : `Pruned ${plural(t.checkpoints, "checkpoint")} from ${plural(pruned, "thread")}`;
  if (skipped > 0) what += `; left ${plural(skipped, "thread")} alone (written to after ${skipped === 1 ? "it was" : "they were"} chosen)`;
  if (report.vacuum_error) return `${what} (committed). VACUUM failed: ${report.vacuum_error} — the database is consistent; run it again with VACUUM once the cause is gone.`;
  return report.vacuum ? `${what}; VACUUM returned ${formatBytes(report.vacuum.bytes_returned)}.` : `${what}.`;
}

/** The toast's kind: an error when the VACUUM failed (the prune still committed). */
export function doneKind(report: RetentionReport): "ok" | "error" {
  return report.vacuum_error ? "error" : "ok";
}

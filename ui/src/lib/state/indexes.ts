// The index advisor's words (Storage screen): what each index Flashback proposes is for,
// whether it is there, the planner's estimate, what creating it would run and the reads timed
// before and after. Pure: the component only draws these lines.

import type { IndexAdvice, IndexApplyReport, IndexPlan, IndexReport, PlanEstimate } from "../ipc/bindings";
import { formatBytes } from "./format";

/** `1234567` → `1,234,567`. */
export function count(n: number): string {
  return Math.round(n).toLocaleString("en-US");
}

/** The state as a word. */
export function stateLabel(i: IndexAdvice): string {
  switch (i.state) {
    case "present":
      return "present";
    case "invalid":
      return "invalid (a failed build)";
    default:
      return "missing";
  }
}

/** Rows read today against rows with the index, one line. */
export function estimateLine(e: PlanEstimate): string {
  const with_ = e.rows_with_index === null ? "" : `, ≈ ${count(e.rows_with_index)} with it`;
  if (e.uses_index) return `${e.read}: uses it (≈ ${count(e.rows_now)} rows)`;
  if (e.scans) return `${e.read}: reads all ${count(e.rows_now)} rows today${with_}`;
  return `${e.read}: ≈ ${count(e.rows_now)} rows today${with_}`;
}

/** What building it would take, or its size. */
export function sizeLine(i: IndexAdvice): string {
  if (i.size_bytes !== null) return formatBytes(i.size_bytes);
  return buildLine(i.estimated_bytes, i.estimated_seconds);
}

/** What a previewed build takes. */
export function planLine(p: IndexPlan): string {
  return buildLine(p.estimated_bytes, p.estimated_seconds);
}

/** Size and time to build; a time the server could not give (JSON null) is left out. */
function buildLine(bytes: number, seconds: number | null): string {
  const time = seconds === null ? "" : `, ≈ ${seconds.toFixed(1)} s to build`;
  return `≈ ${formatBytes(bytes)}${time}`;
}

/** Milliseconds, or "?" where the server sent none. */
function ms(millis: number | null | undefined): string {
  return millis === null || millis === undefined ? "?" : `${millis.toFixed(0)} ms`;
}

/** The indexes a Create-all button builds: every one not present. */
export function creatable(r: IndexReport): string[] {
  return r.indexes.filter((i) => i.state !== "present").map((i) => i.name);
}

/** The one-line hint shown on open: only for a database whose advice recommends an index. */
export function hintLine(r: IndexReport): string | null {
  const rec = r.indexes.filter((i) => i.recommended);
  if (!r.applicable || rec.length === 0) return null;
  return `${count(r.checkpoints)} checkpoints and no index for the newest threads or the metadata filter: Storage → Indexes can create ${rec.length === 1 ? "it" : "them"}.`;
}

/** Before → after, one line per read. */
export function timingLines(r: IndexApplyReport): string[] {
  return r.before.map((b, i) => {
    return `${b.read}: ${ms(b.millis)} → ${ms(r.after[i]?.millis)}`;
  });
}

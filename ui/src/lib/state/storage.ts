// The storage report (issue 15: where the bytes are): the pure parts of the Storage screen and
// the thread's Storage tab. The backend's job (`start_storage_report`) ends with a
// `StorageReport` (docs/storage.md); these turn it into chart series, table rows, labels and
// the places a bar or a row opens.

import type { CheckpointSize, GraphRow, JobProgress, StorageReport, Usage, Value, ValueSize } from "../ipc/bindings";
import { shortId } from "../graph/lanes";
import { ranLabel } from "../graph/rowinfo";
import { formatBytes, formatVersion, plural } from "./format";
import type { Route } from "./route";
import { trunkKey } from "./watch";

/** What stored bytes are: each has one colour in every chart, legend and table (ui/DESIGN.md).
 * `file`: files inside values (data URLs, base64), which any of the others may hold. */
export type DataKind = "document" | "metadata" | "blob" | "write" | "file";

/** The colour token of a data kind. */
export function kindToken(kind: DataKind): string {
  return `--kind-${kind}`;
}

/** One stacked part of a bar (a dataset of the chart), of one kind of bytes. */
export interface Series {
  label: string;
  kind: DataKind;
  values: number[];
}

/** A chart's data: one bar per label, each split into the series' parts (stacked). */
export interface Bars {
  labels: string[];
  series: Series[];
  /** Where each bar opens (same order as `labels`; null: nowhere). */
  opens: (Route | null)[];
  /** Each bar's whole (the sum of its parts), for tooltips and the accessible list. */
  totals: number[];
}

const sum = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0);

/** A whole bar per label from its parts. */
function withTotals(labels: string[], series: Series[], opens: (Route | null)[]): Bars {
  const totals = labels.map((_, i) => sum(series.map((s) => s.values[i] ?? 0)));
  return { labels, series, opens, totals };
}

/** A round step for a byte axis reaching `max` (1, 2 or 5 × a power of ten; sizes are decimal
 * SI, 1 kB = 1000 B), about `ticks` steps: 341 kB → 100 kB, so the ticks read 0, 100 kB,
 * 200 kB, 300 kB. */
export function byteStep(max: number, ticks = 5): number {
  if (!(max > 0)) return 1;
  const unit = max < 1000 ? 1 : 1000 ** Math.min(4, Math.floor(Math.log10(max) / 3));
  const raw = max / unit / ticks;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const nice = [1, 2, 5, 10].find((m) => m * pow >= raw) ?? 10;
  return Math.max(1, nice * pow * unit);
}

/** The parts of a usage, as the report counts them. */
export function usageParts(u: Usage): { label: string; kind: DataKind; bytes: number; count: number | null }[] {
  return [
    { label: "Documents", kind: "document", bytes: u.checkpoints.bytes, count: u.checkpoints.count },
    { label: "Metadata", kind: "metadata", bytes: u.metadata_bytes, count: null },
    { label: "Blobs", kind: "blob", bytes: u.blobs.bytes, count: u.blobs.count },
    { label: "Writes", kind: "write", bytes: u.writes.bytes, count: u.writes.count },
  ];
}

/** Stacked usage series for keyed rows (by thread, by namespace). */
function usageSeries(rows: readonly Usage[]): Series[] {
  const parts = usageParts(rows[0] ?? { checkpoints: { count: 0, bytes: 0 }, metadata_bytes: 0, blobs: { count: 0, bytes: 0 }, writes: { count: 0, bytes: 0 }, total_bytes: 0 });
  return parts
    .map(({ label, kind }, k) => ({ label, kind, values: rows.map((u) => usageParts(u)[k].bytes) }))
    .filter((s) => s.values.some((v) => v > 0));
}

/** Where a thread opens: its screen at its head. */
export function threadRoute(threadId: string): Route {
  return { screen: "thread", thread: threadId };
}

/** Where a checkpoint opens (on the state tab, or the writes tab for a write). */
export function checkpointRoute(threadId: string, ns: string, id: string, tab = "state"): Route {
  return { screen: "thread", thread: threadId, checkpoint: { ns, id }, tab };
}

/** Bytes by thread (largest first, as the report lists them); a bar opens its thread. */
export function threadBars(r: StorageReport): Bars {
  return withTotals(
    r.by_thread.map((t) => t.key),
    usageSeries(r.by_thread.map((t) => t.usage)),
    r.by_thread.map((t) => threadRoute(t.key)),
  );
}

/** Bytes by channel: inside documents, in blob rows, in pending writes. */
export function channelBars(r: StorageReport): Bars {
  const rows = r.by_channel;
  const series = [
    { label: "Inline (documents)", kind: "document" as const, values: rows.map((c) => c.inline.bytes) },
    { label: "Blobs", kind: "blob" as const, values: rows.map((c) => c.blobs.bytes) },
    { label: "Writes", kind: "write" as const, values: rows.map((c) => c.writes.bytes) },
  ].filter((s) => s.values.some((v) => v > 0));
  // A channel opens its largest value, when the report lists one.
  const opens = rows.map((c) => {
    const v = r.largest_values.find((x) => x.channel === c.channel && x.checkpoint_id !== null);
    return v ? valueRoute(v) : null;
  });
  return withTotals(rows.map((c) => c.channel), series, opens);
}

/** How a node is named ("" is a database from before task paths). */
export function nodeLabel(node: string): string {
  return node === "" ? "(no task path)" : node;
}

/** Bytes written by each node (task). */
export function nodeBars(r: StorageReport): Bars {
  const rows = r.by_node;
  const opens = rows.map(() => null);
  return withTotals(rows.map((n) => nodeLabel(n.node)), [{ label: "Writes", kind: "write", values: rows.map((n) => n.writes.bytes) }], opens);
}

/** The namespaces of a thread's growth curve, root first. */
export function growthNamespaces(r: StorageReport): string[] {
  const seen = [...new Set(r.growth.map((c) => c.checkpoint_ns))];
  return seen.sort((a, b) => (a === "" ? -1 : b === "" ? 1 : a.localeCompare(b)));
}

/** One checkpoint's size beside the DAG row that shows it (null: the DAG does not show it, e.g.
 * a folded subgraph). */
export interface GrowthEntry {
  size: CheckpointSize;
  row: GraphRow | null;
}

/** The checkpoints of one namespace in the DAG's row order (newest at the top, each branch as
 * the graph lays it out), so that a bar sits where its row does; those the DAG does not show
 * follow, oldest first. Without rows (the DAG not loaded): oldest first. */
export function growthEntries(r: StorageReport, ns: string, rows: readonly GraphRow[] = []): GrowthEntry[] {
  const sizes = r.growth.filter((c) => c.checkpoint_ns === ns);
  const byId = new Map(sizes.map((c) => [c.checkpoint_id, c]));
  const shown: GrowthEntry[] = [];
  const placed = new Set<string>();
  for (const row of rows) {
    const size = row.ns === ns ? byId.get(row.id) : undefined;
    if (!size || placed.has(row.id)) continue;
    placed.add(row.id);
    shown.push({ size, row });
  }
  return [...shown, ...sizes.filter((c) => !placed.has(c.checkpoint_id)).map((size) => ({ size, row: null }))];
}

/** What a DAG row says first, as its bar's label: `3 agent 1f1e-8002-ab12` (step, the nodes
 * that ran or the source, short id); a checkpoint without a row: its short id. */
export function growthLabel(e: GrowthEntry): string {
  const r = e.row;
  if (!r) return shortId(e.size.checkpoint_id);
  const what = r.ran.length && r.source === "loop" ? ranLabel(r.ran) : (r.source ?? "?");
  return `${r.step ?? "·"} ${what} ${shortId(r.id)}`;
}

/** The branch a row is on, in words: the trunk, or the tip's kind of branch and where it starts. */
export function branchText(row: GraphRow, rows: readonly GraphRow[]): string {
  if (row.branch_key === trunkKey(rows)) return "main branch";
  const tip = rows.find((x) => x.branch_key === row.branch_key && x.branch_label);
  const label = tip?.branch_label && tip.branch_label !== "head" ? `${tip.branch_label} branch` : "branch";
  return `${label} starting at ${shortId(row.branch_key)}`;
}

/** The size of each checkpoint of one namespace, in the DAG's row order (see growthEntries),
 * stacked by part; a bar selects its checkpoint and keeps the Storage tab. */
export function growthBars(r: StorageReport, ns: string, rows: readonly GraphRow[] = []): Bars {
  const all = growthEntries(r, ns, rows);
  const entries = all.map((e) => e.size);
  const series: Series[] = [
    { label: "Document", kind: "document" as const, values: entries.map((c) => c.document_bytes) },
    { label: "Metadata", kind: "metadata" as const, values: entries.map((c) => c.metadata_bytes) },
    { label: "Blobs introduced", kind: "blob" as const, values: entries.map((c) => c.blobs.bytes) },
    { label: "Writes", kind: "write" as const, values: entries.map((c) => c.writes.bytes) },
  ].filter((s) => s.values.some((v) => v > 0));
  return withTotals(
    all.map(growthLabel),
    series,
    entries.map((c) => checkpointRoute(c.thread_id, c.checkpoint_ns, c.checkpoint_id, "storage")),
  );
}

/** What a growth bar is, for its tooltip: the node, the step, the branch and the id. */
export function growthTitle(e: GrowthEntry, rows: readonly GraphRow[] = []): string {
  const r = e.row;
  const id = `${shortId(e.size.checkpoint_id)}: ${formatBytes(e.size.total_bytes)}`;
  if (!r) return `${id} (not shown in the graph)`;
  const what = r.ran.length && r.source === "loop" ? ranLabel(r.ran) : `source ${r.source ?? "?"}`;
  return `${what} · step ${r.step ?? "?"} · ${branchText(r, rows)} · ${id}`;
}

/** Where a stored value opens: its checkpoint (writes: the writes tab); null when no
 * checkpoint holds it (an orphaned blob). */
export function valueRoute(v: ValueSize): Route | null {
  if (v.checkpoint_id === null) return null;
  return checkpointRoute(v.thread_id, v.checkpoint_ns, v.checkpoint_id, v.kind === "write" ? "writes" : "state");
}

/** How a value is stored, in words. */
export function valueKind(v: ValueSize): string {
  if (v.kind === "inline") return "inline";
  // The version as the state view shows it ("v2", not Python's 40-character counter.random).
  if (v.kind === "blob") return v.version ? `blob v${formatVersion(v.version)}` : "blob";
  return v.task_path ? `write by ${taskName(v.task_path)}` : "write";
}

/** `~__pregel_pull, agent` → `agent`; a Send → `Send`; anything else its first part. */
export function taskName(path: string): string {
  if (path === "") return nodeLabel("");
  const parts = path.split(",").map((p) => p.trim());
  if (parts[0] === "~__pregel_pull" && parts[1]) return parts[1];
  if (parts[0] === "~__pregel_push") return "Send";
  return parts[0].replace(/^~/, "");
}

/** A namespace as shown ("" is the root graph). */
export function nsLabel(ns: string): string {
  return ns === "" ? "(root)" : ns;
}

/** The totals as label/value lines, with what a VACUUM would return or the relations' sizes. */
export function totalsLines(r: StorageReport): { label: string; value: string; kind?: DataKind }[] {
  const u = r.totals;
  const n = (x: number) => x.toLocaleString("en-US");
  const lines: { label: string; value: string; kind?: DataKind }[] = [
    { label: "Total", value: formatBytes(u.total_bytes) },
    { label: "Documents", value: `${n(u.checkpoints.count)} · ${formatBytes(u.checkpoints.bytes)}`, kind: "document" },
    { label: "Metadata", value: formatBytes(u.metadata_bytes), kind: "metadata" },
    { label: "Blobs", value: `${n(u.blobs.count)} · ${formatBytes(u.blobs.bytes)}`, kind: "blob" },
    { label: "Writes", value: `${n(u.writes.count)} · ${formatBytes(u.writes.bytes)}`, kind: "write" },
  ];
  if (r.thread_id === null) lines.splice(1, 0, { label: "Threads", value: n(r.thread_count) });
  const f = r.space.sqlite;
  if (f) lines.push({ label: "File", value: `${formatBytes(f.page_count * f.page_size)} · ${formatBytes(f.free_bytes)} free (a VACUUM returns it)` });
  for (const rel of r.space.relations)
    lines.push({
      label: rel.table,
      value: `${formatBytes(rel.total_bytes)} on disk (table ${formatBytes(rel.table_bytes)}, TOAST ${formatBytes(rel.toast_bytes)}, indexes ${formatBytes(rel.index_bytes)})`,
    });
  return lines;
}

/** Orphaned rows in words (null: none). */
export function orphansText(r: StorageReport): string | null {
  const { writes, blobs } = r.orphans;
  if (writes.count === 0 && blobs.count === 0) return null;
  const parts = [];
  if (writes.count) parts.push(`${plural(writes.count, "write")} (${formatBytes(writes.bytes)}) whose checkpoint is gone`);
  if (blobs.count) parts.push(`${plural(blobs.count, "blob")} (${formatBytes(blobs.bytes)}) no checkpoint names`);
  return `Orphaned: ${parts.join("; ")}.`;
}

/** A quadratic flag in words: stored N times, X in all, Y if stored once. */
export function quadraticText(q: StorageReport["quadratic"][number]): string {
  return `stored whole ${q.stores} times: ${formatBytes(q.stored_bytes)} in all, ${formatBytes(q.last_bytes)} stored once`;
}

/** "Measuring 12 of 300 threads…" while the job runs. */
export function storageProgressText(p: JobProgress | null): string {
  if (!p || p.total === 0) return p?.label ? `${p.label}…` : "Measuring…";
  return `Measuring ${p.done.toLocaleString("en-US")} of ${p.total.toLocaleString("en-US")} threads…`;
}

/** A finished job's result as a report (null when it is not one). */
export function reportOf(result: Value | null): StorageReport | null {
  if (!result || typeof result !== "object" || Array.isArray(result)) return null;
  const r = result as Record<string, Value>;
  if (typeof r.layout !== "string" || !r.totals || typeof r.totals !== "object") return null;
  return result as unknown as StorageReport;
}

/** The longest axis label a chart draws whole: past it a label ends in `…` (its bar's tooltip
 * says it whole), so a long node name is never cut at the chart's edge; a UUID thread id (36) is drawn whole. */
export const TICK_LABEL_MAX = 36;

/** A bar's axis label as drawn: `max` characters at most, ending in `…` when cut. */
export function tickLabel(label: string, max = TICK_LABEL_MAX): string {
  const chars = [...label];
  return chars.length <= max ? label : `${chars.slice(0, max - 1).join("")}…`;
}

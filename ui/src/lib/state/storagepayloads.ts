// The storage report's payload sections (issue 15; docs/storage.md): identical payloads stored
// again and again (`duplicates`), files stored as base64 text inside values (`embedded_files`)
// and the Send packets of fan-outs (`sends`, `__pregel_tasks`). The pure parts: lines, table
// rows, a chart by media type, empty-state texts and the checkpoint a row opens.

import type { Duplicates, EmbeddedFile, EmbeddedFiles, PayloadKind, PayloadPlace, RepeatedPayload, RepeatTotals, Sends, Tally } from "../ipc/bindings";
import { formatBytes } from "./format";
import type { Route } from "./route";
import { checkpointRoute, nsLabel, taskName, valueRoute, type Bars } from "./storage";

const n = (x: number) => x.toLocaleString("en-US");

/** A size threshold in words: 1000 → `1 kB`, 1536 → `1.5 kB`, 100 → `100 B`. */
export function thresholdText(bytes: number): string {
  return formatBytes(bytes).replace(/\.0 /, " ");
}

/** `12 · 3.4 kB` (a count and its bytes). */
export function tallyText(t: Tally): string {
  return `${n(t.count)} · ${formatBytes(t.bytes)}`;
}

/** Where a payload opens: the checkpoint holding it (a write: on the writes tab); null when no
 * checkpoint holds it (an orphaned blob). */
export function placeRoute(p: PayloadPlace): Route | null {
  if (p.checkpoint_id === null) return null;
  return checkpointRoute(p.thread_id, p.checkpoint_ns, p.checkpoint_id, p.kind === "write" ? "writes" : "state");
}

/** Where a payload is, in words: `thread · channel · path` (without the thread on a thread's
 * tab; a namespace other than the root after the thread; the whole value: no path). */
export function placeText(p: PayloadPlace, threads = true): string {
  const parts: string[] = [];
  if (threads) parts.push(p.thread_id);
  if (p.checkpoint_ns !== "") parts.push(nsLabel(p.checkpoint_ns));
  parts.push(p.kind === "write" ? `${p.channel} (write)` : p.channel);
  if (p.path !== "") parts.push(p.path);
  return parts.join(" · ");
}

/** What a repeated payload is, in words. */
export function payloadKindText(k: PayloadKind): string {
  return k === "value" ? "whole value" : k === "string" ? "string" : "bytes";
}

/** A repeated payload's preview as shown (a whole value has none). */
export function previewText(p: RepeatedPayload): string {
  if (p.preview !== "") return p.preview;
  return p.payload === "value" ? "(the whole value, byte for byte)" : "";
}

/** One line of the repeat totals: what kind, how many payloads and copies, their bytes and
 * what storing each once would save. */
export interface RepeatLine {
  label: string;
  payloads: string;
  copies: string;
  stored: string;
  saved: string;
}

function repeatLine(label: string, t: RepeatTotals): RepeatLine {
  return { label, payloads: n(t.payloads), copies: n(t.copies), stored: formatBytes(t.stored_bytes), saved: formatBytes(t.saved_bytes) };
}

/** The totals of the repeated payloads: whole values, then strings and byte strings inside
 * values (the two overlap: a repeated value repeats its strings). */
export function repeatLines(d: Duplicates): RepeatLine[] {
  return [repeatLine("Whole values", d.values), repeatLine("Strings and bytes inside values", d.strings)];
}

/** Nothing repeated of the size compared. */
export function noRepeats(d: Duplicates): boolean {
  return d.values.payloads === 0 && d.strings.payloads === 0 && d.largest.length === 0;
}

/** The empty state of the repeated payloads. */
export function noRepeatsText(d: Duplicates): string {
  return `No repeated payloads of ${thresholdText(d.min_bytes)} or more.`;
}

/** The note when the figures are a lower bound (null: they are exact). */
export function approximateText(d: Duplicates): string | null {
  if (!d.approximate) return null;
  return "Lower bound: to stay within its memory bound the comparison forgot payloads met only once, so some repeats were not counted.";
}

/** How a file is stored as text. */
export function encodingText(f: EmbeddedFile): string {
  return f.data_url ? "data URL" : "base64";
}

/** No file of the size looked at. */
export function noFiles(e: EmbeddedFiles): boolean {
  return e.total.count === 0;
}

/** The empty state of the files in values. */
export function noFilesText(e: EmbeddedFiles): string {
  return `No files stored as base64 text of ${thresholdText(e.min_bytes)} or more.`;
}

/** The files in values in words: `27 files stored · 626.2 kB as text`. */
export function filesTotalText(e: EmbeddedFiles): string {
  return `${n(e.total.count)} ${e.total.count === 1 ? "file" : "files"} stored (every copy counts) · ${formatBytes(e.total.bytes)} as text`;
}

/** Bytes as text by media type (largest first, as the report lists them); a bar opens the
 * checkpoint of the largest file of its type, when the report lists one. */
export function fileTypeBars(e: EmbeddedFiles): Bars {
  const rows = e.by_type;
  const opens = rows.map((t) => {
    const f = e.largest.find((x) => x.media_type === t.media_type && x.place.checkpoint_id !== null);
    return f ? placeRoute(f.place) : null;
  });
  return {
    labels: rows.map((t) => `${t.media_type} (${n(t.count)})`),
    series: [{ label: "Bytes as text", kind: "file", values: rows.map((t) => t.bytes) }],
    opens,
    totals: rows.map((t) => t.bytes),
  };
}

/** No Send packet stored. */
export function noSends(s: Sends): boolean {
  return s.writes.count === 0 && s.stored.count === 0 && s.by_node.length === 0;
}

export const NO_SENDS_TEXT = "No Send packets: no pending writes to __pregel_tasks and no stored __pregel_tasks values.";

/** The Send tallies as label/value lines. */
export function sendsLines(s: Sends): { label: string; value: string }[] {
  return [
    { label: "Pending writes to __pregel_tasks", value: tallyText(s.writes) },
    { label: "Stored __pregel_tasks values", value: tallyText(s.stored) },
  ];
}

/** A Send target as shown (`?`: a packet that is not a readable Send). */
export function sendNodeText(node: string): string {
  return node === "?" ? "? (not a readable Send)" : node;
}

/** A row of one of the payload tables, as shown; `open` is where its checkpoint button goes. */
export interface PayloadRow {
  /** Where it is (`thread · channel · path`). */
  where: string;
  /** The checkpoint holding it (null: none, an orphaned blob). */
  checkpoint: string | null;
  open: Route | null;
}

/** The repeated payloads that cost the most, as table rows. */
export function repeatRows(d: Duplicates, threads = true): (PayloadRow & { kind: string; size: string; copies: string; saved: string; preview: string })[] {
  return d.largest.map((p) => ({
    kind: payloadKindText(p.payload),
    size: formatBytes(p.bytes),
    copies: n(p.copies),
    saved: formatBytes(p.saved_bytes),
    preview: previewText(p),
    where: placeText(p.place, threads),
    checkpoint: p.place.checkpoint_id,
    open: placeRoute(p.place),
  }));
}

/** The files that take the most, as table rows (`takes`: the text of all their copies). */
export function fileRows(e: EmbeddedFiles, threads = true): (PayloadRow & { type: string; size: string; decoded: string; copies: string; takes: string; encoding: string })[] {
  return e.largest.map((f) => ({
    type: f.media_type,
    size: formatBytes(f.bytes),
    decoded: formatBytes(f.decoded_bytes),
    copies: n(f.copies),
    takes: formatBytes(f.bytes * f.copies),
    encoding: encodingText(f),
    where: placeText(f.place, threads),
    checkpoint: f.place.checkpoint_id,
    open: placeRoute(f.place),
  }));
}

/** The Sends by target node, as table rows. */
export function sendNodeRows(s: Sends): { node: string; writes: string; stored: string }[] {
  return s.by_node.map((t) => ({ node: sendNodeText(t.node), writes: tallyText(t.writes), stored: tallyText(t.stored) }));
}

/** The largest Send writes, as table rows (`by`: the task that wrote the packets). */
export function sendRows(s: Sends, threads = true): (PayloadRow & { by: string; size: string })[] {
  return s.largest.map((v) => ({
    by: v.task_path ? taskName(v.task_path) : "",
    size: formatBytes(v.bytes),
    where: placeText({ kind: v.kind, thread_id: v.thread_id, checkpoint_ns: v.checkpoint_ns, checkpoint_id: v.checkpoint_id, channel: v.channel, path: "" }, threads),
    checkpoint: v.checkpoint_id,
    open: valueRoute(v),
  }));
}

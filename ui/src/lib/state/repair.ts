// The Repair from writes dialog's pure logic (three-table store only, docs/three-table.md
// "Repair"): which databases offer it, which damaged rows can be rebuilt, and the words the
// preview and the result say (the same as `flashback rebuild --repair`).

import type { BlobRepair, DbInfo, RepairReport } from "../ipc/bindings";
import { shortId } from "../graph/lanes";
import { formatVersion, plural } from "./format";
import { reducerName } from "./detail";

/** Whether the open database is Flashback's three-table store (the only one repair works on). */
export function canRepair(db: Pick<DbInfo, "schema_kind"> | null | undefined): boolean {
  return db?.schema_kind === "three_table";
}

/** Whether a damaged row can be rebuilt from the writes (and so is written). */
export function isFixable(d: BlobRepair): boolean {
  return d.cannot === null && d.reducer !== null;
}

/** Whether a damaged row's own bytes are intact and it reads again once the row it is built
 * on is rebuilt (nothing is written for it). */
export function readsThrough(d: BlobRepair): boolean {
  return d.cannot === null && d.reducer === null;
}

/** The rows a repair would write. */
export function fixable(r: RepairReport): BlobRepair[] {
  return r.damaged.filter(isFixable);
}

/** A channel version, short: its counter (`0000…10.0.6577…` → `v10`). */
export function shortVersion(version: string): string {
  const n = formatVersion(version);
  return n && /^\d+$/.test(n) ? `v${n}` : version.length > 16 ? `${version.slice(0, 16)}…` : version;
}

/** Where the row is: its channel, in a subgraph namespace when it is not the root graph's. */
export function rowPlace(d: BlobRepair): string {
  return d.checkpoint_ns ? `${d.channel} [${d.checkpoint_ns}]` : d.channel;
}

/** How the row is rebuilt, or why it cannot be. */
export function rowOutcome(d: BlobRepair): string {
  if (d.cannot !== null) return `cannot rebuild: ${d.cannot}`;
  if (d.reducer === null)
    return `its own row is intact: it reads again once ${d.cause ? shortVersion(d.cause) : "the row it is built on"} is rebuilt`;
  const to = d.produced_at ? shortId(d.produced_at) : "?";
  return `rebuilt with ${reducerName(d.reducer)} from ${plural(d.writes, "write")} of the step to ${to}`;
}

/** The preview's summary line. */
export function previewSummary(r: RepairReport): string {
  const n = r.damaged.length;
  if (n === 0) return `Thread ${r.thread_id} has no damaged blob rows: nothing to repair.`;
  const ok = fixable(r).length;
  const through = r.damaged.filter(readsThrough).length;
  const cannot = n - ok - through;
  const rows =
    `${plural(n, "damaged blob row")}; ${ok} can be rebuilt from the writes` +
    `${through ? `, ${through} read again through a rebuilt row` : ""}${cannot ? `, ${cannot} cannot` : ""}.`;
  return ok ? `${rows} Writing replaces ${ok === 1 ? "it" : "them"} in one transaction.` : `${rows} Nothing can be written.`;
}

/** The write button's label. */
export function writeLabel(r: RepairReport | null): string {
  const n = r ? fixable(r).length : 0;
  return `Write ${plural(n, "row")}`;
}

/** After writing: what was written and what is still damaged. */
export function writtenSummary(r: RepairReport): string {
  return `wrote ${plural(r.repaired, "row")}; ${r.left} still damaged`;
}

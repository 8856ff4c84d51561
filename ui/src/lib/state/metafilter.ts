// The thread list's filter bar: threads found on the backend by their checkpoints' metadata
// (key = value chips, matched as LangGraph's `list(filter=…)`), a time range and a status
// (`list_threads` with `filter`/`since`/`until`/`status`, newest match first, paged with
// `after`). Pure logic: chips, the request, the URL, suggestions.

import type { MetadataKey, ThreadStatus, ThreadsRequest } from "../ipc/bindings";

/** One `key = value` chip: the value as typed. */
export interface MetaChip {
  key: string;
  value: string;
}

/** What the filter bar finds by. Times are ISO 8601 with a zone (`2026-11-26T12:00:00.000Z`). */
export interface ThreadFind {
  where: MetaChip[];
  since: string;
  until: string;
  status: ThreadStatus[];
}

export const EMPTY_FIND: ThreadFind = { where: [], since: "", until: "", status: [] };

const KEY = /^[a-zA-Z0-9_.-]+$/;
const STATUSES: readonly ThreadStatus[] = ["finished", "interrupted", "failed", "pending"];

/** Whether the bar finds anything (else the whole list is shown). */
export function isActive(f: ThreadFind): boolean {
  return f.where.length > 0 || f.since !== "" || f.until !== "" || f.status.length > 0;
}

/** A chip from `key=value` as typed, or why it is not one (one line). */
export function parseChip(text: string): MetaChip | { error: string } {
  const i = text.indexOf("=");
  if (i < 0) return { error: "write key=value, e.g. user_id=u-48213" };
  const key = text.slice(0, i).trim();
  const value = text.slice(i + 1).trim();
  if (!KEY.test(key)) return { error: `a metadata key is letters, digits, _ . - (not "${key}")` };
  return { key, value };
}

/** A chip's value as the filter compares it: JSON when it reads as JSON (`3`, `true`,
 * `"3"`), else the text — as `flashback threads --where` reads it. */
export function chipValue(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

/** The request of a page of threads found (`after`: the last thread's cursor). */
export function findRequest(db: string, f: ThreadFind, limit: number, after?: string): ThreadsRequest {
  const filter: Record<string, unknown> = {};
  for (const c of f.where) filter[c.key] = chipValue(c.value);
  return {
    db,
    limit,
    filter: filter as ThreadsRequest["filter"],
    since: f.since || null,
    until: f.until || null,
    status: f.status,
    after: after ?? null,
  };
}

/** Write the filter into a URL's query (`where=key=value` per chip, `since`, `until`,
 * `status` per status). */
export function writeFind(f: ThreadFind, q: URLSearchParams): void {
  for (const c of f.where) q.append("where", `${c.key}=${c.value}`);
  if (f.since) q.set("since", f.since);
  if (f.until) q.set("until", f.until);
  for (const s of f.status) q.append("status", s);
}

/** The filter a URL's query holds (what does not read is left out); null when it holds none. */
export function readFind(q: URLSearchParams): ThreadFind | null {
  const where: MetaChip[] = [];
  for (const w of q.getAll("where")) {
    const c = parseChip(w);
    if (!("error" in c)) where.push(c);
  }
  const status = q.getAll("status").filter((s): s is ThreadStatus => (STATUSES as readonly string[]).includes(s));
  const f = { where, since: q.get("since") ?? "", until: q.get("until") ?? "", status };
  return isActive(f) ? f : null;
}

/** A `datetime-local` input's value (local time, no zone) as ISO 8601 in UTC; "" stays "". */
export function fromLocalInput(value: string): string {
  if (!value) return "";
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? "" : d.toISOString();
}

/** An ISO time as a `datetime-local` input's value (local time, to the minute). */
export function toLocalInput(iso: string): string {
  const d = new Date(iso);
  if (!iso || Number.isNaN(d.getTime())) return "";
  const p = (n: number) => String(n).padStart(2, "0");
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
}

/** Suggestions for what is typed in the chip box: keys starting with it (most common first)
 * as `key=`, or, after `key=`, that key's common values as `key=value`. LangGraph's own keys
 * (`source`, `step`, `parents`) come after the others. */
export function suggest(keys: readonly MetadataKey[], typed: string, max = 8): string[] {
  const own = new Set(["source", "step", "parents", "writes"]);
  const i = typed.indexOf("=");
  if (i >= 0) {
    const key = typed.slice(0, i).trim();
    const part = typed.slice(i + 1).trim().toLowerCase();
    const k = keys.find((x) => x.key === key);
    if (!k) return [];
    return k.values
      .map((v) => (typeof v === "string" ? v : JSON.stringify(v)))
      .filter((v) => v.toLowerCase().includes(part))
      .slice(0, max)
      .map((v) => `${key}=${v}`);
  }
  const t = typed.trim().toLowerCase();
  return [...keys]
    .filter((k) => k.key.toLowerCase().startsWith(t) && k.key !== "parents")
    .sort((a, b) => Number(own.has(a.key)) - Number(own.has(b.key)) || b.count - a.count)
    .slice(0, max)
    .map((k) => `${k.key}=`);
}

// Search inside values (the thread list's "Search values"): the pure parts. The backend's job
// (`start_search`) reports one `search_hit` event per thread whose latest state holds the text
// and ends with a `ValueSearchSummary`; these turn them into what the panel shows.

import type { JobEvent, JobProgress, Value, ValueHit, ValueSearchSummary } from "../ipc/bindings";
import type { Route } from "./route";

/** The longest text the backend searches for (`flashback_engine::search::MAX_QUERY_CHARS`). */
export const MAX_QUERY_CHARS = 200;

/** One thread whose latest root checkpoint holds the text. */
export interface SearchResult {
  threadId: string;
  checkpointId: string;
  /** The first matches (at most five), in the order the state view shows them. */
  matches: ValueHit[];
  /** The checkpoint holds more matches than these. */
  more: boolean;
}

/** Whether `text` can be searched for (not blank, not too long). */
export function canSearch(text: string): boolean {
  const t = text.trim();
  return t.length > 0 && [...t].length <= MAX_QUERY_CHARS;
}

/** The results among a job's events (other events are ignored). */
export function resultsOf(events: readonly JobEvent[]): SearchResult[] {
  return events.flatMap((e) =>
    e.type === "search_hit"
      ? [{ threadId: e.thread_id, checkpointId: e.checkpoint_id, matches: e.matches, more: e.more }]
      : [],
  );
}

/** A finished job's result as a summary (null when it is not one). */
export function summaryOf(result: Value | null): ValueSearchSummary | null {
  if (!result || typeof result !== "object" || Array.isArray(result)) return null;
  const r = result as Record<string, Value>;
  const n = (k: string) => (typeof r[k] === "number" ? (r[k] as number) : 0);
  if (typeof r.threads_searched !== "number") return null;
  return {
    threads_total: n("threads_total"),
    threads_searched: n("threads_searched"),
    threads_matched: n("threads_matched"),
    truncated: r.truncated === true,
    threads_locked: n("threads_locked"),
    threads_unreadable: n("threads_unreadable"),
  };
}

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;

/** "Searching 120 of 1,000 threads…" while the job runs. */
export function progressText(p: JobProgress | null): string {
  if (!p || p.total === 0) return "Searching…";
  return `Searching ${p.done.toLocaleString("en-US")} of ${count(p.total, "thread")}…`;
}

/** What a finished search found, and what it did not search. */
export function summaryText(s: ValueSearchSummary): string[] {
  const lines = [
    s.threads_matched === 0
      ? `No thread's latest state holds it (${count(s.threads_searched, "thread")} searched).`
      : `${count(s.threads_matched, "thread")} found (${count(s.threads_searched, "thread")} searched).`,
  ];
  if (s.truncated)
    lines.push(`Stopped at ${count(s.threads_matched, "match", "matches")}: ${count(s.threads_total - s.threads_searched, "thread")} not searched.`);
  if (s.threads_locked > 0) lines.push(`${count(s.threads_locked, "thread")} with encrypted values: unlock the database to search them.`);
  if (s.threads_unreadable > 0) lines.push(`${count(s.threads_unreadable, "thread")} skipped: the latest checkpoint cannot be read.`);
  return lines;
}

/** Whether the box's text is the one a value search ran for (as the search trims it). */
export function sameSearch(searched: string, text: string): boolean {
  return searched === text.trim();
}

/** The threads a value search found, when it ran for the box's text (the thread list shows them
 * beside its own matches); none otherwise. */
export function valueHits(search: { query: string | null; results: readonly SearchResult[] }, text: string): Set<string> | undefined {
  if (search.query === null || !sameSearch(search.query, text)) return undefined;
  return new Set(search.results.map((r) => r.threadId));
}

/** Where a result opens: its thread at the checkpoint searched, on the state tab. */
export function resultRoute(r: SearchResult): Route {
  return { screen: "thread", thread: r.threadId, checkpoint: { ns: "", id: r.checkpointId }, tab: "state" };
}

/** A snippet in parts, the hits (`query`, any case) marked, for highlighting. */
export function highlight(snippet: string, query: string): { text: string; hit: boolean }[] {
  const q = query.trim().toLowerCase();
  const lower = snippet.toLowerCase();
  // Positions hold only when lower-casing keeps the length (it does for nearly all text).
  if (!q || lower.length !== snippet.length) return [{ text: snippet, hit: false }];
  const parts: { text: string; hit: boolean }[] = [];
  let from = 0;
  for (let at = lower.indexOf(q); at >= 0; at = lower.indexOf(q, at + q.length)) {
    if (at > from) parts.push({ text: snippet.slice(from, at), hit: false });
    parts.push({ text: snippet.slice(at, at + q.length), hit: true });
    from = at + q.length;
  }
  if (from < snippet.length) parts.push({ text: snippet.slice(from), hit: false });
  return parts;
}

// A long list inside one checkpoint, a page at a time (the `state_page` command): which page
// holds an item, the page's label, stepping through the items a server-side search found, and
// the strings the server folded (`{"$folded": {chars, path}, "$type": "builtins.str", "$value": head}`).

import type { Json } from "./json";

/** Items per page of a paged list (the app's `checkpoint_detail` `page` and `state_page` `limit`). */
export const PAGE_SIZE = 100;

/** The offset of the page of `limit` items that holds item `index`. */
export function pageOffset(index: number, limit: number): number {
  if (limit <= 0 || index <= 0) return 0;
  return Math.floor(index / limit) * limit;
}

/** The offset of the last page of a list of `total` items. */
export function lastOffset(total: number, limit: number): number {
  return total <= 0 ? 0 : pageOffset(total - 1, limit);
}

/** `offset` moved to a page start within the list. */
export function clampOffset(offset: number, limit: number, total: number): number {
  if (!Number.isFinite(offset) || offset < 0) return 0;
  return Math.min(pageOffset(offset, limit), lastOffset(total, limit));
}

/** "1–100 of 10,002" (1-based, as people count); "none of 0" for an empty list. */
export function pageLabel(offset: number, shown: number, total: number): string {
  const n = (x: number) => x.toLocaleString("en-US");
  if (total === 0 || shown === 0) return `none of ${n(total)}`;
  return `${n(offset + 1)}–${n(offset + shown)} of ${n(total)}`;
}

/** The next (`1`) or previous (`-1`) hit after `current` (`null`: none chosen yet), wrapping. */
export function stepHit(current: number | null, count: number, dir: 1 | -1): number | null {
  if (count <= 0) return null;
  if (current === null) return dir === 1 ? 0 : count - 1;
  return (((current + dir) % count) + count) % count;
}

/** A string the server folded: its length and the path that fetches it whole. */
export interface Folded {
  chars: number;
  path: string;
  head: string;
}

/** The folded string `v` stands for, or null. */
export function folded(v: Json): Folded | null {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return null;
  const f = v.$folded;
  if (typeof f !== "object" || f === null || Array.isArray(f)) return null;
  const chars = typeof f.chars === "number" ? f.chars : 0;
  const path = typeof f.path === "string" ? f.path : "";
  return { chars, path, head: typeof v.$value === "string" ? v.$value : "" };
}

/** Every folded string inside `v` (depth-first, at most `max`). */
export function foldedIn(v: Json, max = 50): Folded[] {
  const out: Folded[] = [];
  const walk = (x: Json, depth: number) => {
    if (out.length >= max || depth > 200 || typeof x !== "object" || x === null) return;
    const f = folded(x);
    if (f) {
      out.push(f);
      return;
    }
    for (const y of Array.isArray(x) ? x : Object.values(x)) walk(y as Json, depth + 1);
  };
  walk(v, 0);
  return out;
}

/** `v` with the folded string at `path` replaced by `text`, the string whole (`v` itself when
 * it holds no such fold). */
export function unfolded(v: Json, path: string, text: string): Json {
  const f = folded(v);
  if (f) return f.path === path ? text : v;
  if (Array.isArray(v)) {
    const items = v.map((x) => unfolded(x as Json, path, text));
    return items.some((x, i) => x !== v[i]) ? items : v;
  }
  if (typeof v === "object" && v !== null) {
    let changed = false;
    const out: { [k: string]: Json } = {};
    for (const [k, x] of Object.entries(v)) {
      out[k] = unfolded(x as Json, path, text);
      changed ||= out[k] !== x;
    }
    return changed ? out : v;
  }
  return v;
}

/** The path of a folded string inside its item (`content[1].image_url.url` of
 * `messages[3].content[1].image_url.url`), for saying which string it is. */
export function foldedLabel(f: Folded): string {
  return f.path.replace(/^[^.[]*(\[\d+\])?\.?/, "") || f.path;
}

/** How a folded string reads in one line: its start and length. */
export function foldedText(f: Folded): string {
  return `${f.head}… (${f.chars.toLocaleString("en-US")} characters, folded)`;
}

/** A channel as a path (`messages`; `["my channel"]` when it is not a plain word), the syntax
 * of `watch` and `state_page`. */
export function channelPath(channel: string): string {
  return /^[\p{L}\p{N}_$:-]+$/u.test(channel) ? channel : `[${JSON.stringify(channel)}]`;
}

/** The type badge of a list shown a page at a time: its whole length. */
export function pagedBadge(total: number): { text: string; title: string } {
  return { text: `list[${total.toLocaleString("en-US")}]`, title: `list of ${total.toLocaleString("en-US")} items, shown a page at a time` };
}

// Search inside the state view: channel names, nested keys and scalar values that contain the
// query (case-insensitive), in the order they are shown, with the containers to open to reveal
// each match. Only what was loaded is searched: values left undecoded (too large for the decode
// budget, locked, undecodable) or masked (secrets) are listed as not searched.

import type { TreeNode } from "./tree";

export type MatchPart = "key" | "value";

export interface SearchMatch {
  channel: string;
  /** The node's path in its channel's tree ("" for the channel itself). */
  path: string;
  /** Whether the node's key (or the channel's name) or its value matched. */
  part: MatchPart;
  /** Paths of the containers to open to show the node, outermost first. */
  ancestors: string[];
}

export type SkipReason = "too large" | "locked" | "undecodable" | "masked";

export interface SearchResult {
  matches: SearchMatch[];
  /** Values that were not searched (not loaded or masked). */
  skipped: { channel: string; path: string; reason: SkipReason }[];
  /** Matches per channel. */
  perChannel: Map<string, number>;
}

/** The marks of one channel's tree: every match, and the current one. */
export interface TreeMarks {
  query: string;
  hits: Set<string>;
  current: string | null;
}

const EMPTY: SearchResult = { matches: [], skipped: [], perChannel: new Map() };

/** A match's identity within its channel. */
export const markKey = (path: string, part: MatchPart): string => `${path}\u0001${part}`;

/** A match's identity in the whole state. */
export const matchId = (m: SearchMatch): string => `${m.channel}\u0000${markKey(m.path, m.part)}`;

/** The searchable text of a node's value: a leaf's, in full for long strings; null for containers. */
export function valueText(node: TreeNode): string | null {
  switch (node.kind) {
    case "string":
      return node.fullText ?? node.preview;
    case "number":
    case "bool":
    case "null":
    case "scalar":
    case "bytes":
      return node.preview;
    default:
      return null;
  }
}

const SKIP: Partial<Record<TreeNode["kind"], SkipReason>> = {
  too_large: "too large",
  opaque: "locked",
  error: "undecodable",
  secret: "masked",
};

/** Search the channels (in the order shown) for `query`. */
export function searchState(channels: readonly { channel: string; tree: TreeNode }[], query: string): SearchResult {
  const q = query.trim().toLowerCase();
  if (!q) return EMPTY;
  const out: SearchResult = { matches: [], skipped: [], perChannel: new Map() };
  const has = (text: string) => text.toLowerCase().includes(q);
  for (const { channel, tree } of channels) {
    const before = out.matches.length;
    const add = (path: string, part: MatchPart, ancestors: string[]) => out.matches.push({ channel, path, part, ancestors });
    if (has(channel)) add("", "key", []);
    const walk = (node: TreeNode, ancestors: string[], indexed: boolean) => {
      // List indices and constructor arguments (`0`, `arg 1`) are positions, not keys.
      if (node.key !== "" && !indexed && has(node.key)) add(node.path, "key", ancestors);
      const skip = SKIP[node.kind];
      if (skip) {
        out.skipped.push({ channel, path: node.path, reason: skip });
        return;
      }
      const text = valueText(node);
      if (text !== null && has(text)) add(node.path, "value", ancestors);
      const inner = [...ancestors, node.path];
      const positional = node.kind === "list" || node.children.some((c) => c.key.startsWith("arg "));
      for (const child of node.children) walk(child, inner, positional);
    };
    walk(tree, [], false);
    if (out.matches.length > before) out.perChannel.set(channel, out.matches.length - before);
  }
  return out;
}

/** The marks of one channel, or undefined when it has no match. */
export function channelMarks(result: SearchResult, query: string, channel: string, current: SearchMatch | null): TreeMarks | undefined {
  if (!result.perChannel.has(channel)) return undefined;
  const hits = new Set(result.matches.filter((m) => m.channel === channel).map((m) => markKey(m.path, m.part)));
  const cur = current && current.channel === channel ? markKey(current.path, current.part) : null;
  return { query: query.trim(), hits, current: cur };
}

/** How a node's key or value is marked: the current match, another match, or not. */
export function markOf(marks: TreeMarks | undefined, path: string, part: MatchPart): "current" | "hit" | null {
  if (!marks) return null;
  const k = markKey(path, part);
  if (marks.current === k) return "current";
  return marks.hits.has(k) ? "hit" : null;
}

/** The match after (delta 1) or before (delta -1) `index`, wrapping around. */
export function stepIndex(index: number, count: number, delta: number): number {
  if (count <= 0) return 0;
  return (((index + delta) % count) + count) % count;
}

/** `text` cut into the parts that match `query` (case-insensitive) and the rest; at most `max`
 * matching parts (the rest of the text is left unmarked). */
export function highlight(text: string, query: string, max = 200): { text: string; hit: boolean }[] {
  const q = query.trim().toLowerCase();
  if (!q) return [{ text, hit: false }];
  const lower = text.toLowerCase();
  const parts: { text: string; hit: boolean }[] = [];
  let at = 0;
  for (let n = 0; n < max; n++) {
    const i = lower.indexOf(q, at);
    if (i < 0) break;
    if (i > at) parts.push({ text: text.slice(at, i), hit: false });
    parts.push({ text: text.slice(i, i + q.length), hit: true });
    at = i + q.length;
  }
  if (at < text.length) parts.push({ text: text.slice(at), hit: false });
  return parts;
}

/** A node's path with its channel, as the state view names it (`customer.address.city`). */
export function fullPath(channel: string, path: string): string {
  if (!path) return channel;
  return path.startsWith("[") ? `${channel}${path}` : `${channel}.${path}`;
}

/** A line saying what was not searched, or null when everything was. */
export function skippedNote(result: SearchResult): string | null {
  const s = result.skipped;
  if (s.length === 0) return null;
  const named = s.slice(0, 3).map((x) => `${fullPath(x.channel, x.path)} (${x.reason})`);
  const more = s.length > 3 ? ` and ${s.length - 3} more` : "";
  return `Not searched: ${named.join(", ")}${more}.`;
}

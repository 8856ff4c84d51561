// Presenting a checkpoint diff (flashback_engine::diff): what to show per channel and per list
// item, and a word-level diff for changed text (message contents, long strings).

import type { ChannelDiff, CheckpointDiff, ItemDiff } from "../ipc/bindings";
import { shortId } from "../graph/lanes";
import { isMessage, preview, toChatMessage, type Json } from "./tree";

export type Op = "=" | "+" | "-";

export interface Piece {
  op: Op;
  text: string;
}

/** Split into words, whitespace runs and punctuation, keeping everything. */
export function tokens(s: string): string[] {
  return s.match(/\s+|[A-Za-z0-9_]+|[^\sA-Za-z0-9_]/g) ?? [];
}

/** Longest-common-subsequence table limit (cells); beyond it, a whole-text replace. */
const MAX_CELLS = 250_000;

/** Word-level diff of two texts, as pieces in reading order (removed before added). */
export function wordDiff(a: string, b: string): Piece[] {
  if (a === b) return a ? [{ op: "=", text: a }] : [];
  const x = tokens(a);
  const y = tokens(b);
  let pre = 0;
  while (pre < x.length && pre < y.length && x[pre] === y[pre]) pre++;
  let suf = 0;
  while (suf < x.length - pre && suf < y.length - pre && x[x.length - 1 - suf] === y[y.length - 1 - suf]) suf++;
  const mx = x.slice(pre, x.length - suf);
  const my = y.slice(pre, y.length - suf);
  const out: Piece[] = [];
  const push = (op: Op, text: string) => {
    if (!text) return;
    const last = out[out.length - 1];
    if (last && last.op === op) last.text += text;
    else out.push({ op, text });
  };
  push("=", x.slice(0, pre).join(""));
  if ((mx.length + 1) * (my.length + 1) > MAX_CELLS) {
    push("-", mx.join(""));
    push("+", my.join(""));
  } else {
    const n = mx.length;
    const m = my.length;
    const w = m + 1;
    const t = new Uint32Array((n + 1) * w);
    for (let i = n - 1; i >= 0; i--) {
      for (let j = m - 1; j >= 0; j--) {
        t[i * w + j] = mx[i] === my[j] ? t[(i + 1) * w + j + 1] + 1 : Math.max(t[(i + 1) * w + j], t[i * w + j + 1]);
      }
    }
    let i = 0;
    let j = 0;
    while (i < n && j < m) {
      if (mx[i] === my[j]) {
        push("=", mx[i]);
        i++;
        j++;
      } else if (t[(i + 1) * w + j] >= t[i * w + j + 1]) {
        push("-", mx[i++]);
      } else {
        push("+", my[j++]);
      }
    }
    while (i < n) push("-", mx[i++]);
    while (j < m) push("+", my[j++]);
  }
  push("=", x.slice(x.length - suf).join(""));
  return out;
}

/** A short sentence for a channel's change. */
export function channelSummary(c: ChannelDiff): string {
  switch (c.change) {
    case "added":
      return `added: ${preview(c.b as Json)}`;
    case "removed":
      return `removed (was ${preview(c.a as Json)})`;
    case "unchanged":
      return "unchanged";
    case "changed": {
      if (c.items) {
        const n = (op: string) => c.items!.filter((i) => i.change === op).length;
        const parts = [
          n("added") && `${n("added")} added`,
          n("removed") && `${n("removed")} removed`,
          n("changed") && `${n("changed")} changed`,
        ].filter(Boolean);
        return parts.length ? parts.join(", ") : "reordered";
      }
      return `${preview(c.a as Json, 40)} → ${preview(c.b as Json, 40)}`;
    }
  }
}

/** For a changed message (or string), the text diff worth showing; null otherwise. */
export function textChange(a: Json | null, b: Json | null): Piece[] | null {
  if (typeof a === "string" && typeof b === "string") return wordDiff(a, b);
  if (a && b && isMessage(a) && isMessage(b)) {
    const ta = (a as { content?: Json }).content;
    const tb = (b as { content?: Json }).content;
    if (typeof ta === "string" && typeof tb === "string" && ta !== tb) return wordDiff(ta, tb);
  }
  return null;
}

/** Unchanged items around changes are collapsed into runs longer than this. */
export const CONTEXT = 1;

export type ItemRow = { kind: "item"; item: ItemDiff } | { kind: "skipped"; count: number };

/** List items with long unchanged runs collapsed (keeping `context` items next to changes). */
export function collapseUnchanged(items: readonly ItemDiff[], context = CONTEXT): ItemRow[] {
  const keep = items.map((it) => it.change !== "unchanged");
  const near = keep.map((_, i) => {
    for (let d = -context; d <= context; d++) if (keep[i + d]) return true;
    return false;
  });
  const out: ItemRow[] = [];
  let skipped = 0;
  items.forEach((item, i) => {
    if (near[i]) {
      if (skipped) out.push({ kind: "skipped", count: skipped });
      skipped = 0;
      out.push({ kind: "item", item });
    } else skipped++;
  });
  if (skipped) out.push({ kind: "skipped", count: skipped });
  return out;
}

/** How a list item reads in the diff: a message by its role and text first (its tool calls
 * after), its id shortened at the end (the full id is the line's title); anything else as a
 * preview. */
export interface ItemLabel {
  /** "ai", "human", "tool", … (null: not a message). */
  role: string | null;
  text: string;
  /** The message id as shown ("" when none). */
  shortId: string;
  /** The full message id ("" when none). */
  id: string;
}

/** A message id as the diff shows it: its first 8 characters, LangChain's `lc_run--` and
 * `run-` prefixes dropped (`flashback diff` shortens them the same way). */
export function messageShortId(id: string): string {
  const bare = id.startsWith("lc_run--") ? id.slice(8) : id.startsWith("run-") ? id.slice(4) : id;
  return [...bare].slice(0, 8).join("");
}

export function itemLabel(it: Pick<ItemDiff, "a" | "b">): ItemLabel {
  const v = (it.b ?? it.a) as Json;
  if (!isMessage(v)) return { role: null, text: preview(v, 120), shortId: "", id: "" };
  const m = toChatMessage(v);
  const calls = m.toolCalls.length ? `[calls ${m.toolCalls.map((c) => c.name).join(", ")}]` : "";
  const id = m.id ?? "";
  const text = [m.text.slice(0, 100), calls].filter(Boolean).join(" ");
  return { role: m.role, text, shortId: id && messageShortId(id), id };
}

/** Where A's and B's lines meet, as the diff's header says it: "branches meet at 7f9a-6f8b-3e7c
 * step 3", or that one descends from the other; null when the backend found no meeting. */
export function meetingText(d: Pick<CheckpointDiff, "a_id" | "b_id" | "common_ancestor">): string | null {
  const m = d.common_ancestor;
  if (!m) return null;
  if (m.checkpoint_id === d.a_id && m.checkpoint_id === d.b_id) return "the same checkpoint";
  if (m.checkpoint_id === d.a_id) return "B descends from A (one line)";
  if (m.checkpoint_id === d.b_id) return "A descends from B (one line)";
  return `branches meet at ${shortId(m.checkpoint_id)} step ${m.step ?? "?"}`;
}

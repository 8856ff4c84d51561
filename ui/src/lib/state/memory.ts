// The Memory screen's pure logic (LangGraph's long-term memory Store): the namespace tree built
// from the flat namespace list, namespace paths as the user types them (`users/u-1`), the TTL
// and vector badges, and checking what the edit dialog would put before it is sent.

import type { DbInfo, StoreItem, StoreNamespace, StoreVector } from "../ipc/bindings";
import { parseJson } from "./jsontext";
import type { Json } from "./tree";

/** Items per page of the item list. */
export const PAGE = 50;

/** The longest TTL a put accepts (the backend's `MAX_TTL_MINUTES`: a thousand years). */
export const MAX_TTL_MINUTES = 525_960_000;

/** One node of the namespace tree. */
export interface NsNode {
  /** Its last label. */
  label: string;
  /** The whole namespace, root first. */
  path: string[];
  /** Items in exactly this namespace. */
  own: number;
  /** Items in it and everything under it. */
  total: number;
  /** Sorted by label. */
  children: NsNode[];
}

/** The namespace tree of a store: nested by label, counts rolled up, siblings sorted. A prefix
 * that holds no item itself (`users` above `users/u-1`) is a node with `own: 0`. */
export function buildNamespaceTree(list: readonly StoreNamespace[]): NsNode[] {
  const root: NsNode = { label: "", path: [], own: 0, total: 0, children: [] };
  for (const ns of list) {
    let node = root;
    node.total += ns.items;
    for (const label of ns.namespace) {
      let child = node.children.find((c) => c.label === label);
      if (!child) {
        child = { label, path: [...node.path, label], own: 0, total: 0, children: [] };
        node.children.push(child);
      }
      child.total += ns.items;
      node = child;
    }
    node.own += ns.items;
  }
  const sort = (nodes: NsNode[]) => {
    nodes.sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0));
    nodes.forEach((n) => sort(n.children));
  };
  sort(root.children);
  return root.children;
}

/** Items in the whole store, from its namespace list. */
export function totalItems(list: readonly StoreNamespace[]): number {
  return list.reduce((n, ns) => n + ns.items, 0);
}

/** `["users", "u-1"]` → `users/u-1`. */
export function formatNamespace(namespace: readonly string[]): string {
  return namespace.join("/");
}

export type NamespaceParse = { ok: true; namespace: string[] } | { ok: false; message: string };

/** `users/u-1` → `["users", "u-1"]`, checked as a put checks it: not empty, no empty label, no
 * dot (namespaces are stored dot-joined), not rooted at `langgraph`. Spaces around labels go. */
export function parseNamespace(text: string): NamespaceParse {
  const trimmed = text.trim().replace(/^\/+|\/+$/g, "");
  if (!trimmed) return { ok: false, message: "The namespace cannot be empty." };
  const namespace = trimmed.split("/").map((l) => l.trim());
  const empty = namespace.findIndex((l) => !l);
  if (empty >= 0) return { ok: false, message: `Label ${empty + 1} of the namespace is empty.` };
  const dotted = namespace.find((l) => l.includes("."));
  if (dotted !== undefined) return { ok: false, message: `The label "${dotted}" contains a dot (namespaces are stored dot-joined).` };
  if (namespace[0] === "langgraph") return { ok: false, message: 'The namespace cannot start with "langgraph" (reserved by LangGraph).' };
  return { ok: true, namespace };
}

/** Whether `namespace` is `prefix` or under it (whole labels). */
export function isUnder(namespace: readonly string[], prefix: readonly string[]): boolean {
  return prefix.length <= namespace.length && prefix.every((l, i) => namespace[i] === l);
}

/** The identity of an item: its namespace and key. */
export type ItemRef = { namespace: string[]; key: string };

export const sameItem = (a: ItemRef | null, b: ItemRef | null): boolean =>
  a !== null && b !== null && a.key === b.key && a.namespace.length === b.namespace.length && isUnder(a.namespace, b.namespace);

/** A unique key for an item (labels may hold a slash, so not its `ns/key` text). */
export const itemId = (i: ItemRef): string => JSON.stringify([i.namespace, i.key]);

/** A duration in its largest unit, rounded: `40 s`, `5 min`, `3 h` (for 2 h 59 min), `2 d`. */
export function duration(ms: number): string {
  const s = Math.floor(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

export type Badge = { text: string; kind: "ttl" | "expired"; title: string };

/** The TTL badge of an item, relative to `now` (ms since epoch): `expires in 3 h` or
 * `expired 2 d ago`; null without an expiry. The backend's `expired` flag wins over the clock. */
export function ttlBadge(item: Pick<StoreItem, "expires_at" | "expired" | "ttl_minutes">, now: number): Badge | null {
  if (!item.expires_at) return item.expired ? { text: "expired", kind: "expired", title: "Its TTL has passed" } : null;
  const at = Date.parse(item.expires_at);
  const ttl = item.ttl_minutes != null ? `TTL ${formatMinutes(item.ttl_minutes)}; ` : "";
  const title = `${ttl}expires at ${item.expires_at}`;
  if (Number.isNaN(at)) return { text: item.expired ? "expired" : "has a TTL", kind: item.expired ? "expired" : "ttl", title };
  if (item.expired || at <= now) return { text: `expired ${duration(now - at)} ago`, kind: "expired", title };
  return { text: `expires in ${duration(at - now)}`, kind: "ttl", title };
}

/** 90 → `90 min`, 1440 → `1 d`, 180 → `3 h`. */
export function formatMinutes(m: number): string {
  if (m >= 1440 && m % 1440 === 0) return `${m / 1440} d`;
  if (m >= 60 && m % 60 === 0) return `${m / 60} h`;
  return `${m} min`;
}

/** The vectors badge: `embedding · 8 dims`, `2 embeddings · 8 dims`; null without vectors.
 * The title names the indexed fields (`$` is the whole value). */
export function vectorsBadge(vectors: readonly StoreVector[] | undefined): { text: string; title: string } | null {
  if (!vectors?.length) return null;
  const dims = new Set(vectors.map((v) => v.dims));
  const size = dims.size === 1 && vectors[0].dims != null ? ` · ${vectors[0].dims} dims` : "";
  const text = (vectors.length === 1 ? "embedding" : `${vectors.length} embeddings`) + size;
  const title = vectors.map((v) => `${v.field === "$" ? "$ (the whole value)" : v.field}: ${v.dims ?? "?"} dims`).join("\n");
  return { text, title };
}

export type ValueCheck = { ok: true; value: { [key: string]: Json } } | { ok: false; error: string };

/** The edited value's text, checked before a put: strict JSON, and an object (the store keeps
 * dicts). The error is one line with its position. */
export function checkValue(text: string): ValueCheck {
  const parsed = parseJson(text);
  if (!parsed.ok) return { ok: false, error: `JSON error at line ${parsed.line}, column ${parsed.column}: ${parsed.message}` };
  const v = parsed.value;
  if (v === null || typeof v !== "object" || Array.isArray(v)) {
    const what = v === null ? "null" : Array.isArray(v) ? "a list" : typeof v;
    return { ok: false, error: `The value must be a JSON object ({…}), not ${what}: LangGraph's store keeps dicts.` };
  }
  return { ok: true, value: v };
}

export type TtlCheck = { ok: true; ttl: number | null } | { ok: false; error: string };

/** The TTL field: empty is none; otherwise minutes, positive, at most a thousand years. */
export function checkTtl(text: string): TtlCheck {
  const t = text.trim();
  if (!t) return { ok: true, ttl: null };
  const n = Number(t);
  if (!/^\d*\.?\d+$/.test(t) || !Number.isFinite(n) || n <= 0)
    return { ok: false, error: "The TTL is a positive number of minutes (empty: never expires)." };
  if (n > MAX_TTL_MINUTES) return { ok: false, error: `The TTL is at most ${MAX_TTL_MINUTES} minutes (a thousand years).` };
  return { ok: true, ttl: n };
}

/** The key field: not empty. */
export function checkKey(text: string): string | null {
  return text.trim() ? null : "The key cannot be empty.";
}

/** The screen a database opens on: a store-only database has no threads, so its Memory. */
export function homeScreen(db: Pick<DbInfo, "holds">): "memory" | "threads" {
  return db.holds === "store" ? "memory" : "threads";
}

/** A value's text for the editor. */
export const valueText = (v: unknown): string => JSON.stringify(v ?? {}, null, 2);

// A running Agent Server as a location (DbKind "agentserver": `langgraph dev`'s API, a
// self-hosted server, a LangSmith deployment): how the Open screen recognises its URL and asks
// for its API key, the banner's lines, the offer to switch from a running dev folder to its
// server, the snapshot's default file name, and the fork dialog's "as node" choices. Pure.

import type { DbInfo, GraphRow, TaskSet } from "../ipc/bindings";

/** `http://HOST:PORT` or `https://…` (an Agent Server's API), as typed on the Open screen. */
export function isServerUrl(location: string): boolean {
  return /^https?:\/\/[^\s/]+/i.test(location.trim());
}

/** A `postgres://` URL. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location.trim());
}

/** What the Open screen asks for when a location needs a secret. */
export interface SecretPrompt {
  /** `api_key` for an Agent Server, else `password`. */
  kind: "api_key" | "password";
  /** The field's placeholder. */
  placeholder: string;
  /** The field's accessible label. */
  label: string;
  /** A line under the field (empty: none). */
  help: string;
  /** A recent connection's badge when the secret is in the keyring. */
  saved: string;
}

const API_KEY: SecretPrompt = {
  kind: "api_key",
  placeholder: "API key (sent as x-api-key)",
  label: "API key",
  help: "Sent as x-api-key, never put in a link or a log. Without one, LANGGRAPH_API_KEY or LANGSMITH_API_KEY is used when set.",
  saved: "saved API key",
};

const PASSWORD: SecretPrompt = {
  kind: "password",
  placeholder: "Password (if the URL has none)",
  label: "Password",
  help: "",
  saved: "saved password",
};

/** The secret a location takes: an Agent Server's API key, else a database password. */
export function secretPrompt(location: string, kind?: string | null): SecretPrompt {
  return kind === "agentserver" || isServerUrl(location) ? API_KEY : PASSWORD;
}

/** Whether the Open screen shows the secret field for what is typed. */
export function wantsSecret(location: string): boolean {
  return isPostgresUrl(location) || isServerUrl(location);
}

/** The server part of thread lists and thread screens (status, runs, metadata) is there. */
export function hasServerPart(info: Pick<DbInfo, "kind"> | null | undefined): boolean {
  return info?.kind === "devserver" || info?.kind === "agentserver";
}

/** A session that must not be written to from the Memory screen: a dev folder's store.pckl is
 * its server's (a running Agent Server's Store is written through its API: writable). */
export function storeReadOnly(info: Pick<DbInfo, "kind"> | null | undefined): boolean {
  return info?.kind === "devserver";
}

/** Whether *Merge from branch…* is offered: a merge writes a checkpoint into a database's
 * tables, which an Agent Server does not expose (its API refuses it in one line). */
export function canMerge(info: Pick<DbInfo, "kind"> | null | undefined): boolean {
  return info?.kind !== "agentserver";
}

/** The banner's one line for an Agent Server session (null: another kind). */
export function liveLine(info: Pick<DbInfo, "kind" | "server" | "location"> | null | undefined): string | null {
  if (!info || info.kind !== "agentserver") return null;
  return `Live · ${info.server?.server || info.location} — threads refresh as runs land`;
}

/** The offer to open a running dev folder's server instead of its files (null: none). */
export function switchOffer(info: Pick<DbInfo, "kind" | "server"> | null | undefined): { url: string; text: string } | null {
  const url = info?.kind === "devserver" && info.server?.running ? info.server.api_url?.trim() : null;
  return url ? { url, text: `Switch to the live server (${url})` } : null;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The snapshot's default file name: `agent-server-127.0.0.1-2024-20261129-0512.sqlite`. */
export function snapshotName(location: string, now: Date): string {
  const host = location
    .replace(/^https?:\/\//i, "")
    .replace(/[^A-Za-z0-9.]+/g, "-")
    .replace(/^-+|-+$/g, "");
  const stamp = `${now.getUTCFullYear()}${pad(now.getUTCMonth() + 1)}${pad(now.getUTCDate())}-${pad(now.getUTCHours())}${pad(now.getUTCMinutes())}`;
  return `agent-server-${host || "snapshot"}-${stamp}.sqlite`;
}

/** The fork dialog's "as node" select: the nodes to offer and the server's own choice. */
export interface AsNodeChoices {
  /** Next tasks first, then the nodes seen in the thread's history; no duplicates. */
  nodes: string[];
  /** The node the server picks when none is given (the one whose step made the checkpoint). */
  serverDefault: string | null;
}

/** Nodes that are not a graph's own (`update_state` cannot be made as them). */
const NOT_NODES = new Set(["Send", "__pregel_push", "__pregel_pull"]);

/**
 * The "as node" choices for forking checkpoint `at`: its next tasks' names and the nodes seen
 * in the thread's history (rows' `ran`). The server's default is the single node that made the
 * checkpoint (LangGraph's `update_state` takes the last writer when it is unambiguous).
 */
export function asNodeChoices(tasks: Pick<TaskSet, "next" | "tasks"> | null | undefined, rows: readonly Pick<GraphRow, "id" | "ns" | "ran">[], at: { id: string; ns: string } | null): AsNodeChoices {
  const seen = new Set<string>();
  const nodes: string[] = [];
  const add = (n: string) => {
    if (!n || NOT_NODES.has(n) || seen.has(n)) return;
    seen.add(n);
    nodes.push(n);
  };
  for (const n of tasks?.next ?? []) add(n);
  for (const t of tasks?.tasks ?? []) add(t.name);
  const atRow = at ? rows.find((r) => r.id === at.id && r.ns === at.ns) : undefined;
  for (const r of rows) if (r.ns === (at?.ns ?? "")) r.ran.forEach(add);
  const made = [...new Set(atRow?.ran ?? [])].filter((n) => !NOT_NODES.has(n));
  return { nodes, serverDefault: made.length === 1 ? made[0] : null };
}

/** The "as node" select's empty option. */
export function serverDefaultText(c: AsNodeChoices): string {
  return c.serverDefault ? `Server's choice (${c.serverDefault})` : "Server's choice";
}

/** The Open screen's error title when the secret is an API key (undefined: the usual one). */
export function secretErrorTitle(code: string | null | undefined, prompt: Pick<SecretPrompt, "kind">): string | undefined {
  if (prompt.kind !== "api_key") return undefined;
  if (code === "needs_password") return "API key needed.";
  if (code === "auth") return "API key refused.";
  return undefined;
}

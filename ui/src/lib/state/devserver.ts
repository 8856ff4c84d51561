// A `langgraph dev` project folder (DbKind "devserver"): what Studio shows of its threads and
// runs, the label of the location and the lines of its banner. Pure, for thin components.

import type { DbInfo, ServerRun, ServerSummary, ServerThread, ThreadSummary } from "../ipc/bindings";
import { ago, formatTs } from "./format";

/** The badge class of a server status (the app's `.badge.*` colours). */
const STATUS_CLASS: Record<string, string> = {
  idle: "finished",
  success: "finished",
  busy: "pending",
  running: "pending",
  pending: "pending",
  interrupted: "interrupted",
  error: "failed",
  timeout: "failed",
};

/** `idle`/`busy`/`interrupted`/`error` (a thread) or a run's status → its badge class. */
export function serverStatusClass(status: string | null | undefined): string {
  return STATUS_CLASS[status ?? ""] ?? "";
}

/** A run that ended badly (Studio marks these red). */
export function runFailed(run: ServerRun): boolean {
  return run.status === "error" || run.status === "timeout";
}

export interface RunCount {
  total: number;
  failed: number;
  /** `2 runs`, `1 run · 1 failed`. */
  text: string;
}

/** How many runs a thread has, and how many of them failed. */
export function runCount(thread: ServerThread | null | undefined): RunCount | null {
  if (!thread) return null;
  const total = thread.runs.length;
  const failed = thread.runs.filter(runFailed).length;
  const text = `${total} ${total === 1 ? "run" : "runs"}${failed ? ` · ${failed} failed` : ""}`;
  return { total, failed, text };
}

/** A thread's runs, newest first (the server lists them oldest first). */
export function runsNewestFirst(runs: readonly ServerRun[]): ServerRun[] {
  return [...runs].sort((a, b) => {
    const ta = a.created_at ?? "";
    const tb = b.created_at ?? "";
    return ta < tb ? 1 : ta > tb ? -1 : a.run_id.localeCompare(b.run_id);
  });
}

/** How long a run took, from its creation to its last update: `1.2 s`, `3m 4s`; "" unknown. */
export function runDuration(run: ServerRun): string {
  if (!run.created_at || !run.updated_at) return "";
  const ms = Date.parse(run.updated_at) - Date.parse(run.created_at);
  if (!Number.isFinite(ms) || ms < 0) return "";
  if (ms < 1000) return `${ms} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)}m ${s % 60}s`;
}

/** One run as a line: status, when, how long. */
export function runLine(run: ServerRun): { status: string; cls: string; when: string; took: string } {
  return {
    status: run.status ?? "unknown",
    cls: serverStatusClass(run.status),
    when: formatTs(run.created_at),
    took: runDuration(run),
  };
}

/** The thread's server metadata without the keys shown elsewhere (graph and assistant). */
export function userMetadata(thread: ServerThread | null | undefined): [string, string][] {
  const m = thread?.metadata;
  if (!m || typeof m !== "object" || Array.isArray(m)) return [];
  return Object.entries(m as Record<string, unknown>)
    .filter(([k]) => k !== "graph_id" && k !== "assistant_id")
    .map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]);
}

/**
 * The text the thread filter searches for a server thread: its status, graph, assistant and
 * metadata (keys and values, so `user_id` and `u-1` both find it); "" for a database's thread.
 */
export function serverSearchText(t: ThreadSummary): string {
  const s = t.server;
  if (!s) return "";
  const meta = userMetadata(s).map(([k, v]) => `${k} ${v} ${k}:${v} ${k}=${v}`);
  return [s.status ?? "", s.graph_id ?? "", s.assistant_id ?? "", ...meta, ...s.runs.map((r) => r.status ?? "")].join(" ");
}

/**
 * `langgraph dev · saved 3m ago` (`· running` while a server runs on it), `Agent Server · live`
 * for a server's API; null for a database.
 */
export function serverLabel(info: Pick<DbInfo, "kind" | "server"> | null | undefined, now: number): string | null {
  if (info?.kind === "agentserver") return "Agent Server · live";
  if (!info || info.kind !== "devserver") return null;
  const s = info.server;
  const parts = ["langgraph dev"];
  if (s?.saved_at) parts.push(`saved ${ago(s.saved_at, now)}`);
  if (s?.running) parts.push("running");
  return parts.join(" · ");
}

/** The banner's lines: the server's notes, one each (none: no banner). */
export function serverNotes(s: ServerSummary | null | undefined): string[] {
  return (s?.notes ?? []).map((n) => n.trim()).filter(Boolean);
}

/** The banner's tone: a running server is news, not trouble; a stale folder is a warning. */
export function serverBannerTone(s: ServerSummary | null | undefined): "info" | "warn" {
  return s && !s.running && s.threads_without_checkpoints > 0 ? "warn" : "info";
}

/** A recent connection's icon and label by kind. */
export function kindLabel(kind: string): { icon: string; label: string } {
  switch (kind) {
    case "devserver":
      return { icon: "📁", label: "langgraph dev" };
    case "agentserver":
      return { icon: "📡", label: "Agent Server" };
    case "postgres":
      return { icon: "🐘", label: "postgres" };
    default:
      return { icon: "🗄", label: kind };
  }
}

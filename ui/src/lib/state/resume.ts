// Interrupts a checkpoint is waiting on, and the resume value a *Resume with…* re-run hands to
// the runner (FLASHBACK_RESUME, passed on as `Command(resume=…)`).

import type { TaskSet } from "../ipc/bindings";
import type { Json } from "./tree";

/** One interrupt waiting for input. */
export interface Waiting {
  /** The node that raised it. */
  node: string;
  /** The task that raised it. */
  task: string;
  /** The interrupt's id (LangGraph ≥ 0.6), for resuming several at once. */
  id: string | null;
  /** What the node passed to `interrupt(…)`. */
  value: Json;
  /** The question to show: the value when it is text, else a text field of it, else its JSON. */
  question: string;
}

const QUESTION_KEYS = ["question", "message", "prompt", "query", "text", "content"];
const MAX_QUESTION = 400;

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function questionOf(value: Json): string {
  if (typeof value === "string") return value;
  if (isObject(value)) {
    for (const k of QUESTION_KEYS) {
      const q = value[k];
      if (typeof q === "string" && q.trim()) return q;
    }
  }
  const text = JSON.stringify(value) ?? String(value);
  return text.length > MAX_QUESTION ? `${text.slice(0, MAX_QUESTION)}…` : text;
}

/** The interrupts of tasks that stopped on one and have not finished. */
export function waitingInterrupts(tasks: TaskSet | null | undefined): Waiting[] {
  if (!tasks) return [];
  const out: Waiting[] = [];
  for (const t of tasks.tasks) {
    if (t.finished || t.status !== "interrupted") continue;
    for (const raw of t.interrupts as Json[]) {
      // An Interrupt's JSON view: {"$type": "langgraph.types.Interrupt", "value": …, "id": …};
      // older LangGraph also stored `resumable`, `ns`, `when`.
      // An Agent Server's API gives {"value": …, "id": …} without the marker.
      const typed =
        isObject(raw) &&
        ((typeof raw.$type === "string" && raw.$type.endsWith("Interrupt")) ||
          (raw.$type === undefined && "value" in raw && typeof raw.id === "string"));
      const value = typed && "value" in raw ? raw.value : raw;
      const id = typed && typeof raw.id === "string" ? raw.id : null;
      out.push({ node: t.name, task: t.id, id, value, question: questionOf(value) });
    }
  }
  return out;
}

/**
 * What the resume field starts with: empty for one interrupt (the user types the answer); for
 * several with ids, the map LangGraph expects (`{interrupt_id: value}`) with a null per id.
 */
export function resumeTemplate(waiting: Waiting[]): string {
  const ids = waiting.map((w) => w.id).filter((id): id is string => id !== null);
  if (waiting.length < 2 || ids.length !== waiting.length) return "";
  return JSON.stringify(Object.fromEntries(ids.map((id) => [id, null])), null, 1).replace(/\n\s*/g, " ");
}

export type ParsedResume = { ok: true; value: Json | null } | { ok: false; error: string };

/**
 * The resume field as a value: empty means no resume value (a plain re-run); otherwise it must
 * be JSON. A bare word is not taken as a string, so that `yes` and `"yes"` cannot be confused.
 */
export function parseResume(text: string): ParsedResume {
  const t = text.trim();
  if (!t) return { ok: true, value: null };
  try {
    return { ok: true, value: JSON.parse(t) as Json };
  } catch (e) {
    const hint = /^[A-Za-z_][\w ]*$/.test(t) ? ` (text needs quotes: ${JSON.stringify(t)})` : "";
    return { ok: false, error: `not JSON${hint}: ${(e as Error).message}` };
  }
}

/**
 * Whether the session's server runs the graph itself (an Agent Server): a re-run or *Resume
 * with…* then needs no runner command (the API ignores it) and a thread copy's id is the server's.
 */
export function serverRuns(kind: string | null | undefined): boolean {
  return kind === "agentserver";
}

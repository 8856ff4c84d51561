// Calling commands: the generated bindings return `{status, data | error}`; `call` turns that
// into a value or a thrown `Failure` with the backend's `{code, message}`. Jobs are polled.

import type { ApiError, JobSnapshot } from "./bindings";
import { commands } from "./bindings";

export type Code = ApiError["code"] | "ipc";

/** A failed command, for `catch` blocks and error banners. */
export class Failure extends Error {
  constructor(
    readonly code: Code,
    message: string,
  ) {
    super(message);
    this.name = "Failure";
  }
}

type Res<T> = { status: "ok"; data: T } | { status: "error"; error: ApiError | string };

/** Turn any rejection or error value into a Failure. */
export function toFailure(e: unknown): Failure {
  if (e instanceof Failure) return e;
  if (e && typeof e === "object" && "code" in e && "message" in e) {
    const { code, message } = e as ApiError;
    return new Failure(code, String(message));
  }
  // Tauri itself rejects with a string (unknown command, bad argument, permission).
  if (typeof e === "string") return new Failure("ipc", e);
  if (e instanceof Error) return new Failure("ipc", e.message);
  return new Failure("ipc", String(e));
}

/** Await a command: its data, or a thrown Failure. */
export async function call<T>(p: Promise<Res<T>>): Promise<T> {
  let r: Res<T>;
  try {
    r = await p;
  } catch (e) {
    throw toFailure(e);
  }
  if (r.status === "error") throw toFailure(r.error);
  return r.data;
}

export interface JobOptions {
  /** Poll interval in ms. */
  interval?: number;
  /** Called with each snapshot (events are only the new ones). */
  onUpdate?: (s: JobSnapshot) => void;
  /** Sleep function (tests). */
  sleep?: (ms: number) => Promise<void>;
}

const wait = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Poll a job until it stops; resolves with the final snapshot (every event included). */
export async function followJob(job: string, opts: JobOptions = {}): Promise<JobSnapshot> {
  const interval = opts.interval ?? 250;
  const sleep = opts.sleep ?? wait;
  let cursor = 0;
  const events: JobSnapshot["events"] = [];
  for (;;) {
    const s = await call(commands.jobPoll({ job, cursor }));
    cursor = s.cursor;
    events.push(...s.events);
    opts.onUpdate?.(s);
    if (s.state !== "running") return { ...s, events };
    await sleep(interval);
  }
}

/** Ask a job to stop (errors are ignored: it may have finished). */
export async function cancelJob(job: string): Promise<void> {
  try {
    await call(commands.jobCancel({ job }));
  } catch {
    // finished already
  }
}

// The Edit & fork dialog's verdict on the typed value: what the status line says, and whether
// "Fork with this value" can be pressed.

import type { EditCheck } from "../ipc/bindings";
import type { ParseResult } from "./jsontext";

/** The backend's message without the path it starts with (`values.when: …`, `$: …` for the
 * root): the status line names the path itself, once. */
export function checkMessage(check: Pick<EditCheck, "message" | "path">): string {
  const message = check.message ?? "";
  const path = check.path ?? "";
  for (const prefix of [path, path === "" ? "$" : null]) {
    if (prefix !== null && prefix !== "" && message.startsWith(`${prefix}: `)) return message.slice(prefix.length + 2);
  }
  return message;
}

/** "Does not fit at values.when: expected a datetime" (null: it fits, or no check yet). */
export function misfitText(check: EditCheck | null): string | null {
  if (!check || check.ok) return null;
  const where = check.path && check.path !== "$" ? ` at ${check.path}` : "";
  const why = checkMessage(check);
  return why ? `Does not fit${where}: ${why}` : `Does not fit${where}.`;
}

/** Whether the value can be written: it parses, the backend's check said it fits (a check that
 * could not run leaves the engine to refuse it with its reason), and nothing is in flight. */
export function canFork(s: { parsed: ParseResult | null; check: EditCheck | null; checking: boolean; busy: boolean }): boolean {
  if (s.busy || s.checking || s.parsed?.ok !== true) return false;
  return s.check === null || s.check.ok;
}

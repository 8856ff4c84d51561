// HumanInTheLoopMiddleware's interrupts as the API reads them (`CheckpointDetail.approvals`):
// which of them still wait, which waiting interrupts are not approvals, and how an action's
// arguments read (JSON whose strings keep their line breaks).

import { plural } from "./format";
import type { Approval, ApprovalAction, CheckpointDetail } from "../ipc/bindings";
import type { Json } from "./json";
import type { Waiting } from "./resume";

/** The middleware's decisions, in its order. */
export const DECISIONS = ["approve", "edit", "reject", "respond"] as const;
export type DecisionType = (typeof DECISIONS)[number];

/** The approvals of a checkpoint (none from a backend older than issue 32, which sends none). */
export function approvalsOf(detail: Partial<Pick<CheckpointDetail, "approvals">> | null | undefined): Approval[] {
  return detail?.approvals ?? [];
}

/** The decisions a tool call allows, in the middleware's order; all four when it names none
 * that the middleware knows. */
export function allowedOf(action: Pick<ApprovalAction, "allowed_decisions">): DecisionType[] {
  const known = DECISIONS.filter((d) => action.allowed_decisions.includes(d));
  return known.length ? known : [...DECISIONS];
}

/** An approval is the interrupt `w` (by id; without ids, by the task that raised it). */
export function isInterrupt(a: Approval, w: Waiting): boolean {
  return a.interrupt_id !== null && w.id !== null ? a.interrupt_id === w.id : a.task_id === w.task;
}

/**
 * What is waiting: the approvals among the waiting interrupts (a step record lists every
 * approval raised, answered ones too) and the interrupts that are no approval.
 */
export function splitWaiting(approvals: Approval[], waiting: Waiting[]): { approvals: Approval[]; generic: Waiting[] } {
  return {
    approvals: approvals.filter((a) => waiting.some((w) => isInterrupt(a, w))),
    generic: waiting.filter((w) => !approvals.some((a) => isInterrupt(a, w))),
  };
}

/** "per tool call" or "batched: 2 tool calls". */
export function modeLabel(a: Pick<Approval, "mode" | "actions">): string {
  if (a.mode === "per_call") return "per tool call";
  return `batched: ${plural(a.actions.length, "tool call")}`;
}

const isObject = (v: unknown): v is { [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** A string as JSON, its line breaks written as line breaks rather than `\n`. */
function readableString(s: string): string {
  return `"${s
    .split("\n")
    .map((line) => JSON.stringify(line).slice(1, -1))
    .join("\n")}"`;
}

/**
 * JSON to read (not to parse back): indented, and a string's line breaks shown as line breaks
 * (a tool call's `content` reads as the text it is). Everything else is as `JSON.stringify`.
 */
export function readableJson(v: Json, indent = ""): string {
  const inner = `${indent}  `;
  if (typeof v === "string") return readableString(v);
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    return `[\n${v.map((x) => inner + readableJson(x, inner)).join(",\n")}\n${indent}]`;
  }
  if (isObject(v)) {
    const entries = Object.entries(v);
    if (entries.length === 0) return "{}";
    return `{\n${entries.map(([k, x]) => `${inner}${JSON.stringify(k)}: ${readableJson(x, inner)}`).join(",\n")}\n${indent}}`;
  }
  return JSON.stringify(v) ?? "null";
}

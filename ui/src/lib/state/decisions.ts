// The resume value of *Resume with…* for HumanInTheLoopMiddleware's interrupts, built from the
// reviewer's choice per tool call, and checked before it is sent:
//  * batched: `{"decisions": [d, …]}`, one decision per action, in order;
//  * per_call: one decision, checked against the interrupt's `response_schema`;
//  * several waiting interrupts answered together: `{"<interrupt id>": answer, …}`.
// A decision: `{"type": "approve"}`, `{"type": "edit", "edited_action": {"name", "args"}}`,
// `{"type": "reject", "message"?}`, `{"type": "respond", "message"}`.

import { plural } from "./format";
import type { Approval, ApprovalAction } from "../ipc/bindings";
import { allowedOf, type DecisionType } from "./approvals";
import type { Json } from "./json";
import { parseJson } from "./jsontext";
import { validate, type FieldError } from "./jsonschema";
import { parseResume, type Waiting } from "./resume";

/** One waiting interrupt to answer: a HITL approval, or any other interrupt (answered as JSON). */
export type Slot = { kind: "approval"; id: string | null; approval: Approval } | { kind: "generic"; id: string | null; waiting: Waiting };

/** The slots to answer: the waiting approvals, then the other waiting interrupts. */
export function slotsOf(approvals: Approval[], generic: Waiting[]): Slot[] {
  return [
    ...approvals.map((approval): Slot => ({ kind: "approval", id: approval.interrupt_id, approval })),
    ...generic.map((waiting): Slot => ({ kind: "generic", id: waiting.id, waiting })),
  ];
}

/** The reviewer's choice for one tool call; the texts are kept while switching between types. */
export interface Choice {
  type: DecisionType;
  /** The edited arguments (JSON), for `edit`. */
  args: string;
  /** The reason (`reject`, optional) or the answer (`respond`). */
  message: string;
}

/** Approve when allowed, else the first allowed decision; the arguments as the model gave them. */
export function initialChoice(action: ApprovalAction): Choice {
  const allowed = allowedOf(action);
  return { type: allowed.includes("approve") ? "approve" : allowed[0], args: JSON.stringify(action.args, null, 2), message: "" };
}

/** A problem with the choices, on a slot and (for approvals) one of its tool calls. */
export interface FormError extends FieldError {
  slot: number;
  action: number | null;
}

/**
 * The schema one decision for `action` must match when the interrupt gives none (batched
 * mode): what the middleware's per-call schema says, for the decisions this call allows.
 */
export function decisionSchema(action: ApprovalAction): Json {
  const branch: Record<DecisionType, Json> = {
    approve: { type: "object", properties: { type: { const: "approve" } }, required: ["type"] },
    edit: {
      type: "object",
      properties: {
        type: { const: "edit" },
        edited_action: {
          type: "object",
          properties: { name: { const: action.name, type: "string" }, args: { type: "object" } },
          required: ["name", "args"],
        },
      },
      required: ["type", "edited_action"],
    },
    reject: { type: "object", properties: { type: { const: "reject" }, message: { type: "string" } }, required: ["type"] },
    respond: { type: "object", properties: { type: { const: "respond" }, message: { type: "string" } }, required: ["type", "message"] },
  };
  return { discriminator: { propertyName: "type" }, oneOf: allowedOf(action).map((d) => branch[d]) };
}

/** How a field of a decision reads in the form (`edited_action.args.city` → `arguments.city`). */
export function formPath(path: string): string {
  if (path === "edited_action.name") return "tool name";
  if (path === "edited_action.args" || path.startsWith("edited_action.args.") || path.startsWith("edited_action.args[")) {
    return `arguments${path.slice("edited_action.args".length)}`;
  }
  return path;
}

/** The decision a choice makes, and what is wrong with it (checked against `schema`). */
export function decisionOf(action: ApprovalAction, choice: Choice, schema: Json | null): { value: Json | null; errors: FieldError[] } {
  const allowed = allowedOf(action);
  if (!allowed.includes(choice.type)) return { value: null, errors: [{ path: "type", message: `not allowed for this call (allowed: ${allowed.join(", ")})` }] };
  let value: Json;
  switch (choice.type) {
    case "approve":
      value = { type: "approve" };
      break;
    case "edit": {
      const parsed = parseJson(choice.args);
      if (!parsed.ok) return { value: null, errors: [{ path: "arguments", message: `not JSON: ${parsed.message} (line ${parsed.line}, column ${parsed.column})` }] };
      value = { type: "edit", edited_action: { name: action.name, args: parsed.value } };
      break;
    }
    case "reject":
      value = choice.message.trim() ? { type: "reject", message: choice.message } : { type: "reject" };
      break;
    case "respond":
      if (!choice.message.trim()) return { value: null, errors: [{ path: "message", message: "required: the answer the model gets instead of the tool's result" }] };
      value = { type: "respond", message: choice.message };
      break;
  }
  const errors = validate(schema ?? decisionSchema(action), value).map((e) => ({ ...e, path: formPath(e.path) }));
  return { value, errors };
}

/** The schema of one per-call decision: the interrupt's own, else the middleware's shape. */
const perCallSchema = (a: Approval): Json => a.response_schema ?? (a.actions[0] ? decisionSchema(a.actions[0]) : null);

/** What an approval's answer is made of: one decision per tool call (per_call: its one call). */
function answerOf(a: Approval, choices: Choice[], slot: number): { value: Json | null; errors: FormError[] } {
  const actions = a.mode === "per_call" ? a.actions.slice(0, 1) : a.actions;
  const errors: FormError[] = [];
  const decisions = actions.map((action, k) => {
    const d = decisionOf(action, choices[k] ?? initialChoice(action), a.mode === "per_call" ? perCallSchema(a) : null);
    errors.push(...d.errors.map((e) => ({ ...e, slot, action: k })));
    return d.value;
  });
  if (errors.length) return { value: null, errors };
  return { value: a.mode === "per_call" ? decisions[0] : { decisions }, errors };
}

/** A generic interrupt's answer: the JSON typed for it. */
function genericOf(text: string, slot: number): { value: Json | null; errors: FormError[] } {
  const p = parseResume(text);
  if (!p.ok) return { value: null, errors: [{ slot, action: null, path: "", message: p.error }] };
  if (p.value === null) return { value: null, errors: [{ slot, action: null, path: "", message: "required: the value to resume it with, as JSON" }] };
  return { value: p.value, errors: [] };
}

/** The one message when several interrupts wait and one has no id to answer it by. */
export const NO_IDS = "several interrupts wait and not all have an id (LangGraph before 0.6): answer them one at a time in the JSON below";

/**
 * The resume value the choices make: one slot's answer itself, several keyed by interrupt id.
 * `choices[i]` holds slot i's choices per tool call, `texts[i]` a generic slot's JSON.
 */
export function buildPayload(slots: Slot[], choices: Choice[][], texts: string[]): { value: Json | null; errors: FormError[] } {
  const answers = slots.map((s, i) => (s.kind === "approval" ? answerOf(s.approval, choices[i] ?? [], i) : genericOf(texts[i] ?? "", i)));
  const errors = answers.flatMap((a) => a.errors);
  if (slots.length > 1 && slots.some((s) => s.id === null)) errors.push({ slot: -1, action: null, path: "", message: NO_IDS });
  if (errors.length || slots.length === 0) return { value: null, errors };
  if (slots.length === 1) return { value: answers[0].value, errors };
  return { value: Object.fromEntries(slots.map((s, i) => [s.id as string, answers[i].value as Json])), errors };
}

const isObject = (v: unknown): v is { [key: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);

/** `path` inside `prefix` (`["id"]` + `decisions[0].type`). */
function prefixed(prefix: string, path: string): string {
  if (!prefix || !path) return prefix || path;
  return path.startsWith("[") ? prefix + path : `${prefix}.${path}`;
}

/** An interrupt id as a path's first step. */
const idPath = (id: string) => `[${JSON.stringify(id)}]`;

/** What is wrong with one slot's answer typed by hand (paths from `base`). */
function checkAnswer(slot: Slot, v: Json, base: string): FieldError[] {
  if (slot.kind === "generic") return [];
  const a = slot.approval;
  const at = (errs: FieldError[], prefix: string) => errs.map((e) => ({ ...e, path: prefixed(prefix, e.path) }));
  if (a.mode === "per_call") return at(validate(perCallSchema(a), v), base);
  if (!isObject(v)) return [{ path: base, message: 'must be an object: {"decisions": […]}' }];
  const list = v.decisions;
  const where = prefixed(base, "decisions");
  if (!Array.isArray(list)) return [{ path: where, message: "required: a list of decisions, one per tool call, in order" }];
  if (list.length !== a.actions.length) {
    return [{ path: where, message: `needs ${plural(a.actions.length, "decision")}, one per tool call in order (has ${list.length})` }];
  }
  return list.flatMap((d, k) => at(validate(decisionSchema(a.actions[k]), d), `${where}[${k}]`));
}

/**
 * What is wrong with a resume value typed by hand, as `path: message` lines: one slot's answer
 * itself, or several keyed by interrupt id (one left out stays waiting).
 */
export function checkPayload(value: Json, slots: Slot[]): string[] {
  const line = (e: FieldError) => (e.path ? `${e.path}: ${e.message}` : e.message);
  if (slots.length === 1) return checkAnswer(slots[0], value, "").map(line);
  if (slots.length === 0) return [];
  if (!isObject(value)) return [`several interrupts wait: answer them as {"<interrupt id>": answer, …}`];
  const errors: FieldError[] = [];
  for (const [id, v] of Object.entries(value)) {
    const slot = slots.find((s) => s.id === id);
    if (!slot) errors.push({ path: idPath(id), message: "no waiting interrupt has this id" });
    else errors.push(...checkAnswer(slot, v, idPath(id)));
  }
  return errors.map(line);
}

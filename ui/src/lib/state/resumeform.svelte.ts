// *Resume with…* for HumanInTheLoopMiddleware's interrupts: the reviewer's choice per tool call,
// the resume value they make (shown, and editable by hand), and whether it may be sent. The
// logic is decisions.ts; this holds the form's state.

import type { DecisionType } from "./approvals";
import { buildPayload, checkPayload, initialChoice, type Choice, type FormError, type Slot } from "./decisions";
import type { Json } from "./json";
import { parseResume } from "./resume";

/** What the dialog sends: the value when it may be sent, else why not (one line each). */
export type FormResult = { ok: true; value: Json } | { ok: false; errors: string[] };

export class ResumeForm {
  readonly slots: Slot[];
  /** Per slot, the choice per tool call (empty for a generic interrupt). */
  choices = $state<Choice[][]>([]);
  /** Per slot, a generic interrupt's answer as JSON (empty for an approval). */
  texts = $state<string[]>([]);
  /** The resume value typed by hand (null: built from the choices). */
  manual = $state<string | null>(null);

  readonly built = $derived.by(() => buildPayload(this.slots, this.choices, this.texts));
  /** The resume value as the dialog shows it. */
  readonly text = $derived.by(() => this.manual ?? (this.built.value !== null ? JSON.stringify(this.built.value, null, 2) : ""));
  readonly result = $derived.by((): FormResult => this.resultOf());

  constructor(slots: Slot[]) {
    this.slots = slots;
    this.choices = slots.map((s) => (s.kind === "approval" ? s.approval.actions.map(initialChoice) : []));
    this.texts = slots.map(() => "");
  }

  /** The problems of one tool call's choice (action null: of a generic slot; slot -1: of all). */
  errorsOf(slot: number, action: number | null): FormError[] {
    return this.manual === null ? this.built.errors.filter((e) => e.slot === slot && e.action === action) : [];
  }

  choose(slot: number, action: number, type: DecisionType) {
    this.choices[slot][action].type = type;
  }

  setArgs(slot: number, action: number, args: string) {
    this.choices[slot][action].args = args;
  }

  setMessage(slot: number, action: number, message: string) {
    this.choices[slot][action].message = message;
  }

  setText(slot: number, text: string) {
    this.texts[slot] = text;
  }

  /** The resume value edited by hand: the choices no longer make it. */
  edit(text: string) {
    this.manual = text;
  }

  /** Back to the value the choices make. */
  rebuild() {
    this.manual = null;
  }

  private resultOf(): FormResult {
    if (this.manual === null) {
      if (this.built.value !== null) return { ok: true, value: this.built.value };
      return { ok: false, errors: this.built.errors.filter((e) => e.slot === -1).map((e) => e.message) };
    }
    const p = parseResume(this.manual);
    if (!p.ok) return { ok: false, errors: [p.error] };
    if (p.value === null) return { ok: false, errors: ["empty: write the resume value, or rebuild it from the choices"] };
    const errors = checkPayload(p.value, this.slots);
    return errors.length ? { ok: false, errors } : { ok: true, value: p.value };
  }
}

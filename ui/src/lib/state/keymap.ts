// The thread screen's keyboard shortcuts (HelpDialog lists them): a key press → what to do. Pure,
// so the mapping is tested without a DOM; the screen performs the action.
//
//   j k ↑ ↓ ← → Home End   step through the graph (see graph/stepping.ts)
//   space                  play / pause the replay of the branch
//   p                      compare with the parent checkpoint
//   c                      pick a checkpoint to compare with (again: stop picking)
//   Escape                 stop comparing
//   ?                      the shortcuts

import { stepForKey, type Step } from "../graph/stepping";

export type KeyAction =
  | { kind: "step"; step: Step }
  | { kind: "play" }
  | { kind: "compare-parent" }
  | { kind: "pick-compare" }
  | { kind: "cancel-compare" }
  | { kind: "help" };

/** The parts of a KeyboardEvent the mapping looks at. */
export interface KeyPress {
  key: string;
  ctrlKey?: boolean;
  metaKey?: boolean;
  altKey?: boolean;
  target?: EventTarget | { tagName?: string } | null;
}

export interface KeyContext {
  /** A dialog is open: it has the keyboard. */
  dialogOpen: boolean;
  /** A checkpoint is selected (stepping starts from it). */
  hasSelection: boolean;
}

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);

/** What a key press does on the thread screen, or null when it is not a shortcut there. */
export function keyAction(e: KeyPress, ctx: KeyContext): KeyAction | null {
  if (ctx.dialogOpen) return null;
  // Keys typed into a field (the scrubber is one) belong to it.
  const tag = (e.target as { tagName?: unknown } | null | undefined)?.tagName;
  if (typeof tag === "string" && TYPING.has(tag)) return null;
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const step = stepForKey(e.key);
  if (step) return ctx.hasSelection ? { kind: "step", step } : null;
  switch (e.key) {
    case " ":
      return { kind: "play" };
    case "p":
      return { kind: "compare-parent" };
    case "c":
      return { kind: "pick-compare" };
    case "Escape":
      return { kind: "cancel-compare" };
    case "?":
      return { kind: "help" };
    default:
      return null;
  }
}

/** Whether the browser's own handling of the key is cancelled (space would scroll, arrows too). */
export function claimsKey(action: KeyAction): boolean {
  return action.kind === "step" || action.kind === "play";
}

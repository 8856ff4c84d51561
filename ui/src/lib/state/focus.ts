// Dialog focus: what Tab reaches inside a dialog, where focus starts, and the trap itself (an
// attachment-free helper the Modal calls). Pure enough to test with jsdom.

const FOCUSABLE = [
  "a[href]",
  "button:not([disabled])",
  "input:not([disabled]):not([type=hidden])",
  "select:not([disabled])",
  "textarea:not([disabled])",
  "[tabindex]:not([tabindex='-1'])",
].join(",");

/** The elements Tab can reach inside `root`, in document order. */
export function focusables(root: ParentNode): HTMLElement[] {
  return Array.from(root.querySelectorAll<HTMLElement>(FOCUSABLE)).filter((el) => !el.closest("[inert]") && !el.hidden);
}

/**
 * Where Tab (or Shift+Tab) goes from `current` inside a dialog whose reachable elements are
 * `list`: wrapping at both ends, and into the dialog when focus is outside it.
 */
export function nextFocus(list: HTMLElement[], current: Element | null, back: boolean): HTMLElement | null {
  if (list.length === 0) return null;
  const i = current ? list.indexOf(current as HTMLElement) : -1;
  if (i < 0) return back ? list[list.length - 1] : list[0];
  return list[(i + (back ? -1 : 1) + list.length) % list.length];
}

/**
 * The element a dialog focuses first: one marked `data-autofocus`, else the first field, else
 * the first button that is not the close button, else the dialog itself.
 */
export function initialFocus(root: HTMLElement): HTMLElement {
  const marked = root.querySelector<HTMLElement>("[data-autofocus]");
  if (marked) return marked;
  const list = focusables(root);
  const field = list.find((el) => ["INPUT", "SELECT", "TEXTAREA"].includes(el.tagName));
  if (field) return field;
  const button = list.find((el) => el.dataset.testid !== "modal-close");
  return button ?? root;
}

/** Open dialogs, innermost last: only the innermost one handles Escape and Tab. */
const stack: HTMLElement[] = [];

/**
 * Traps focus in `root` while it is open: focus moves in, Tab and Shift+Tab cycle inside it,
 * Escape calls `onclose`, and focus returns to where it was when the dialog closes. Returns
 * the function that releases the trap.
 */
export function trapFocus(root: HTMLElement, onclose: () => void): () => void {
  const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
  stack.push(root);
  initialFocus(root).focus();
  const onkey = (e: KeyboardEvent) => {
    if (stack[stack.length - 1] !== root) return;
    if (e.key === "Escape") {
      e.preventDefault();
      e.stopPropagation();
      onclose();
    } else if (e.key === "Tab") {
      const next = nextFocus(focusables(root), document.activeElement, e.shiftKey);
      e.preventDefault();
      (next ?? root).focus();
    }
  };
  document.addEventListener("keydown", onkey, true);
  return () => {
    document.removeEventListener("keydown", onkey, true);
    const at = stack.indexOf(root);
    if (at >= 0) stack.splice(at, 1);
    if (before && before.isConnected) before.focus();
  };
}

// The ⋯ menu's keyboard (components/MoreMenu.svelte): which item a key moves to. Disabled
// items are skipped; the arrows wrap around.

/** What a key does in an open menu: move to an item, close it, or nothing. */
export type MenuMove = { kind: "focus"; index: number } | { kind: "close" } | null;

/** The next enabled item from `from` in direction `dir` (wrapping), or -1 when none is enabled. */
export function nextEnabled(disabled: readonly boolean[], from: number, dir: 1 | -1): number {
  const n = disabled.length;
  for (let k = 1; k <= n; k++) {
    const i = (((from + dir * k) % n) + n) % n;
    if (!disabled[i]) return i;
  }
  return -1;
}

/** What `key` does with the item at `current` focused (-1: none yet) among items some of which are disabled. */
export function menuKey(key: string, current: number, disabled: readonly boolean[]): MenuMove {
  const n = disabled.length;
  const focus = (index: number): MenuMove => (index < 0 ? null : { kind: "focus", index });
  switch (key) {
    case "Escape":
    case "Tab":
      return { kind: "close" };
    case "ArrowDown":
      return focus(nextEnabled(disabled, current < 0 ? -1 : current, 1));
    case "ArrowUp":
      return focus(nextEnabled(disabled, current < 0 ? n : current, -1));
    case "Home":
      return focus(nextEnabled(disabled, -1, 1));
    case "End":
      return focus(nextEnabled(disabled, n, -1));
    default:
      return null;
  }
}

/** One action in a ⋯ menu: a button with a test id. */
export interface MoreItem {
  label: string;
  testid: string;
  title?: string;
  disabled?: boolean;
  onclick: () => void;
}

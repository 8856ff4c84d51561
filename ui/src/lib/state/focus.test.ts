import { afterEach, describe, expect, it, vi } from "vitest";
import { focusables, initialFocus, nextFocus, trapFocus } from "./focus";

function dialog(html: string): HTMLElement {
  const root = document.createElement("div");
  root.tabIndex = -1;
  root.innerHTML = html;
  document.body.appendChild(root);
  return root;
}

const key = (k: string, shift = false) => new KeyboardEvent("keydown", { key: k, shiftKey: shift, bubbles: true, cancelable: true });

afterEach(() => {
  document.body.innerHTML = "";
});

describe("focus", () => {
  it("finds what Tab reaches, skipping disabled and hidden elements", () => {
    const root = dialog(`<button id="a">a</button><button disabled>x</button><input id="b"><input type="hidden"><div tabindex="-1">y</div><a href="#" id="c">c</a>`);
    expect(focusables(root).map((e) => e.id)).toEqual(["a", "b", "c"]);
  });

  it("wraps at both ends and enters from outside", () => {
    const [a, b, c] = ["a", "b", "c"].map((id) => Object.assign(document.createElement("button"), { id }));
    expect(nextFocus([a, b, c], c, false)).toBe(a);
    expect(nextFocus([a, b, c], a, true)).toBe(c);
    expect(nextFocus([a, b, c], b, false)).toBe(c);
    expect(nextFocus([a, b, c], document.body, false)).toBe(a);
    expect(nextFocus([a, b, c], null, true)).toBe(c);
    expect(nextFocus([], a, false)).toBeNull();
  });

  it("starts at a marked element, else a field, else a button other than close", () => {
    expect(initialFocus(dialog(`<button data-testid="modal-close">×</button><button id="ok">OK</button>`)).id).toBe("ok");
    expect(initialFocus(dialog(`<button data-testid="modal-close">×</button><button>OK</button><input id="f">`)).id).toBe("f");
    expect(initialFocus(dialog(`<input id="f"><button id="m" data-autofocus>m</button>`)).id).toBe("m");
    const bare = dialog(`<p>text</p>`);
    expect(initialFocus(bare)).toBe(bare);
  });

  it("traps Tab, closes on Escape and gives focus back", () => {
    const opener = Object.assign(document.createElement("button"), { id: "opener" });
    document.body.appendChild(opener);
    opener.focus();
    const behind = Object.assign(document.createElement("button"), { id: "behind" });
    document.body.appendChild(behind);
    const root = dialog(`<button data-testid="modal-close" id="x">×</button><button id="ok">OK</button>`);
    const onclose = vi.fn();
    const release = trapFocus(root, onclose);
    expect(document.activeElement?.id).toBe("ok");
    document.activeElement!.dispatchEvent(key("Tab"));
    expect(document.activeElement?.id).toBe("x");
    document.activeElement!.dispatchEvent(key("Tab"));
    expect(document.activeElement?.id).toBe("ok");
    document.activeElement!.dispatchEvent(key("Tab", true));
    expect(document.activeElement?.id).toBe("x");
    document.activeElement!.dispatchEvent(key("Escape"));
    expect(onclose).toHaveBeenCalledTimes(1);
    release();
    expect(document.activeElement?.id).toBe("opener");
  });

  it("lets only the innermost dialog answer", () => {
    const outer = dialog(`<button id="o">o</button>`);
    const inner = dialog(`<button id="i">i</button>`);
    const closeOuter = vi.fn();
    const closeInner = vi.fn();
    const releaseOuter = trapFocus(outer, closeOuter);
    const releaseInner = trapFocus(inner, closeInner);
    document.activeElement!.dispatchEvent(key("Escape"));
    expect(closeInner).toHaveBeenCalledTimes(1);
    expect(closeOuter).not.toHaveBeenCalled();
    releaseInner();
    document.body.dispatchEvent(key("Escape"));
    expect(closeOuter).toHaveBeenCalledTimes(1);
    releaseOuter();
  });
});

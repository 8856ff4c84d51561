import { describe, expect, it } from "vitest";
import { claimsKey, keyAction, type KeyPress } from "./keymap";

const idle = { dialogOpen: false, hasSelection: true };
const press = (key: string, extra: Partial<KeyPress> = {}): KeyPress => ({ key, target: { tagName: "BODY" }, ...extra });

describe("keyAction", () => {
  it("maps the stepping keys to steps through the graph", () => {
    expect(keyAction(press("j"), idle)).toEqual({ kind: "step", step: "older" });
    expect(keyAction(press("ArrowLeft"), idle)).toEqual({ kind: "step", step: "left" });
    expect(keyAction(press("k"), idle)).toEqual({ kind: "step", step: "newer" });
    expect(keyAction(press("ArrowRight"), idle)).toEqual({ kind: "step", step: "right" });
    expect(keyAction(press("ArrowUp"), idle)).toEqual({ kind: "step", step: "up" });
    expect(keyAction(press("ArrowDown"), idle)).toEqual({ kind: "step", step: "down" });
    expect(keyAction(press("Home"), idle)).toEqual({ kind: "step", step: "root" });
    expect(keyAction(press("End"), idle)).toEqual({ kind: "step", step: "tip" });
  });

  it("maps the other shortcuts", () => {
    expect(keyAction(press(" "), idle)).toEqual({ kind: "play" });
    expect(keyAction(press("p"), idle)).toEqual({ kind: "compare-parent" });
    expect(keyAction(press("c"), idle)).toEqual({ kind: "pick-compare" });
    expect(keyAction(press("Escape"), idle)).toEqual({ kind: "cancel-compare" });
    expect(keyAction(press("?"), idle)).toEqual({ kind: "help" });
    expect(keyAction(press("x"), idle)).toBeNull();
    expect(keyAction(press("J"), idle)).toBeNull();
  });

  it("does not step without a selection, but the other shortcuts still work", () => {
    const none = { dialogOpen: false, hasSelection: false };
    expect(keyAction(press("j"), none)).toBeNull();
    expect(keyAction(press("End"), none)).toBeNull();
    expect(keyAction(press(" "), none)).toEqual({ kind: "play" });
    expect(keyAction(press("?"), none)).toEqual({ kind: "help" });
  });

  it("leaves the keyboard to an open dialog", () => {
    const dialog = { dialogOpen: true, hasSelection: true };
    for (const key of ["j", " ", "p", "c", "Escape", "?"]) expect(keyAction(press(key), dialog)).toBeNull();
  });

  it("leaves keys typed into a field to the field", () => {
    for (const tagName of ["INPUT", "TEXTAREA", "SELECT"]) {
      expect(keyAction(press("j", { target: { tagName } }), idle)).toBeNull();
      expect(keyAction(press(" ", { target: { tagName } }), idle)).toBeNull();
    }
    expect(keyAction(press("j", { target: { tagName: "BUTTON" } }), idle)).toEqual({ kind: "step", step: "older" });
    expect(keyAction(press("j", { target: null }), idle)).toEqual({ kind: "step", step: "older" });
  });

  it("leaves combinations with Ctrl, ⌘ or Alt to the browser", () => {
    expect(keyAction(press("c", { ctrlKey: true }), idle)).toBeNull();
    expect(keyAction(press("k", { metaKey: true }), idle)).toBeNull();
    expect(keyAction(press("ArrowLeft", { altKey: true }), idle)).toBeNull();
    // Shift is how "?" is typed.
    expect(keyAction(press("?", { ctrlKey: false }), idle)).toEqual({ kind: "help" });
  });

  it("works on a real KeyboardEvent dispatched from an input", () => {
    const input = document.createElement("input");
    document.body.append(input);
    let seen: ReturnType<typeof keyAction> | undefined;
    window.addEventListener("keydown", (e) => (seen = keyAction(e, idle)), { once: true });
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
    expect(seen).toBeNull();
    window.addEventListener("keydown", (e) => (seen = keyAction(e, idle)), { once: true });
    document.body.dispatchEvent(new KeyboardEvent("keydown", { key: "j", bubbles: true }));
    expect(seen).toEqual({ kind: "step", step: "older" });
    input.remove();
  });
});

describe("claimsKey", () => {
  it("cancels the browser's default only for stepping and play", () => {
    expect(claimsKey({ kind: "step", step: "older" })).toBe(true);
    expect(claimsKey({ kind: "play" })).toBe(true);
    expect(claimsKey({ kind: "compare-parent" })).toBe(false);
    expect(claimsKey({ kind: "pick-compare" })).toBe(false);
    expect(claimsKey({ kind: "cancel-compare" })).toBe(false);
    expect(claimsKey({ kind: "help" })).toBe(false);
  });
});

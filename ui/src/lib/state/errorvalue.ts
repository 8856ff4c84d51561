// An error as a reader wants it: the exception's type and its message, not the stored value's
// shape. LangGraph keeps a task's error as the exception's repr in an `__error__` write
// (`ValueError('upstream returned HTTP 500 for item 42')`); LangGraph.js as an Error record
// (`{"$type": "js.Error", "$args": [message]}`, docs/json-view.md) or a plain `{name, message}`.

import { preview, shortType, type Json } from "./tree";

/** An error's type (null: not known) and its message. */
export interface ErrorText {
  type: string | null;
  message: string;
}

const NAME = /^[A-Za-z_][\w.]*$/;

/** The text of a Python str literal (`'a\'b'`, `"x"`), or null when `s` is not exactly one. */
export function pyStrLiteral(s: string): string | null {
  const q = s[0];
  if ((q !== "'" && q !== '"') || s.length < 2 || s[s.length - 1] !== q) return null;
  let out = "";
  for (let i = 1; i < s.length - 1; i++) {
    const c = s[i];
    if (c === q) return null; // the literal ended before the last character: more than one
    if (c !== "\\") {
      out += c;
      continue;
    }
    const n = s[++i];
    if (i >= s.length - 1) return null;
    const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", "'": "'", '"': '"', "0": "\0" };
    if (n in simple) out += simple[n];
    else if (n === "x" || n === "u" || n === "U") {
      const len = n === "x" ? 2 : n === "u" ? 4 : 8;
      const hex = s.slice(i + 1, i + 1 + len);
      if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) return null;
      out += String.fromCodePoint(parseInt(hex, 16));
      i += len;
    } else out += `\\${n}`;
  }
  return out;
}

/** `ValueError('boom')` → ValueError / boom; `KeyError('a', 2)` → KeyError / 'a', 2;
 * `ValueError: boom` → ValueError / boom; any other text: no type, the text. */
function fromText(text: string): ErrorText {
  const t = text.trim();
  const call = /^([A-Za-z_][\w.]*)\(([\s\S]*)\)$/.exec(t);
  if (call) {
    const args = call[2].trim();
    const one = pyStrLiteral(args.replace(/,$/, "").trim());
    return { type: shortType(call[1]), message: one ?? args };
  }
  const colon = /^([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit|Warning|Timeout|Failure)): ([\s\S]*)$/.exec(t);
  if (colon) return { type: shortType(colon[1]), message: colon[2] };
  return { type: null, message: text };
}

const argText = (a: Json) => (typeof a === "string" ? a : preview(a, 200));

/** An error value (a task's error, an `__error__` write) as its type and message. */
export function errorText(v: Json): ErrorText {
  if (typeof v === "string") return fromText(v);
  if (v && typeof v === "object" && !Array.isArray(v)) {
    const type = typeof v.$type === "string" ? v.$type : null;
    if (type && Array.isArray(v.$args)) return { type: type === "js.Error" ? "Error" : shortType(type), message: v.$args.map(argText).join(", ") };
    if (typeof v.message === "string") {
      const name = typeof v.name === "string" && NAME.test(v.name) ? v.name : type ? shortType(type) : null;
      return { type: name, message: v.message };
    }
    if (type) return { type: shortType(type), message: "" };
  }
  return { type: null, message: preview(v, 500) };
}

/** One line for a list: `ValueError: upstream returned HTTP 500 for item 42`. */
export function errorLine(v: Json, max = 120): string {
  const e = errorText(v);
  const text = (e.type ? (e.message ? `${e.type}: ${e.message}` : e.type) : e.message).replace(/\s*\n\s*/g, " ⏎ ");
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

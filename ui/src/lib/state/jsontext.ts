// Parsing the JSON typed into the edit-fork editor, with a line and column for every error
// (JSON.parse's messages differ between Chromium and WebKit, and WebKit gives no position).

import type { Json } from "./tree";

export type ParseResult =
  | { ok: true; value: Json }
  | { ok: false; message: string; line: number; column: number; offset: number };

class Fail {
  constructor(
    readonly message: string,
    readonly offset: number,
  ) {}
}

/** Parse strict JSON (RFC 8259). */
export function parseJson(text: string): ParseResult {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\n\r".includes(text[i])) i++;
  };
  const expect = (word: string, value: Json): Json => {
    if (text.startsWith(word, i)) {
      i += word.length;
      return value;
    }
    throw new Fail(`unexpected ${describe(i)}`, i);
  };
  const describe = (at: number) => (at >= text.length ? "end of input" : `character ${JSON.stringify(text[at])}`);
  const str = (): string => {
    const start = i;
    i++; // opening quote
    let out = "";
    while (i < text.length) {
      const c = text[i];
      if (c === '"') {
        i++;
        return out;
      }
      if (c === "\\") {
        const e = text[i + 1];
        const simple: Record<string, string> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
        if (e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else {
          throw new Fail("invalid escape in string", i);
        }
      } else if (c < " ") {
        throw new Fail("control character in string (use \\n, \\t…)", i);
      } else {
        out += c;
        i++;
      }
    }
    throw new Fail("unterminated string", start);
  };
  const num = (): number => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) throw new Fail(`unexpected ${describe(i)}`, i);
    i += m[0].length;
    return Number(m[0]);
  };
  const value = (depth: number): Json => {
    if (depth > 512) throw new Fail("nested too deeply", i);
    ws();
    const c = text[i];
    if (c === "{") {
      i++;
      const obj: { [k: string]: Json } = {};
      ws();
      if (text[i] === "}") {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        if (text[i] !== '"') throw new Fail(`expected a "key" but found ${describe(i)}`, i);
        const keyAt = i;
        const k = str();
        if (Object.prototype.hasOwnProperty.call(obj, k)) throw new Fail(`duplicate key ${JSON.stringify(k)}`, keyAt);
        ws();
        if (text[i] !== ":") throw new Fail(`expected ":" but found ${describe(i)}`, i);
        i++;
        obj[k] = value(depth + 1);
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "}") {
          i++;
          return obj;
        }
        throw new Fail(`expected "," or "}" but found ${describe(i)}`, i);
      }
    }
    if (c === "[") {
      i++;
      const arr: Json[] = [];
      ws();
      if (text[i] === "]") {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(depth + 1));
        ws();
        if (text[i] === ",") {
          i++;
          continue;
        }
        if (text[i] === "]") {
          i++;
          return arr;
        }
        throw new Fail(`expected "," or "]" but found ${describe(i)}`, i);
      }
    }
    if (c === '"') return str();
    if (c === "t") return expect("true", true);
    if (c === "f") return expect("false", false);
    if (c === "n") return expect("null", null);
    return num();
  };
  try {
    const v = value(0);
    ws();
    if (i < text.length) throw new Fail(`unexpected ${describe(i)} after the value`, i);
    return { ok: true, value: v };
  } catch (e) {
    if (!(e instanceof Fail)) throw e;
    const before = text.slice(0, e.offset);
    const line = before.split("\n").length;
    const column = e.offset - before.lastIndexOf("\n");
    return { ok: false, message: e.message, line, column, offset: e.offset };
  }
}

// A value of the JSON view (docs/json-view.md) as Python source that rebuilds it: what "Copy as
// Python" puts on the clipboard. Constructors are written by their short name (`AIMessage(…)`,
// `UUID('…')`, `datetime.fromisoformat('…')`); what was not decoded becomes `...` with a comment.

import type { DbInfo } from "../ipc/bindings";
import type { Json } from "./tree";

/** Whether "Copy as Python" is offered: for a database a Python program wrote (LangGraph's
 * msgpack values), not a LangGraph.js one (`dialect` "js": JSON values, read by JavaScript). */
export function offersPython(db: Pick<DbInfo, "dialect"> | null | undefined): boolean {
  return db?.dialect !== "js";
}

type Obj = { [key: string]: Json };

/** Python's repr of a str (single quotes unless the text holds one and no double quote). */
export function pyStr(s: string): string {
  const q = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = q;
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === "\\") out += "\\\\";
    else if (ch === q) out += `\\${q}`;
    else if (ch === "\n") out += "\\n";
    else if (ch === "\r") out += "\\r";
    else if (ch === "\t") out += "\\t";
    else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, "0")}`;
    else out += ch;
  }
  return out + q;
}

/** Python's repr of bytes given as base64. */
function pyBytes(base64: string): string {
  let raw = "";
  try {
    raw = atob(base64);
  } catch {
    return `bytes.fromhex('')  # undecodable base64`;
  }
  let out = "b'";
  for (const ch of raw) {
    const c = ch.charCodeAt(0);
    if (ch === "\\" || ch === "'") out += `\\${ch}`;
    else if (ch === "\n") out += "\\n";
    else if (c >= 0x20 && c < 0x7f) out += ch;
    else out += `\\x${c.toString(16).padStart(2, "0")}`;
  }
  return out + "'";
}

const short = (type: string) => type.split(".").pop() ?? type;

/** The value as Python source. */
export function toPython(v: Json): string {
  if (v === null) return "None";
  if (v === true) return "True";
  if (v === false) return "False";
  if (typeof v === "number") return String(v);
  if (typeof v === "string") return pyStr(v);
  if (Array.isArray(v)) return `[${v.map(toPython).join(", ")}]`;
  const type = typeof v.$type === "string" ? v.$type : null;
  if (!type) return `{${Object.entries(v).map(([k, x]) => `${pyStr(k)}: ${toPython(x)}`).join(", ")}}`;
  return typed(type, v);
}

function typed(type: string, v: Obj): string {
  if (typeof v.$error === "string" || v.$too_large !== undefined || v.$opaque === true || typeof v.$encrypted === "string") {
    return `...  # ${short(type)} not decoded here`;
  }
  if (type === "builtins.float" && typeof v.$value === "string") return `float(${pyStr(v.$value)})`;
  if ((type === "builtins.bytes" || type === "builtins.bytearray") && typeof v.base64 === "string") {
    return type === "builtins.bytes" ? pyBytes(v.base64) : `bytearray(${pyBytes(v.base64)})`;
  }
  if (Array.isArray(v.$items)) {
    const items = v.$items as Json[];
    if (type === "builtins.dict") {
      return `{${items.map((kv) => (Array.isArray(kv) && kv.length === 2 ? `${toPython(kv[0])}: ${toPython(kv[1])}` : toPython(kv))).join(", ")}}`;
    }
    return `${short(type)}([${items.map(toPython).join(", ")}])`;
  }
  if (type === "builtins.set" && Array.isArray(v.$value)) return v.$value.length ? `{${v.$value.map(toPython).join(", ")}}` : "set()";
  if (type.startsWith("datetime.") && typeof v.$value === "string") {
    const method = typeof v.$method === "string" ? v.$method : "fromisoformat";
    return `${short(type)}.${method}(${pyStr(v.$value)})`;
  }
  if ("$value" in v) return `${short(type)}(${toPython(v.$value)})`;
  if (Array.isArray(v.$args)) return `${short(type)}(${v.$args.map(toPython).join(", ")})`;
  // Fields as keyword arguments (dataclasses, pydantic models, messages); `$$x` is the field `$x`.
  const fields = Object.entries(v)
    .filter(([k]) => k !== "$type" && k !== "$secret")
    .map(([k, x]) => `${k.startsWith("$$") ? k.slice(1) : k}=${toPython(x)}`);
  return `${short(type)}(${fields.join(", ")})`;
}

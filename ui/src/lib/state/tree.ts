// The JSON view (docs/json-view.md) as a typed tree for the state panel: Python type names,
// folded long strings, masked secrets, undecodable values shown in place, messages recognised
// for the chat view.

import { plural } from "./format";
import type { Json } from "./json";
import { bytesPreview, scalarValue } from "./scalars";

export type { Json };

export type NodeKind =
  | "dict"
  | "list"
  | "object" // a Python object with fields ($type + fields)
  | "string"
  | "number"
  | "bool"
  | "null"
  | "scalar" // $value / $args objects (UUID, datetime, Decimal, …) shown on one line
  | "bytes"
  | "secret"
  | "error"
  | "too_large" // left undecoded by the decode budget
  | "opaque"; // pickle / encrypted payloads

export interface TreeNode {
  /** Key in the parent (field name, list index, or dict key text). */
  key: string;
  /** JSON path from the channel root, e.g. `messages[1].tool_calls[0].args`. */
  path: string;
  kind: NodeKind;
  /** Python type name (`dict`, `list`, `str`, `langchain_core.messages.ai.AIMessage`). */
  typeName: string;
  /** The value's text without its type (the badge names the type, see badge.ts): a leaf's
   * value, a message's content, empty for plain containers. */
  preview: string;
  /** Children of containers. */
  children: TreeNode[];
  /** The full text of a long string (preview is then cut). */
  fullText?: string;
  /** Whether the text was cut for the preview. */
  folded?: boolean;
  /** The length in bytes of a bytes value. */
  size?: number;
}

/** Strings longer than this, or with more lines, are folded. */
export const FOLD_CHARS = 160;
export const FOLD_LINES = 3;

const isObject = (v: Json): v is { [key: string]: Json } =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function childPath(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(key)) return parent ? `${parent}.${key}` : key;
  return `${parent}[${JSON.stringify(key)}]`;
}

/** The short name of a Python type (`langchain_core.messages.ai.AIMessage` → `AIMessage`). */
export function shortType(typeName: string): string {
  const i = typeName.lastIndexOf(".");
  return i >= 0 ? typeName.slice(i + 1) : typeName;
}

/** Cut a string for one line. */
export function foldText(s: string): { preview: string; folded: boolean } {
  const lines = s.split("\n");
  if (s.length <= FOLD_CHARS && lines.length <= FOLD_LINES) return { preview: s, folded: false };
  const first = lines.slice(0, FOLD_LINES).join("⏎ ");
  const cut = first.length > FOLD_CHARS ? first.slice(0, FOLD_CHARS) : first;
  return { preview: `${cut}…`, folded: true };
}

/** A one-line preview of any value (for collapsed nodes, diffs and lists). */
export function preview(v: Json, max = 80): string {
  let text: string;
  if (v === null) text = "None";
  else if (typeof v === "string") text = JSON.stringify(v);
  else if (typeof v === "number" || typeof v === "boolean") text = pyScalar(v);
  else if (Array.isArray(v)) text = `[${plural(v.length, "item")}]`;
  else if (typeof v.$error === "string") text = `⚠ ${v.$error}`;
  else if (v.$secret === true) text = "**********";
  else if (typeof v.$type === "string" && "$value" in v) text = `${shortType(v.$type)}(${pyLeaf(v.$value)})`;
  else if (typeof v.$type === "string" && Array.isArray(v.$args)) text = `${shortType(v.$type)}(${v.$args.map((a) => pyLeaf(a)).join(", ")})`;
  else if (typeof v.$type === "string") {
    const content = typeof v.content === "string" && v.content ? `: ${JSON.stringify(v.content)}` : "";
    text = `${shortType(v.$type)}${content}`;
  } else text = `{${plural(Object.keys(v).length, "key")}}`;
  const one = text.replace(/\n/g, "⏎");
  return one.length > max ? `${one.slice(0, max - 1)}…` : one;
}

function pyScalar(v: number | boolean): string {
  if (typeof v === "boolean") return v ? "True" : "False";
  return String(v);
}

function pyLeaf(v: Json): string {
  if (v === null) return "None";
  if (typeof v === "string") return JSON.stringify(v);
  if (typeof v === "number" || typeof v === "boolean") return pyScalar(v);
  return preview(v, 40);
}

/** Build the tree of a value. */
export function buildTree(value: Json, key = "", path = key): TreeNode {
  const node = (kind: NodeKind, typeName: string, text: string, children: TreeNode[] = []): TreeNode => ({
    key,
    path,
    kind,
    typeName,
    preview: text,
    children,
  });
  if (value === null) return node("null", "None", "None");
  if (typeof value === "boolean") return node("bool", "bool", pyScalar(value));
  if (typeof value === "number") return node("number", Number.isInteger(value) ? "int" : "float", String(value));
  if (typeof value === "string") {
    const { preview: p, folded } = foldText(value);
    return { ...node("string", "str", p), fullText: value, folded };
  }
  if (Array.isArray(value)) {
    return node(
      "list",
      "list",
      "",
      value.map((v, i) => buildTree(v, String(i), childPath(path, i))),
    );
  }
  const type = typeof value.$type === "string" ? value.$type : null;
  if (typeof value.$error === "string") {
    return node("error", type ?? "undecodable", `could not decode: ${value.$error}`);
  }
  if (isObject(value.$too_large)) {
    const message = typeof value.$message === "string" ? value.$message : "too large to decode";
    return node("too_large", type ?? "value", message.split(" (")[0]);
  }
  if (value.$secret === true) return node("secret", type ?? "SecretStr", "**********");
  if (typeof value.$encrypted === "string") {
    const size = typeof value.size === "number" ? `, ${plural(value.size, "byte")}` : "";
    return node("opaque", "encrypted", `🔒 locked (${value.$encrypted}${size}): unlock the database to read it`);
  }
  if (value.$opaque === true) {
    const size = typeof value.size === "number" ? ` (${plural(value.size, "byte")})` : "";
    const cls = typeof value.class === "string" ? ` ${value.class}` : "";
    return node("opaque", type ?? "opaque", `${type}${cls}${size}, not decoded`);
  }
  if (type === "builtins.bytes" || type === "builtins.bytearray") {
    const b64 = typeof value.base64 === "string" ? value.base64 : "";
    const bytes = Math.floor((b64.length * 3) / 4) - (b64.endsWith("==") ? 2 : b64.endsWith("=") ? 1 : 0);
    const peek = bytesPreview(b64);
    return { ...node("bytes", type, peek ? `${peek}${bytes > 16 ? " …" : ""}` : ""), size: bytes };
  }
  if (type && Array.isArray(value.$items)) {
    // A dict with non-string keys, or a set/frozenset/deque/tuple-like container.
    const items = value.$items as Json[];
    const children = items.map((item, i) => {
      if (Array.isArray(item) && item.length === 2 && type === "builtins.dict") {
        const k = preview(item[0], 40);
        return buildTree(item[1], k, `${path}[${k}]`);
      }
      return buildTree(item, String(i), childPath(path, i));
    });
    return node(type === "builtins.dict" ? "dict" : "list", type, "", children);
  }
  if (type && Array.isArray(value.$value)) {
    // set / frozenset / deque: their items.
    const items = value.$value;
    return node(
      "list",
      type,
      "",
      items.map((v, i) => buildTree(v, String(i), childPath(path, i))),
    );
  }
  const args = Array.isArray(value.$args) ? value.$args : null;
  if (type && args && args.some((a) => a !== null && typeof a === "object")) {
    // Send(node, arg) and other constructors with structured arguments.
    return node(
      "object",
      type,
      args.map((a) => preview(a, 40)).join(", "),
      args.map((v, i) => buildTree(v, `arg ${i}`, `${path ? `${path}.` : ""}$args[${i}]`)),
    );
  }
  if (type && ("$value" in value || args)) {
    return node("scalar", type, scalarValue(type, value));
  }
  const entries = Object.entries(value).filter(([k]) => !(type && k === "$type"));
  const children = entries.map(([k, v]) => {
    // The view writes a field named `$x` as `$$x`.
    const name = k.startsWith("$$") ? k.slice(1) : k;
    return buildTree(v, name, childPath(path, name));
  });
  if (type) {
    const content = typeof value.content === "string" && value.content ? preview(value.content) : "";
    return node("object", type, content, children);
  }
  return node("dict", "dict", "", children);
}

/** Paths of containers to open initially: the root and its direct children up to `depth`. */
export function initiallyOpen(root: TreeNode, depth = 1): Set<string> {
  const open = new Set<string>();
  const walk = (n: TreeNode, d: number) => {
    if (n.children.length === 0 || d > depth) return;
    open.add(n.path);
    n.children.forEach((c) => walk(c, d + 1));
  };
  walk(root, 0);
  return open;
}

/** Every undecodable value inside `value`, with its path. */
export function decodeErrors(value: Json, path = ""): { path: string; message: string }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => decodeErrors(v, childPath(path, i)));
  if (!isObject(value)) return [];
  if (typeof value.$error === "string") return [{ path, message: value.$error }];
  return Object.entries(value).flatMap(([k, v]) => decodeErrors(v, childPath(path, k)));
}

/** Every value left undecoded by the decode budget inside `value`, with its path and size. */
export function tooLargeValues(value: Json, path = ""): { path: string; bytes: number }[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => tooLargeValues(v, childPath(path, i)));
  if (!isObject(value)) return [];
  const t = value.$too_large;
  if (isObject(t)) return [{ path, bytes: typeof t.bytes === "number" ? t.bytes : 0 }];
  return Object.entries(value).flatMap(([k, v]) => tooLargeValues(v, childPath(path, k)));
}

// ---- messages --------------------------------------------------------------------------------

export type Role = "human" | "ai" | "tool" | "system" | "function" | "remove" | "other";

export interface ChatMessage {
  role: Role;
  typeName: string;
  id: string | null;
  name: string | null;
  /** Text content (list content parts joined). */
  text: string;
  toolCalls: { name: string; id: string | null; args: Json }[];
  /** For tool messages: the call they answer. */
  toolCallId: string | null;
  status: string | null;
  raw: Json;
}

const ROLES = new Set<string>(["human", "ai", "tool", "system", "function", "remove"]);

/** Whether a value is a LangChain message. */
export function isMessage(v: Json): boolean {
  return isObject(v) && typeof v.$type === "string" && v.$type.startsWith("langchain_core.messages.");
}

/** Whether a channel value is a list of messages (shown as chat bubbles). */
export function isMessageList(v: Json): v is Json[] {
  return Array.isArray(v) && v.length > 0 && v.every(isMessage);
}

function contentText(content: Json): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => {
        if (typeof part === "string") return part;
        if (isObject(part) && typeof part.text === "string") return part.text;
        if (isObject(part) && typeof part.type === "string") return `[${part.type}]`;
        return preview(part);
      })
      .join("\n");
  }
  return content === null ? "" : preview(content);
}

/** A message's parts for the chat view. */
export function toChatMessage(v: Json): ChatMessage {
  const o = isObject(v) ? v : {};
  const typeName = typeof o.$type === "string" ? o.$type : "message";
  const t = typeof o.type === "string" ? o.type : shortType(typeName).replace(/Message(Chunk)?$/, "").toLowerCase();
  const role: Role = ROLES.has(t) ? (t as Role) : "other";
  const calls = Array.isArray(o.tool_calls) ? o.tool_calls : [];
  return {
    role,
    typeName,
    id: typeof o.id === "string" ? o.id : null,
    name: typeof o.name === "string" ? o.name : null,
    text: contentText(o.content ?? null),
    toolCalls: calls.filter(isObject).map((c) => ({
      name: typeof c.name === "string" ? c.name : "?",
      id: typeof c.id === "string" ? c.id : null,
      args: c.args ?? null,
    })),
    toolCallId: typeof o.tool_call_id === "string" ? o.tool_call_id : null,
    status: typeof o.status === "string" ? o.status : null,
    raw: v,
  };
}

/** LangGraph's own control channels (`branch:…`, `join:…`, `__…`): shown apart, never edited. */

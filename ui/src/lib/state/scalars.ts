// Python scalars as Python prints them, for the state view: a UUID with its dashes, a timedelta
// as `str(timedelta)` ("2 days, 3:04:05.250000"), bytes as a hex and ASCII preview.

import type { Json } from "./json";

/** A UUID as 8-4-4-4-12 lower-case hex, or null when the text is not 32 hex digits (dashes aside). */
function uuidText(hex: string): string | null {
  const h = hex.replace(/-/g, "").toLowerCase();
  if (!/^[0-9a-f]{32}$/.test(h)) return null;
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** 32 hex digits as a dashed UUID (8-4-4-4-12); anything else unchanged. */
export function dashedUuid(hex: string): string {
  return uuidText(hex) ?? hex;
}

/** `str(timedelta(days, seconds, microseconds))`, as Python normalises and prints it. */
export function timedeltaText(days: number, seconds: number, micros: number): string {
  // Normalise as Python does: 0 <= seconds < 86400, 0 <= microseconds < 1e6, days carry the sign.
  let total = BigInt(Math.trunc(days)) * 86_400_000_000n + BigInt(Math.trunc(seconds)) * 1_000_000n + BigInt(Math.trunc(micros));
  const dayUs = 86_400_000_000n;
  let d = total / dayUs;
  total -= d * dayUs;
  if (total < 0n) {
    d -= 1n;
    total += dayUs;
  }
  const us = Number(total % 1_000_000n);
  const secs = Number(total / 1_000_000n);
  const hh = Math.floor(secs / 3600);
  const mm = Math.floor((secs % 3600) / 60);
  const ss = secs % 60;
  const clock = `${hh}:${String(mm).padStart(2, "0")}:${String(ss).padStart(2, "0")}${us ? `.${String(us).padStart(6, "0")}` : ""}`;
  if (d === 0n) return clock;
  return `${d} day${d === 1n || d === -1n ? "" : "s"}, ${clock}`;
}

/** The first bytes of base64 data as hex and printable ASCII: `68 65 6c 6c 6f  |hello|`. */
export function bytesPreview(base64: string, max = 16): string {
  let raw: string;
  try {
    // Whole 4-character groups from the start decode on their own.
    raw = atob(base64.slice(0, Math.ceil(max / 3) * 4));
  } catch {
    return "";
  }
  const bytes = Array.from(raw.slice(0, max), (c) => c.charCodeAt(0));
  if (bytes.length === 0) return "";
  const hex = bytes.map((b) => b.toString(16).padStart(2, "0")).join(" ");
  const ascii = bytes.map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
  return `${hex}  |${ascii}|`;
}

/** One line for a typed scalar of the JSON view that Python prints its own way; null for others. */
export function scalarText(type: string, value: { [key: string]: Json }): string | null {
  if (type === "uuid.UUID" && typeof value.$value === "string") return uuidText(value.$value);
  const args = value.$args;
  if (type === "datetime.timedelta" && Array.isArray(args) && args.length === 3 && args.every((a) => typeof a === "number")) {
    return timedeltaText(args[0] as number, args[1] as number, args[2] as number);
  }
  return null;
}

const leaf = (v: Json): string =>
  v === null ? "None" : v === true ? "True" : v === false ? "False" : typeof v === "object" ? JSON.stringify(v) : String(v);

/** The value of a typed scalar without its type (the state view's badge names the type):
 * `12345678-1234-…`, `1 day, 1:00:00`, `2026-01-02`, `2024-01-02T03:04:05`, `1999.990`. */
export function scalarValue(type: string, value: { [key: string]: Json }): string {
  const own = scalarText(type, value);
  if (own !== null) return own;
  const args = value.$args;
  if (type === "datetime.date" && Array.isArray(args) && args.length === 3 && args.every((a) => typeof a === "number")) {
    const [y, m, d] = args as number[];
    return `${String(y).padStart(4, "0")}-${String(m).padStart(2, "0")}-${String(d).padStart(2, "0")}`;
  }
  if ("$value" in value) return typeof value.$value === "string" ? value.$value : leaf(value.$value);
  if (Array.isArray(args)) return args.map((a) => (typeof a === "string" ? JSON.stringify(a) : leaf(a))).join(", ");
  return "";
}

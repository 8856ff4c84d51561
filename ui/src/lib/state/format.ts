// Small presentation helpers: times, sizes, versions, errors.

/** `2026-11-22T06:57:07.072901+00:00` → `2026-11-22 06:57:07` (UTC as stored). */
export function formatTs(ts: string | null | undefined): string {
  if (!ts) return "—";
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})/.exec(ts);
  return m ? `${m[1]} ${m[2]}` : ts;
}

/** How long ago, relative to `now` (ms since epoch). */
export function ago(ts: string | null | undefined, now: number): string {
  if (!ts) return "";
  const t = Date.parse(ts);
  if (Number.isNaN(t)) return "";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 60) return `${s}s ago`;
  if (s < 3600) return `${Math.floor(s / 60)}m ago`;
  if (s < 86400) return `${Math.floor(s / 3600)}h ago`;
  return `${Math.floor(s / 86400)}d ago`;
}

/** Sizes the same at every door (flashback_codec::units): decimal SI, one decimal — `999 B`,
 * `1.5 kB`, `21.3 MB`, `4.0 GB`, `1.2 TB` (1 kB = 1000 B); checked against
 * tests/fixtures/byte_units.json, as the Rust side is. */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n / 1000;
  let i = 0;
  // A value that would print as `1000.0` moves up a unit.
  while (Math.round(v * 10) >= 10_000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}


/** The question an interrupted thread is waiting on, as text. */
export function interruptText(v: unknown): string {
  if (v && typeof v === "object" && "value" in v && "$type" in v) return interruptText((v as { value: unknown }).value);
  if (typeof v === "string") return v;
  if (v && typeof v === "object" && !Array.isArray(v)) {
    // interrupt({"question": …, …}): the question first, the rest after it.
    const o = v as Record<string, unknown>;
    const key = ["question", "message", "prompt", "text", "value"].find((k) => typeof o[k] === "string");
    if (key) {
      const rest = Object.keys(o).filter((k) => k !== key);
      return rest.length ? `${o[key]} (${rest.join(", ")})` : String(o[key]);
    }
  }
  return JSON.stringify(v);
}

/** A heading for an error code (the message says the rest). */
export function errorTitle(code: string): string {
  switch (code) {
    case "not_a_database":
      return "Not a database.";
    case "unsupported_schema":
      return "Not a LangGraph checkpoint database.";
    case "not_found":
      return "Not found.";
    case "connection":
      return "Cannot connect.";
    case "auth":
      return "Wrong credentials.";
    case "needs_password":
      return "Password needed.";
    case "invalid_input":
      return "Check the input.";
    case "invalid_edit":
      return "The value does not fit.";
    case "not_open":
      return "The database is closed.";
    case "cancelled":
      return "Cancelled.";
    case "not_allowed":
      return "Not allowed here.";
    case "encrypted":
      return "Encrypted.";
    case "timeout":
      return "The server did not answer.";
    default:
      return "Something went wrong.";
  }
}

/** A channel version as a short step-like number: "00000000000000000000000000000005.0.2369…" → "5". */
export function formatVersion(version: string): string {
  return version.split(".")[0].replace(/^0+(?=\d)/, "");
}

/** A count and its noun, singular for one: `1 namespace`, `3 namespaces`, `1,204 checkpoints`
 * (`many` for a noun whose plural is not `one + "s"`: `plural(n, "match", "matches")`). */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString("en-US")} ${n === 1 ? one : many}`;
}

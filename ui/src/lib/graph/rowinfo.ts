// What a DAG row says beside its dot: the nodes whose step made the checkpoint, how long that
// step took (the time since the parent checkpoint), and how the next step went.

import type { GraphRow, StepMark, TokenUsage } from "../ipc/bindings";

/** The hooks LangChain's agent middleware run as graph nodes (`<Middleware>.<hook>`). */
const HOOKS = new Set(["before_agent", "before_model", "after_model", "after_agent"]);

/** A node as people read it: a middleware hook `SummarizationMiddleware.before_model` as
 * `Summarization · before model` (as the CLI says it); any other name as it is. */
export function nodeName(name: string): string {
  const dot = name.lastIndexOf(".");
  const owner = name.slice(0, dot);
  const hook = name.slice(dot + 1);
  if (dot <= 0 || !HOOKS.has(hook)) return name;
  const short = owner.endsWith("Middleware") && owner !== "Middleware" ? owner.slice(0, -"Middleware".length) : owner;
  return `${short} · ${hook.replace(/_/g, " ")}`;
}

/** The nodes that ran, each once with a count when it ran several times ("tools ×2": two
 * `Send`s to `tools`). */
export function ranLabel(ran: string[]): string {
  const counts = new Map<string, number>();
  for (const n of ran) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, k]) => (k > 1 ? `${nodeName(n)} ×${k}` : nodeName(n))).join(", ");
}

/** A duration in ms as the DAG shows it: "820 ms", "4.2 s", "3 min", "2 h", "5 d". */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(1) : Math.round(s)} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  if (s < 86400) return `${Math.round(s / 3600)} h`;
  return `${Math.round(s / 86400)} d`;
}

/** "+4.2 s": the time from the parent checkpoint (the row's parent row) to this one; "" without one. */
export function sinceParent(rows: GraphRow[], i: number): string {
  const row = rows[i];
  const p = row?.parent_row;
  if (p === null || p === undefined || !rows[p]) return "";
  const dt = Date.parse(row.ts) - Date.parse(rows[p].ts);
  return Number.isNaN(dt) || dt < 0 ? "" : `+${duration(dt)}`;
}

/** The badge of each mark: its text, its class and what it means. */
export const MARKS: Record<StepMark, { text: string; cls: string; title: string }> = {
  failed: { text: "✕ raised", cls: "failed", title: "A task of the next step raised and did not finish" },
  recovered: {
    text: "↻ retried",
    cls: "recovered",
    title: "A node of the step that made this checkpoint raised, then finished on a retry (its error is kept beside its output, on the checkpoint before)",
  },
  interrupted: { text: "⏸ interrupt", cls: "interrupted", title: "A task of the next step waits at an interrupt" },
  resumed: { text: "▶ resumed", cls: "resumed", title: "A node of the step that made this checkpoint was interrupted, then resumed" },
};

/** A row's mark with the nodes it is about: "↻ flaky retried", "✕ fetch_bad raised". */
export function markText(mark: StepMark, nodes: string[]): string {
  const [glyph, ...rest] = MARKS[mark].text.split(" ");
  return nodes.length ? `${glyph} ${nodes.map(nodeName).join(", ")} ${rest.join(" ")}` : MARKS[mark].text;
}

/** A token count as a row shows it: "950", "12.3k", "1.2M". */
export function tokenCount(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

/** "1.2k tok": the tokens the step's model calls used. */
export function tokensLabel(t: TokenUsage): string {
  return `${tokenCount(t.total)} tok`;
}

/** "1,000 in (200 cached), 234 out (20 reasoning), 1,234 total": cached and reasoning tokens
 * only when the provider said so. */
export function tokensBreakdown(t: TokenUsage): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const input = `${n(t.input)} in${t.cached ? ` (${n(t.cached)} cached)` : ""}`;
  const output = `${n(t.output)} out${t.reasoning ? ` (${n(t.reasoning)} reasoning)` : ""}`;
  return `${input}, ${output}, ${n(t.total)} total`;
}

/** The breakdown behind the label. */
export function tokensTitle(t: TokenUsage): string {
  const calls = t.messages === 1 ? "1 message" : `${t.messages} messages`;
  return `Tokens used by this step (usage_metadata of ${calls}): ${tokensBreakdown(t)}`;
}

/** The models that answered ("gpt-4o", "gpt-4o +1" when several), "" when none is known. */
export function modelsLabel(models: string[]): string {
  if (models.length === 0) return "";
  return models.length === 1 ? models[0] : `${models[0]} +${models.length - 1}`;
}

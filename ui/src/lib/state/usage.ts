// Tokens and models beyond a DAG row: a thread's total (its head, the thread list) and each AI
// message's own (`usage_metadata`, `response_metadata.model_name`) in the chat.

import type { TokenUsage } from "../ipc/bindings";
import { tokenCount, tokensBreakdown } from "../graph/rowinfo";
import type { Json } from "./tree";

/** "12k tokens · 10k in · 2.3k out · 1.1k cached": the thread's total, compact. */
export function totalLabel(t: TokenUsage): string {
  const parts = [`${tokenCount(t.total)} tokens`, `${tokenCount(t.input)} in`, `${tokenCount(t.output)} out`];
  if (t.cached) parts.push(`${tokenCount(t.cached)} cached`);
  if (t.reasoning) parts.push(`${tokenCount(t.reasoning)} reasoning`);
  return parts.join(" · ");
}

/** The total's title: exact numbers, how many messages, which models. */
export function totalTitle(t: TokenUsage, models: string[]): string {
  const by = models.length ? ` (${models.join(", ")})` : "";
  const msgs = t.messages === 1 ? "1 model answer" : `${t.messages} model answers`;
  return `Tokens used by the thread's ${msgs}${by}, each counted once: ${tokensBreakdown(t)}`;
}

/** A message's usage as the chat shows it. */
export interface MessageUsage {
  input: number;
  output: number;
  total: number;
  cached: number;
  reasoning: number;
}

const isObj = (v: Json | undefined): v is { [k: string]: Json } => typeof v === "object" && v !== null && !Array.isArray(v);
const num = (v: Json | undefined): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);

/** The model that wrote a message (`response_metadata.model_name`, or `model`), if it says. */
export function messageModel(m: Json): string | null {
  if (!isObj(m) || !isObj(m.response_metadata)) return null;
  const meta = m.response_metadata;
  const name = meta.model_name ?? meta.model;
  return typeof name === "string" && name ? name : null;
}

/** A message's `usage_metadata`, if it has one. */
export function messageUsage(m: Json): MessageUsage | null {
  if (!isObj(m) || !isObj(m.usage_metadata)) return null;
  const u = m.usage_metadata;
  const input = num(u.input_tokens);
  const output = num(u.output_tokens);
  const detail = (k: string, d: string) => (isObj(u[k]) ? num((u[k] as { [k: string]: Json })[d]) : 0);
  return {
    input,
    output,
    total: num(u.total_tokens) || input + output,
    cached: detail("input_token_details", "cache_read"),
    reasoning: detail("output_token_details", "reasoning"),
  };
}

/** "1.2k tok": a message's usage on its bubble; the title breaks it down. */
export function usageLabel(u: MessageUsage): string {
  return `${tokenCount(u.total)} tok`;
}

export function usageTitle(u: MessageUsage): string {
  return `usage_metadata: ${tokensBreakdown({ ...u, messages: 1 })}`;
}

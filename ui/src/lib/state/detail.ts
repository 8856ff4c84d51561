// A checkpoint's channels joined with their values, in stored order: what the state panel and
// the edit dialog list. The API sends the values as a map (`values`, as Python's
// `get_state().values`) and what it knows of each channel beside it (`channels`).
import { plural } from "./format";
import type { ChannelInfo, CheckpointDetail, Rebuilt, Reducer, Value } from "../ipc/bindings";

export type ChannelValue = ChannelInfo & { value: Value };

export function channelValues(detail: Pick<CheckpointDetail, "channels" | "values">): ChannelValue[] {
  return detail.channels.map((c) => ({ ...c, value: detail.values[c.channel] ?? null }));
}

/** The reducers a DeltaChannel can be rebuilt with, by the names the API takes. */
export const REDUCERS = ["append", "add_messages", "merge", "last"] as const;
export type ReducerName = (typeof REDUCERS)[number];

/** The short name of a reducer (`list_append` → `append`). */
export function reducerName(r: Reducer): ReducerName {
  switch (r) {
    case "list_append":
      return "append";
    case "dict_merge":
      return "merge";
    case "last_value":
      return "last";
    default:
      return "add_messages";
  }
}

/** "rebuilt from step 4 + 3 writes" (or from empty), for a rebuilt DeltaChannel. */
export function rebuiltLabel(r: Rebuilt): string {
  if (r.error) return "cannot be rebuilt";
  const from =
    r.from_step !== null ? `step ${r.from_step}` : r.from_checkpoint ? "a stored value" : "empty";
  return `rebuilt from ${from} + ${plural(r.writes, "write")}`;
}

/** How the state panel switches DeltaChannels between the graph's view and the stored one,
 * and chooses a channel's reducer (null: inferred again). */
export interface DeltaControls {
  readonly raw: boolean;
  setRaw(raw: boolean): void;
  choose(channel: string, reducer: ReducerName | null): void;
}

/** The controls over a view that keeps `rawDelta` and can `chooseReducer`. */
export function deltaControls(view: {
  rawDelta: boolean;
  chooseReducer(channel: string, reducer: string | null): Promise<void>;
}): DeltaControls {
  return {
    get raw() {
      return view.rawDelta;
    },
    setRaw: (raw) => (view.rawDelta = raw),
    choose: (channel, reducer) => void view.chooseReducer(channel, reducer),
  };
}

/** The channels the step into this checkpoint changed: the checkpoint's own `updated_channels`
 * (LangGraph 1.x records them), with what a replay found (older checkpoints lack the field). */
export function changedChannels(detail: Pick<CheckpointDetail, "updated_channels">, fromReplay: ReadonlySet<string>): Set<string> {
  return new Set([...(detail.updated_channels ?? []), ...fromReplay]);
}

/**
 * The state panel's two groups: the channels `get_state` shows, and the internal ones folded
 * under "internal" (LangGraph's control channels and agent bookkeeping such as `jump_to`). A
 * backend older than issue 32 sends no `internal`: its control channels are the internal ones.
 */
export function splitChannels<T extends Pick<ChannelInfo, "control"> & Partial<Pick<ChannelInfo, "internal">>>(
  all: T[],
): { shown: T[]; internal: T[] } {
  const internal = (c: T) => c.internal ?? c.control;
  return { shown: all.filter((c) => !internal(c)), internal: all.filter(internal) };
}

/** A DeltaChannel the stored view has no value of at a checkpoint. */
export interface StoredAsDeltas {
  channel: string;
  /** The steps that wrote it since its last snapshot (each a delta); null when not said. */
  deltas: number | null;
}

/**
 * The DeltaChannels a checkpoint stores as deltas only: LangGraph counts, per channel, the steps
 * that wrote it since its last snapshot (`metadata.counters_since_delta_snapshot`: `[updates,
 * supersteps]`) and stores no value until the next snapshot. In the stored view such a channel
 * has no value here; the graph's view rebuilds it.
 */
export function storedAsDeltas(detail: Pick<CheckpointDetail, "metadata" | "values">): StoredAsDeltas[] {
  const meta = detail.metadata;
  const counters = meta && typeof meta === "object" && !Array.isArray(meta) ? meta.counters_since_delta_snapshot : null;
  if (!counters || typeof counters !== "object" || Array.isArray(counters)) return [];
  return Object.entries(counters)
    .filter(([channel]) => !(channel in detail.values))
    .map(([channel, c]) => {
      const n = Array.isArray(c) ? c[0] : c;
      return { channel, deltas: typeof n === "number" ? n : null };
    });
}

/** "messages is stored as 12 deltas (…)": what the stored view says of such a channel. */
export function deltasText(d: StoredAsDeltas): string {
  const n = d.deltas === null ? "deltas" : `${d.deltas} delta${d.deltas === 1 ? "" : "s"}`;
  return `${d.channel} is stored as ${n} since its last snapshot, not as a value: switch to the graph's view to see the value.`;
}

/** `set` with `key` added, or removed when it was there (a new set: Svelte sees the change). */
export function toggled<T>(set: Set<T>, key: T): Set<T> {
  const next = new Set(set);
  if (next.has(key)) next.delete(key);
  else next.add(key);
  return next;
}

// A checkpoint's channels joined with their values, in stored order: what the state panel and
// the edit dialog list. The API sends the values as a map (`values`, as Python's
// `get_state().values`) and what it knows of each channel beside it (`channels`).
import type { ChannelInfo, CheckpointDetail, Value } from "../ipc/bindings";

export type ChannelValue = ChannelInfo & { value: Value };

export function channelValues(detail: Pick<CheckpointDetail, "channels" | "values">): ChannelValue[] {
  return detail.channels.map((c) => ({ ...c, value: detail.values[c.channel] ?? null }));
}

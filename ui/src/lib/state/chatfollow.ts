// Which messages a step added, by id: the messages of a checkpoint's message-list channels that
// its parent checkpoint did not hold. The chat scrolls to them and highlights them.

import { isMessageList, type Json } from "./tree";

type Values = { [key: string]: Json };

/** The ids of the messages in a checkpoint's message-list channels. */
export function messageIds(values: Values | null | undefined): Set<string> {
  const out = new Set<string>();
  for (const v of Object.values(values ?? {})) {
    if (!isMessageList(v)) continue;
    for (const m of v) {
      const id = (m as { id?: Json }).id;
      if (typeof id === "string" && id) out.add(id);
    }
  }
  return out;
}

/** Whether the step into a checkpoint may have added messages: it holds a message list, and
 * its `updated_channels` (null on older checkpoints: unknown) name one. */
export function touchesMessages(updated: string[] | null, values: Values | null | undefined): boolean {
  const lists = Object.entries(values ?? {})
    .filter(([, v]) => isMessageList(v))
    .map(([k]) => k);
  if (!lists.length) return false;
  return updated === null || lists.some((c) => updated.includes(c));
}

/** The ids in `now` that `before` lacks, in `now`'s order. */
export function addedIds(before: ReadonlySet<string>, now: ReadonlySet<string>): Set<string> {
  return new Set([...now].filter((id) => !before.has(id)));
}

// The chat follows the step: when a checkpoint's detail arrives for a new selection (the
// scrubber, ← →, a click), the messages its step added — compared by id with its parent's — are
// highlighted for a moment and scrolled to (ChatView reads this through the context).
//
// The parent's message ids are usually known already: stepping forward, the parent is the
// checkpoint shown before (its ids are kept, for the last few checkpoints). Otherwise (stepping
// back, a jump) the parent's detail is read once — only when the step changed a message list.

import type { CheckpointDetail } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call } from "../ipc/api";
import { addedIds, messageIds, touchesMessages } from "./chatfollow";
import { PAGE_SIZE } from "./paging";

/** The context key ChatView reads the ChatFollow by. */
export const CHAT_FOLLOW = Symbol("chat-follow");

/** Reads a checkpoint's message ids (the parent's, when not kept). */
export type IdsLoad = (ns: string, id: string) => Promise<Set<string>>;

export function loadIds(db: () => string | null, threadId: string): IdsLoad {
  return async (ns, id) => {
    const d = await call(
      commands.checkpointDetail({
        db: db() ?? "",
        thread_id: threadId,
        checkpoint_ns: ns,
        checkpoint_id: id,
        reveal_secrets: false,
        full: false,
        raw: false,
        reducers: {},
        allow_locked: true,
        page: PAGE_SIZE, // a long list's first page only (bounded, as the state panel reads it)
      }),
    );
    return messageIds(d.values);
  };
}

/** How many checkpoints' ids are kept. */
const KEEP = 32;

export class ChatFollow {
  /** The ids of the messages the selected checkpoint's step added (empty: none, or faded). */
  added = $state.raw<ReadonlySet<string>>(new Set());
  /** Bumped each time `added` is set: the chat scrolls then. */
  seq = $state(0);

  private readonly kept = new Map<string, Set<string>>();
  private shown: string | null = null;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly load: IdsLoad,
    private readonly fadeMs = 2500,
  ) {}

  /** A checkpoint's detail arrived. The first one (the screen opens) and the same checkpoint
   * again (a poll, a reload): nothing to follow. */
  async arrived(d: CheckpointDetail) {
    const key = `${d.checkpoint_ns}\u0000${d.checkpoint_id}`;
    const ids = messageIds(d.values);
    this.keep(key, ids);
    if (key === this.shown) return;
    const first = this.shown === null;
    this.shown = key;
    if (first) return;
    this.fade();
    const parent = d.parent_checkpoint_id;
    if (!parent || !touchesMessages(d.updated_channels, d.values)) return;
    const pkey = `${d.checkpoint_ns}\u0000${parent}`;
    let before = this.kept.get(pkey);
    if (!before) {
      try {
        before = await this.load(d.checkpoint_ns, parent);
      } catch {
        return; // no highlight: the chat does without
      }
      this.keep(pkey, before);
    }
    if (this.shown !== key) return; // moved on meanwhile
    const added = addedIds(before, ids);
    if (!added.size) return;
    this.added = added;
    this.seq++;
    this.timer = setTimeout(() => this.fade(), this.fadeMs);
  }

  /** The highlight ends (also: the screen goes). */
  fade() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.added.size) this.added = new Set();
  }

  private keep(key: string, ids: Set<string>) {
    this.kept.delete(key);
    this.kept.set(key, ids);
    while (this.kept.size > KEEP) this.kept.delete(this.kept.keys().next().value as string);
  }
}

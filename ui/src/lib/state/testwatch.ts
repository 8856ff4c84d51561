// A watch-list change for the tests (state/watch*.test.ts).

import type { WatchChange } from "../ipc/bindings";

export const change = (id: string, over: Partial<WatchChange> = {}): WatchChange => ({
  checkpoint_id: id,
  parent_checkpoint_id: null,
  step: 1,
  source: "loop",
  ts: "2026-01-01T00:00:00+00:00",
  kind: "changed",
  branch_key: "b0",
  on_head_branch: true,
  value: { value: 1, truncated: false, size: 1, preview: "1" },
  writes: [],
  ...over,
});

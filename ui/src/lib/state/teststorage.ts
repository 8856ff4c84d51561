// A small storage report for the tests (the shape of `flashback storage --json`).
import type { CheckpointSize, StorageReport, Usage } from "../ipc/bindings";

export const usage = (docs: number, meta: number, blobs: number, writes: number): Usage => ({
  checkpoints: { count: 2, bytes: docs },
  metadata_bytes: meta,
  blobs: { count: blobs ? 1 : 0, bytes: blobs },
  writes: { count: writes ? 3 : 0, bytes: writes },
  total_bytes: docs + meta + blobs + writes,
});

export const size = (id: string, ns: string, doc: number, writes = 0): CheckpointSize => ({
  thread_id: "t1",
  checkpoint_ns: ns,
  checkpoint_id: id,
  parent_checkpoint_id: null,
  document_bytes: doc,
  metadata_bytes: 10,
  blobs: { count: 0, bytes: 0 },
  writes: { count: writes ? 1 : 0, bytes: writes },
  total_bytes: doc + 10 + writes,
});

export function report(over: Partial<StorageReport> = {}): StorageReport {
  return {
    thread_id: null,
    schema: "sqlite",
    layout: "langgraph-sqlite",
    top: 20,
    totals: usage(3000, 100, 0, 500),
    thread_count: 2,
    by_thread: [
      { key: "big", usage: usage(2000, 60, 0, 400) },
      { key: "small", usage: usage(1000, 40, 0, 100) },
    ],
    by_namespace: [{ key: "", usage: usage(3000, 100, 0, 500) }],
    by_channel: [
      { channel: "messages", inline: { count: 4, bytes: 2000 }, blobs: { count: 0, bytes: 0 }, writes: { count: 2, bytes: 300 } },
      { channel: "last", inline: { count: 4, bytes: 40 }, blobs: { count: 0, bytes: 0 }, writes: { count: 2, bytes: 20 } },
    ],
    by_node: [
      { node: "agent", writes: { count: 2, bytes: 300 } },
      { node: "", writes: { count: 1, bytes: 5 } },
    ],
    growth: [],
    quadratic: [{ thread_id: "big", checkpoint_ns: "", channel: "messages", stores: 5, stored_bytes: 5000, last_bytes: 1500 }],
    largest_checkpoints: [size("1f0-aaaa-8002-bbbbcccc", "", 1500)],
    largest_values: [
      { kind: "inline", thread_id: "big", checkpoint_ns: "", checkpoint_id: "c2", channel: "messages", version: null, task_path: null, bytes: 900 },
      { kind: "write", thread_id: "big", checkpoint_ns: "", checkpoint_id: "c1", channel: "last", version: null, task_path: "~__pregel_pull, agent", bytes: 20 },
      { kind: "blob", thread_id: "small", checkpoint_ns: "", checkpoint_id: null, channel: "x", version: "3", task_path: null, bytes: 10 },
    ],
    orphans: { writes: { count: 0, bytes: 0 }, blobs: { count: 0, bytes: 0 } },
    space: { sqlite: { page_size: 4096, page_count: 10, free_pages: 2, free_bytes: 8192 }, relations: [] },
    unmeasured: { count: 0, examples: [] },
    ...over,
  };
}

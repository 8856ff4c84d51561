// A small storage report for the tests (the shape of `flashback storage --json`).
import type { CheckpointSize, Duplicates, EmbeddedFiles, PayloadPlace, Sends, StorageReport, Usage } from "../ipc/bindings";

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
    duplicates: duplicates(),
    embedded_files: embeddedFiles(),
    sends: sends(),
    orphans: { writes: { count: 0, bytes: 0 }, blobs: { count: 0, bytes: 0 } },
    space: { sqlite: { page_size: 4096, page_count: 10, free_pages: 2, free_bytes: 8192 }, relations: [] },
    unmeasured: { count: 0, examples: [] },
    ...over,
  };
}

export const place = (over: Partial<PayloadPlace> = {}): PayloadPlace => ({
  kind: "inline",
  thread_id: "vision",
  checkpoint_ns: "",
  checkpoint_id: "1f1e-aaaa-8001-c0ffee",
  channel: "messages",
  path: "",
  ...over,
});

/** An image in every step's copy of the messages, a repeated whole value and a repeated
 * prompt; like the fixture `tests/fixtures/storage.sqlite`. */
export function duplicates(over: Partial<Duplicates> = {}): Duplicates {
  return {
    min_bytes: 1024,
    values: { payloads: 5, copies: 13, stored_bytes: 500278, saved_bytes: 303461 },
    strings: { payloads: 8, copies: 54, stored_bytes: 882304, saved_bytes: 735848 },
    largest: [
      {
        payload: "string",
        bytes: 32974,
        copies: 17,
        saved_bytes: 527584,
        preview: "data:image/png;base64,iVBORw0KGgo…",
        place: place({ channel: "__start__", path: "messages[1].content[1].image_url.url" }),
      },
      { payload: "value", bytes: 35371, copies: 4, saved_bytes: 106113, preview: "", place: place({ checkpoint_id: "c2" }) },
      { payload: "bytes", bytes: 2048, copies: 2, saved_bytes: 2048, preview: "89504e47", place: place({ kind: "write", checkpoint_ns: "sub:1", checkpoint_id: "c3", channel: "out", path: "[0]" }) },
      { payload: "string", bytes: 1500, copies: 3, saved_bytes: 3000, preview: "orphan", place: place({ kind: "blob", checkpoint_id: null }) },
    ],
    approximate: false,
    ...over,
  };
}

export function embeddedFiles(over: Partial<EmbeddedFiles> = {}): EmbeddedFiles {
  return {
    min_bytes: 1024,
    total: { count: 27, bytes: 641198 },
    by_type: [
      { media_type: "image/png", count: 17, bytes: 560558 },
      { media_type: "application/pdf", count: 10, bytes: 80640 },
      { media_type: "audio/wav", count: 1, bytes: 2000 },
    ],
    largest: [
      { media_type: "image/png", bytes: 32974, decoded_bytes: 24713, data_url: true, copies: 17, place: place({ channel: "__start__", path: "messages[1].content[1].image_url.url" }) },
      { media_type: "application/pdf", bytes: 8064, decoded_bytes: 6046, data_url: false, copies: 10, place: place({ checkpoint_id: "c4", path: "messages[0].content[1].data" }) },
    ],
    ...over,
  };
}

export function sends(over: Partial<Sends> = {}): Sends {
  const write = { kind: "write" as const, thread_id: "fanout", checkpoint_ns: "", checkpoint_id: "c5", channel: "__pregel_tasks", version: null, task_path: "~__pregel_pull, plan", bytes: 20727 };
  return {
    writes: { count: 5, bytes: 103635 },
    stored: { count: 3, bytes: 103638 },
    by_node: [
      { node: "work", writes: { count: 5, bytes: 103635 }, stored: { count: 5, bytes: 103635 } },
      { node: "?", writes: { count: 0, bytes: 0 }, stored: { count: 1, bytes: 3 } },
    ],
    largest: [write, { ...write, checkpoint_id: null, bytes: 100 }],
    ...over,
  };
}

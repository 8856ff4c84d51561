import { describe, expect, it } from "vitest";
import {
  approximateText,
  encodingText,
  fileRows,
  filesTotalText,
  fileTypeBars,
  noFiles,
  noFilesText,
  noRepeats,
  noRepeatsText,
  noSends,
  payloadKindText,
  placeRoute,
  placeText,
  repeatLines,
  repeatRows,
  sendNodeRows,
  sendRows,
  sendsLines,
  tallyText,
  thresholdText,
} from "./storagepayloads";
import { duplicates, embeddedFiles, place, sends } from "./teststorage";

describe("repeated payloads", () => {
  it("lists the totals of whole values and of strings: payloads, copies, stored, saved", () => {
    expect(repeatLines(duplicates())).toEqual([
      { label: "Whole values", payloads: "5", copies: "13", stored: "500.3 kB", saved: "303.5 kB" },
      { label: "Strings and bytes inside values", payloads: "8", copies: "54", stored: "882.3 kB", saved: "735.8 kB" },
    ]);
  });

  it("shapes the largest as rows: kind, size, copies, saved, preview, where, checkpoint", () => {
    const rows = repeatRows(duplicates());
    expect(rows.map((r) => [r.kind, r.size, r.copies, r.saved])).toEqual([
      ["string", "33.0 kB", "17", "527.6 kB"],
      ["whole value", "35.4 kB", "4", "106.1 kB"],
      ["bytes", "2.0 kB", "2", "2.0 kB"],
      ["string", "1.5 kB", "3", "3.0 kB"],
    ]);
    expect(rows[0].preview).toBe("data:image/png;base64,iVBORw0KGgo…");
    expect(rows[1].preview).toBe("(the whole value, byte for byte)");
    expect(rows[0].where).toBe("vision · __start__ · messages[1].content[1].image_url.url");
    expect(rows[1].where).toBe("vision · messages");
    expect(rows[2].where).toBe("vision · sub:1 · out (write) · [0]");
  });

  it("opens the checkpoint holding a copy: the state tab, a write's writes tab, nothing when orphaned", () => {
    const rows = repeatRows(duplicates());
    expect(rows[0].open).toEqual({ screen: "thread", thread: "vision", checkpoint: { ns: "", id: "1f1e-aaaa-8001-c0ffee" }, tab: "state" });
    expect(rows[2].open).toEqual({ screen: "thread", thread: "vision", checkpoint: { ns: "sub:1", id: "c3" }, tab: "writes" });
    expect(rows[3].open).toBeNull();
    expect(rows[3].checkpoint).toBeNull();
  });

  it("leaves the thread out on a thread's tab", () => {
    expect(repeatRows(duplicates(), false)[0].where).toBe("__start__ · messages[1].content[1].image_url.url");
    expect(placeText(place({ path: "" }), false)).toBe("messages");
  });

  it("says when nothing is repeated, with the size compared", () => {
    const none = duplicates({ values: { payloads: 0, copies: 0, stored_bytes: 0, saved_bytes: 0 }, strings: { payloads: 0, copies: 0, stored_bytes: 0, saved_bytes: 0 }, largest: [] });
    expect(noRepeats(none)).toBe(true);
    expect(noRepeats(duplicates())).toBe(false);
    expect(noRepeatsText(none)).toBe("No repeated payloads of 1 kB or more.");
    expect(noRepeatsText({ ...none, min_bytes: 512 })).toBe("No repeated payloads of 512 B or more.");
  });

  it("notes a lower bound only when the comparison was approximate", () => {
    expect(approximateText(duplicates())).toBeNull();
    expect(approximateText(duplicates({ approximate: true }))).toMatch(/^Lower bound: /);
  });

  it("names the kinds of payload", () => {
    expect(["value", "string", "bytes"].map((k) => payloadKindText(k as "value"))).toEqual(["whole value", "string", "bytes"]);
  });
});

describe("files in values", () => {
  it("totals the files and their text", () => {
    expect(filesTotalText(embeddedFiles())).toBe("27 files stored (every copy counts) · 641.2 kB as text");
    expect(filesTotalText(embeddedFiles({ total: { count: 1, bytes: 2048 } }))).toBe("1 file stored (every copy counts) · 2.0 kB as text");
  });

  it("charts bytes by media type; a bar opens the largest file of its type", () => {
    const b = fileTypeBars(embeddedFiles());
    expect(b.labels).toEqual(["image/png (17)", "application/pdf (10)", "audio/wav (1)"]);
    expect(b.series).toEqual([{ label: "Bytes as text", kind: "file", values: [560558, 80640, 2000] }]);
    expect(b.totals).toEqual([560558, 80640, 2000]);
    expect(b.opens[1]).toEqual({ screen: "thread", thread: "vision", checkpoint: { ns: "", id: "c4" }, tab: "state" });
    expect(b.opens[2]).toBeNull();
  });

  it("shapes the largest files as rows: type, size, decoded, copies, all copies, data URL or base64", () => {
    const rows = fileRows(embeddedFiles());
    expect(rows.map((f) => [f.type, f.size, f.decoded, f.copies, f.takes, f.encoding])).toEqual([
      ["image/png", "33.0 kB", "24.7 kB", "17", "560.6 kB", "data URL"],
      ["application/pdf", "8.1 kB", "6.0 kB", "10", "80.6 kB", "base64"],
    ]);
    expect(rows[0].where).toBe("vision · __start__ · messages[1].content[1].image_url.url");
    expect(rows[0].open).toEqual(placeRoute(embeddedFiles().largest[0].place));
    expect(encodingText(embeddedFiles().largest[1])).toBe("base64");
  });

  it("says when there are none", () => {
    const none = embeddedFiles({ total: { count: 0, bytes: 0 }, by_type: [], largest: [] });
    expect(noFiles(none)).toBe(true);
    expect(noFiles(embeddedFiles())).toBe(false);
    expect(noFilesText({ ...none, min_bytes: 1536 })).toBe("No files stored as base64 text of 1.5 kB or more.");
  });
});

describe("Send payloads", () => {
  it("lists the writes and stored tallies", () => {
    expect(sendsLines(sends())).toEqual([
      { label: "Pending writes to __pregel_tasks", value: "5 · 103.6 kB" },
      { label: "Stored __pregel_tasks values", value: "3 · 103.6 kB" },
    ]);
    expect(tallyText({ count: 12345, bytes: 10 })).toBe("12,345 · 10 B");
  });

  it("lists the target nodes, naming an unreadable packet", () => {
    expect(sendNodeRows(sends())).toEqual([
      { node: "work", writes: "5 · 103.6 kB", stored: "5 · 103.6 kB" },
      { node: "? (not a readable Send)", writes: "0 · 0 B", stored: "1 · 3 B" },
    ]);
  });

  it("shapes the largest Send writes; a row opens its checkpoint's writes", () => {
    const rows = sendRows(sends());
    expect(rows[0]).toMatchObject({ by: "plan", size: "20.7 kB", where: "fanout · __pregel_tasks (write)", checkpoint: "c5" });
    expect(rows[0].open).toEqual({ screen: "thread", thread: "fanout", checkpoint: { ns: "", id: "c5" }, tab: "writes" });
    expect(rows[1].open).toBeNull();
    expect(sendRows(sends(), false)[0].where).toBe("__pregel_tasks (write)");
  });

  it("says when there are none", () => {
    expect(noSends(sends())).toBe(false);
    expect(noSends(sends({ writes: { count: 0, bytes: 0 }, stored: { count: 0, bytes: 0 }, by_node: [], largest: [] }))).toBe(true);
  });
});

describe("sizes in words", () => {
  it("drops a whole unit's decimal", () => {
    expect([thresholdText(1024), thresholdText(1536), thresholdText(100), thresholdText(1048576)]).toEqual(["1 kB", "1.5 kB", "100 B", "1 MB"]);
  });
});

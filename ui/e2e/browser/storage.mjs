// The storage report in the app (issue 15 item 2): the Storage screen measures the whole
// database (the backend's job, one read snapshot) and charts it; a thread's bar opens the
// thread; the thread's Storage tab charts each checkpoint's size, and a bar opens that
// checkpoint. On the storage fixture (tests/fixtures/storage.sqlite): the repeated payloads,
// files in values and Send payloads, checked against `flashback storage --json`.

import { spawnSync } from "node:child_process";
import { expect, tid } from "./harness.mjs";

/** Click bar `i` of the chart `testid` (its canvas says where its plot area is). */
async function clickBar(page, testid, i, { horizontal }) {
  const canvas = page.locator(tid(`${testid}-canvas`));
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.area, tid(`${testid}-canvas`));
  const [left, top, right, bottom] = (await canvas.getAttribute("data-area")).split(",").map(Number);
  const n = Number(await canvas.getAttribute("data-bars"));
  expect(i >= 0 && i < n, `bar ${i} of ${n}`);
  const position = horizontal
    ? { x: (left + right) / 2, y: top + ((i + 0.5) * (bottom - top)) / n }
    : { x: left + ((i + 0.5) * (right - left)) / n, y: (top + bottom) / 2 };
  await canvas.click({ position });
}

/** The app's short form of a checkpoint id (ui/src/lib/graph/lanes.ts `shortId`). */
function shortId(id) {
  const parts = id.split("-");
  return parts.length === 5 ? `${parts[1]}-${parts[2]}-${parts[4].slice(0, 4)}` : id.slice(0, 14);
}

/** Each chart's legend as kind → colour (the swatch's computed colour), and the colours its
 * canvas drew (`data-colors`), which must be the same. */
async function legendColours(page, testid) {
  await page.waitForFunction((sel) => document.querySelector(sel)?.dataset.colors, tid(`${testid}-canvas`));
  const legend = await page.locator(`${tid(`${testid}-legend`)} ${tid("legend-item")}`).evaluateAll((items) =>
    items.map((li) => ({ kind: li.dataset.kind, label: li.textContent.trim(), color: getComputedStyle(li.querySelector('[data-testid="kind-swatch"]')).backgroundColor })),
  );
  const drawn = JSON.parse(await page.locator(tid(`${testid}-canvas`)).getAttribute("data-colors"));
  const rgb = (hex) => `rgb(${[1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16)).join(", ")})`;
  expect(drawn.length === legend.length, `${testid}: a legend entry per part (${legend.length} of ${drawn.length})`);
  drawn.forEach((d, k) => expect(legend[k].kind === d.kind && legend[k].color === rgb(d.color), `${testid}: ${d.label} drawn ${d.color}, legend ${legend[k].color}`));
  return legend;
}

/** The same data kind has the same colour in every chart, and different kinds differ. */
function sameKindSameColour(legends) {
  const byKind = new Map();
  for (const [chart, legend] of Object.entries(legends))
    for (const { kind, color } of legend) {
      const seen = byKind.get(kind);
      expect(!seen || seen.color === color, `${kind} is ${color} in ${chart} but ${seen?.color} in ${seen?.chart}`);
      byKind.set(kind, { color, chart });
    }
  const colours = [...byKind.values()].map((v) => v.color);
  expect(new Set(colours).size === colours.length, `one colour per kind: ${JSON.stringify([...byKind])}`);
  return byKind;
}

export const storage = {
  name: "storage: the database's report with charts, one colour per data kind; a thread's bar opens it; its Storage tab's bars follow the DAG's rows and select checkpoints",
  run: async ({ page, shot, db, bin }) => {
    if (await page.locator(tid("crumb-db")).count()) await page.locator(tid("crumb-db")).click();
    await page.locator(tid("storage-open")).click();
    const totals = page.locator(tid("storage-totals"));
    await totals.waitFor({ timeout: 20_000 });
    const text = await totals.textContent();
    // The fixture: 12 threads, 381 checkpoints, 601,559 bytes in all (flashback storage --json),
    // in the same units the CLI prints (decimal: 1 kB = 1000 B).
    expect(text.includes("601.6 kB") && text.includes("12") && text.includes("381"), `the totals: ${text}`);
    const human = spawnSync(bin, ["storage", db], { encoding: "utf8", timeout: 60_000 }).stdout ?? "";
    expect(human.includes("601.6 kB"), `the CLI says the same size: ${human.slice(0, 300)}`);
    const hash = await page.evaluate(() => location.hash);
    expect(hash.startsWith("#/storage?db="), `the URL: ${hash}`);
    for (const chart of ["storage-by-thread", "storage-by-channel", "storage-by-node"]) {
      await page.waitForFunction((sel) => Number(document.querySelector(sel)?.dataset.bars) > 0, tid(`${chart}-canvas`));
    }
    const flags = await page.locator(tid("storage-quadratic")).textContent();
    expect(flags.includes("messages") && flags.includes("chat-tools"), `the quadratic flag: ${flags}`);
    expect((await page.locator(tid("storage-checkpoint-row")).count()) > 0, "the largest checkpoints are listed");
    await shot("storage.png");

    // A colour means one kind of bytes in every chart (issue 33: orange was Metadata in one
    // chart and Writes in the next).
    const legends = {};
    for (const chart of ["storage-by-thread", "storage-by-channel", "storage-by-node"]) legends[chart] = await legendColours(page, chart);
    expect(legends["storage-by-thread"].some((l) => l.kind === "metadata") && legends["storage-by-channel"].some((l) => l.kind === "write"), "metadata and writes are both charted");
    // The totals and the tables' columns wear the same swatches.
    const swatches = async (sel) =>
      page.locator(`${sel} ${tid("kind-swatch")}`).evaluateAll((xs) => xs.map((x) => ({ kind: x.dataset.kind, color: getComputedStyle(x).backgroundColor })));
    legends["storage-totals"] = await swatches(tid("storage-totals"));
    legends["storage-largest-checkpoints"] = await swatches(tid("storage-largest-checkpoints"));
    expect(legends["storage-totals"].length === 4, `a swatch per kind in the totals (${legends["storage-totals"].length})`);
    const kinds = sameKindSameColour(legends);
    expect(kinds.size === 4, `kinds shown: ${[...kinds.keys()]}`);

    // The bars are ranked as the report lists the threads; chat-tools' bar opens chat-tools.
    const labels = await page.locator(`${tid("storage-by-thread")} li button`).allTextContents();
    const i = labels.findIndex((l) => l.startsWith("chat-tools:"));
    await clickBar(page, "storage-by-thread", i, { horizontal: true });
    await page.waitForSelector(tid("dag-row"));
    expect((await page.locator(tid("crumb-thread")).textContent()).trim() === "chat-tools", "the bar opened chat-tools");

    // Its Storage tab: one bar per checkpoint, in the DAG's row order and labelled as the rows.
    await page.locator(tid("tab-storage")).click();
    const report = page.locator(`${tid("storage-report")}[data-scope="thread"]`);
    await report.waitFor({ timeout: 20_000 });
    await page.waitForFunction((sel) => Number(document.querySelector(sel)?.dataset.bars) > 0, tid("storage-growth-canvas"));
    const n = Number(await page.locator(tid("storage-growth-canvas")).getAttribute("data-bars"));
    expect(n === 10, `one bar per root checkpoint of chat-tools (${n})`);
    const total = await page.locator(tid("storage-thread-total")).textContent();
    expect(total.includes("22.1 kB") && total.includes("10 checkpoints"), `the thread's total: ${total}`);
    expect((await page.locator(tid("storage-quadratic")).textContent()).includes("stored whole 9 times"), "the thread's quadratic flag");
    expect((await page.evaluate(() => location.hash)).includes("tab=storage"), "the URL keeps the tab");
    await shot("storage-thread.png");

    const dagRows = await page.locator(tid("dag-row")).evaluateAll((rows) => rows.filter((r) => r.dataset.ns === "").map((r) => ({ id: r.dataset.id, step: r.querySelector(".step")?.textContent.trim() })));
    const rowIds = dagRows.map((r) => r.id);
    const bars = page.locator(tid("storage-growth-bar"));
    const barLabels = await bars.allTextContents();
    expect(rowIds.length === n && barLabels.every((l, i) => l.includes(shortId(rowIds[i]))), `the bars in the DAG's order: ${barLabels.join(" | ")} vs ${rowIds.map(shortId).join(" ")}`);
    expect(barLabels.every((l, i) => l.startsWith(`${dagRows[i].step} `)), `each bar starts with its row's step: ${barLabels[0]}`);
    const barTitle = await bars.first().getAttribute("title");
    expect(/main branch/.test(barTitle) && barTitle.includes(shortId(rowIds[0])) && /step \d/.test(barTitle), `the bar's tooltip names node, step and branch: ${barTitle}`);
    const growthLegend = await legendColours(page, "storage-growth");
    sameKindSameColour({ ...legends, "storage-growth": growthLegend });

    const last = await report.getAttribute("data-last-checkpoint");
    expect(last === rowIds[0], "the newest checkpoint is the top row and the first bar");
    // Select another checkpoint first, so that the click visibly moves the selection.
    await page.locator(tid("dag-row")).last().click();
    await page.locator(tid("tab-storage")).click();
    await page.locator(tid("storage-growth-canvas")).waitFor();
    await clickBar(page, "storage-growth", 0, { horizontal: true });
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${last}"]`).waitFor();
    expect((await page.locator(tid("tab-storage")).getAttribute("aria-selected")) === "true", "the bar selects its checkpoint and keeps the Storage tab");
    expect((await page.locator(`${tid("dag-row")}[data-id="${last}"]`).getAttribute("aria-selected")) === "true", "the DAG selects the bar's row");
    await clickBar(page, "storage-growth", 3, { horizontal: true });
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${rowIds[3]}"]`).waitFor();
    await page.locator(tid("crumb-db")).click();
    await page.locator(tid("thread-row")).first().waitFor();
  },
};

/** The app's byte formatter (ui/src/lib/state/format.ts `formatBytes`: decimal units, as the
 * CLI's), for the expectations. */
function formatBytes(n) {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n / 1000;
  let i = 0;
  while (Math.round(v * 10) >= 10_000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

const count = (x) => x.toLocaleString("en-US");

/** `flashback storage DB [THREAD] --json`: what the screen must show. */
function cliReport(bin, db, thread) {
  const args = ["storage", db, ...(thread ? [thread] : []), "--json"];
  const run = spawnSync(bin, args, { encoding: "utf8", timeout: 60_000 });
  expect(run.status === 0, `flashback ${args.join(" ")}: ${run.stderr}`);
  return JSON.parse(run.stdout);
}

export const payloads = {
  name: "storage: repeated payloads, files in values and Send payloads show the CLI's figures; the image's row opens its checkpoint",
  run: async ({ page, shot, openDb, db, storageDb, bin }) => {
    const r = cliReport(bin, storageDb);
    const { duplicates: dups, embedded_files: files, sends } = r;
    // The fixture as tests/fixtures/README.md describes it (the expectations below follow the CLI).
    const png = files.largest.find((f) => f.media_type === "image/png");
    expect(png && png.bytes === 32974 && png.decoded_bytes === 24713 && png.data_url && png.place.thread_id === "vision", `the fixture's PNG: ${JSON.stringify(png)}`);
    const pdf = files.largest.find((f) => f.media_type === "application/pdf");
    expect(pdf && !pdf.data_url, `the fixture's PDF: ${JSON.stringify(pdf)}`);
    const work = sends.by_node.find((t) => t.node === "work");
    expect(sends.writes.count === 5 && work?.writes.count === 5 && sends.largest.every((v) => v.bytes === 20727), `the fixture's Sends: ${JSON.stringify(sends.writes)}`);

    await openDb(storageDb);
    await page.locator(tid("storage-open")).click();
    const repeats = page.locator(tid("storage-repeats"));
    await repeats.waitFor({ timeout: 30_000 });

    // Repeated payloads: the two totals lines, then one row per listed payload.
    const totals = await page.locator(tid("storage-repeat-total")).allTextContents();
    expect(totals.length === 2, `two totals lines (${totals.length})`);
    for (const [line, t] of [
      [totals[0], dups.values],
      [totals[1], dups.strings],
    ]) {
      for (const want of [count(t.payloads), count(t.copies), formatBytes(t.stored_bytes), formatBytes(t.saved_bytes)])
        expect(line.includes(want), `the totals line "${line}" has ${want}`);
    }
    const rows = page.locator(tid("storage-repeat-row"));
    expect((await rows.count()) === dups.largest.length, `one row per repeated payload (${await rows.count()} of ${dups.largest.length})`);
    const first = await rows.first().textContent();
    const top = dups.largest[0];
    for (const want of [formatBytes(top.bytes), count(top.copies), formatBytes(top.saved_bytes), top.place.thread_id, top.place.path, top.preview.slice(0, 30)])
      expect(first.includes(want), `the first repeated payload "${first}" has ${want}`);
    expect((await page.locator(tid("storage-repeats-approximate")).count()) === (dups.approximate ? 1 : 0), "the lower-bound note only when approximate");

    // Files in values: the total, a bar per media type, a row per listed file.
    const filesTotal = await page.locator(tid("storage-files-total")).textContent();
    expect(filesTotal.includes(`${count(files.total.count)} files`) && filesTotal.includes(formatBytes(files.total.bytes)), `the files' total: ${filesTotal}`);
    await page.waitForFunction(([sel, n]) => Number(document.querySelector(sel)?.dataset.bars) === n, [tid("storage-by-media-type-canvas"), files.by_type.length]);
    const typeLabels = await page.locator(`${tid("storage-by-media-type")} li button`).allTextContents();
    files.by_type.forEach((t, i) => expect(typeLabels[i]?.startsWith(t.media_type) && typeLabels[i].includes(formatBytes(t.bytes)), `bar ${i}: ${typeLabels[i]} (${t.media_type})`));
    expect((await page.locator(tid("storage-file-row")).count()) === files.largest.length, "one row per listed file");
    const pngRow = page.locator(`${tid("storage-file-row")}[data-type="image/png"]`);
    const pngText = await pngRow.textContent();
    for (const want of [formatBytes(png.bytes), formatBytes(png.decoded_bytes), count(png.copies), formatBytes(png.bytes * png.copies), "data URL", png.place.path])
      expect(pngText.includes(want), `the PNG row "${pngText}" has ${want}`);
    expect((await page.locator(`${tid("storage-file-row")}[data-type="application/pdf"]`).textContent()).includes("base64"), "the PDF is bare base64");

    // Send payloads: the tallies, the target nodes, the largest Send writes.
    const sendTotals = await page.locator(tid("storage-send-totals")).textContent();
    for (const t of [sends.writes, sends.stored]) expect(sendTotals.includes(`${count(t.count)} · ${formatBytes(t.bytes)}`), `the Send tallies "${sendTotals}"`);
    const nodeRow = (await page.locator(tid("storage-send-node")).first().textContent()).trim();
    expect(nodeRow.startsWith("work") && nodeRow.includes(`${count(work.writes.count)} · ${formatBytes(work.writes.bytes)}`), `the node row: ${nodeRow}`);
    const sendRows = await page.locator(tid("storage-send-row")).allTextContents();
    expect(sendRows.length === sends.largest.length && sendRows.every((s) => s.includes(formatBytes(20727)) && s.includes("fanout-large")), `the Send rows: ${sendRows.join(" | ")}`);

    await page.evaluate(() => document.querySelector('[data-testid="storage-repeats"]')?.scrollIntoView({ block: "start" }));
    await shot("storage-payloads.png");

    // The image's row opens thread vision at the checkpoint holding it, on its state.
    await pngRow.locator(tid("storage-open-file")).click();
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${png.place.checkpoint_id}"]`).waitFor();
    expect((await page.locator(tid("crumb-thread")).textContent()).trim() === "vision", "the row opened vision");
    expect((await page.locator(tid("tab-state")).getAttribute("aria-selected")) === "true", "the checkpoint opens on its state");

    // Its Storage tab: the thread's own figures, and no Sends in vision.
    const v = cliReport(bin, storageDb, "vision");
    await page.locator(tid("tab-storage")).click();
    const tab = page.locator(`${tid("storage-report")}[data-scope="thread"]`);
    await tab.waitFor({ timeout: 20_000 });
    const threadTotals = await tab.locator(tid("storage-repeat-total")).allTextContents();
    expect(threadTotals[1]?.includes(formatBytes(v.duplicates.strings.saved_bytes)), `the thread's repeated strings: ${threadTotals[1]}`);
    expect((await tab.locator(tid("storage-file-row")).count()) === v.embedded_files.largest.length, "the thread's files");
    expect((await tab.locator(tid("storage-sends-empty")).count()) === 1, "vision sends nothing");

    // A Send write's row opens fanout-large's checkpoint on its writes.
    await page.locator(tid("crumb-db")).click();
    await page.locator(tid("storage-open")).click();
    const send = sends.largest[0];
    await page.locator(tid("storage-open-send")).first().click();
    await page.locator(`${tid("detail-pane")}[data-checkpoint="${send.checkpoint_id}"]`).waitFor();
    expect((await page.locator(tid("crumb-thread")).textContent()).trim() === "fanout-large", "the Send row opened fanout-large");
    expect((await page.locator(tid("tab-writes")).getAttribute("aria-selected")) === "true", "a write opens on the writes tab");

    await openDb(db);
  },
};

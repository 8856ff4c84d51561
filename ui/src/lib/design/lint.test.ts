import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { customProperties, lintStyles } from "./lint";

/** A path relative to this folder (src/lib/design) as a path from src/. */
function fromSrc(path: string): string {
  const parts = ["lib", "design"];
  for (const p of path.split("/")) {
    if (p === "..") parts.pop();
    else if (p !== ".") parts.push(p);
  }
  return parts.join("/");
}

// Every stylesheet and component under src/, by its path from src/ (the glob only lists them;
// each is read as text).
const FILES: Record<string, string> = Object.fromEntries(
  Object.keys(import.meta.glob(["../../**/*.svelte", "../../**/*.css"])).map((path) => [fromSrc(path), readFileSync(join(__dirname, path), "utf8")]),
);

describe("the lint itself", () => {
  it("finds raw colours, font sizes and on-grid spacing with their lines", () => {
    const svelte = `<div style="color: #fff"></div>\n<style>\n  .a {\n    color: white;\n    background: rgba(0, 0, 0, 0.5);\n    font-size: 12px;\n    padding: 4px 10px;\n    border: 1px solid var(--border);\n    white-space: nowrap;\n  }\n  #id:hover {\n    gap: var(--space-2);\n  }\n</style>\n`;
    const found = lintStyles("X.svelte", svelte).map((p) => `${p.line} ${p.message.split(":")[0]}`);
    expect(found).toEqual([
      "4 named colour white in color",
      "5 raw colour rgba(…) in background",
      "6 raw font size 12px",
      "7 spacing 4px in padding is a grid step",
      "1 raw colour #fff in color",
    ]);
  });
  it("passes tokens, 1px borders, off-grid spacing and selectors", () => {
    const css = `.white-space, #a { color: var(--text); padding: 5px 10px; margin: 0 1px; font-size: var(--text-sm); border: 1px solid currentColor; }`;
    expect(lintStyles("a.css", css)).toEqual([]);
  });
});

describe("every style outside tokens.css names tokens", () => {
  const all = Object.keys(FILES).filter((f) => !f.endsWith("tokens.css"));
  it("scans the components", () => {
    expect(all.length).toBeGreaterThan(40);
    expect(all).toContain("app.css");
    expect(all).toContain("lib/components/StorageChart.svelte");
  });
  it("has no raw colour, raw font size or raw grid spacing", () => {
    const problems = all.flatMap((f) => lintStyles(f, FILES[f]));
    expect(problems.map((p) => `src/${p.file}:${p.line}: ${p.message}`)).toEqual([]);
  });
  it("reads only tokens that exist", () => {
    const tokens = customProperties(FILES["tokens.css"]).set;
    const local = new Set<string>();
    const used: { file: string; name: string }[] = [];
    for (const f of all) {
      const p = customProperties(FILES[f]);
      p.set.forEach((n) => local.add(n));
      p.used.forEach((name) => used.push({ file: f, name }));
    }
    // `var(--lane-{n})` in markup: some token starts with the prefix.
    const known = (n: string) => tokens.has(n) || local.has(n) || (n.endsWith("-") && [...tokens].some((t) => t.startsWith(n)));
    const unknown = used.filter((u) => !known(u.name)).map((u) => `${u.file}: ${u.name}`);
    expect(unknown).toEqual([]);
  });
});

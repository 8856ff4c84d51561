import { describe, expect, it } from "vitest";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { customProperties, lintStyles } from "./lint";

const SRC = join(__dirname, "..", "..");

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(svelte|css)$/.test(name) ? [p] : [];
  });
}

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
  const all = files(SRC).filter((f) => !f.endsWith("tokens.css"));
  it("scans the components", () => {
    expect(all.length).toBeGreaterThan(40);
  });
  it("has no raw colour, raw font size or raw grid spacing", () => {
    const problems = all.flatMap((f) => lintStyles(relative(SRC, f), readFileSync(f, "utf8")));
    expect(problems.map((p) => `src/${p.file}:${p.line}: ${p.message}`)).toEqual([]);
  });
  it("reads only tokens that exist", () => {
    const tokens = customProperties(readFileSync(join(SRC, "tokens.css"), "utf8")).set;
    const local = new Set<string>();
    const used: { file: string; name: string }[] = [];
    for (const f of all) {
      const p = customProperties(readFileSync(f, "utf8"));
      p.set.forEach((n) => local.add(n));
      p.used.forEach((name) => used.push({ file: relative(SRC, f), name }));
    }
    // `var(--lane-{n})` in markup: some token starts with the prefix.
    const known = (n: string) => tokens.has(n) || local.has(n) || (n.endsWith("-") && [...tokens].some((t) => t.startsWith(n)));
    const unknown = used.filter((u) => !known(u.name)).map((u) => `${u.file}: ${u.name}`);
    expect(unknown).toEqual([]);
  });
});

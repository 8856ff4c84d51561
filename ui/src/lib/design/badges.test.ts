// Status colours have one meaning each (ui/DESIGN.md): the badge of a status reads its own token.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";

const APP = readFileSync(join(__dirname, "..", "..", "app.css"), "utf8");


/** The declarations of the rule whose selector list names `selector`. */
function rule(selector: string): Record<string, string> {
  for (const m of APP.matchAll(/([^{}]+)\{([^{}]*)\}/g)) {
    const selectors = m[1].replace(/\/\*[\s\S]*?\*\//g, "").split(",").map((x: string) => x.trim());
    if (!selectors.includes(selector)) continue;
    return Object.fromEntries([...m[2].matchAll(/([\w-]+)\s*:\s*([^;]+);/g)].map((d) => [d[1], d[2].trim()]));
  }
  throw new Error(`no rule for ${selector}`);
}

describe("status badges", () => {
  it.each([
    ["finished", "--ok"],
    ["interrupted", "--warn"],
    ["failed", "--bad"],
    ["recovered", "--recovered"],
    ["resumed", "--recovered"],
    ["pending", "--accent"],
  ])(".badge.%s reads %s on its soft colour", (cls, token) => {
    const r = rule(`.badge.${cls}`);
    expect(r.color).toBe(`var(${token})`);
    expect(r.background).toBe(`var(${token}-soft)`);
  });
});

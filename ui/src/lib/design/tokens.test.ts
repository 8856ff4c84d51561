// The design system's colour rules (ui/DESIGN.md), checked on tokens.css in both themes.
import { describe, expect, it } from "vitest";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { contrast, deltaE2000, parseHex, type Rgb } from "./color";
import { parseTokens, type Theme } from "./tokens";

const THEMES = parseTokens(readFileSync(join(__dirname, "..", "..", "tokens.css"), "utf8"));
const STATUS = ["--ok", "--warn", "--bad", "--recovered"];
const KINDS = ["--kind-document", "--kind-metadata", "--kind-blob", "--kind-write", "--kind-file"];
const LANES = Array.from({ length: 8 }, (_, i) => `--lane-${i}`);
/** Text (WCAG AA, normal size: the app's text is 11–15 px). */
const TEXT = 4.5;
/** Graphics and large marks: bars, lines, dots, borders that carry meaning (WCAG 1.4.11). */
const GRAPHIC = 3;
/** Any two lanes, any two data kinds: plainly different colours even as 2 px lines. */
const APART = 20;
/** A lane or a kind is never a status colour. */
const NOT_STATUS = 10;
/** …and no lane is near red, which always means failed. */
const NOT_RED = 15;

function colour(theme: Theme, name: string): Rgb {
  const v = THEMES[theme][name];
  const rgb = v ? parseHex(v) : null;
  if (!rgb) throw new Error(`${theme}: ${name} is not a hex colour (${v})`);
  return rgb;
}

/** [foreground, background, least ratio]: what must read on what. */
const PAIRS: [string, string, number][] = [
  ...["--bg", "--panel", "--panel-2", "--sel", "--accent-soft", "--bubble-human", "--bubble-ai", "--bubble-tool", "--hit-soft"].map((b): [string, string, number] => ["--text", b, TEXT]),
  ...["--bg", "--panel", "--panel-2", "--sel", "--accent-soft", "--bubble-human", "--bubble-ai", "--bubble-tool"].map((b): [string, string, number] => ["--muted", b, TEXT]),
  ["--accent", "--panel", TEXT],
  ["--accent", "--bg", TEXT],
  ["--accent", "--panel-2", TEXT],
  ["--accent", "--accent-soft", TEXT],
  ["--accent", "--sel", TEXT],
  ["--on-accent", "--accent", TEXT],
  ["--on-bad", "--bad", TEXT],
  ["--on-hit", "--hit", TEXT],
  ["--hit", "--hit-soft", TEXT],
  ["--hit", "--panel", GRAPHIC],
  ["--code-string", "--panel", TEXT],
  ["--code-string", "--panel-2", TEXT],
  ["--add-text", "--add", TEXT],
  ["--del-text", "--del", TEXT],
  // Status words are badges of 11 px text on their soft colour, or text on a panel.
  ...STATUS.flatMap((s): [string, string, number][] => [
    [s, `${s}-soft`, TEXT],
    [s, "--panel", TEXT],
    [s, "--bg", TEXT],
  ]),
  ...KINDS.flatMap((k): [string, string, number][] => [
    [k, "--panel", GRAPHIC],
    [k, "--bg", GRAPHIC],
  ]),
  ...LANES.flatMap((l): [string, string, number][] => [
    [l, "--panel", GRAPHIC],
    [l, "--bg", GRAPHIC],
    [l, "--panel-2", GRAPHIC],
  ]),
];

const pairs = <T>(xs: T[]): [T, T][] => xs.flatMap((a, i) => xs.slice(i + 1).map((b): [T, T] => [a, b]));

describe.each(["light", "dark"] as Theme[])("%s theme", (theme) => {
  it.each(PAIRS)("%s on %s ≥ %s:1", (fg, bg, least) => {
    expect(contrast(colour(theme, fg), colour(theme, bg))).toBeGreaterThanOrEqual(least);
  });

  it(`any two lanes are ΔE00 ≥ ${APART} apart`, () => {
    const close = pairs(LANES)
      .map(([a, b]) => ({ a, b, d: deltaE2000(colour(theme, a), colour(theme, b)) }))
      .filter((p) => p.d < APART)
      .map((p) => `${p.a} ${p.b} ${p.d.toFixed(1)}`);
    expect(close).toEqual([]);
  });

  it(`any two data kinds are ΔE00 ≥ ${APART} apart`, () => {
    const close = pairs(KINDS)
      .map(([a, b]) => ({ a, b, d: deltaE2000(colour(theme, a), colour(theme, b)) }))
      .filter((p) => p.d < APART)
      .map((p) => `${p.a} ${p.b} ${p.d.toFixed(1)}`);
    expect(close).toEqual([]);
  });

  it("no lane and no data kind is a status colour; no lane is red", () => {
    const near = [...LANES, ...KINDS].flatMap((x) =>
      STATUS.map((s) => ({ x, s, d: deltaE2000(colour(theme, x), colour(theme, s)) }))
        .filter((p) => p.d < (p.s === "--bad" && p.x.startsWith("--lane") ? NOT_RED : NOT_STATUS))
        .map((p) => `${p.x} ~ ${p.s} ${p.d.toFixed(1)}`),
    );
    expect(near).toEqual([]);
  });

  it("the four statuses are told apart", () => {
    const close = pairs(STATUS).filter(([a, b]) => deltaE2000(colour(theme, a), colour(theme, b)) < APART);
    expect(close).toEqual([]);
  });
});

describe("the themes", () => {
  it("the dark theme gives every colour token its own value", () => {
    const colours = Object.keys(THEMES.light).filter((k) => /^(#|rgba?\()/.test(THEMES.light[k]));
    const missing = colours.filter((k) => THEMES.dark[k] === THEMES.light[k] && k !== "--on-bad" && k !== "--on-hit");
    expect(missing).toEqual([]);
  });
  it("the primary button is dark text on a light accent in the dark theme, white on a deep one in the light", () => {
    expect(contrast(colour("dark", "--on-accent"), colour("dark", "--accent"))).toBeGreaterThanOrEqual(TEXT);
    expect(contrast(colour("light", "--on-accent"), colour("light", "--accent"))).toBeGreaterThanOrEqual(TEXT);
  });
});

describe("the colour arithmetic", () => {
  it("contrast matches WCAG's figures", () => {
    expect(contrast([0, 0, 0], [255, 255, 255])).toBeCloseTo(21, 5);
    expect(contrast(parseHex("#777777")!, [255, 255, 255])).toBeCloseTo(4.48, 2);
  });
  it("ΔE00 matches Sharma's test data", () => {
    // Sharma, Wu & Dalal (2005), pair 1 given in Lab; here the same check through sRGB round trips.
    expect(deltaE2000([255, 0, 0], [255, 0, 0])).toBe(0);
    expect(deltaE2000(parseHex("#4f46e5")!, parseHex("#7c3aed")!)).toBeLessThan(APART);
    expect(deltaE2000([0, 0, 0], [255, 255, 255])).toBeCloseTo(100, 0);
  });
});

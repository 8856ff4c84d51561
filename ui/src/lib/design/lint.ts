// The design lint (ui/DESIGN.md): styles outside tokens.css name tokens, not raw values. A
// colour is a token (`var(--bad)`), a font size is a step of the type scale (`var(--text-sm)`),
// and a spacing that is a step of the grid is written as that step (`var(--space-4)`).

export interface Problem {
  file: string;
  line: number;
  message: string;
}

// CSS named colours that read as a colour in a declaration (keywords such as `transparent`,
// `currentColor` and `inherit` are fine).
const NAMED = [
  "white", "black", "red", "green", "blue", "yellow", "orange", "purple", "pink", "gray", "grey", "silver",
  "maroon", "navy", "teal", "olive", "lime", "aqua", "fuchsia", "cyan", "magenta", "brown", "gold", "indigo",
  "violet", "crimson", "tomato", "coral", "salmon", "khaki", "beige", "ivory", "lavender", "plum", "tan",
  "turquoise", "darkgray", "darkgrey", "lightgray", "lightgrey", "gainsboro", "whitesmoke", "snow",
];
const NAMED_RE = new RegExp(`(^|[\\s:,(])(${NAMED.join("|")})(?=$|[\\s;,)!])`, "i");
const HEX_RE = /#[0-9a-f]{3,8}\b/i;
const FUNC_RE = /\b(rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(/i;
const SPACING_PROPS = /^(padding|margin|gap|row-gap|column-gap)(-(top|right|bottom|left|inline|block)(-(start|end))?)?$/;
/** The spacing steps (px → token). */
export const SPACE_STEPS: Record<number, string> = { 2: "--space-1", 4: "--space-2", 6: "--space-3", 8: "--space-4", 12: "--space-5", 16: "--space-6", 24: "--space-7" };

/** The CSS a file holds, each part with the line it starts on: a .css file whole, a .svelte
 * file's <style> blocks and its inline `style="…"` attributes. */
export function styleParts(file: string, text: string): { css: string; line: number; inline: boolean }[] {
  if (file.endsWith(".css")) return [{ css: text, line: 1, inline: false }];
  const lineAt = (i: number) => text.slice(0, i).split("\n").length;
  const parts: { css: string; line: number; inline: boolean }[] = [];
  for (const m of text.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/g)) {
    const start = m.index! + m[0].indexOf(">") + 1;
    parts.push({ css: m[1], line: lineAt(start), inline: false });
  }
  const markup = text.replace(/<style[^>]*>[\s\S]*?<\/style>/g, (s) => s.replace(/[^\n]/g, " ")).replace(/<script[^>]*>[\s\S]*?<\/script>/g, (s) => s.replace(/[^\n]/g, " "));
  for (const m of markup.matchAll(/\bstyle="([^"]*)"/g)) parts.push({ css: m[1], line: lineAt(m.index!), inline: true });
  return parts;
}

/** The raw values in one file's styles, each at its line. */
export function lintStyles(file: string, text: string): Problem[] {
  const out: Problem[] = [];
  for (const part of styleParts(file, text)) {
    const lines = part.css.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, " ")).split("\n");
    lines.forEach((raw, k) => {
      const line = part.line + k;
      const at = (message: string) => out.push({ file, line, message });
      // Declarations on this line (selectors such as `#id` or `.white` are not values).
      for (const d of raw.matchAll(/([\w-]+)\s*:\s*([^;{}]*)/g)) {
        const [prop, value] = [d[1].toLowerCase(), d[2]];
        if (!part.inline && /^\s*[\w-]+\s*:\s*[^;{}]*\{/.test(raw)) continue; // `a:hover {`
        if (prop.startsWith("--") && part.inline) continue; // a token chosen in markup: `--c: var(--lane-2)`
        if (HEX_RE.test(value)) at(`raw colour ${value.match(HEX_RE)![0]} in ${prop}: use a colour token`);
        else if (FUNC_RE.test(value)) at(`raw colour ${value.match(FUNC_RE)![0]}…) in ${prop}: use a colour token`);
        else if (prop !== "white-space" && NAMED_RE.test(value)) at(`named colour ${value.match(NAMED_RE)![2]} in ${prop}: use a colour token`);
        if (prop === "font-size" && /\d(px|pt|rem|em)\b/.test(value)) at(`raw font size ${value.trim()}: use --text-xs/sm/md/lg/xl`);
        if (prop === "font" && /\d(px|pt|rem|em)\b/.test(value)) at(`raw font size in font: ${value.trim()}: use --text-*`);
        if (SPACING_PROPS.test(prop)) {
          for (const px of value.matchAll(/(?<![\w.-])(\d+)px\b/g)) {
            const step = SPACE_STEPS[Number(px[1])];
            if (step) at(`spacing ${px[0]} in ${prop} is a grid step: use var(${step})`);
          }
        }
      }
    });
  }
  return out;
}

/** The custom properties a file's styles read (`var(--x)`) and those it sets (`--x:`). */
export function customProperties(text: string): { used: Set<string>; set: Set<string> } {
  const used = new Set([...text.matchAll(/var\(\s*(--[\w-]+)/g)].map((m) => m[1]));
  const set = new Set([...text.matchAll(/(--[\w-]+)\s*:/g)].map((m) => m[1]));
  return { used, set };
}

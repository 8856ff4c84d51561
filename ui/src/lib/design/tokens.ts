// Reading ui/src/tokens.css for the design tests: the custom properties of `:root` (the light
// theme) and of `:root[data-theme="dark"]` (which overrides some of them).

export type Theme = "light" | "dark";
export type Tokens = Record<string, string>;

/** The declarations `--name: value;` of one rule body, comments dropped. */
function declarations(body: string): Tokens {
  const out: Tokens = {};
  const text = body.replace(/\/\*[\s\S]*?\*\//g, "");
  for (const m of text.matchAll(/(--[\w-]+)\s*:\s*([^;]+);/g)) out[m[1]] = m[2].trim();
  return out;
}

/** The tokens of each theme (dark: the light ones with the dark overrides). */
export function parseTokens(css: string): Record<Theme, Tokens> {
  const rules = [...css.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((m) => ({ selector: m[1].replace(/\/\*[\s\S]*?\*\//g, "").trim(), body: m[2] }));
  const light = rules.find((r) => r.selector === ":root");
  const dark = rules.find((r) => /^:root\[data-theme=["']?dark["']?\]$/.test(r.selector));
  if (!light || !dark) throw new Error("tokens.css needs a :root rule and a :root[data-theme=\"dark\"] rule");
  const base = declarations(light.body);
  return { light: base, dark: { ...base, ...declarations(dark.body) } };
}

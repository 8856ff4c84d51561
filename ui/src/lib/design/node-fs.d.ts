// The Node API the design tests use (they run in Vitest, under Node, which gives modules
// `__dirname`): reading a stylesheet as text. (`?raw` imports of .css come back empty under
// Vitest, and the project has no @types/node.)
declare module "node:fs" {
  export function readFileSync(path: string, encoding: "utf8"): string;
}
declare module "node:path" {
  export function join(...parts: string[]): string;
}
declare const __dirname: string;

// Process helpers of the real-window e2e: finding executables, failing early with the runner's
// closing line.
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";

// Finds an executable on PATH (or an absolute path); null if missing.
export function which(cmd) {
  const dirs = cmd.includes("/") ? [""] : (process.env.PATH || "").split(delimiter);
  for (const dir of dirs) {
    const p = dir ? join(dir, cmd) : cmd;
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

// Stops before any check ran: one line on stderr, the summary line, exit 2.
export function die(msg) {
  console.error(`window e2e: ${msg}`);
  console.log("window: 0 passed, 1 failed");
  process.exit(2);
}

// `flashback serve` on a database, on a free port: resolves with its URL (token included).

import { spawn } from "node:child_process";
import { join } from "node:path";

export function startServer(bin, work, location) {
  // --allow-run: the re-run checks run a command (examples/counter_agent.py, echo).
  const child = spawn(bin, ["serve", location, "--port", "0", "--allow-run"], {
    env: { ...process.env, FLASHBACK_DATA_DIR: join(work, "data") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  return new Promise((resolveUrl, reject) => {
    let buf = "";
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 20_000);
    child.stdout.on("data", (d) => {
      buf += d;
      const m = /open (http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]+)/.exec(buf);
      if (m) {
        clearTimeout(timer);
        resolveUrl({ url: m[1], child });
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited (${code}): ${stderr}`));
    });
  });
}

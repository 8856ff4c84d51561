// Process helpers of the real-window e2e: finding executables, failing early with the runner's
// closing line, a free port, a private Xvfb, WebDriver over plain HTTP.
import { spawn } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { createServer } from "node:net";
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

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => res(port));
    });
  });
}

// Xvfb picks a free display itself and writes its number to -displayfd (here: its stdout).
export function startXvfb(xvfbBin, procs) {
  return new Promise((res, rej) => {
    const child = spawn(xvfbBin, ["-displayfd", "1", "-screen", "0", "1400x900x24", "-nolisten", "tcp"], {
      stdio: ["ignore", "pipe", "ignore"],
      detached: true,
    });
    procs.push({ name: "Xvfb", child });
    let buf = "";
    const timer = setTimeout(() => rej(new Error("Xvfb did not report a display within 10 s")), 10_000);
    child.stdout.on("data", (d) => {
      buf += d;
      const m = buf.match(/^(\d+)\n/);
      if (m) {
        clearTimeout(timer);
        res(`:${m[1]}`);
      }
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`Xvfb exited (${code})`));
    });
  });
}

// One WebDriver call: the answer's `value`, or an error naming the call and the driver's reason.
export async function wd(method, url, body, timeoutMs = 15_000) {
  const res = await fetch(url, {
    method,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json = await res.json().catch(() => ({}));
  if (!res.ok) {
    const v = json.value || {};
    throw new Error(`${method} ${url.replace(/^.*\/session/, "/session")}: ${v.error || res.status} ${v.message || ""}`.trim());
  }
  return json.value;
}

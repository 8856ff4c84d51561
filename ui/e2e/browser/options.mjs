// The command line and environment of the browser e2e test (see ../browser.mjs).

import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The options, or exit 2 when the binary or Chromium is missing. */
export function readOptions(argv = process.argv.slice(2)) {
  const repo = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
  const opt = (name, dflt) => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : dflt;
  };
  const target = process.env.CARGO_TARGET_DIR || join(repo, "target");
  const options = {
    repo,
    bin: resolve(opt("--bin", join(target, "debug", "flashback"))),
    out: resolve(opt("--out", join(repo, ".artifacts", "screenshots"))),
    docs: argv.includes("--docs"),
    chromiumPath: process.env.CHROMIUM || "/usr/bin/chromium",
    bigDb: opt("--big", null),
    python: opt("--python", null),
    pgUrl: opt("--pg", null),
    agentsDb: opt("--agents", null),
    only: opt("--only", null),
    ci: ["1", "true"].includes((process.env.CI || "").toLowerCase()),
  };
  if (!existsSync(options.bin)) {
    console.error(`browser e2e: no flashback binary at ${options.bin} (cargo build -p flashback-cli)`);
    process.exit(2);
  }
  if (!existsSync(options.chromiumPath)) {
    console.error(`browser e2e: no Chromium at ${options.chromiumPath} (apt-get install chromium)`);
    process.exit(2);
  }
  return options;
}

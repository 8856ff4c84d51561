// Trying a failed read again: offered where the failure may pass by itself — the server did
// not answer within the location's time limit (`timeout`), could not be reached
// (`connection`), or another process held a lock (`locked`) — beside the error it ended with
// (components/ErrorBox.svelte). The read itself shows what happens next (its own loading state
// and error); the screen stays usable meanwhile, as every read is asynchronous.

import type { Code } from "../ipc/api";

/** Whether a failure with this code may go away when the same read is tried again. */
export function canRetry(code: Code | string): boolean {
  return code === "timeout" || code === "connection" || code === "locked";
}

/** One retry at a time: a second press while the first runs is ignored. */
export class Retry {
  running = $state(false);

  constructor(private readonly again: () => unknown) {}

  /** Try again; false when one is already running or the attempt threw. */
  async run(): Promise<boolean> {
    if (this.running) return false;
    this.running = true;
    try {
      await this.again();
      return true;
    } catch {
      return false;
    } finally {
      this.running = false;
    }
  }
}

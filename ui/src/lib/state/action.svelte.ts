// One user action at a time (fork, merge, delete, prune, open): `busy` while it runs, so the
// button shows it and a second press is ignored instead of writing twice; `error` holds the
// backend's {code, message} when it fails, for the dialog to show in place.
import { toFailure, type Failure } from "../ipc/api";

export class Action {
  busy = $state(false);
  error = $state<Failure | null>(null);

  /** Runs `work` unless one is already running; true when it finished without throwing. */
  async run(work: () => Promise<void>): Promise<boolean> {
    if (this.busy) return false;
    this.busy = true;
    this.error = null;
    try {
      await work();
      return true;
    } catch (e) {
      this.error = toFailure(e);
      return false;
    } finally {
      this.busy = false;
    }
  }

  /** Shows an error found before calling the backend (bad input in the form). */
  fail(code: string, message: string) {
    this.error = toFailure({ code, message });
  }
}

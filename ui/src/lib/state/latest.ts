// Overlapping loads (stepping fast through checkpoints, a re-run's live tail reloading the DAG)
// can answer out of order. `latest()` makes a gate where only the most recently started load may
// apply its answer or its error; older ones are dropped, so a slow stale answer never overwrites
// a newer one.

export type Gate = <T>(load: Promise<T>, apply: (value: T) => void, fail: (error: unknown) => void) => Promise<boolean>;

export function latest(): Gate {
  let started = 0;
  return async (load, apply, fail) => {
    const mine = ++started;
    try {
      const value = await load;
      if (mine !== started) return false;
      apply(value);
    } catch (e) {
      if (mine !== started) return false;
      fail(e);
    }
    return true;
  };
}

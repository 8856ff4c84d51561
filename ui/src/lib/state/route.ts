// Where the app is, as the URL's fragment: the open database, the screen, and on a thread the
// selected checkpoint and tab, so that Back and Forward move between screens, a reload keeps
// the place, and a checkpoint can be linked.
//
//   #/threads?db=LOCATION
//   #/threads?db=LOCATION&where=user_id%3Du-48213&since=…&until=…&status=failed   (the filter bar)
//   #/memory?db=LOCATION&ns=users&ns=u-1&key=prefs   (the selected item: its labels, its key)
//   #/storage?db=LOCATION
//   #/thread/THREAD?db=LOCATION&checkpoint=ID&ns=NS&tab=writes
//   #/open
//
// LOCATION is the database's public location (a path, or a Postgres URL without its password:
// DbInfo.location), so a link never carries a secret.

import { readFind, writeFind, type ThreadFind } from "./metafilter";

export type RouteScreen = "open" | "threads" | "memory" | "storage" | "thread";

export interface Route {
  screen: RouteScreen;
  /** The database's public location (absent: whichever is open). */
  db?: string;
  /** The thread (screen "thread"). */
  thread?: string;
  /** The selected checkpoint on a thread. */
  checkpoint?: { ns: string; id: string };
  /** The detail tab on a thread. */
  tab?: string;
  /** The selected item on the Memory screen (its namespace's labels, its key). */
  item?: { namespace: string[]; key: string };
  /** The thread list's filter bar (screen "threads"). */
  find?: ThreadFind;
}

const TABS = new Set(["state", "writes", "tasks", "meta", "storage", "topology"]);

/** The route in a URL fragment (`#/…`); null when the fragment is not one (empty, `#token=…`). */
export function parseRoute(hash: string): Route | null {
  const m = /^#\/([^?]*)(?:\?(.*))?$/.exec(hash);
  if (!m) return null;
  const parts = m[1].split("/").map((p) => {
    try {
      return decodeURIComponent(p);
    } catch {
      return p;
    }
  });
  const q = new URLSearchParams(m[2] ?? "");
  const db = q.get("db") || undefined;
  switch (parts[0]) {
    case "open":
      return { screen: "open" };
    case "threads": {
      const find = readFind(q);
      return { screen: "threads", db, ...(find ? { find } : {}) };
    }
    case "storage":
      return { screen: parts[0], db };
    case "memory": {
      // A label may hold a slash: one `ns` per label.
      const namespace = q.getAll("ns");
      const key = q.get("key");
      return { screen: "memory", db, ...(key !== null && namespace.length ? { item: { namespace, key } } : {}) };
    }
    case "thread": {
      const thread = parts.slice(1).join("/");
      if (!thread) return null;
      const id = q.get("checkpoint");
      const tab = q.get("tab");
      return {
        screen: "thread",
        db,
        thread,
        ...(id ? { checkpoint: { id, ns: q.get("ns") ?? "" } } : {}),
        ...(tab && TABS.has(tab) ? { tab } : {}),
      };
    }
    default:
      return null;
  }
}

/** The URL fragment of a route (parseRoute's inverse). */
export function formatRoute(r: Route): string {
  if (r.screen === "open") return "#/open";
  const q = new URLSearchParams();
  if (r.db) q.set("db", r.db);
  let path: string = r.screen;
  if (r.screen === "thread") {
    path = `thread/${encodeURIComponent(r.thread ?? "")}`;
    if (r.checkpoint) {
      q.set("checkpoint", r.checkpoint.id);
      if (r.checkpoint.ns) q.set("ns", r.checkpoint.ns);
    }
    if (r.tab && r.tab !== "state") q.set("tab", r.tab);
  }
  if (r.screen === "threads" && r.find) writeFind(r.find, q);
  if (r.screen === "memory" && r.item) {
    for (const label of r.item.namespace) q.append("ns", label);
    q.set("key", r.item.key);
  }
  const query = q.toString();
  return `#/${path}${query ? `?${query}` : ""}`;
}

/** Whether going from `a` to `b` is a new place in the history (another screen or thread) or
 * a change within one (another checkpoint or tab, another Memory item: the entry is replaced). */
export function isNewPlace(a: Route | null, b: Route): boolean {
  return !a || a.screen !== b.screen || a.db !== b.db || a.thread !== b.thread;
}

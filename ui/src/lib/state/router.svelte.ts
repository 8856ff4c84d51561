// The URL follows the app (state/route.ts says how a place is written): moving to another
// screen or thread pushes a history entry, selecting another checkpoint or tab replaces it;
// Back/Forward and a reload go back to the place, and the last place is remembered (setting
// `place`) so that the desktop app opens where it was left.

import { commands } from "../ipc/bindings";
import { call, toFailure } from "../ipc/api";
import { app } from "./app.svelte";
import { formatRoute, isNewPlace, parseRoute, type Route } from "./route";
import type { CheckpointKey } from "./threadview.svelte";
import type { ItemRef } from "./memory";
import type { ThreadFind } from "./metafilter";

/** A thread screen's own place: its selected checkpoint and tab. */
export interface ThreadPlace {
  checkpoint?: CheckpointKey;
  tab?: string;
}

const SAVE_DELAY_MS = 500;

class Router {
  /** Reported by the thread screen as its selection and tab change. */
  thread = $state<ThreadPlace>({});
  /** A place within the open thread that Back/Forward asked for (the thread screen applies it). */
  incoming = $state<ThreadPlace | null>(null);
  /** Reported by the Memory screen as its selection changes. */
  memory = $state<{ item?: ItemRef }>({});
  /** An item the URL asked for while the Memory screen is open (the screen selects it). */
  memoryIncoming = $state<{ item: ItemRef | null } | null>(null);
  /** Reported by the thread list as its filter bar changes. */
  threads = $state<{ find?: ThreadFind }>({});
  /** A filter the URL asked for while the thread list is open (the list applies it). */
  findIncoming = $state<{ find: ThreadFind | null } | null>(null);
  /** The filter the next thread list starts with. */
  private findStart: ThreadFind | null = null;
  /** Where the next thread screen starts (from the URL or the saved place). */
  private start: (ThreadPlace & { thread: string }) | null = null;
  /** The item the next Memory screen selects. */
  private memoryStart: ItemRef | null = null;
  private last: Route | null = null;
  private saveTimer: ReturnType<typeof setTimeout> | null = null;

  /** Where the app is now. */
  current(): Route {
    const s = app.screen;
    const db = app.db?.location;
    if (s.name === "open" || !app.db) return { screen: "open" };
    if (s.name === "memory") return { screen: "memory", db, ...this.memory };
    if (s.name === "threads") return { screen: "threads", db, ...this.threads };
    if (s.name !== "thread") return { screen: s.name, db };
    return { screen: "thread", db, thread: s.threadId, ...this.thread };
  }

  /** Write the current place into the URL (an effect calls it on every change). */
  write() {
    const r = this.current();
    const hash = formatRoute(r);
    if (typeof window === "undefined" || window.location.hash === hash) {
      this.last = r;
      return;
    }
    const url = `${window.location.pathname}${window.location.search}${hash}`;
    // The first place of the page replaces its start URL (Back then leaves, as before it).
    if (this.last !== null && isNewPlace(this.last, r)) window.history.pushState(null, "", url);
    else window.history.replaceState(null, "", url);
    this.last = r;
    this.save(hash);
  }

  /** The place a thread screen starts at (once; null: its head). */
  takeStart(thread: string): ThreadPlace | null {
    const s = this.start;
    this.start = null;
    this.thread = {};
    return s && s.thread === thread ? s : null;
  }

  /** The filter the thread list starts with (once; null: none). */
  takeFindStart(): ThreadFind | null {
    const s = this.findStart;
    this.findStart = null;
    this.threads = {};
    return s;
  }

  /** The item the Memory screen starts with (once; null: none). */
  takeMemoryStart(): ItemRef | null {
    const s = this.memoryStart;
    this.memoryStart = null;
    this.memory = {};
    return s;
  }

  /** Go to a route: open its database when another is open, then its screen and place. */
  async go(r: Route) {
    if (r.db && app.db?.location !== r.db) {
      try {
        app.opened(await call(commands.openDatabase({ location: r.db })));
      } catch (e) {
        app.openError = toFailure(e);
        app.screen = { name: "open" };
        return;
      }
    }
    if (r.screen === "open" || !app.db) {
      app.screen = { name: "open" };
    } else if (r.screen === "thread" && r.thread) {
      const place = { checkpoint: r.checkpoint, tab: r.tab };
      if (app.screen.name === "thread" && app.screen.threadId === r.thread) {
        this.incoming = place;
      } else {
        this.start = { thread: r.thread, ...place };
        app.openThread(r.thread);
      }
    } else if (r.screen === "memory" && app.db.store) {
      if (app.screen.name === "memory") this.memoryIncoming = { item: r.item ?? null };
      else {
        this.memoryStart = r.item ?? null;
        app.screen = { name: "memory" };
      }
    } else if (r.screen === "storage" && app.db.holds !== "store") {
      app.screen = { name: "storage" };
    } else if (r.screen === "threads" && app.db.holds !== "store") {
      if (app.screen.name === "threads") this.findIncoming = { find: r.find ?? null };
      else {
        this.findStart = r.find ?? null;
        app.screen = { name: "threads" };
      }
    }
    this.last = this.current();
  }

  /** At start-up: the URL's place, else the one saved last time. Then follow Back/Forward. */
  async restore(saved: string | undefined) {
    const r = parseRoute(window.location.hash) ?? (saved ? parseRoute(saved) : null);
    if (r) await this.go(r);
    // Back/Forward fire popstate; a link to another fragment fires hashchange (and popstate):
    // a place the app is already at is not gone to again.
    const follow = () => {
      const to = parseRoute(window.location.hash);
      if (to && formatRoute(to) !== formatRoute(this.current())) void this.go(to);
    };
    window.addEventListener("popstate", follow);
    window.addEventListener("hashchange", follow);
  }

  private save(hash: string) {
    if (this.saveTimer) clearTimeout(this.saveTimer);
    this.saveTimer = setTimeout(() => {
      call(commands.setSetting({ key: "place", value: hash })).catch(() => {
        // Not worth an error: the place is only a convenience.
      });
    }, SAVE_DELAY_MS);
  }
}

export const router = new Router();

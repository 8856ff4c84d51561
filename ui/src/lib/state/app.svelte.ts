// Application-wide state (Svelte runes): the open database, the current screen, theme, toasts.

import type { AppInfo, DbInfo } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, type Failure } from "../ipc/api";
import { homeScreen } from "./memory";

export type Screen =
  | { name: "open" }
  | { name: "threads" }
  | { name: "memory" }
  | { name: "storage" }
  | { name: "thread"; threadId: string };

export type Theme = "system" | "light" | "dark";

export interface Toast {
  id: number;
  kind: "info" | "error" | "ok";
  text: string;
}

class AppState {
  info = $state<AppInfo | null>(null);
  db = $state<DbInfo | null>(null);
  screen = $state<Screen>({ name: "open" });
  theme = $state<Theme>("system");
  toasts = $state<Toast[]>([]);
  /** Why the last open failed (shown on the open screen). */
  openError = $state<Failure | null>(null);
  /** A location the open screen starts with (then cleared): one that needs a secret first. */
  prefill: string | null = null;
  private nextToast = 1;

  toast(kind: Toast["kind"], text: string, ms = kind === "error" ? 8000 : 4000) {
    const id = this.nextToast++;
    // At most three at a time: the oldest goes first.
    this.toasts = [...this.toasts, { id, kind, text }].slice(-3);
    setTimeout(() => this.dismiss(id), ms);
  }

  dismiss(id: number) {
    this.toasts = this.toasts.filter((t) => t.id !== id);
  }

  opened(db: DbInfo) {
    this.db = db;
    this.openError = null;
    this.goHome();
  }

  /** The open database's first screen: its threads, or its Memory when it holds only a store. */
  goHome() {
    this.screen = this.db ? { name: homeScreen(this.db) } : { name: "open" };
  }

  openThread(threadId: string) {
    this.screen = { name: "thread", threadId };
  }

  /** The reducer chosen for a DeltaChannel of the open database (null: inferred), remembered
   * per database (setting `reducers:<location>`). */
  async setReducer(channel: string, reducer: string | null) {
    if (!this.db || !this.info) return;
    const key = `reducers:${this.db.location}`;
    const saved = this.info.settings.find((s) => s.key === key)?.value;
    const map: Record<string, string> = saved ? JSON.parse(saved) : {};
    if (reducer) map[channel] = reducer;
    else delete map[channel];
    const value = Object.keys(map).length ? JSON.stringify(map) : null;
    await call(commands.setSetting({ key, value }));
    this.info.settings = [
      ...this.info.settings.filter((s) => s.key !== key),
      ...(value ? [{ key, value }] : []),
    ];
  }

  async setTheme(theme: Theme) {
    this.theme = theme;
    applyTheme(theme);
    try {
      await call(commands.setSetting({ key: "theme", value: theme }));
    } catch {
      // Not worth an error: the theme still applies for this session.
    }
  }
}

/** Put the resolved theme on <html data-theme>. */
export function applyTheme(theme: Theme) {
  const dark =
    theme === "dark" ||
    (theme === "system" && typeof matchMedia === "function" && matchMedia("(prefers-color-scheme: dark)").matches);
  document.documentElement.dataset.theme = dark ? "dark" : "light";
}

export const app = new AppState();

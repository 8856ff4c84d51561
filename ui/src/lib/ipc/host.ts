// The one seam between the UI and the backend. Two transports, one set of commands:
//
//   desktop app (Tauri)   window.__TAURI_INTERNALS__.invoke  ──IPC──▶ src-tauri commands
//   flashback serve       window.__TAURI_INTERNALS__.invoke  ──HTTP─▶ POST /api/<command>
//                         (installed here; the generated bindings cannot tell the difference)
//
// Both end in flashback_api::Api. Platform extras (file pickers, drag-and-drop, downloads) are
// here too, so components never import @tauri-apps/* themselves.

import type { ApiError } from "./bindings";

export type HostKind = "tauri" | "http";

type Invoke = (cmd: string, args?: unknown, options?: unknown) => Promise<unknown>;

interface TauriInternals {
  invoke: Invoke;
  transformCallback: (cb: (v: unknown) => void, once?: boolean) => number;
  metadata?: unknown;
  __flashbackHttp?: boolean;
}

declare global {
  interface Window {
    __TAURI_INTERNALS__?: TauriInternals;
  }
}

/** Where an older Flashback kept the token; cleared, since the cookie replaces it. */
const OLD_TOKEN_KEY = "flashback.token";

let kind: HostKind | null = null;

/** Which transport is in use (after {@link initHost}). */
export function hostKind(): HostKind {
  if (kind === null) throw new Error("initHost() was not called");
  return kind;
}

/**
 * The access token of `flashback serve`, taken from the URL fragment (`#token=…`) and removed
 * from the address bar and the history entry at once. The first call sends it as a bearer
 * token and the server answers with an `HttpOnly` cookie, which carries every later call and
 * survives reloads; the token itself is kept in memory only (never in storage).
 */
export function takeToken(
  loc: Pick<Location, "hash" | "pathname" | "search">,
  replace?: (url: string) => void,
): string | null {
  const m = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(loc.hash);
  if (!m) return null;
  replace?.(loc.pathname + loc.search);
  return m[1];
}

/** An error in the backend's `{code, message}` shape (a plain object, as Tauri rejects). */
function failure(code: ApiError["code"], message: string): ApiError {
  return { code, message };
}

/**
 * Call one command over HTTP; rejects with `{code, message}`. Authenticated by the bearer
 * `token` when there is one, else by the page's cookie; `X-Flashback` tells the server the
 * call comes from this page (no cross-site form can send it).
 */
export async function httpInvoke(
  base: string,
  token: string | null,
  cmd: string,
  args: unknown,
  fetcher: typeof fetch = fetch,
): Promise<unknown> {
  let res: Response;
  try {
    res = await fetcher(`${base}/api/${encodeURIComponent(cmd)}`, {
      method: "POST",
      credentials: "same-origin",
      headers: {
        "content-type": "application/json",
        "x-flashback": "1",
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify(args ?? {}),
    });
  } catch {
    throw failure(
      "connection",
      "The Flashback server does not answer. Is `flashback serve` still running?",
    );
  }
  const text = await res.text();
  let body: unknown = null;
  try {
    body = text ? JSON.parse(text) : null;
  } catch {
    throw failure("internal", `The server sent something unexpected (HTTP ${res.status}).`);
  }
  if (!res.ok) {
    const e = body as Partial<ApiError> | null;
    if (e && typeof e.code === "string" && typeof e.message === "string") throw e;
    throw failure("internal", `HTTP ${res.status}`);
  }
  return body;
}

/** Make the generated bindings talk HTTP: they call `__TAURI_INTERNALS__.invoke`. */
export function installHttpTransport(token: string | null, base = ""): void {
  let next = 1;
  window.__TAURI_INTERNALS__ = {
    __flashbackHttp: true,
    invoke: (cmd, args) => httpInvoke(base, token, cmd, args),
    transformCallback: () => next++,
  };
}

/** Pick the transport; call once before any command. */
export function initHost(): HostKind {
  if (kind !== null) return kind;
  if (window.__TAURI_INTERNALS__ && !window.__TAURI_INTERNALS__.__flashbackHttp) {
    kind = "tauri";
  } else {
    const token = takeToken(window.location, (url) => window.history.replaceState(null, "", url));
    try {
      window.sessionStorage.removeItem(OLD_TOKEN_KEY);
    } catch {
      // Storage may be unavailable; nothing was kept there then.
    }
    installHttpTransport(token);
    kind = "http";
  }
  return kind;
}

/** Whether native file pickers exist (desktop only; the browser types a server-side path). */
export function canPickFiles(): boolean {
  return kind === "tauri";
}

/** Ask for a database file. */
export async function pickDatabaseFile(): Promise<string | null> {
  if (kind !== "tauri") return null;
  const { open } = await import("@tauri-apps/plugin-dialog");
  const picked = await open({
    multiple: false,
    directory: false,
    title: "Open a LangGraph checkpoint database",
    filters: [
      { name: "SQLite databases", extensions: ["sqlite", "sqlite3", "db"] },
      { name: "All files", extensions: ["*"] },
    ],
  });
  return typeof picked === "string" ? picked : null;
}

/** Ask for a `langgraph dev` project folder (or its `.langgraph_api/` folder). */
export async function pickProjectFolder(): Promise<string | null> {
  if (kind !== "tauri") return null;
  const { open } = await import("@tauri-apps/plugin-dialog");
  const picked = await open({
    multiple: false,
    directory: true,
    title: "Open a langgraph dev project folder",
  });
  return typeof picked === "string" ? picked : null;
}

/** Ask where to save a file. */
export async function pickSavePath(defaultName: string, ext: string, title = "Export audit bundle"): Promise<string | null> {
  if (kind !== "tauri") return null;
  const { save } = await import("@tauri-apps/plugin-dialog");
  return (
    (await save({
      title,
      defaultPath: defaultName,
      filters: [{ name: ext.toUpperCase(), extensions: [ext] }],
    })) ?? null
  );
}

/** Files or folders dropped on the window (desktop: real paths). Returns an unsubscribe function. */
export async function onFileDrop(handler: (paths: string[]) => void): Promise<() => void> {
  if (kind !== "tauri") return () => {};
  const { getCurrentWebview } = await import("@tauri-apps/api/webview");
  return getCurrentWebview().onDragDropEvent((event) => {
    if (event.payload.type === "drop") handler(event.payload.paths);
  });
}

/** Save text as a download (browser). */
export function download(fileName: string, content: string, mime: string): void {
  const url = URL.createObjectURL(new Blob([content], { type: mime }));
  const a = document.createElement("a");
  a.href = url;
  a.download = fileName;
  a.style.display = "none";
  document.body.appendChild(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** Copy text to the clipboard. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    // Fall back below (older WebKitGTK, or a page without clipboard permission).
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.appendChild(area);
  area.select();
  document.execCommand("copy");
  area.remove();
}

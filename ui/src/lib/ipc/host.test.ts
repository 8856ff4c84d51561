import { afterEach, describe, expect, it, vi } from "vitest";
import { httpInvoke, installHttpTransport, takeToken } from "./host";

function response(status: number, body: unknown, raw?: string): Response {
  return new Response(raw ?? JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

describe("the HTTP transport", () => {
  afterEach(() => {
    delete window.__TAURI_INTERNALS__;
  });

  it("takes the token from the fragment and drops it from the address bar", () => {
    const replaced: string[] = [];
    const at = (hash: string, pathname = "/", search = "") => ({ hash, pathname, search });
    expect(takeToken(at("#token=abc123"), (u) => replaced.push(u))).toBe("abc123");
    expect(takeToken(at("#x=1&token=def_45", "/threads/t", "?q=1"), (u) => replaced.push(u))).toBe("def_45");
    expect(replaced).toEqual(["/", "/threads/t?q=1"]);
    // A reload has no fragment: no token (the cookie carries the calls), nothing replaced.
    expect(takeToken(at(""), (u) => replaced.push(u))).toBeNull();
    expect(takeToken(at("#tokenish=1"), (u) => replaced.push(u))).toBeNull();
    expect(replaced).toHaveLength(2);
  });

  it("keeps the token out of storage", () => {
    window.sessionStorage.setItem("flashback.token", "old");
    window.history.replaceState(null, "", "/#token=fresh");
    return import("./host").then(({ initHost }) => {
      expect(initHost()).toBe("http");
      expect(window.location.hash).toBe("");
      expect(window.sessionStorage.getItem("flashback.token")).toBeNull();
      expect(JSON.stringify(window.sessionStorage)).not.toContain("fresh");
    });
  });

  it("without a token, calls rely on the page's cookie and say they come from the page", async () => {
    const fetcher = vi.fn(async () => response(200, {}));
    await httpInvoke("", null, "app_info", {}, fetcher as unknown as typeof fetch);
    const [, init] = fetcher.mock.calls[0] as unknown as [string, RequestInit];
    const headers = init.headers as Record<string, string>;
    expect(headers.authorization).toBeUndefined();
    expect(headers["x-flashback"]).toBe("1");
    expect(init.credentials).toBe("same-origin");
  });

  it("posts Tauri-shaped arguments with the token and returns the JSON", async () => {
    const fetcher = vi.fn(async () => response(200, [{ thread_id: "t" }]));
    const out = await httpInvoke("", "tok", "list_threads", { req: { db: "h" } }, fetcher as unknown as typeof fetch);
    expect(out).toEqual([{ thread_id: "t" }]);
    const [url, init] = fetcher.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/list_threads");
    expect(init.method).toBe("POST");
    expect((init.headers as Record<string, string>).authorization).toBe("Bearer tok");
    expect((init.headers as Record<string, string>)["x-flashback"]).toBe("1");
    expect(JSON.parse(init.body as string)).toEqual({ req: { db: "h" } });
  });

  it("rejects with the backend's {code, message}, like Tauri does", async () => {
    const err = { code: "not_found", message: "thread \"x\" not found" };
    await expect(httpInvoke("", "t", "thread_graph", {}, (async () => response(400, err)) as unknown as typeof fetch)).rejects.toEqual(err);
    await expect(httpInvoke("", "t", "x", {}, (async () => response(502, null, "<html>")) as unknown as typeof fetch)).rejects.toMatchObject({ code: "internal" });
    await expect(
      httpInvoke("", "t", "x", {}, (async () => {
        throw new TypeError("Failed to fetch");
      }) as unknown as typeof fetch),
    ).rejects.toMatchObject({ code: "connection" });
  });

  it("lets the generated bindings talk HTTP", async () => {
    const fetcher = vi.fn(async () => response(200, { version: "0.1.0" }));
    vi.stubGlobal("fetch", fetcher);
    installHttpTransport("tok");
    const { commands } = await import("./bindings");
    const r = await commands.appInfo();
    expect(r).toEqual({ status: "ok", data: { version: "0.1.0" } });
    expect((fetcher.mock.calls[0] as unknown as [string])[0]).toBe("/api/app_info");
    fetcher.mockImplementationOnce(async () => response(400, { code: "not_open", message: "gone" }));
    expect(await commands.listThreads({ db: "x" })).toEqual({ status: "error", error: { code: "not_open", message: "gone" } });
    vi.unstubAllGlobals();
  });
});

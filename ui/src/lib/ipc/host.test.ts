import { afterEach, describe, expect, it, vi } from "vitest";
import { httpInvoke, installHttpTransport, readToken } from "./host";

function storage() {
  const m = new Map<string, string>();
  return { getItem: (k: string) => m.get(k) ?? null, setItem: (k: string, v: string) => void m.set(k, v) };
}

function response(status: number, body: unknown, raw?: string): Response {
  return new Response(raw ?? JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
}

describe("the HTTP transport", () => {
  afterEach(() => {
    delete window.__TAURI_INTERNALS__;
  });

  it("takes the token from the fragment once, then from session storage", () => {
    const s = storage();
    const replaced: string[] = [];
    expect(readToken({ hash: "#token=abc123", pathname: "/", search: "" }, s, (u) => replaced.push(u))).toBe("abc123");
    expect(replaced).toEqual(["/"]);
    expect(readToken({ hash: "", pathname: "/", search: "" }, s)).toBe("abc123");
    expect(readToken({ hash: "", pathname: "/", search: "" }, storage())).toBeNull();
  });

  it("posts Tauri-shaped arguments with the token and returns the JSON", async () => {
    const fetcher = vi.fn(async () => response(200, [{ thread_id: "t" }]));
    const out = await httpInvoke("", "tok", "list_threads", { req: { db: "h" } }, fetcher as unknown as typeof fetch);
    expect(out).toEqual([{ thread_id: "t" }]);
    const [url, init] = fetcher.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe("/api/list_threads");
    expect(init.method).toBe("POST");
    expect((init.headers as Record<string, string>).authorization).toBe("Bearer tok");
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

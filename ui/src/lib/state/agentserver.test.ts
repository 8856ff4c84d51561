import { describe, expect, it } from "vitest";
import type { ServerSummary } from "../ipc/bindings";
import { row } from "../graph/testrows";
import {
  canMerge,
  asNodeChoices,
  hasServerPart,
  isPostgresUrl,
  isServerUrl,
  liveLine,
  secretErrorTitle,
  secretPrompt,
  serverDefaultText,
  snapshotName,
  storeReadOnly,
  switchOffer,
  wantsSecret,
} from "./agentserver";

const summary = (extra: Partial<ServerSummary> = {}): ServerSummary => ({
  server: "langgraph dev (Python)",
  running: true,
  notes: [],
  threads: 2,
  threads_without_checkpoints: 0,
  ...extra,
});

describe("an Agent Server location", () => {
  it("recognises http(s) URLs, not paths or postgres", () => {
    expect(isServerUrl("http://127.0.0.1:2024")).toBe(true);
    expect(isServerUrl("  https://my-deployment.us.langgraph.app/prefix ")).toBe(true);
    expect(isServerUrl("HTTP://localhost:8123")).toBe(true);
    expect(isServerUrl("http://")).toBe(false);
    expect(isServerUrl("/home/me/project")).toBe(false);
    expect(isServerUrl("postgres://u@h/db")).toBe(false);
    expect(isPostgresUrl("postgresql://u@h/db")).toBe(true);
    expect(wantsSecret("http://127.0.0.1:2024")).toBe(true);
    expect(wantsSecret("postgres://u@h/db")).toBe(true);
    expect(wantsSecret("/tmp/x.sqlite")).toBe(false);
  });

  it("asks for an API key, not a password", () => {
    const key = secretPrompt("http://127.0.0.1:2024");
    expect(key.kind).toBe("api_key");
    expect(key.label).toBe("API key");
    expect(key.placeholder).toContain("x-api-key");
    expect(key.help).toContain("LANGGRAPH_API_KEY");
    expect(key.help).toContain("LANGSMITH_API_KEY");
    expect(key.saved).toBe("saved API key");
    // A recent connection's kind decides even when the location is not typed.
    expect(secretPrompt("", "agentserver").kind).toBe("api_key");
    expect(secretPrompt("postgres://u@h/db").kind).toBe("password");
    expect(secretPrompt("postgres://u@h/db", "postgres").label).toBe("Password");
  });

  it("titles a missing or refused key as an API key", () => {
    const key = secretPrompt("http://127.0.0.1:2024");
    expect(secretErrorTitle("needs_password", key)).toBe("API key needed.");
    expect(secretErrorTitle("auth", key)).toBe("API key refused.");
    expect(secretErrorTitle("connection", key)).toBeUndefined();
    expect(secretErrorTitle("needs_password", secretPrompt("postgres://h/db"))).toBeUndefined();
  });

  it("has the server part, and a read-only Memory screen", () => {
    expect(hasServerPart({ kind: "agentserver" })).toBe(true);
    expect(hasServerPart({ kind: "devserver" })).toBe(true);
    expect(hasServerPart({ kind: "sqlite" })).toBe(false);
    expect(hasServerPart(null)).toBe(false);
    expect(storeReadOnly({ kind: "agentserver" })).toBe(false);
    expect(storeReadOnly({ kind: "devserver" })).toBe(true);
    expect(storeReadOnly({ kind: "postgres" })).toBe(false);
  });
});

describe("actions", () => {
  it("offers no merge on an Agent Server (its API has none), and does elsewhere", () => {
    expect(canMerge({ kind: "agentserver" })).toBe(false);
    expect(canMerge({ kind: "sqlite" })).toBe(true);
    expect(canMerge({ kind: "devserver" })).toBe(true);
    expect(canMerge(null)).toBe(true);
  });
});

describe("banner", () => {
  it("says live for an Agent Server session only", () => {
    const info = { kind: "agentserver" as const, location: "http://127.0.0.1:2024", server: summary({ server: "Agent Server 0.16.7 at http://127.0.0.1:2024" }) };
    expect(liveLine(info)).toBe("Live · Agent Server 0.16.7 at http://127.0.0.1:2024 — threads refresh as runs land");
    expect(liveLine({ ...info, server: null })).toBe("Live · http://127.0.0.1:2024 — threads refresh as runs land");
    expect(liveLine({ ...info, kind: "devserver" })).toBeNull();
    expect(liveLine(null)).toBeNull();
  });

  it("offers the live server of a running dev folder that knows its URL", () => {
    expect(switchOffer({ kind: "devserver", server: summary({ api_url: "http://127.0.0.1:2024" }) })).toEqual({
      url: "http://127.0.0.1:2024",
      text: "Switch to the live server (http://127.0.0.1:2024)",
    });
    expect(switchOffer({ kind: "devserver", server: summary({ running: false, api_url: "http://127.0.0.1:2024" }) })).toBeNull();
    expect(switchOffer({ kind: "devserver", server: summary() })).toBeNull();
    expect(switchOffer({ kind: "agentserver", server: summary({ api_url: "http://127.0.0.1:2024" }) })).toBeNull();
    expect(switchOffer(null)).toBeNull();
  });

  it("names a snapshot after the server and the time", () => {
    const at = new Date(Date.UTC(2026, 10, 29, 5, 7));
    expect(snapshotName("http://127.0.0.1:2024", at)).toBe("agent-server-127.0.0.1-2024-20261129-0507.sqlite");
    expect(snapshotName("https://x.langgraph.app/a/b", at)).toBe("agent-server-x.langgraph.app-a-b-20261129-0507.sqlite");
    expect(snapshotName("", at)).toBe("agent-server-snapshot-20261129-0507.sqlite");
  });
});

describe("as node", () => {
  const rows = [
    row("c3", 0, { ran: ["tools"] }),
    row("c2", 0, { ran: ["agent"] }),
    row("s1", 1, { ns: "sub:1", ran: ["inner"] }),
    row("c1", 0, { ran: ["Send", "agent"] }),
    row("c0", 0, { ran: [] }),
  ];

  it("offers the next tasks, then the nodes of the history, once each", () => {
    const tasks = { next: ["agent"], tasks: [{ name: "agent" }] } as never;
    const c = asNodeChoices(tasks, rows, { id: "c3", ns: "" });
    expect(c.nodes).toEqual(["agent", "tools"]);
    expect(c.serverDefault).toBe("tools");
    expect(serverDefaultText(c)).toBe("Server's choice (tools)");
  });

  it("has no default when the checkpoint was made by several nodes or none", () => {
    expect(asNodeChoices(null, rows, { id: "c0", ns: "" }).serverDefault).toBeNull();
    const two = [row("x", 0, { ran: ["a", "b"] })];
    const c = asNodeChoices(null, two, { id: "x", ns: "" });
    expect(c.serverDefault).toBeNull();
    expect(c.nodes).toEqual(["a", "b"]);
    expect(serverDefaultText(c)).toBe("Server's choice");
  });

  it("keeps to the checkpoint's namespace", () => {
    expect(asNodeChoices(null, rows, { id: "s1", ns: "sub:1" })).toEqual({ nodes: ["inner"], serverDefault: "inner" });
  });
});

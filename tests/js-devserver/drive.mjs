// Drive the real LangGraph.js dev server (`npx @langchain/langgraph-cli dev`, the pinned
// packages of package.json) and keep the `.langgraph_api/` folder it writes:
//
//   npm ci && node drive.mjs            # writes ../devserver-fixtures/js/
//
// It copies project/ into a temp folder, starts `langgraphjs dev --no-browser --no-reload`
// there on a free port, headless, runs the scenario over HTTP (plain fetch), records the
// server's answers (threads, history, state, runs, store) into expected.json, stops the server
// with SIGINT (the clean Ctrl-C shutdown that flushes every file) and copies the folder.
//
// When the server writes each file (langgraph-api 1.5.1, dist/storage/persist.mjs): each of
// `.langgraphjs_api.checkpointer.json`, `.langgraphjs_api.store.json` and `.langgraphjs_ops.json`
// is a superjson document written whole (fs.writeFile, no temp file + rename) 3 s after the
// last access to it (`schedulePersist`, a debounce: a busy server may not write for longer),
// and at exit (`asyncExitHook` → `flush()`). `--measure` prints what the folder holds after
// each step.
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const measure = process.argv.includes("--measure");
const out = path.resolve(here, "../devserver-fixtures/js");

// Fixed thread ids: the same every time.
const THREADS = {
  "chat-tools": "00000000-0000-4000-8000-000000000001",
  "chat-failed": "00000000-0000-4000-8000-000000000002",
  "approval-waiting": "00000000-0000-4000-8000-000000000003",
  "chat-fork": "00000000-0000-4000-8000-000000000004",
};

const freePort = () =>
  new Promise((ok) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => ok(port));
    });
  });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const started = Date.now();
const t = () => ((Date.now() - started) / 1000).toFixed(1);

function folderState(dir) {
  const state = path.join(dir, ".langgraph_api");
  if (!fs.existsSync(state)) return "(no .langgraph_api)";
  return (
    fs
      .readdirSync(state)
      .sort()
      .map((f) => `${f} ${fs.statSync(path.join(state, f)).size}B`)
      .join(", ") || "(empty)"
  );
}
const note = (dir, what) => measure && console.error(`t=+${t()}s ${what}: ${folderState(dir)}`);

async function main() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "fb-jsdev-"));
  fs.cpSync(path.join(here, "project"), work, { recursive: true });
  fs.symlinkSync(path.join(here, "node_modules"), path.join(work, "node_modules"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const log = fs.openSync(path.join(work, "server.log"), "w");
  const cli = path.join(here, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs");
  const server = spawn(
    process.execPath,
    [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port)],
    {
      cwd: work,
      stdio: ["ignore", log, log],
      env: { ...process.env, LANGSMITH_TRACING: "false" },
      // Its own process group: the CLI runs the server as a child process, and Ctrl-C in a
      // terminal signals the whole group.
      detached: true,
    },
  );
  const exited = new Promise((ok) => server.on("exit", (code, sig) => ok({ code, sig })));
  try {
    for (let i = 0; ; i++) {
      try {
        if ((await fetch(`${base}/ok`)).ok) break;
      } catch {}
      if (i > 600) throw new Error(`the server did not start:\n${fs.readFileSync(path.join(work, "server.log"), "utf8")}`);
      await sleep(100);
    }
    note(work, "started");
    const api = async (method, route, body) => {
      const res = await fetch(`${base}${route}`, {
        method,
        headers: { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };
    const namespaces = {};
    const run = async (name, input, extra = {}) => {
      const id = THREADS[name];
      const res = await fetch(`${base}/threads/${id}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          assistant_id: "agent",
          input,
          stream_mode: ["values"],
          stream_subgraphs: true,
          ...extra,
        }),
      });
      const text = await res.text();
      for (const m of text.matchAll(/^event: values\|(\S+)$/gm)) {
        (namespaces[name] ??= new Set()).add(m[1].split("|")[0]);
      }
    };
    const human = (content) => ({ messages: [{ type: "human", content }] });

    for (const [name, id] of Object.entries(THREADS)) {
      await api("POST", "/threads", { thread_id: id, metadata: { fixture: name, user_id: "u-1" } });
    }
    await run("chat-tools", human("weather in Oslo?"));
    await run("chat-tools", human("and in Bergen?"));
    note(work, "after chat-tools");
    await run("chat-failed", human("please fail"));
    await run("approval-waiting", human("weather in Oslo, with approval"));
    await run("chat-fork", human("weather in Oslo?"));
    // Fork: the checkpoint waiting on `tools`, its tool call replaced (Oslo -> Bergen) as `model`.
    const forkId = THREADS["chat-fork"];
    const history = await api("POST", `/threads/${forkId}/history`, { limit: 100 });
    const waiting = history.find((s) => s.next.length === 1 && s.next[0] === "tools");
    const call = waiting.values.messages[waiting.values.messages.length - 1];
    const edited = {
      ...call,
      tool_calls: [{ ...call.tool_calls[0], args: { city: "Bergen" } }],
    };
    const forked = await api("POST", `/threads/${forkId}/state`, {
      values: { messages: [edited] },
      as_node: "model",
      checkpoint_id: waiting.checkpoint.checkpoint_id,
    });
    await run("chat-fork", null, { checkpoint_id: forked.checkpoint.checkpoint_id });
    await api("PUT", "/store/items", { namespace: ["users", "u-1"], key: "prefs", value: { theme: "dark", units: "metric" } });
    await api("PUT", "/store/items", { namespace: ["users", "u-1", "memories"], key: "m1", value: { text: "likes Bergen" } });
    note(work, "after the scenario");

    // The server's answers.
    const expected = { threads: {}, store: {}, scenario: { fork: forked.checkpoint.checkpoint_id } };
    for (const [name, id] of Object.entries(THREADS)) {
      const hist = await api("POST", `/threads/${id}/history`, { limit: 1000 });
      const subgraph_history = {};
      for (const ns of namespaces[name] ?? []) {
        const h = await api("POST", `/threads/${id}/history`, { limit: 1000, checkpoint: { checkpoint_ns: ns } });
        subgraph_history[ns] = h.map(brief);
      }
      const state = await api("GET", `/threads/${id}/state`);
      expected.threads[name] = {
        thread_id: id,
        thread: await api("GET", `/threads/${id}`),
        runs: await api("GET", `/threads/${id}/runs`),
        history: hist.map(brief),
        subgraph_history,
        state: {
          checkpoint_id: state.checkpoint.checkpoint_id,
          parent_checkpoint_id: state.parent_checkpoint?.checkpoint_id ?? null,
          next: state.next,
          values: state.values,
          tasks: state.tasks,
          metadata: state.metadata,
        },
      };
    }
    expected.store = await api("POST", "/store/items/search", { namespace_prefix: [], limit: 100 });
    note(work, "after recording");

    // Stop it. A terminal's Ctrl-C signals the whole process group: the CLI then exits at
    // once (130) and its exit handler sends SIGTERM to its child, the server, while the
    // server is still flushing: measured here, that sometimes leaves the checkpointer file
    // truncated to 0 bytes and the ops file unwritten (`--group` does that). So SIGINT goes
    // to the server (the CLI's child) first; it flushes the three files and exits; then the
    // CLI.
    const stopAt = Date.now();
    const group = process.argv.includes("--group");
    const child = childOf(server.pid);
    process.kill(group || child == null ? -server.pid : child, "SIGINT");
    for (let i = 0; child != null && !group && alive(child); i++) {
      if (i > 200) throw new Error("the server did not stop within 20 s of SIGINT");
      await sleep(100);
    }
    note(work, `the server (pid ${child}) exited ${Date.now() - stopAt} ms after SIGINT`);
    if (!group) process.kill(-server.pid, "SIGINT");
    const how = await exited;
    note(work, `the CLI exited (${JSON.stringify(how)}) ${Date.now() - stopAt} ms after SIGINT`);
    for (let i = 0; groupAlive(server.pid); i++) {
      if (i > 200) {
        process.kill(-server.pid, "SIGKILL");
        throw new Error("the server did not stop within 20 s of SIGINT");
      }
      await sleep(100);
    }
    note(work, `every process exited ${Date.now() - stopAt} ms after SIGINT`);

    fs.rmSync(out, { recursive: true, force: true });
    fs.mkdirSync(out, { recursive: true });
    fs.cpSync(path.join(work, ".langgraph_api"), path.join(out, ".langgraph_api"), { recursive: true });
    fs.writeFileSync(path.join(out, "expected.json"), JSON.stringify(expected, null, 2) + "\n");
    console.error(`wrote ${out}`);
  } finally {
    if (groupAlive(server.pid)) process.kill(-server.pid, "SIGKILL");
    if (!process.env.KEEP) fs.rmSync(work, { recursive: true, force: true });
    else console.error(`kept ${work}`);
  }
}

/** The first child process of `pid` (Linux: /proc/<pid>/task/<pid>/children). */
function childOf(pid) {
  try {
    const first = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)[0];
    return first ? Number(first) : null;
  } catch {
    return null;
  }
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function groupAlive(pgid) {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function brief(s) {
  return {
    checkpoint_id: s.checkpoint.checkpoint_id,
    checkpoint_ns: s.checkpoint.checkpoint_ns,
    parent_checkpoint_id: s.parent_checkpoint?.checkpoint_id ?? null,
    metadata: s.metadata,
    next: s.next,
    created_at: s.created_at,
  };
}

main().catch((e) => {
  console.error(e.stack ?? String(e));
  process.exit(1);
});

// The LangGraph.js side of bench/js.sh: a long chat thread written by the real JS library, and
// the time JS's own savers take to load its full decoded history.
//
//   node tests/js-fixtures/bench.mjs build (--sqlite FILE | --pg URL) --checkpoints N
//   node tests/js-fixtures/bench.mjs time  (--sqlite FILE | --pg URL) [--runs R]
//
// build: thread `bench`, one graph step per checkpoint. The state is a window of the last 20
// messages (HumanMessage / AIMessage with a tool call every 5th step / ToolMessage, ~300 chars
// each, stored as lc envelopes) plus a counter, so each checkpoint stays the same size.
// time: `for await (const t of saver.list({configurable: {thread_id: "bench"}}))` — every
// checkpoint with its channel values and pending writes revived — R times (default 5); prints
// one JSON line {backend, checkpoints, seconds: [min, median, max]} (the same measure as
// `flashback-bench DB THREAD`, which loads the same).
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : dflt;
};
const [mode] = args;
const sqlite = opt("--sqlite");
const pgUrl = opt("--pg");
if (!["build", "time"].includes(mode) || !sqlite === !pgUrl) {
  console.error("usage: bench.mjs build|time (--sqlite FILE | --pg URL) [--checkpoints N] [--runs R]");
  process.exit(2);
}

const saver = sqlite ? SqliteSaver.fromConnString(sqlite) : PostgresSaver.fromConnString(pgUrl);
const config = { configurable: { thread_id: "bench" } };
const TEXT = "The quick brown fox jumps over the lazy dog while the model keeps thinking. ".repeat(4);

const State = Annotation.Root({
  window: Annotation({ reducer: (a, b) => a.concat(b).slice(-20), default: () => [] }),
  counter: Annotation({ reducer: (_a, b) => b, default: () => 0 }),
});

function message(i) {
  if (i % 5 === 1) {
    return new AIMessage({
      id: `ai-${i}`,
      content: "",
      tool_calls: [{ id: `call-${i}`, name: "lookup", args: { query: `q${i}`, page: i }, type: "tool_call" }],
    });
  }
  if (i % 5 === 2) return new ToolMessage({ id: `tool-${i}`, tool_call_id: `call-${i - 1}`, name: "lookup", content: `${i}: ${TEXT}` });
  if (i % 5 === 0) return new HumanMessage({ id: `human-${i}`, content: `${i}: ${TEXT}` });
  return new AIMessage({
    id: `ai-${i}`,
    content: `${i}: ${TEXT}`,
    usage_metadata: { input_tokens: 100 + i, output_tokens: 20, total_tokens: 120 + i },
  });
}

async function build(n) {
  if (pgUrl) await saver.setup();
  const graph = new StateGraph(State)
    .addNode("step", (s) => ({ window: [message(s.counter + 1)], counter: s.counter + 1 }))
    .addEdge(START, "step")
    .addConditionalEdges("step", (s) => (s.counter + 2 >= n ? END : "step"), ["step", END])
    .compile({ checkpointer: saver });
  await graph.invoke({ counter: 0 }, { ...config, recursionLimit: n + 10 });
  let count = 0;
  for await (const _t of saver.list(config)) count += 1;
  console.log(JSON.stringify({ backend: sqlite ? "sqlite" : "postgres", checkpoints: count }));
}

async function time(runs) {
  const seconds = [];
  let checkpoints = 0;
  for (let r = 0; r < runs; r++) {
    const t0 = process.hrtime.bigint();
    let count = 0;
    for await (const t of saver.list(config)) {
      if (t.checkpoint) count += 1;
    }
    seconds.push(Number(process.hrtime.bigint() - t0) / 1e9);
    checkpoints = count;
  }
  seconds.sort((a, b) => a - b);
  const median = seconds[Math.floor(seconds.length / 2)];
  const backend = sqlite ? "sqlite" : "postgres";
  console.log(JSON.stringify({ backend, checkpoints, seconds: [seconds[0], median, seconds[seconds.length - 1]] }));
}

try {
  if (mode === "build") await build(Number(opt("--checkpoints", "2500")));
  else await time(Number(opt("--runs", "5")));
} finally {
  if (pgUrl) await saver.end();
}

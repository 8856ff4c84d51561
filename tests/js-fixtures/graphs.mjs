// Scenario graphs for generate.mjs: real LangGraph.js graphs, no LLM, no network.
// AI messages are scripted and every message gets a fixed id, so only checkpoint ids,
// timestamps, channel versions and task ids differ between runs.
import {
  Annotation,
  Command,
  END,
  MessagesAnnotation,
  Send,
  START,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";

export const cfg = (threadId, extra = {}) => ({ configurable: { thread_id: threadId, ...extra } });

const concat = (a, b) => a.concat(Array.isArray(b) ? b : [b]);

// 1. chat-tools ------------------------------------------------------------------------
const TOOLS = { add: ({ a, b }) => a + b, multiply: ({ a, b }) => a * b };

function buildChat(checkpointer) {
  const agent = (state) => {
    const last = state.messages[state.messages.length - 1];
    const humans = state.messages.filter((m) => m.getType() === "human").length;
    if (last.getType() === "human" && humans === 1) {
      return {
        messages: [
          new AIMessage({
            id: "ai-1",
            content: "",
            tool_calls: [
              { id: "call_add", name: "add", args: { a: 2, b: 3 }, type: "tool_call" },
              { id: "call_mul", name: "multiply", args: { a: 4, b: 5 }, type: "tool_call" },
            ],
          }),
        ],
      };
    }
    if (last.getType() === "tool") {
      return {
        messages: [
          new AIMessage({
            id: "ai-2",
            content: "2 + 3 = 5 and 4 * 5 = 20.",
            usage_metadata: { input_tokens: 42, output_tokens: 12, total_tokens: 54 },
            response_metadata: { model_name: "scripted", finish_reason: "stop" },
          }),
        ],
      };
    }
    return { messages: [new AIMessage({ id: `ai-${humans + 1}`, content: "You're welcome!" })] };
  };
  // ToolNode-like: one ToolMessage per tool call of the last AI message (fixed ids).
  const tools = (state) => {
    const last = state.messages[state.messages.length - 1];
    return {
      messages: last.tool_calls.map(
        (tc) =>
          new ToolMessage({
            id: `tool-${tc.id}`,
            tool_call_id: tc.id,
            name: tc.name,
            content: String(TOOLS[tc.name](tc.args)),
          })
      ),
    };
  };
  const route = (state) => {
    const last = state.messages[state.messages.length - 1];
    return last.tool_calls?.length ? "tools" : END;
  };
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", agent)
    .addNode("tools", tools)
    .addEdge(START, "agent")
    .addConditionalEdges("agent", route, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}

async function runChat(graph, tid) {
  const config = cfg(tid, { user_id: "u-42" });
  await graph.invoke(
    { messages: [new HumanMessage({ id: "human-1", content: "What is 2 + 3 and 4 * 5?" })] },
    { ...config, metadata: { tenant: "acme" } }
  );
  await graph.invoke({ messages: [new HumanMessage({ id: "human-2", content: "Thanks!" })] }, config);
}

// 2/3. interrupts ---------------------------------------------------------------------
const ReviewState = Annotation.Root({
  draft: Annotation(),
  due: Annotation(),
  decision: Annotation(),
  confirmed: Annotation(),
  log: Annotation({ reducer: concat, default: () => [] }),
});

function buildReview(checkpointer) {
  const prepare = () => ({
    draft: "Quarterly report v1",
    due: new Date(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), // a JS Date in state
    log: ["prepared"],
  });
  const review = (state) => {
    const decision = interrupt({ question: "Approve this draft?", draft: state.draft });
    const confirmed = interrupt("Really publish?");
    return { decision, confirmed, log: ["reviewed"] };
  };
  const finish = (state) => ({ log: [`published: ${state.decision?.approved}`] });
  return new StateGraph(ReviewState)
    .addNode("prepare", prepare)
    .addNode("review", review)
    .addNode("finish", finish)
    .addEdge(START, "prepare")
    .addEdge("prepare", "review")
    .addEdge("review", "finish")
    .addEdge("finish", END)
    .compile({ checkpointer });
}

async function runInterruptWaiting(graph, tid) {
  await graph.invoke({ log: ["start"] }, cfg(tid));
}

async function runInterruptResumed(graph, tid) {
  await graph.invoke({ log: ["start"] }, cfg(tid));
  await graph.invoke(new Command({ resume: { approved: true, comment: "LGTM" } }), cfg(tid));
  await graph.invoke(new Command({ resume: "yes" }), cfg(tid));
}

// 4. forked -------------------------------------------------------------------------------
const ForkState = Annotation.Root({
  log: Annotation({ reducer: concat, default: () => [] }),
  note: Annotation({ reducer: (_a, b) => b, default: () => "none" }),
  counter: Annotation(),
});

function buildForked(checkpointer) {
  return new StateGraph(ForkState)
    .addNode("step1", () => ({ log: ["step1"], counter: 1 }))
    .addNode("step2", (s) => ({ log: [`step2 (note=${s.note})`], counter: s.counter + 1 }))
    .addNode("step3", (s) => ({ log: ["step3"], counter: s.counter * 10 }))
    .addEdge(START, "step1")
    .addEdge("step1", "step2")
    .addEdge("step2", "step3")
    .addEdge("step3", END)
    .compile({ checkpointer });
}

async function runForked(graph, tid) {
  await graph.invoke({ log: ["start"] }, cfg(tid));
  let afterStep1;
  for await (const snap of graph.getStateHistory(cfg(tid))) {
    if (snap.next.length === 1 && snap.next[0] === "step2") afterStep1 = snap.config;
  }
  const forkConfig = await graph.updateState(afterStep1, { log: ["edited"], note: "forked" });
  await graph.invoke(null, forkConfig);
}

// 5. subgraph -----------------------------------------------------------------------------
const SubState = Annotation.Root({
  topic: Annotation(),
  findings: Annotation({ reducer: concat, default: () => [] }),
});
const ParentState = Annotation.Root({
  topic: Annotation(),
  findings: Annotation({ reducer: concat, default: () => [] }),
  report: Annotation(),
});

function buildSubgraph(checkpointer) {
  const sub = new StateGraph(SubState)
    .addNode("research", (s) => ({ findings: [`fact about ${s.topic}`] }))
    .addNode("review", (s) => ({ findings: [`checked ${s.findings.length} finding(s)`] }))
    .addEdge(START, "research")
    .addEdge("research", "review")
    .addEdge("review", END)
    .compile();
  return new StateGraph(ParentState)
    .addNode("prepare", () => ({ topic: "otters" }))
    .addNode("research_team", sub)
    .addNode("publish", (s) => ({ report: `Report on ${s.topic}: ${s.findings.join("; ")}` }))
    .addEdge(START, "prepare")
    .addEdge("prepare", "research_team")
    .addEdge("research_team", "publish")
    .addEdge("publish", END)
    .compile({ checkpointer });
}

async function runSubgraph(graph, tid) {
  await graph.invoke({ topic: "unset" }, cfg(tid));
}

// 6. send-fanout --------------------------------------------------------------------------
const FanState = Annotation.Root({
  items: Annotation(),
  results: Annotation({ reducer: concat, default: () => [] }),
  summary: Annotation(),
});

function buildFanout(checkpointer) {
  const route = (s) => s.items.map((item, index) => new Send("work", { item, index }));
  return new StateGraph(FanState)
    .addNode("plan", () => ({ items: ["alpha", "beta", "gamma"] }))
    .addNode("work", (arg) => ({ results: [`${arg.index}:${arg.item.toUpperCase()}`] }))
    .addNode("summarize", (s) => ({ summary: [...s.results].sort().join(",") }))
    .addEdge(START, "plan")
    .addConditionalEdges("plan", route, ["work"])
    .addEdge("work", "summarize")
    .addEdge("summarize", END)
    .compile({ checkpointer });
}

async function runFanout(graph, tid) {
  await graph.invoke({ items: [] }, cfg(tid));
}

// thread id -> [builder, runner]; the builder is reused to read back with a fresh saver.
export const SCENARIOS = {
  "chat-tools": [buildChat, runChat],
  "interrupt-waiting": [buildReview, runInterruptWaiting],
  "interrupt-resumed": [buildReview, runInterruptResumed],
  forked: [buildForked, runForked],
  subgraph: [buildSubgraph, runSubgraph],
  "send-fanout": [buildFanout, runFanout],
};

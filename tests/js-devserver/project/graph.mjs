// The graph the LangGraph.js dev server runs for Flashback's fixture: no LLM, no network.
// A scripted "model" asks for one tool call, a tool answers, a subgraph writes a note, and a
// review node interrupts when the human asks for approval. "fail" in the input raises.
import {
  Annotation,
  END,
  MessagesAnnotation,
  START,
  StateGraph,
  interrupt,
} from "@langchain/langgraph";
import { AIMessage, ToolMessage } from "@langchain/core/messages";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  notes: Annotation({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const humanText = (state) => {
  const humans = state.messages.filter((m) => m.getType() === "human");
  const last = humans[humans.length - 1];
  return typeof last?.content === "string" ? last.content : "";
};

const model = (state) => {
  const last = state.messages[state.messages.length - 1];
  if (humanText(state).includes("fail")) throw new Error("the scripted model failed on purpose");
  if (last.getType() === "human") {
    const city = humanText(state).includes("Bergen") ? "Bergen" : "Oslo";
    return {
      messages: [
        new AIMessage({
          id: `ai-call-${state.messages.length}`,
          content: "",
          tool_calls: [{ id: `call_weather_${state.messages.length}`, name: "get_weather", args: { city }, type: "tool_call" }],
        }),
      ],
    };
  }
  return {
    messages: [
      new AIMessage({
        id: `ai-answer-${state.messages.length}`,
        content: `It is sunny in ${last.content.split(" ").pop()}`,
        usage_metadata: { input_tokens: 20, output_tokens: 7, total_tokens: 27 },
      }),
    ],
  };
};

const tools = (state) => {
  const last = state.messages[state.messages.length - 1];
  return {
    messages: last.tool_calls.map(
      (tc) =>
        new ToolMessage({
          id: `tool-${tc.id}-${state.messages.length}`,
          tool_call_id: tc.id,
          name: tc.name,
          content: `sunny in ${tc.args.city}`,
        }),
    ),
  };
};

const summarizer = new StateGraph(State)
  .addNode("summarize", (state) => ({ notes: [`summary of ${state.messages.length} messages`] }))
  .addEdge(START, "summarize")
  .addEdge("summarize", END)
  .compile();

const review = (state) => {
  if (!humanText(state).includes("approval")) return {};
  const answer = interrupt({ question: "approve the answer?" });
  return { notes: [`review: ${answer}`] };
};

export const graph = new StateGraph(State)
  .addNode("model", model)
  .addNode("tools", tools)
  .addNode("summarizer", summarizer)
  .addNode("review", review)
  .addEdge(START, "model")
  .addConditionalEdges("model", (s) =>
    s.messages[s.messages.length - 1].tool_calls?.length ? "tools" : "summarizer",
  )
  .addEdge("tools", "model")
  .addEdge("summarizer", "review")
  .addEdge("review", END)
  .compile();

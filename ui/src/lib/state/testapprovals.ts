// Test helpers: HumanInTheLoopMiddleware approvals as the API sends them (issue 32's contract).
import type { Approval, ApprovalAction } from "../ipc/bindings";
import type { Waiting } from "./resume";

export const action = (over: Partial<ApprovalAction> = {}): ApprovalAction => ({
  name: "get_weather",
  args: { city: "Paris" },
  description: "Tool execution requires approval\n\nTool: get_weather\nArgs: {'city': 'Paris'}",
  allowed_decisions: ["approve", "edit", "reject"],
  tool_call_id: "call_1",
  ...over,
});

export const batched = (actions: ApprovalAction[], over: Partial<Approval> = {}): Approval => ({
  interrupt_id: "i-batch",
  task_id: "t-model",
  node: "HumanInTheLoopMiddleware.after_model",
  mode: "batched",
  actions,
  response_schema: null,
  ...over,
});

export const perCall = (a: ApprovalAction, over: Partial<Approval> = {}): Approval => ({
  interrupt_id: `i-${a.tool_call_id}`,
  task_id: `t-${a.tool_call_id}`,
  node: "tools",
  mode: "per_call",
  actions: [a],
  response_schema: null,
  ...over,
});

export const waitingOn = (id: string | null, task: string, node = "tools"): Waiting => ({ node, task, id, value: null, question: "" });

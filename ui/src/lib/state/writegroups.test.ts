import { describe, expect, it } from "vitest";
import { appliedTasks, groupLabel, madeByHeading, nextStepHeading, notMadeByAStep, NULL_TASK, writers } from "./writegroups";

describe("groupLabel", () => {
  it("names the node, then the null task, then a short task id", () => {
    expect(groupLabel({ node: "tools", task_id: "9f1c2e7a-aaaa" })).toBe("tools");
    expect(groupLabel({ node: null, task_id: NULL_TASK })).toBe("input / update_state");
    expect(groupLabel({ node: null, task_id: "9f1c2e7a-aaaa" })).toBe("task 9f1c2e7a");
  });

  it("names a middleware hook as the DAG rows and the CLI do", () => {
    expect(groupLabel({ node: "SummarizationMiddleware.before_model", task_id: "t" })).toBe("Summarization · before model");
  });
});

describe("whose writes", () => {
  const g = (node: string | null, task_id = "t") => ({ node, task_id });

  it("heads the writes that made a checkpoint by the nodes that wrote them", () => {
    expect(madeByHeading([g("handle_greeting")])).toBe("handle_greeting wrote");
    expect(madeByHeading([g("fetch_ok"), g("fetch_bad"), g("fetch_ok")])).toBe("fetch_ok, fetch_bad wrote");
    expect(writers([g(null, NULL_TASK)])).toBe("input / update_state");
  });

  it("heads a checkpoint's own pending writes as the next step's", () => {
    expect(nextStepHeading([g("generate_response")])).toBe("Writes of the next step: generate_response");
    expect(nextStepHeading([])).toBe("Writes of the next step");
  });

  it("says why no step made a checkpoint", () => {
    expect(notMadeByAStep("update", true)).toContain("update_state made this checkpoint");
    expect(notMadeByAStep("fork", true)).toContain("A fork made");
    expect(notMadeByAStep("input", false)).toContain("holds an input");
    expect(notMadeByAStep("loop", false)).toContain("first checkpoint");
    expect(notMadeByAStep("loop", true)).toContain("No writes of the step");
  });
});

describe("appliedTasks", () => {
  it("collects the tasks whose writes were applied", () => {
    expect([...appliedTasks([{ task_id: "a", node: "tools", channels: ["messages"] }, { task_id: NULL_TASK, node: null, channels: [] }])]).toEqual(["a", NULL_TASK]);
    expect(appliedTasks(undefined).size).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { appliedTasks, groupLabel, NULL_TASK } from "./writegroups";

describe("groupLabel", () => {
  it("names the node, then the null task, then a short task id", () => {
    expect(groupLabel({ node: "tools", task_id: "9f1c2e7a-aaaa" })).toBe("tools");
    expect(groupLabel({ node: null, task_id: NULL_TASK })).toBe("input / update_state");
    expect(groupLabel({ node: null, task_id: "9f1c2e7a-aaaa" })).toBe("task 9f1c2e7a");
  });
});

describe("appliedTasks", () => {
  it("collects the tasks whose writes were applied", () => {
    expect([...appliedTasks([{ task_id: "a", node: "tools", channels: ["messages"] }, { task_id: NULL_TASK, node: null, channels: [] }])]).toEqual(["a", NULL_TASK]);
    expect(appliedTasks(undefined).size).toBe(0);
  });
});

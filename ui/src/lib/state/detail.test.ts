import { describe, expect, it } from "vitest";
import { changedChannels, channelValues, deltasText, rebuiltLabel, reducerName, splitChannels, storedAsDeltas } from "./detail";

const info = (channel: string, control = false, internal = control) => ({
  channel,
  version: "1",
  type_name: "list",
  size: 3,
  error: null,
  control,
  internal,
  default: false,
});

describe("channelValues", () => {
  it("joins each channel with its value, in the channels' stored order", () => {
    const rows = channelValues({
      channels: [info("messages"), info("branch:to:agent", true), info("log")],
      values: { log: ["a"], messages: [{ $type: "x" }], "branch:to:agent": null },
    });
    expect(rows.map((r) => r.channel)).toEqual(["messages", "branch:to:agent", "log"]);
    expect(rows[0].value).toEqual([{ $type: "x" }]);
    expect(rows[1].control).toBe(true);
    expect(rows[2].value).toEqual(["a"]);
  });

  it("gives null for a channel without a value", () => {
    expect(channelValues({ channels: [info("gone")], values: {} })[0].value).toBeNull();
  });
});

describe("rebuilt DeltaChannels", () => {
  const r = { from_checkpoint: "c1", from_step: 4, writes: 3, reducer: "add_messages" as const, inferred: true };
  it("says where the value was rebuilt from", () => {
    expect(rebuiltLabel(r)).toBe("rebuilt from step 4 + 3 writes");
    expect(rebuiltLabel({ ...r, writes: 1 })).toBe("rebuilt from step 4 + 1 write");
    expect(rebuiltLabel({ ...r, from_checkpoint: null, from_step: null })).toBe("rebuilt from empty + 3 writes");
    expect(rebuiltLabel({ ...r, error: "no" })).toBe("cannot be rebuilt");
  });
  it("names reducers as the API takes them", () => {
    expect(["list_append", "add_messages", "dict_merge", "last_value"].map((x) => reducerName(x as never))).toEqual([
      "append",
      "add_messages",
      "merge",
      "last",
    ]);
  });
});

describe("changed channels", () => {
  it("come from the checkpoint's updated_channels, with what a replay found", () => {
    expect([...changedChannels({ updated_channels: ["messages", "branch:to:tools"] }, new Set())]).toEqual(["messages", "branch:to:tools"]);
    expect([...changedChannels({ updated_channels: null }, new Set(["log"]))]).toEqual(["log"]);
    expect([...changedChannels({ updated_channels: ["log"] }, new Set(["log"]))]).toEqual(["log"]);
  });
});

describe("splitChannels", () => {
  it("folds control channels and agent bookkeeping under internal, in stored order", () => {
    const all = [info("messages"), info("__pregel_tasks", true), info("jump_to", false, true), info("todos"), info("branch:to:tools", true)];
    const { shown, internal } = splitChannels(all);
    expect(shown.map((c) => c.channel)).toEqual(["messages", "todos"]);
    expect(internal.map((c) => c.channel)).toEqual(["__pregel_tasks", "jump_to", "branch:to:tools"]);
  });

  it("takes the control channels as internal when the backend does not say (before issue 32)", () => {
    const old = [
      { channel: "messages", control: false },
      { channel: "branch:to:agent", control: true },
    ];
    expect(splitChannels(old).internal.map((c) => c.channel)).toEqual(["branch:to:agent"]);
    expect(splitChannels(old).shown.map((c) => c.channel)).toEqual(["messages"]);
  });
});

describe("DeltaChannels in the stored view", () => {
  it("are the channels LangGraph counts deltas of and stores no value of here", () => {
    const metadata = { step: 5, counters_since_delta_snapshot: { messages: [12, 12], log: [2, 3], odd: "x" } };
    const values = { log: { $type: "_DeltaSnapshot" }, count: 3 };
    expect(storedAsDeltas({ metadata, values })).toEqual([
      { channel: "messages", deltas: 12 },
      { channel: "odd", deltas: null },
    ]);
    expect(deltasText({ channel: "messages", deltas: 12 })).toBe(
      "messages is stored as 12 deltas since its last snapshot, not as a value: switch to the graph's view to see the value.",
    );
    expect(deltasText({ channel: "log", deltas: 1 })).toContain("log is stored as 1 delta since");
    expect(deltasText({ channel: "x", deltas: null })).toContain("x is stored as deltas since");
  });

  it("are none without LangGraph's counters", () => {
    expect(storedAsDeltas({ metadata: { step: 1 }, values: {} })).toEqual([]);
    expect(storedAsDeltas({ metadata: null, values: {} })).toEqual([]);
    expect(storedAsDeltas({ metadata: { counters_since_delta_snapshot: [1] }, values: {} })).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import { channelValues } from "./detail";

const info = (channel: string, control = false) => ({ channel, version: "1", type_name: "list", size: 3, error: null, control });

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

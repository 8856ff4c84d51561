import { describe, expect, it } from "vitest";
import { forkedText, resumeCall, snippets } from "./forkhint";

const fork = { thread_id: "t-1", checkpoint_ns: "", checkpoint_id: "1f0a2b3c-4d5e-6f70-8001-0123456789ab", parent_checkpoint_id: "p", step: 3 };

describe("resume hints", () => {
  it("speaks the language of the program that wrote the database", () => {
    expect(resumeCall("python", "t-1")).toBe('graph.invoke(None, {"configurable": {"thread_id": "t-1"}})');
    expect(resumeCall("js", "t-1")).toBe('graph.invoke(null, { configurable: { thread_id: "t-1" } })');
    expect(forkedText("Forked", fork, "t-1", "js")).toContain("Resume it in LangGraph.js with graph.invoke(null,");
    expect(forkedText("Merged", fork, "t-1", "python")).toMatch(/^Merged: new checkpoint \S+ \(step 3\) is the head\. Resume it in Python/);
  });

  it("quotes thread ids that hold quotes", () => {
    expect(resumeCall("python", 'a"b')).toBe('graph.invoke(None, {"configurable": {"thread_id": "a\\"b"}})');
  });

  it("quotes the dialogs' code in the program's language", () => {
    expect(snippets("js").command).toBe("new Command({ resume: … })");
    expect(snippets("js").rerunInvoke).toContain("JSON.parse(process.env.FLASHBACK_CONFIG)");
    expect(snippets("python").invoke).toBe("graph.invoke(None, config)");
    expect(snippets("python").rerunResume).toContain("Command(resume=json.loads(");
  });
});

import { describe, expect, it } from "vitest";
import { slotsOf } from "./decisions";
import { ResumeForm } from "./resumeform.svelte";
import { action, batched, perCall, waitingOn } from "./testapprovals";
import { WEATHER_DECISION } from "./testschemas";

describe("ResumeForm", () => {
  it("starts approving every call, and shows the value it sends", () => {
    const form = new ResumeForm(slotsOf([batched([action(), action({ tool_call_id: "c2" })])], []));
    expect(form.result).toEqual({ ok: true, value: { decisions: [{ type: "approve" }, { type: "approve" }] } });
    expect(JSON.parse(form.text)).toEqual({ decisions: [{ type: "approve" }, { type: "approve" }] });
  });

  it("follows the choices; a bad one blocks the send and is told on its call", () => {
    const form = new ResumeForm(slotsOf([perCall(action({ allowed_decisions: ["approve", "edit", "respond"] }), { response_schema: WEATHER_DECISION })], []));
    form.choose(0, 0, "edit");
    form.setArgs(0, 0, '{"city": 3}');
    expect(form.result.ok).toBe(false);
    expect(form.errorsOf(0, 0).map((e) => `${e.path}: ${e.message}`)).toEqual(["arguments.city: must be text"]);
    expect(form.text).toBe("");
    form.setArgs(0, 0, '{"city": "Oslo"}');
    expect(form.result).toEqual({ ok: true, value: { type: "edit", edited_action: { name: "get_weather", args: { city: "Oslo" } } } });
    form.choose(0, 0, "respond");
    form.setMessage(0, 0, "Sunny");
    expect(JSON.parse(form.text)).toEqual({ type: "respond", message: "Sunny" });
  });

  it("answers a generic interrupt beside an approval, keyed by id", () => {
    const form = new ResumeForm(slotsOf([perCall(action())], [waitingOn("g1", "t-g", "ask")]));
    expect(form.result.ok).toBe(false);
    expect(form.errorsOf(1, null)[0].message).toBe("required: the value to resume it with, as JSON");
    form.setText(1, '{"ok": true}');
    expect(form.result).toEqual({ ok: true, value: { "i-call_1": { type: "approve" }, g1: { ok: true } } });
  });

  it("takes a value edited by hand, checked the same way, until rebuilt from the choices", () => {
    const form = new ResumeForm(slotsOf([batched([action()])], []));
    form.edit('{"decisions": [{"type": "respond", "message": "x"}]}');
    expect(form.result).toEqual({ ok: false, errors: ['decisions[0].type: must be one of "approve", "edit", "reject"'] });
    expect(form.errorsOf(0, 0)).toEqual([]);
    form.edit('{"decisions": [{"type": "reject", "message": "later"}]}');
    expect(form.result).toEqual({ ok: true, value: { decisions: [{ type: "reject", message: "later" }] } });
    form.edit("yes");
    expect(form.result.ok).toBe(false);
    form.edit("  ");
    expect(form.result).toEqual({ ok: false, errors: ["empty: write the resume value, or rebuild it from the choices"] });
    form.rebuild();
    expect(form.result).toEqual({ ok: true, value: { decisions: [{ type: "approve" }] } });
  });

  it("says why several interrupts without ids cannot be answered together", () => {
    const form = new ResumeForm(slotsOf([perCall(action(), { interrupt_id: null }), perCall(action({ tool_call_id: "c2" }))], []));
    expect(form.result.ok).toBe(false);
    expect(form.result.ok === false && form.result.errors[0]).toMatch(/^several interrupts wait and not all have an id/);
  });
});

import { describe, expect, it } from "vitest";
import { canFork, checkMessage, misfitText } from "./editcheck";
import type { ParseResult } from "./jsontext";

const bad = (path: string | null, message: string) => ({ ok: false, path, message });
const good: ParseResult = { ok: true, value: [1] };
const broken: ParseResult = { ok: false, message: "unexpected end of input", line: 1, column: 2, offset: 1 };

describe("the edit's verdict", () => {
  it("names the path once", () => {
    const check = bad("values.when", "values.when: expected an ISO datetime");
    expect(checkMessage(check)).toBe("expected an ISO datetime");
    expect(misfitText(check)).toBe("Does not fit at values.when: expected an ISO datetime");
    expect((misfitText(check)!.match(/values\.when/g) ?? []).length).toBe(1);
  });

  it("says the root as the backend does, without repeating it", () => {
    expect(misfitText(bad("", "$: not an object"))).toBe("Does not fit: not an object");
    expect(misfitText(bad(null, "choose a channel"))).toBe("Does not fit: choose a channel");
  });

  it("keeps a message that does not start with its path", () => {
    expect(misfitText(bad("values.log[1]", "a datetime in values.log[1] cannot be read"))).toBe(
      "Does not fit at values.log[1]: a datetime in values.log[1] cannot be read",
    );
  });

  it("says nothing when the value fits or is not checked yet", () => {
    expect(misfitText(null)).toBeNull();
    expect(misfitText({ ok: true, path: null, message: null })).toBeNull();
    expect(misfitText(bad("values.x", ""))).toBe("Does not fit at values.x.");
  });

  it("lets the fork be pressed only for a value that parses and fits", () => {
    const fits = { ok: true, path: null, message: null };
    expect(canFork({ parsed: good, check: fits, checking: false, busy: false })).toBe(true);
    expect(canFork({ parsed: good, check: bad("values.x", "values.x: no"), checking: false, busy: false })).toBe(false);
    expect(canFork({ parsed: broken, check: null, checking: false, busy: false })).toBe(false);
    expect(canFork({ parsed: null, check: null, checking: false, busy: false })).toBe(false);
    expect(canFork({ parsed: good, check: null, checking: true, busy: false })).toBe(false);
    expect(canFork({ parsed: good, check: fits, checking: false, busy: true })).toBe(false);
    // The check could not run (its error is shown): the engine decides, with its reason.
    expect(canFork({ parsed: good, check: null, checking: false, busy: false })).toBe(true);
  });
});

import { describe, expect, it } from "vitest";
import type { EncryptionInfo } from "../ipc/bindings";
import { keyProblem, plaintextNote, sealedBanner } from "./sealed";

const info = (extra: Partial<EncryptionInfo> = {}): EncryptionInfo => ({
  tags: ["msgpack+aes"],
  ciphers: ["aes"],
  unlocked: false,
  key_source: null,
  key_problem: null,
  mixed: false,
  ...extra,
});

describe("sealed", () => {
  it("says what an encrypted database needs", () => {
    expect(sealedBanner(null)).toBeNull();
    expect(sealedBanner(info())?.state).toBe("locked");
    expect(sealedBanner(info())?.text).toContain("msgpack+aes");
    expect(sealedBanner(info({ unlocked: true, key_source: "env" }))).toBeNull();
    const wrong = sealedBanner(info({ unlocked: true, key_source: "env", key_problem: "the key in LANGGRAPH_AES_KEY does not open it" }));
    expect(wrong?.state).toBe("wrong");
    expect(wrong?.text).toContain("LANGGRAPH_AES_KEY");
    expect(sealedBanner(info({ unlocked: true, mixed: true }))?.text).toContain("plaintext");
  });

  it("names a cipher Flashback cannot open instead of asking for a key", () => {
    const kms = info({ tags: ["msgpack+kms"], ciphers: ["kms"], unlocked: true, key_source: "env" });
    expect(sealedBanner(kms)?.state).toBe("foreign");
    expect(sealedBanner(kms)?.text).toContain("sealed with `kms`, a cipher Flashback cannot open");
    expect(sealedBanner(kms)?.text).not.toContain("LANGGRAPH_AES_KEY");
    expect(sealedBanner({ ...kms, unlocked: false })?.state).toBe("foreign");
    const some = sealedBanner(info({ tags: ["msgpack+aes", "msgpack+des"], ciphers: ["aes", "des"], unlocked: true }));
    expect(some?.state).toBe("open");
    expect(some?.text).toContain("Some values are sealed with `des`, a cipher");
    expect(sealedBanner(info({ ciphers: ["aes"], unlocked: true }))).toBeNull();
  });

  it("checks a key's length in UTF-8 bytes", () => {
    expect(keyProblem("")).toMatch(/Enter/);
    expect(keyProblem("0123456789abcdef")).toBeNull();
    expect(keyProblem("x".repeat(24))).toBeNull();
    expect(keyProblem("x".repeat(32))).toBeNull();
    expect(keyProblem("x".repeat(31))).toContain("31 bytes");
    // 8 characters of 2 bytes each: 16 bytes, as LangGraph counts them.
    expect(keyProblem("éééééééé")).toBeNull();
  });

  it("lists plaintext parts", () => {
    expect(plaintextNote([])).toBeNull();
    expect(plaintextNote(["write t1 notes"])).toBe("Stored as plaintext in an encrypted database: write t1 notes.");
    expect(plaintextNote(["a", "b", "c", "d", "e", "f"])).toContain("and 2 more");
  });
});

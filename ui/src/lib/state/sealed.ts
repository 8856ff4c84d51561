// Encrypted databases (LangGraph's EncryptedSerializer): what the banner says, and checking a
// typed key the way LangGraph reads LANGGRAPH_AES_KEY (its UTF-8 bytes: 16, 24 or 32).

import { plural } from "./format";
import type { EncryptionInfo } from "../ipc/bindings";

export interface SealedBanner {
  /** "locked" (no key), "wrong" (a key that does not open it), "open" (unlocked), "foreign" (sealed with ciphers Flashback cannot open: no key helps). */
  state: "locked" | "wrong" | "open" | "foreign";
  text: string;
}

/** `kms` → "`kms`, a cipher"; several → "`kms`, `des`, ciphers". */
function cipherNames(foreign: string[]): string {
  return `${foreign.map((c) => `\`${c}\``).join(", ")}, ${foreign.length === 1 ? "a cipher" : "ciphers"}`;
}

/** The banner for an encrypted database; `null` for a plaintext one or when nothing needs saying. */
export function sealedBanner(e: EncryptionInfo | null | undefined): SealedBanner | null {
  if (!e) return null;
  const tags = e.tags.join(", ");
  const ciphers = e.ciphers ?? [];
  const foreign = ciphers.filter((c) => c !== "aes");
  if (foreign.length > 0 && foreign.length === ciphers.length) {
    return {
      state: "foreign",
      text: `This database is sealed with ${cipherNames(foreign)} Flashback cannot open (it opens LangGraph's \`aes\` only): its values stay locked, and nothing is written from them.`,
    };
  }
  if (!e.unlocked) {
    return {
      state: "locked",
      text: `This database is encrypted (${tags}). Its values are locked: unlock it with its AES key (LANGGRAPH_AES_KEY).`,
    };
  }
  if (e.key_problem) return { state: "wrong", text: `${e.key_problem}.` };
  const some =
    foreign.length > 0
      ? ` Some values are sealed with ${cipherNames(foreign)} Flashback cannot open: they stay locked, and nothing is written from them.`
      : "";
  if (e.mixed) {
    return {
      state: "open",
      text: `Encrypted (${tags}), with plaintext values among the encrypted ones: LangGraph reads them silently; they are flagged in the state view.${some}`,
    };
  }
  return some ? { state: "open", text: some.trim() } : null;
}

/** Why a typed key cannot be an AES key (`null` when it can): its UTF-8 length must be 16, 24 or 32. */
export function keyProblem(key: string): string | null {
  if (key.length === 0) return "Enter the key.";
  const n = new TextEncoder().encode(key).length;
  return [16, 24, 32].includes(n) ? null : `An AES key is 16, 24 or 32 bytes long; this one is ${plural(n, "byte")}.`;
}

/** The flagged plaintext parts of a checkpoint, as one line (`null` when there are none). */
export function plaintextNote(parts: string[] | null | undefined): string | null {
  if (!parts || parts.length === 0) return null;
  const shown = parts.slice(0, 4).join(", ");
  const more = parts.length > 4 ? ` and ${parts.length - 4} more` : "";
  return `Stored as plaintext in an encrypted database: ${shown}${more}.`;
}

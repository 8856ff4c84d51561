// The one type badge of a node in the state view: a short name with the size of containers
// and bytes (`list[3]`, `dict{4}`, `set{2}`, `bytes 12 B`, `ndarray[2×3]`, `AIMessage`,
// `datetime`, `UUID`), the full Python type in its title.

import { formatBytes, plural } from "./format";
import { shortType, type TreeNode } from "./tree";

export interface Badge {
  /** What the badge shows. */
  text: string;
  /** The full Python type (and what else the short text leaves out), for the title. */
  title: string;
}

const UNORDERED = new Set(["set", "frozenset"]);

/** The badge of a tree node. */
export function typeBadge(node: TreeNode): Badge {
  const short = shortType(node.typeName);
  const title = node.typeName;
  const n = node.children.length;
  switch (node.kind) {
    case "dict":
      return { text: `${short}{${n}}`, title };
    case "list":
      return { text: UNORDERED.has(short) ? `${short}{${n}}` : `${short}[${n}]`, title };
    case "object": {
      if (node.typeName === "numpy.ndarray") {
        const shape = node.children.find((c) => c.key === "shape");
        if (shape?.kind === "list") return { text: `ndarray[${shape.children.map((c) => c.preview).join("×")}]`, title };
      }
      return { text: short, title };
    }
    case "string":
      return { text: "str", title: node.folded ? `str, ${plural((node.fullText ?? "").length, "character")}` : "str" };
    case "null":
      return { text: "NoneType", title: "None" };
    case "bytes":
      return { text: `${short} ${formatBytes(node.size ?? 0)}`, title: `${title}, ${plural(node.size ?? 0, "byte")}` };
    case "error":
      return { text: "undecodable", title: `${title}: could not be decoded` };
    case "too_large":
      return { text: short, title: `${title}: too large to decode under the budget` };
    default:
      // number, bool, scalar (UUID, datetime, Decimal, Enum, …), secret, opaque
      return { text: short, title };
  }
}

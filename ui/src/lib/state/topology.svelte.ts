// The thread's topology (its tab): loaded when the tab shows a graph it was not loaded for (the
// DAG reloads as checkpoints land), the node whose checkpoints are listed, and opening one of
// them in the DAG — unfolding the subgraph namespaces that hide it.

import type { GraphRow, ThreadTopology, TopoCheckpoint } from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call, toFailure, type Failure } from "../ipc/api";
import { boxKey, graphPath } from "../graph/topology";
import { latest } from "./latest";
import { MARKS } from "../graph/rowinfo";
import { shortId } from "../graph/lanes";

export type TopologyLoad = (threadId: string) => Promise<ThreadTopology>;

export const loadTopology =
  (db: () => string | null): TopologyLoad =>
  (threadId) =>
    call(commands.threadTopology({ db: db() ?? "", thread_id: threadId, thread_ids: [] }));

export class TopologyState {
  data = $state.raw<ThreadTopology | null>(null);
  error = $state<Failure | null>(null);
  /** The box whose checkpoints are listed (null: none). */
  picked = $state<string | null>(null);
  private readonly loads = latest();
  private loadedFor: unknown = undefined;

  constructor(
    private readonly threadId: string,
    private readonly load: TopologyLoad,
  ) {}

  /** Load, unless it was loaded for this `version` of the thread (the DAG it showed). */
  async ensure(version: unknown) {
    if (version === this.loadedFor) return;
    this.loadedFor = version;
    await this.loads(
      this.load(this.threadId),
      (t) => {
        this.data = t;
        this.error = null;
      },
      (e) => {
        this.error = toFailure(e);
        this.loadedFor = undefined;
      },
    );
  }

  pick(key: string) {
    this.picked = this.picked === key ? null : key;
  }
}

/** The boxes of the nodes whose step made the selected row (outlined in the view). */
export function currentBoxes(row: GraphRow | null): Set<string> {
  if (!row || row.source !== "loop") return new Set();
  const g = graphPath(row.ns);
  return new Set(row.ran.map((n) => boxKey(g, n)));
}

/** A checkpoint a node ran at, as the list says it: "step 4 · 1f0e…ab · tools:1a2b · ✕ raised". */
export function runLabel(c: TopoCheckpoint): string {
  const parts = [`step ${c.step ?? "?"}`, shortId(c.id)];
  if (c.ns) parts.push(c.ns.split("|").pop() ?? c.ns);
  if (c.mark) parts.push(MARKS[c.mark].text);
  return parts.join(" · ");
}

/** What the thread screen does to open a checkpoint. */
export interface Opener {
  collapsed: string[];
  selectedKey: { ns: string; id: string } | null;
  loadGraph(select?: { ns: string; id: string }): Promise<void>;
}

/** Select checkpoint `c` in the DAG, unfolding the namespaces that hide it first. */
export function openCheckpoint(view: Opener, c: { ns: string; id: string }) {
  const key = { ns: c.ns, id: c.id };
  const hiding = view.collapsed.filter((ns) => c.ns === ns || c.ns.startsWith(`${ns}|`));
  if (!hiding.length) {
    view.selectedKey = key;
    return;
  }
  view.collapsed = view.collapsed.filter((ns) => !hiding.includes(ns));
  void view.loadGraph(key);
}

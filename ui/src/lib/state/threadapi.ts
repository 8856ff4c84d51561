// The commands the thread screen calls (tests pass a fake).
import type {
  CheckpointDetail,
  CheckpointDiff,
  CheckpointRequest,
  DiffRequest,
  ForkRequest,
  ForkResult,
  GraphRequest,
  ReplayRequest,
  ReplayStep,
  ThreadGraph,
} from "../ipc/bindings";
import { commands } from "../ipc/bindings";
import { call } from "../ipc/api";

/** The commands the thread screen calls. */
export interface ThreadApi {
  graph(req: GraphRequest): Promise<ThreadGraph>;
  detail(req: CheckpointRequest): Promise<CheckpointDetail>;
  diff(req: DiffRequest): Promise<CheckpointDiff>;
  replay(req: ReplayRequest): Promise<ReplayStep[]>;
  fork(req: ForkRequest): Promise<ForkResult>;
}

export const backendApi: ThreadApi = {
  graph: (req) => call(commands.threadGraph(req)),
  detail: (req) => call(commands.checkpointDetail(req)),
  diff: (req) => call(commands.diffCheckpoints(req)),
  replay: (req) => call(commands.replaySteps(req)),
  fork: (req) => call(commands.forkCheckpoint(req)),
};

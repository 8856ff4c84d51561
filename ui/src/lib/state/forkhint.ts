// What to tell the user after a fork, an edit or a merge: the new head, and how the program that
// wrote the database resumes it (LangGraph in Python, or LangGraph.js).
import type { Dialect, ForkResult } from "../ipc/bindings";
import { shortId } from "../graph/lanes";

/** The call that resumes thread `threadId` from its newest checkpoint, in the program's language. */
export function resumeCall(dialect: Dialect, threadId: string): string {
  const id = JSON.stringify(threadId);
  return dialect === "js"
    ? `graph.invoke(null, { configurable: { thread_id: ${id} } })`
    : `graph.invoke(None, {"configurable": {"thread_id": ${id}}})`;
}

/** The toast after `verb` (Forked, Edited, Merged…) wrote `f`. */
export function forkedText(verb: string, f: ForkResult, threadId: string, dialect: Dialect): string {
  const lang = dialect === "js" ? "LangGraph.js" : "Python";
  return `${verb}: new checkpoint ${shortId(f.checkpoint_id)} (step ${f.step}) is the head. Resume it in ${lang} with ${resumeCall(dialect, threadId)}.`;
}

/** The code the dialogs quote, in the language of the program that wrote the database (Python when none is open). */
export function snippets(dialect: Dialect | undefined) {
  return dialect === "js"
    ? {
        invoke: "graph.invoke(null, config)",
        command: "new Command({ resume: … })",
        config: "graph.getState(…) or graph.invoke(null, …)",
        rerunInvoke: "graph.invoke(null, JSON.parse(process.env.FLASHBACK_CONFIG))",
        rerunResume: "graph.invoke(new Command({ resume: JSON.parse(process.env.FLASHBACK_RESUME) }), config)",
      }
    : {
        invoke: "graph.invoke(None, config)",
        command: "Command(resume=…)",
        config: "graph.get_state(…) or graph.invoke(None, …)",
        rerunInvoke: 'graph.invoke(None, json.loads(os.environ["FLASHBACK_CONFIG"]))',
        rerunResume: 'graph.invoke(Command(resume=json.loads(os.environ["FLASHBACK_RESUME"])), config)',
      };
}

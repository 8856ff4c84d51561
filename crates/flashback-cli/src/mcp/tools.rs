//! Which commands of the table are MCP tools, under which names, and how a model should use
//! them. The input schemas and the calls are not written here: they come from the command
//! table (`table.rs`); this is only the choice and the words.

/// What a tool may do, and so which flag it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Reads only: always offered.
    Read,
    /// Writes the database: offered with `--allow-writes`, takes `dry_run` (default true).
    Write,
    /// Runs a command on this machine: offered with `--allow-writes` and `--allow-run`.
    Run,
}

/// How the command answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The response is the answer.
    Plain,
    /// The command starts a job (its id is the response); the answer is the job's result,
    /// with its events (search hits) gathered.
    Job,
}

/// One tool: a command of the table under its CLI name.
#[derive(Debug)]
pub struct ToolSpec {
    /// The tool's name: the CLI subcommand's (`store ls` is `store_ls`).
    pub name: &'static str,
    /// The command of `for_each_command!` it calls.
    pub command: &'static str,
    /// What it may do.
    pub access: Access,
    /// How it answers.
    pub shape: Shape,
    /// What it answers and when to use it, for a model.
    pub about: &'static str,
    /// Example arguments (JSON).
    pub example: &'static str,
    /// The JSON member of the answer that is its main list, paged with `limit`/`cursor`
    /// (`""`: the answer itself when it is a list; `None`: nothing is paged).
    pub list: Option<&'static str>,
}

const fn tool(name: &'static str, command: &'static str, about: &'static str) -> ToolSpec {
    ToolSpec {
        name,
        command,
        access: Access::Read,
        shape: Shape::Plain,
        about,
        example: "",
        list: None,
    }
}

impl ToolSpec {
    const fn example(mut self, example: &'static str) -> ToolSpec {
        self.example = example;
        self
    }
    const fn list(mut self, member: &'static str) -> ToolSpec {
        self.list = Some(member);
        self
    }
    const fn job(mut self) -> ToolSpec {
        self.shape = Shape::Job;
        self
    }
    const fn write(mut self) -> ToolSpec {
        self.access = Access::Write;
        self
    }
    const fn run(mut self) -> ToolSpec {
        self.access = Access::Run;
        self
    }
}

/// Every tool, in the order they are listed.
pub const TOOLS: &[ToolSpec] = &[
    tool(
        "threads",
        "list_threads",
        "List the threads of the LangGraph checkpoint database with their status (finished, \
         failed, interrupted = waiting for a human, pending), checkpoint count, latest \
         checkpoint, time and token usage. Start here: it gives the thread_id every other tool \
         needs. Without `limit` every thread is listed, sorted by id; with `limit` N only the N \
         most recently active, newest first. To find threads, give `filter` (checkpoint \
         metadata, matched as LangGraph's list(filter=…): e.g. {\"user_id\": \"u-48213\"}, \
         `assistant_id`, `graph_id`, `run_id`), `since`/`until` (times such as \
         2026-11-26T12:00, UTC) and/or `status`: threads with a matching checkpoint, newest \
         match first, `limit` a page (default 100); the next page is `after` = the last \
         thread's `cursor`.",
    )
    .example(r#"{"limit": 20}"#)
    .list(""),
    tool(
        "activity",
        "thread_activity",
        "What threads' whole histories say beyond their latest checkpoints: the tasks that \
         raised and then recovered on a retry, and token usage. Use it when a thread is \
         finished but something went wrong on the way.",
    )
    .example(r#"{"thread_ids": ["t-1"]}"#)
    .list(""),
    tool(
        "history",
        "thread_history",
        "A thread's checkpoints, newest first (LangGraph's `get_state_history` / the saver's \
         `list()`): id, parent, step, source (input, loop, update, fork), time, next tasks. \
         `checkpoint_ns` null lists every namespace (subgraphs too); `before` pages back from \
         a checkpoint id; `filter` matches metadata.",
    )
    .example(r#"{"thread_id": "t-1", "limit": 10}"#)
    .list(""),
    tool(
        "graph",
        "thread_graph",
        "A thread's checkpoints as a DAG of branch lanes (forks, re-runs, subgraphs): each \
         row with the node(s) that ran to make it, failures, interrupts and retries. Use it \
         to see where a thread branched and which step failed.",
    )
    .example(r#"{"thread_id": "t-1"}"#)
    .list("rows"),
    tool(
        "topology",
        "thread_topology",
        "The nodes a thread ran and the transitions between them, with counts, failures and \
         interrupts; sub-agents nested under the node that ran them. Read from what ran, so it \
         works on any database.",
    )
    .example(r#"{"thread_id": "t-1"}"#),
    tool(
        "state",
        "checkpoint_detail",
        "The decoded state of one checkpoint (default: the thread's latest, as \
         `graph.get_state(config)` shows it): channel values, the pending writes, the next \
         tasks with their errors and interrupts, metadata. Give `path` for one channel or one \
         value inside it (`messages`, `messages[-1].content`, `plan[\"a.b\"]`): much shorter \
         than the whole state; a long list answers a page (`cursor` its first index, `limit`).",
    )
    .example(r#"{"thread_id": "t-1", "path": "messages[-1]"}"#),
    tool(
        "diff",
        "diff_checkpoints",
        "Compare two checkpoints of a thread (`a` older, `b` newer, each \
         {checkpoint_id, checkpoint_ns}): changed channels, list items added/removed/changed, \
         messages matched by id, and where the two branches meet.",
    )
    .example(r#"{"thread_id": "t-1", "a": {"checkpoint_id": "1f0…"}, "b": {"checkpoint_id": "1f1…"}}"#)
    .list("channels"),
    tool(
        "replay",
        "replay_steps",
        "A branch as ordered steps, root first: the tasks due at each checkpoint, the writes \
         they made and the channels that changed. `tip` chooses the branch (default: the \
         head's).",
    )
    .example(r#"{"thread_id": "t-1"}"#)
    .list(""),
    tool(
        "rebuild",
        "rebuild_report",
        "Rebuild each channel from the pending writes along a branch with LangGraph's \
         reducers and report where the stored state disagrees (a sanity check of a \
         checkpoint's values).",
    )
    .example(r#"{"thread_id": "t-1"}"#)
    .list(""),
    tool(
        "watch",
        "watch_key",
        "Every checkpoint where the value at `path` changed, across branches (the head's line \
         first), with the node whose write produced it: how a value evolved. Path syntax: \
         `messages`, `messages[2].content`, `messages[-1]`, `plan.steps`, `plan[\"a.b\"]`.",
    )
    .example(r#"{"thread_id": "t-1", "path": "messages"}"#)
    .list("changes"),
    tool(
        "merge_preview",
        "merge_preview",
        "The fork point / A / B view of channels of two branches of a thread (`into` and \
         `from` are the branch tips): what a merge would take. Writes nothing.",
    )
    .example(r#"{"thread_id": "t-1", "into": "1f0…", "from": "1f1…", "channels": ["messages"]}"#)
    .list(""),
    tool(
        "search",
        "start_search",
        "Search inside values: the threads (newest first) whose latest state holds `query` \
         (any case) in a key or a string or number value, each match with its path \
         (`messages[2].content`) and the text around it. Use it to find which thread talked \
         about something.",
    )
    .example(r#"{"query": "timeout"}"#)
    .job()
    .list("hits"),
    tool(
        "storage",
        "start_storage_report",
        "Where the bytes are: totals and the largest threads, namespaces, channels, \
         checkpoints and values, channels stored whole again at every step, orphaned rows. \
         With `thread_id`, one thread. Reads everything: slow on a large database.",
    )
    .example(r#"{"top": 5}"#)
    .job(),
    tool(
        "index",
        "index_advice",
        "The index advisor: which indexes (Flashback's own, `flashback_*`) would make the \
         thread list's first page, a time range and the metadata filter fast on this \
         database, whether they are there, and the planner's estimate (rows read today vs \
         with the index). Catalog reads only. Use it when `threads` is slow on a big database.",
    )
    .example("{}"),
    tool(
        "store_ls",
        "store_list",
        "LangGraph's long-term memory Store: the items under a namespace prefix (`[\"users\", \
         \"u-1\"]`), most recently updated first.",
    )
    .example(r#"{"prefix": ["users"]}"#)
    .list(""),
    tool(
        "store_get",
        "store_get",
        "LangGraph's memory Store: one item by namespace and key.",
    )
    .example(r#"{"namespace": ["users", "u-1"], "key": "prefs"}"#),
    tool(
        "store_search",
        "store_search",
        "LangGraph's memory Store: the items whose value's JSON text contains `query` (any \
         case), under an optional namespace prefix.",
    )
    .example(r#"{"query": "coffee"}"#)
    .list(""),
    tool(
        "store_ns",
        "store_namespaces",
        "LangGraph's memory Store: the namespaces with their item counts.",
    )
    .example("{}")
    .list(""),
    tool(
        "fork",
        "fork_checkpoint",
        "Fork a checkpoint: write a copy of it (optionally with edited channel values, \
         `edits: [{channel, value}]` in the JSON view `state` shows) as the thread's newest \
         checkpoint, so the program resumes from there with \
         `graph.invoke(None, {\"configurable\": {\"thread_id\": …}})`. With dry_run (the \
         default) nothing is written and the edits are checked.",
    )
    .example(r#"{"thread_id": "t-1", "checkpoint_id": "1f0…", "dry_run": true}"#)
    .write(),
    tool(
        "merge",
        "merge_branches",
        "Merge across branches: a new checkpoint on branch A (child of `into`) taking \
         channels from branch B (`from`), each `take_b` (B's value) or `append_b` (A's list \
         plus B's additions). With dry_run (the default) the fork point / A / B view is \
         returned and nothing is written.",
    )
    .example(r#"{"thread_id": "t-1", "into": "1f0…", "from": "1f1…", "channels": [{"channel": "messages", "mode": "append_b"}]}"#)
    .write(),
    tool(
        "delete",
        "delete_thread",
        "Delete a thread: every checkpoint, write and blob of it, all namespaces. With \
         dry_run (the default) it says what would go.",
    )
    .example(r#"{"thread_id": "t-1", "dry_run": true}"#)
    .write(),
    tool(
        "delete_branch",
        "delete_branch",
        "Delete a branch: a checkpoint (say a failed fork's) and every checkpoint after it, \
         with their writes. With dry_run (the default) it says what would go.",
    )
    .example(r#"{"thread_id": "t-1", "checkpoint_id": "1f1…", "dry_run": true}"#)
    .write(),
    tool(
        "prune",
        "prune_database",
        "Prune threads: keep only each namespace's latest checkpoints (`keep_latest`) or \
         delete them (`delete`), for the threads named and/or those older than `older_than` \
         (`30d`) and/or with a status. With dry_run (the default) it says what would go.",
    )
    .example(r#"{"strategy": "keep_latest", "older_than": "30d", "dry_run": true}"#)
    .write(),
    tool(
        "copy",
        "copy_thread",
        "Copy a thread (all namespaces, writes, blobs) to a new thread id. With dry_run (the \
         default) it checks the source and writes nothing.",
    )
    .example(r#"{"thread_id": "t-1", "target_thread_id": "t-1-copy", "dry_run": true}"#)
    .write(),
    tool(
        "index_apply",
        "index_apply",
        "Create or drop Flashback's indexes (`action`: `create` or `drop`; `names` from the \
         advice, or [\"all\"]). Postgres builds CONCURRENTLY (the program keeps writing), \
         SQLite in one transaction; the thread list and a metadata filter are timed before \
         and after. With dry_run (the default) it shows the statements, size and time.",
    )
    .example(r#"{"action": "create", "names": ["all"], "dry_run": true}"#)
    .write(),
    tool(
        "repair",
        "repair_blobs",
        "Three-table store only: re-create a thread's missing or corrupt blob rows from the \
         writes that produced them (`flashback rebuild --repair`). With dry_run (the default) it \
         shows what would be written.",
    )
    .example(r#"{"thread_id": "t-1", "dry_run": true}"#)
    .write(),
    tool(
        "store_put",
        "store_put",
        "LangGraph's memory Store: put an item (as Python's `store.put`). With dry_run (the \
         default) it shows the item it would replace and writes nothing.",
    )
    .example(r#"{"namespace": ["users", "u-1"], "key": "prefs", "value": {"tone": "short"}, "dry_run": true}"#)
    .write(),
    tool(
        "store_delete",
        "store_delete",
        "LangGraph's memory Store: delete an item and its vectors. With dry_run (the default) \
         it says what would go.",
    )
    .example(r#"{"namespace": ["users", "u-1"], "key": "prefs", "dry_run": true}"#)
    .write(),
    tool(
        "rerun",
        "start_rerun",
        "Re-run from a checkpoint: copy-fork it and run `runner` (a shell command on this \
         machine, e.g. `python my_agent.py`, with FLASHBACK_DB, FLASHBACK_THREAD_ID, \
         FLASHBACK_CHECKPOINT_ID in its environment), up to `timeout_secs`; `resume` answers a \
         waiting interrupt. With dry_run (the default) nothing runs.",
    )
    .example(r#"{"thread_id": "t-1", "checkpoint_id": "1f0…", "runner": "python agent.py", "timeout_secs": 120, "dry_run": true}"#)
    .job()
    .run(),
];

/// The tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

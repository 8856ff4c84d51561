"""Threads written by the agents people build today, run by the real packages with scripted
fake chat models (no network), for tests/interop/agents_test.py (issue 32):

  hitl-batched     langchain `create_agent` + HumanInTheLoopMiddleware (batched): one
                   interrupt answered with approve / edit / reject (an ungated call beside
                   them), the next one left waiting (reject / respond allowed)
  hitl-per-call    the same in `per_call` mode: two parallel gated calls -> two interrupts,
                   one answered (approve): Python's get_state then shows the approved call's
                   tool result, next `tools`, one open interrupt
  summarize        SummarizationMiddleware: three turns, the messages removed from the state
                   and replaced by a summary
  limits           ModelCallLimitMiddleware (run limit 2, end) + ToolCallLimitMiddleware
                   (`lookup` once per run): a blocked parallel call, then the run ended
  structured       response_format=ToolStrategy(Weather): a tool, then the structured answer
  retry-parallel   ToolRetryMiddleware: a tool that raises once and is retried, beside a
                   second call in parallel (two Sends to `tools`)
  deep             deepagents `create_deep_agent`: write_todos, write_file, a `task` sub-agent
                   (its own model and tool), edit_file
  deep-waiting     a deep agent whose sub-agent waits on an interrupt (interrupt_on for the
                   tool the sub-agent calls): the thread waits inside the sub-agent
  supervisor       langgraph-supervisor `create_supervisor`, two workers (handoffs there and back)
  swarm            langgraph-swarm `create_swarm`, alice hands off to bob

Every AI message has a stable id, `response_metadata.model_name` and `usage_metadata`
(some with input_token_details.cache_read / output_token_details.reasoning).

  python tests/interop/agents_fixture.py --sqlite OUT.sqlite   writes the threads to a new file
  python tests/interop/agents_fixture.py --pg URL              into an empty Postgres database

`write_threads(saver)` returns {thread_id: Thread}: the graph that wrote it (the one whose
get_state / get_state_history the test compares with), `graph_for(ns)` for a namespace (a
deep agent's sub-agent runs inside its `task` tool, a graph LangGraph's root cannot find), and
what the thread is (its HITL mode, whether it was left waiting, the resume it expects).
"""

from __future__ import annotations

import argparse
import inspect
import sqlite3
import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, PrivateAttr

CHECKPOINTER_KEY = "__pregel_checkpointer"  # langgraph._internal._constants.CONFIG_KEY_CHECKPOINTER


# ---------------------------------------------------------------------------
# The scripted chat model
# ---------------------------------------------------------------------------


class ScriptedChat(BaseChatModel):
    """A chat model that answers with the next AIMessage of its script (a copy: middleware
    rewrites the messages it gets). `bind_tools` returns the model itself: the script already
    says which tools are called."""

    script: list
    name_of_model: str = "scripted"
    _i: int = PrivateAttr(default=0)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake-chat"

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ScriptedChat":
        return self

    def _generate(self, messages: list, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        if self._i >= len(self.script):
            raise RuntimeError(f"{self.name_of_model}: the script has no reply left after {self._i}")
        reply = self.script[self._i].model_copy(deep=True)
        self._i += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])

    @property
    def left(self) -> int:
        return len(self.script) - self._i


def ai(msg_id: str, model: str, usage: tuple, text: str = "", calls: tuple = (),
       cached: int = 0, reasoning: int = 0) -> AIMessage:
    """An AI reply: `calls` are (name, args, tool_call_id); usage (input, output)."""
    i, o = usage
    meta: dict = {"input_tokens": i, "output_tokens": o, "total_tokens": i + o}
    if cached:
        meta["input_token_details"] = {"cache_read": cached}
    if reasoning:
        meta["output_token_details"] = {"reasoning": reasoning}
    return AIMessage(
        content=text, id=msg_id, usage_metadata=meta,
        response_metadata={"model_name": model, "finish_reason": "tool_calls" if calls else "stop"},
        tool_calls=[{"name": n, "args": a, "id": c, "type": "tool_call"} for n, a, c in calls],
    )


def chat(model: str, *replies: AIMessage) -> ScriptedChat:
    return ScriptedChat(script=list(replies), name_of_model=model)


# ---------------------------------------------------------------------------
# Tools
# ---------------------------------------------------------------------------


def send_email(to: str, body: str) -> str:
    """Send an email."""
    return f"email sent to {to}"


def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


def ask_user(question: str) -> str:
    """Ask the user a question (the human answers in the tool's place)."""
    return "no answer"


def lookup(query: str) -> str:
    """Look something up."""
    return f"facts about {query}"


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"It is 21 C and sunny in {city}."


def search(query: str) -> str:
    """Search the web."""
    return f"search results for {query}: otters hold hands while they sleep"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class Weather(BaseModel):
    """The weather report the agent answers with."""

    city: str
    temperature_c: float
    summary: str


_flaky_calls: dict = {}


def fetch_page(url: str) -> str:
    """Fetch a web page (fails once per url: a transient network error)."""
    _flaky_calls[url] = _flaky_calls.get(url, 0) + 1
    if _flaky_calls[url] == 1:
        raise ConnectionError(f"connection reset fetching {url}")
    return f"<html>{url}</html>"


# ---------------------------------------------------------------------------
# The threads
# ---------------------------------------------------------------------------


@dataclass
class Thread:
    """A thread written by `graph` (its root), with the graphs of namespaces the root cannot
    resolve (first namespace segment -> graph) and what it is."""

    thread_id: str
    kind: str
    graph: Any
    saver: Any
    subgraphs: dict = field(default_factory=dict)
    hitl: Optional[str] = None  # "batched" / "per_call" when it waits on HumanInTheLoopMiddleware
    waiting: bool = False
    # The answer the thread's waiting HITL interrupts expect, per interrupt (in order):
    # a function of the interrupt's value giving the decisions (agents_test.check_resume builds the payload).
    answers: Optional[Callable[[Any], Any]] = None
    models: list = field(default_factory=list)

    def config(self, ns: str = "", checkpoint_id: Optional[str] = None) -> dict:
        c: dict = {"thread_id": self.thread_id, "checkpoint_ns": ns}
        if checkpoint_id is not None:
            c["checkpoint_id"] = checkpoint_id
        return {"configurable": c}

    def graph_for(self, ns: str) -> tuple[Any, dict]:
        """The graph whose get_state reads namespace `ns`, and the extra configurable it needs
        (a graph the root cannot find is lent the saver, as LangGraph lends it to subgraphs)."""
        head = ns.split("|")[0].split(":")[0] if ns else ""
        if head in self.subgraphs:
            return self.subgraphs[head], {CHECKPOINTER_KEY: self.saver}
        return self.graph, {}

    def get_state(self, ns: str = "", checkpoint_id: Optional[str] = None):
        g, extra = self.graph_for(ns)
        c = self.config(ns, checkpoint_id)
        c["configurable"].update(extra)
        return g.get_state(c)

    def history(self, ns: str = "") -> list:
        g, extra = self.graph_for(ns)
        c = self.config(ns)
        c["configurable"].update(extra)
        return list(g.get_state_history(c))

    def namespaces(self) -> list[str]:
        """Every namespace the thread has checkpoints in, root first."""
        seen = {t.config["configurable"]["checkpoint_ns"] for t in self.saver.list({"configurable": {"thread_id": self.thread_id}})}
        return sorted(seen, key=lambda n: (n != "", n))

    def invoke(self, arg: Any) -> Any:
        return self.graph.invoke(arg, self.config())


def human(text: str, msg_id: str) -> dict:
    return {"messages": [HumanMessage(content=text, id=msg_id)]}


def hitl_batched(saver) -> Thread:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.types import Command

    model = chat(
        "gpt-5.5-fake",
        ai("hb-ai-1", "gpt-5.5-fake", (420, 96), calls=(
            ("send_email", {"to": "ann@example.com", "body": "The Q3 numbers are in."}, "hb-call-1"),
            ("send_email", {"to": "bob@example.com", "body": "Draft attached."}, "hb-call-2"),
            ("delete_file", {"path": "/reports/q2-draft.md"}, "hb-call-3"),
            ("lookup", {"query": "Q3 revenue"}, "hb-call-4"),
        ), cached=128, reasoning=40),
        ai("hb-ai-2", "gpt-5.5-fake", (810, 64), calls=(
            ("delete_file", {"path": "/reports/q3-old.md"}, "hb-call-5"),
            ("ask_user", {"question": "When is the review meeting?"}, "hb-call-6"),
        ), cached=512),
        ai("hb-ai-3", "gpt-5.5-fake", (990, 22), text="Done: emails sent, nothing deleted, review on Friday."),
    )
    hitl = HumanInTheLoopMiddleware({
        "send_email": {"allowed_decisions": ["approve", "edit", "reject"]},
        "delete_file": {"allowed_decisions": ["approve", "reject"], "description": "Deleting files cannot be undone"},
        "ask_user": {"allowed_decisions": ["respond"]},
    })
    g = create_agent(model, [send_email, delete_file, ask_user, lookup], middleware=[hitl], checkpointer=saver,
                     system_prompt="You are an office assistant.")
    t = Thread("hitl-batched", "create_agent + HITL batched", g, saver, hitl="batched", waiting=True, models=[model])
    t.invoke(human("Send the Q3 mails and clean up the drafts.", "hb-h-1"))
    t.invoke(Command(resume={"decisions": [
        {"type": "approve"},
        {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "bob@corp.example.com", "body": "Draft attached."}}},
        {"type": "reject", "message": "Keep the Q2 draft."},
    ]}))
    t.answers = lambda action: ({"type": "reject", "message": "Keep it."} if action["name"] == "delete_file"
                                else {"type": "respond", "message": "Friday at 10."})
    return t


def hitl_per_call(saver) -> Thread:
    from langchain.agents import create_agent
    from langchain.agents.middleware import HumanInTheLoopMiddleware
    from langgraph.types import Command

    model = chat(
        "claude-fake-4-6",
        ai("hp-ai-1", "claude-fake-4-6", (300, 80), calls=(
            ("send_email", {"to": "ann@example.com", "body": "Lunch at noon?"}, "hp-call-1"),
            ("send_email", {"to": "bob@example.com", "body": "Lunch at noon?"}, "hp-call-2"),
        ), cached=100, reasoning=12),
        ai("hp-ai-2", "claude-fake-4-6", (520, 18), text="Both invitations are out."),
    )
    hitl = HumanInTheLoopMiddleware({"send_email": {"allowed_decisions": ["approve", "edit", "reject"]}},
                                    interrupt_mode="per_call")
    g = create_agent(model, [send_email], middleware=[hitl], checkpointer=saver)
    t = Thread("hitl-per-call", "create_agent + HITL per_call", g, saver, hitl="per_call", waiting=True, models=[model])
    t.invoke(human("Invite Ann and Bob to lunch.", "hp-h-1"))
    first = next(i for i in t.graph.get_state(t.config()).interrupts if i.value["tool_call_id"] == "hp-call-1")
    t.invoke(Command(resume={first.id: {"type": "approve"}}))
    t.answers = lambda action: {"type": "edit", "edited_action": {
        "name": action["name"], "args": dict(action["args"], body="Lunch at 12:30?")}}
    return t


def summarize(saver) -> Thread:
    from langchain.agents import create_agent
    from langchain.agents.middleware import SummarizationMiddleware

    model = chat(
        "gpt-5.5-fake",
        ai("su-ai-1", "gpt-5.5-fake", (120, 30), calls=(("lookup", {"query": "otters"}, "su-call-1"),)),
        ai("su-ai-2", "gpt-5.5-fake", (180, 40), text="Otters are aquatic mustelids."),
        ai("su-ai-3", "gpt-5.5-fake", (260, 35), text="Sea otters use rocks as tools.", cached=200),
        ai("su-ai-4", "gpt-5.5-fake", (150, 25), text="They hold hands while sleeping.", reasoning=10),
    )
    summarizer = chat("gpt-5.5-mini-fake",
                      AIMessage(content="The user asked about otters; the assistant explained them.", id="su-sum-1"))
    mw = SummarizationMiddleware(model=summarizer, trigger=("messages", 6), keep=("messages", 2))
    g = create_agent(model, [lookup], middleware=[mw], checkpointer=saver)
    t = Thread("summarize", "create_agent + SummarizationMiddleware", g, saver, models=[model, summarizer])
    t.invoke(human("Tell me about otters.", "su-h-1"))
    t.invoke(human("And sea otters?", "su-h-2"))
    t.invoke(human("Anything cute?", "su-h-3"))
    return t


def limits(saver) -> Thread:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware

    model = chat(
        "gpt-5.5-fake",
        ai("li-ai-1", "gpt-5.5-fake", (200, 50), calls=(
            ("lookup", {"query": "alpha"}, "li-call-1"), ("lookup", {"query": "beta"}, "li-call-2"))),
        ai("li-ai-2", "gpt-5.5-fake", (300, 40), calls=(("lookup", {"query": "gamma"}, "li-call-3"),)),
        ai("li-ai-3", "gpt-5.5-fake", (1, 1), text="never reached: the model call limit ends the run"),
    )
    g = create_agent(model, [lookup], middleware=[
        ModelCallLimitMiddleware(run_limit=2, exit_behavior="end"),
        ToolCallLimitMiddleware(tool_name="lookup", run_limit=1),
    ], checkpointer=saver)
    t = Thread("limits", "create_agent + model/tool call limits", g, saver, models=[model])
    t.invoke(human("Look up alpha, beta and gamma.", "li-h-1"))
    return t


def structured(saver) -> Thread:
    from langchain.agents import create_agent
    from langchain.agents.structured_output import ToolStrategy

    model = chat(
        "gpt-5.5-fake",
        ai("so-ai-1", "gpt-5.5-fake", (150, 20), calls=(("get_weather", {"city": "Lima"}, "so-call-1"),)),
        ai("so-ai-2", "gpt-5.5-fake", (210, 45), calls=(
            ("Weather", {"city": "Lima", "temperature_c": 21.0, "summary": "sunny"}, "so-call-2"),), reasoning=30),
    )
    g = create_agent(model, [get_weather], response_format=ToolStrategy(Weather), checkpointer=saver)
    t = Thread("structured", "create_agent + response_format", g, saver, models=[model])
    t.invoke(human("Weather in Lima, as a report.", "so-h-1"))
    return t


def retry_parallel(saver) -> Thread:
    from langchain.agents import create_agent
    from langchain.agents.middleware import ToolRetryMiddleware

    model = chat(
        "gpt-5.5-fake",
        ai("rp-ai-1", "gpt-5.5-fake", (140, 33), calls=(
            ("fetch_page", {"url": "https://example.com/a"}, "rp-call-1"),
            ("lookup", {"query": "example.com"}, "rp-call-2"))),
        ai("rp-ai-2", "gpt-5.5-fake", (260, 21), text="Fetched the page and the facts."),
    )
    _flaky_calls.clear()
    g = create_agent(model, [fetch_page, lookup], middleware=[
        ToolRetryMiddleware(max_retries=2, tools=["fetch_page"], initial_delay=0.0, jitter=False)], checkpointer=saver)
    t = Thread("retry-parallel", "create_agent + ToolRetryMiddleware, parallel calls", g, saver, models=[model])
    t.invoke(human("Fetch example.com/a and look it up.", "rp-h-1"))
    return t


def _subagent_graphs(agent) -> dict:
    """A deep agent's compiled sub-agents, from its `task` tool (they run inside the tool)."""
    tool = agent.nodes["tools"].bound.tools_by_name["task"]
    return inspect.getclosurevars(tool.func).nonlocals["subagent_graphs"]


def deep(saver) -> Thread:
    from deepagents import create_deep_agent
    from langchain.agents.middleware import TodoListMiddleware

    main = chat(
        "claude-fake-4-6",
        ai("da-ai-1", "claude-fake-4-6", (1500, 120), calls=(("write_todos", {"todos": [
            {"content": "Research otters", "status": "in_progress"},
            {"content": "Write the report", "status": "pending"}]}, "da-call-1"),), cached=1200, reasoning=64),
        ai("da-ai-2", "claude-fake-4-6", (1650, 90), calls=(
            ("write_file", {"file_path": "/report.md", "content": "# Otters\nTBD\n"}, "da-call-2"),), cached=1400),
        ai("da-ai-3", "claude-fake-4-6", (1720, 70), calls=(
            ("task", {"description": "Find one surprising fact about otters.", "subagent_type": "researcher"}, "da-call-3"),)),
        ai("da-ai-4", "claude-fake-4-6", (1900, 60), calls=(
            ("edit_file", {"file_path": "/report.md", "old_string": "TBD", "new_string": "Otters hold hands."}, "da-call-4"),)),
        ai("da-ai-5", "claude-fake-4-6", (2000, 30), text="The report is in /report.md."),
    )
    sub = chat(
        "claude-fake-haiku",
        ai("da-sub-1", "claude-fake-haiku", (400, 25), calls=(("search", {"query": "otter facts"}, "da-sub-call-1"),)),
        ai("da-sub-2", "claude-fake-haiku", (520, 18), text="Otters hold hands while they sleep.", cached=300),
    )
    g = create_deep_agent(main, [], middleware=[TodoListMiddleware()], checkpointer=saver, subagents=[
        {"name": "researcher", "description": "Researches a question.", "system_prompt": "Research.",
         "tools": [search], "model": sub}])
    t = Thread("deep", "deepagents", g, saver, subgraphs={"tools": _subagent_graphs(g)["researcher"]}, models=[main, sub])
    t.invoke(human("Write a short report on otters.", "da-h-1"))
    return t


def deep_waiting(saver) -> Thread:
    from deepagents import create_deep_agent

    main = chat(
        "claude-fake-4-6",
        ai("dw-ai-1", "claude-fake-4-6", (1400, 80), calls=(
            ("task", {"description": "Search for otter habitats.", "subagent_type": "researcher"}, "dw-call-1"),), cached=1000),
        ai("dw-ai-2", "claude-fake-4-6", (1600, 20), text="Otters live in rivers and coasts."),
    )
    sub = chat(
        "claude-fake-haiku",
        ai("dw-sub-1", "claude-fake-haiku", (380, 22), calls=(("search", {"query": "otter habitats"}, "dw-sub-call-1"),)),
        ai("dw-sub-2", "claude-fake-haiku", (450, 15), text="Rivers, lakes and coasts."),
    )
    g = create_deep_agent(main, [], checkpointer=saver, subagents=[
        {"name": "researcher", "description": "Researches a question.", "system_prompt": "Research.",
         "tools": [search], "model": sub,
         "interrupt_on": {"search": {"allowed_decisions": ["approve", "reject"]}}}])
    t = Thread("deep-waiting", "deepagents, waiting inside a sub-agent", g, saver,
               subgraphs={"tools": _subagent_graphs(g)["researcher"]}, hitl="batched", waiting=True, models=[main, sub])
    t.invoke(human("Where do otters live?", "dw-h-1"))
    t.answers = lambda action: {"type": "approve"}
    return t


def supervisor(saver) -> Thread:
    from langchain.agents import create_agent
    from langgraph_supervisor import create_supervisor

    research_model = chat(
        "gpt-5.5-fake",
        ai("sv-r-1", "gpt-5.5-fake", (220, 30), calls=(("lookup", {"query": "FAANG headcount"}, "sv-r-call-1"),)),
        ai("sv-r-2", "gpt-5.5-fake", (300, 40), text="Combined headcount: 1,977,586.", cached=150),
    )
    math_model = chat(
        "gpt-5.5-mini-fake",
        ai("sv-m-1", "gpt-5.5-mini-fake", (180, 20), calls=(("add", {"a": 1977586, "b": 14}, "sv-m-call-1"),)),
        ai("sv-m-2", "gpt-5.5-mini-fake", (230, 12), text="1,977,600.", reasoning=8),
    )
    sup_model = chat(
        "gpt-5.5-fake",
        ai("sv-s-1", "gpt-5.5-fake", (100, 15), calls=(("transfer_to_research_expert", {}, "sv-s-call-1"),)),
        ai("sv-s-2", "gpt-5.5-fake", (260, 15), calls=(("transfer_to_math_expert", {}, "sv-s-call-2"),)),
        ai("sv-s-3", "gpt-5.5-fake", (330, 25), text="The combined headcount plus 14 is 1,977,600.", cached=200),
    )
    research = create_agent(research_model, [lookup], name="research_expert")
    math = create_agent(math_model, [add], name="math_expert")
    g = create_supervisor([research, math], model=sup_model).compile(checkpointer=saver)
    t = Thread("supervisor", "langgraph-supervisor", g, saver, models=[research_model, math_model, sup_model])
    t.invoke(human("What is the FAANG headcount plus 14?", "sv-h-1"))
    return t


def swarm(saver) -> Thread:
    from langchain.agents import create_agent
    from langgraph_swarm import create_handoff_tool, create_swarm

    alice_model = chat(
        "claude-fake-4-6",
        ai("sw-a-1", "claude-fake-4-6", (160, 20), calls=(("transfer_to_bob", {}, "sw-a-call-1"),), cached=64),
    )
    bob_model = chat(
        "gpt-5.5-fake",
        ai("sw-b-1", "gpt-5.5-fake", (210, 25), calls=(("add", {"a": 2, "b": 3}, "sw-b-call-1"),)),
        ai("sw-b-2", "gpt-5.5-fake", (260, 10), text="2 + 3 = 5. Arr!", reasoning=4),
    )
    alice = create_agent(alice_model, [create_handoff_tool(agent_name="bob", description="Bob does maths.")],
                         name="alice", system_prompt="You are Alice.")
    bob = create_agent(bob_model, [add, create_handoff_tool(agent_name="alice", description="Alice chats.")],
                       name="bob", system_prompt="You are Bob; you speak like a pirate.")
    g = create_swarm([alice, bob], default_active_agent="alice").compile(checkpointer=saver)
    t = Thread("swarm", "langgraph-swarm", g, saver, models=[alice_model, bob_model])
    t.invoke(human("What is 2 + 3? Ask Bob.", "sw-h-1"))
    return t


SCENARIOS = [hitl_batched, hitl_per_call, summarize, limits, structured, retry_parallel, deep, deep_waiting,
             supervisor, swarm]


def write_threads(saver) -> dict[str, Thread]:
    """Runs every scenario on `saver` (set up); {thread_id: Thread}."""
    out = {}
    for scenario in SCENARIOS:
        t = scenario(saver)
        out[t.thread_id] = t
    return out


def sqlite_saver(path: str):
    from langgraph.checkpoint.sqlite import SqliteSaver

    saver = SqliteSaver(sqlite3.connect(path, check_same_thread=False))
    saver.setup()
    return saver


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sqlite", metavar="OUT", help="a new SQLite file to write the threads to")
    ap.add_argument("--pg", metavar="URL", help="an empty Postgres database to write the threads to")
    args = ap.parse_args()
    if not args.sqlite and not args.pg:
        ap.error("give --sqlite OUT and/or --pg URL")
    if args.sqlite:
        threads = write_threads(sqlite_saver(args.sqlite))
        print(f"{args.sqlite}: {len(threads)} threads: {', '.join(threads)}")
    if args.pg:
        from langgraph.checkpoint.postgres import PostgresSaver

        with PostgresSaver.from_conn_string(args.pg) as saver:
            saver.setup()
            threads = write_threads(saver)
        print(f"postgres: {len(threads)} threads: {', '.join(threads)}")
    return 0


if __name__ == "__main__":
    # Run as the module `agents_fixture` (not `__main__`), so the stored types (Weather) are
    # named as when the test imports it.
    import agents_fixture

    sys.exit(agents_fixture.main())

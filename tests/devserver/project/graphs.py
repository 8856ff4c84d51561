"""Graphs served by `langgraph dev` for the devserver fixtures (tests/devserver/drive.py).

No LLM and nothing random in the values: the "model" is a plain node that writes scripted
AIMessages (with tool_calls), so every run gives the same values.

  chat      model -> tools (ToolNode) -> model ... ; a human message containing "boom" makes
            the model node raise (a failed run)
  approval  write_draft -> review (interrupt(), waits for Command(resume=...)) -> finish
  research  plan -> Send("work", ...) per topic (fan-out) -> researcher (a compiled subgraph:
            its checkpoints live under checkpoint_ns "researcher:<task id>") -> write_report
(no node is named as a state key: langgraph < 0.3 refuses that, and generate_old.py runs these
graphs on langgraph 0.2.60)
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
from langgraph.types import Send, interrupt

# ---- chat: a scripted model and a ToolNode ------------------------------------------------


@tool
def get_weather(city: str) -> str:
    """The weather in a city (scripted)."""
    return f"It is sunny in {city}, 21 C."


@tool
def add(a: int, b: int) -> int:
    """Adds two integers."""
    return a + b


class ChatState(MessagesState):
    turns: int


def model(state: ChatState) -> dict:
    msgs = state["messages"]
    last = msgs[-1]
    turns = state.get("turns", 0) + 1
    n = len(msgs)
    if isinstance(last, HumanMessage):
        text = str(last.content)
        if "boom" in text:
            raise ValueError(f"the model failed on purpose: {text!r}")
        if "weather" in text:
            city = text.rsplit(" ", 1)[-1].strip("?.!") or "Paris"
            calls = [{"name": "get_weather", "args": {"city": city}, "id": f"call-w{n}"}]
        elif "add" in text:
            calls = [{"name": "add", "args": {"a": 2, "b": 40}, "id": f"call-a{n}"}]
        else:
            return {"messages": [AIMessage(content=f"echo: {text}", id=f"ai-{n}")], "turns": turns}
        return {"messages": [AIMessage(content="", tool_calls=calls, id=f"ai-{n}")], "turns": turns}
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"The tool said: {last.content}", id=f"ai-{n}")], "turns": turns}
    return {"messages": [AIMessage(content="ok", id=f"ai-{n}")], "turns": turns}


_chat = StateGraph(ChatState)
_chat.add_node("model", model)
_chat.add_node("tools", ToolNode([get_weather, add]))
_chat.add_edge(START, "model")
_chat.add_conditional_edges("model", tools_condition)
_chat.add_edge("tools", "model")
chat = _chat.compile()

# ---- approval: interrupt() and Command(resume=...) ----------------------------------------


class ApprovalState(TypedDict, total=False):
    request: str
    draft: str
    decision: str
    log: Annotated[list[str], operator.add]


def draft(state: ApprovalState) -> dict:
    return {"draft": f"draft for {state.get('request', '?')}", "log": ["drafted"]}


def review(state: ApprovalState) -> dict:
    decision = interrupt({"question": "approve the draft?", "draft": state["draft"]})
    return {"decision": str(decision), "log": [f"reviewed: {decision}"]}


def finish(state: ApprovalState) -> dict:
    return {"log": [f"finished ({state.get('decision')})"]}


_approval = StateGraph(ApprovalState)
_approval.add_node("write_draft", draft)
_approval.add_node("review", review)
_approval.add_node("finish", finish)
_approval.add_edge(START, "write_draft")
_approval.add_edge("write_draft", "review")
_approval.add_edge("review", "finish")
_approval.add_edge("finish", END)
approval = _approval.compile()

# ---- research: Send fan-out and a subgraph ------------------------------------------------


class WorkState(TypedDict, total=False):
    topic: str


class ResearcherState(TypedDict, total=False):
    topics: list[str]
    notes: Annotated[list[str], operator.add]
    summary: str


def gather(state: ResearcherState) -> dict:
    return {"notes": [f"gathered {len(state.get('topics', []))} topics"]}


def summarize(state: ResearcherState) -> dict:
    return {"summary": " | ".join(state.get("notes", []))}


_researcher = StateGraph(ResearcherState)
_researcher.add_node("gather", gather)
_researcher.add_node("summarize", summarize)
_researcher.add_edge(START, "gather")
_researcher.add_edge("gather", "summarize")
_researcher.add_edge("summarize", END)
researcher = _researcher.compile()


class ResearchState(TypedDict, total=False):
    topics: list[str]
    notes: Annotated[list[str], operator.add]
    summary: str
    report: str


def plan(state: ResearchState) -> dict:
    return {"notes": [f"plan: {', '.join(state.get('topics', []))}"]}


def fan_out(state: ResearchState) -> list[Send]:
    return [Send("work", {"topic": t}) for t in state.get("topics", [])]


def work(state: WorkState) -> dict:
    return {"notes": [f"worked on {state['topic']}"]}


def report(state: ResearchState) -> dict:
    return {"report": f"{len(state.get('notes', []))} notes; {state.get('summary', '')}"}


_research = StateGraph(ResearchState)
_research.add_node("plan", plan)
_research.add_node("work", work)
_research.add_node("researcher", researcher)
_research.add_node("write_report", report)
_research.add_edge(START, "plan")
_research.add_conditional_edges("plan", fan_out, ["work"])
_research.add_edge("work", "researcher")
_research.add_edge("researcher", "write_report")
_research.add_edge("write_report", END)
research = _research.compile()

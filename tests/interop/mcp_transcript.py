#!/usr/bin/env python3
"""Writes the transcript of docs/mcp.md: a model-free session with `flashback mcp` on a copy of
tests/fixtures/langgraph.sqlite, driven by the official MCP Python SDK over stdio. Every call
and every answer is printed as the client got it (structured content longer than
--max-json characters is cut there, and the cut is said).

Usage: FLASHBACK_BIN=target/debug/flashback python tests/interop/mcp_transcript.py > transcript.md
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pathlib
import shutil
import sys
import tempfile

sys.dont_write_bytecode = True
ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = os.environ.get("FLASHBACK_BIN", str(ROOT / "target" / "debug" / "flashback"))

from mcp import Client, StdioServerParameters  # noqa: E402


def block(lang: str, text: str) -> str:
    return f"```{lang}\n{text.rstrip()}\n```\n"


class Transcript:
    def __init__(self, max_json: int) -> None:
        self.max_json = max_json
        self.out: list[str] = []

    def say(self, text: str) -> None:
        self.out.append(text.rstrip() + "\n")

    def structured(self, value) -> None:
        text = json.dumps(value, indent=2, ensure_ascii=False)
        if len(text) > self.max_json:
            text = text[: self.max_json] + f"\n… ({len(text)} characters in all; cut here for the page)"
        self.out.append("structuredContent:\n\n" + block("json", text))

    async def tool(self, c: Client, name: str, args: dict, why: str) -> dict:
        self.say(f"#### `{name}` — {why}\n")
        self.out.append(block("json", json.dumps({"method": "tools/call", "params": {"name": name, "arguments": args}}, ensure_ascii=False)))
        r = await c.call_tool(name, args)
        text = "".join(getattr(x, "text", "") for x in r.content)
        self.say(f"isError: `{str(bool(r.is_error)).lower()}`; text content:\n")
        self.out.append(block("text", text))
        if r.structured_content is not None:
            self.structured(r.structured_content)
        return r.structured_content or {}


async def session(db: str, t: Transcript) -> None:
    async with Client(StdioServerParameters(command=BIN, args=["mcp", db])) as c:
        info = c.server_info
        t.say("### Connecting\n")
        t.say(
            f"The client starts `flashback mcp langgraph.sqlite` and connects over stdio: protocol "
            f"`{c.protocol_version}`, server `{info.name if info else '?'}` {info.version if info else ''}.\n"
        )
        if c.instructions:
            t.say("The server's instructions to the model:\n")
            t.out.append(block("text", c.instructions))
        tools = (await c.list_tools()).tools
        t.say("### `tools/list`\n")
        rows = ["| tool | required arguments | description (start) |", "|---|---|---|"]
        for tool in tools:
            req = ", ".join(tool.input_schema.get("required", []))
            desc = (tool.description or "").split(". ")[0]
            rows.append(f"| `{tool.name}` | {req or '–'} | {desc}. |")
        t.say("\n".join(rows) + "\n")
        state = next(x for x in tools if x.name == "state")
        t.say("The input schema of `state`, as listed:\n")
        t.out.append(block("json", json.dumps(state.input_schema, indent=2)))

        t.say("### Calls\n")
        await t.tool(c, "threads", {}, "which threads are there")
        tid = "chat-tools"
        hist = await t.tool(c, "history", {"thread_id": tid, "checkpoint_ns": "", "limit": 3}, "a thread's last checkpoints")
        await t.tool(c, "state", {"thread_id": tid, "path": "messages[-1]"}, "one value of its state")
        ids = [h["checkpoint_id"] for h in hist.get("result", [])]
        await t.tool(c, "diff", {"thread_id": tid, "a": {"checkpoint_id": ids[1]}, "b": {"checkpoint_id": ids[0]}}, "what the last step changed")
        await t.tool(c, "state", {"thread_id": "parallel-failure"}, "a failed thread's state")
        await t.tool(c, "graph", {"thread_id": "long", "limit": 2, "cursor": "2", "format": "json"}, "paging, the text as JSON")
        await t.tool(c, "state", {"thread_id": tid, "limt": 3}, "a misspelt argument")
        await t.tool(c, "fork", {"thread_id": tid, "checkpoint_id": ids[0]}, "a write, without --allow-writes")
        tid = "parallel-failure"

        t.say("### Resources and the prompt\n")
        resources = (await c.list_resources()).resources
        t.say(f"`resources/list` gives {len(resources)} resources; the first three:\n")
        t.out.append(block("json", json.dumps([{"uri": r.uri, "name": r.name, "description": r.description} for r in resources[:3]], indent=2, ensure_ascii=False)))
        prompt = await c.get_prompt("why_did_it_stop", {"thread_id": tid})
        t.say(f"`prompts/get why_did_it_stop {{\"thread_id\": \"{tid}\"}}`:\n")
        t.out.append(block("text", "\n".join(getattr(m.content, "text", "") for m in prompt.messages)))


async def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max-json", type=int, default=2500)
    args = ap.parse_args()
    t = Transcript(args.max_json)
    with tempfile.TemporaryDirectory() as tmp:
        db = os.path.join(tmp, "langgraph.sqlite")
        shutil.copy(ROOT / "tests" / "fixtures" / "langgraph.sqlite", db)
        await session(db, t)
    sys.stdout.write("\n".join(t.out))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

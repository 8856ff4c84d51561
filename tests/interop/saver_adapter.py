"""A LangGraph checkpointer backed by Flashback's Rust saver (`flashback bridge DB`).

``FlashbackSaver`` is a ``BaseCheckpointSaver`` whose async methods (``aput``,
``aput_writes``, ``aget_tuple``, ``alist``, ``adelete_thread``, ``adelete_for_runs``,
``acopy_thread``, ``aprune``) send one JSON line per call to a ``flashback bridge``
subprocess and read one response line back (requests are serialised with a lock). The Rust
side does all encoding and storage, into a SQLite file or a Postgres database laid out
exactly as the Python savers lay them out.

Values cross as Flashback's JSON view (docs/json-view.md): Python → JSON with
``tests/fixtures/jsonview.py``; JSON → Python with ``from_view`` below, which revives the kinds
the conformance suite and ordinary graphs use (JSON-native values, bytes/bytearray, dicts with
non-str keys, special floats, sets, UUIDs, datetimes, Decimals); any other object comes back
as a plain dict with its ``"$type"``.

Checkpoint metadata: ``get_checkpoint_metadata(config, metadata)`` is applied by the Rust
bridge. This adapter sends ``config["configurable"]`` and ``config["metadata"]`` reduced to
their JSON scalar values (str, int, bool, finite float; anything else becomes ``null``, which
the rule skips just as Python skips non-scalar values).

Usage::

    async with FlashbackSaver.start("/tmp/x.sqlite", create=True) as saver:
        graph = builder.compile(checkpointer=saver)
        await graph.ainvoke(...)

Environment: ``FLASHBACK_BIN`` (default ``target/debug/flashback`` of this repository).
"""

from __future__ import annotations

import asyncio
import base64
import decimal
import json
import math
import os
import random
import sys
import uuid
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "fixtures"))
from jsonview import view  # noqa: E402

__all__ = ["FlashbackSaver", "BridgeError", "to_view", "from_view"]


class BridgeError(RuntimeError):
    """An error reported by `flashback bridge` (``code`` is its machine-readable code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message


# ---------------------------------------------------------------------------------------------
# Values


def to_view(value: Any) -> Any:
    """A Python value as its JSON view (reveals secrets: the Rust side must store them)."""
    return view(value, reveal_secrets=True)


def _hashable(v: Any) -> Any:
    if isinstance(v, list):
        return tuple(_hashable(x) for x in v)
    if isinstance(v, dict):
        return tuple((k, _hashable(x)) for k, x in v.items())
    if isinstance(v, set):
        return frozenset(v)
    return v


def _unesc(key: str) -> str:
    return key[1:] if key.startswith("$$") else key


def from_view(j: Any) -> Any:
    """A JSON view back to a Python value (see the module docs for what is revived)."""
    if isinstance(j, list):
        return [from_view(x) for x in j]
    if not isinstance(j, dict):
        return j
    t = j.get("$type")
    if t is None:
        return {k: from_view(v) for k, v in j.items()}
    if t == "builtins.bytes":
        return base64.b64decode(j["base64"])
    if t == "builtins.bytearray":
        return bytearray(base64.b64decode(j["base64"]))
    if t == "builtins.dict":
        return {_hashable(from_view(k)): from_view(v) for k, v in j["$items"]}
    if t == "builtins.float":
        return float(j["$value"])
    if t in ("builtins.set", "builtins.frozenset"):
        items = [_hashable(from_view(x)) for x in j["$value"]]
        return set(items) if t == "builtins.set" else frozenset(items)
    if t == "uuid.UUID" and isinstance(j.get("$value"), str):
        return uuid.UUID(hex=j["$value"])
    if t == "decimal.Decimal" and isinstance(j.get("$value"), str):
        return decimal.Decimal(j["$value"])
    if t == "datetime.datetime" and isinstance(j.get("$value"), str) and "$method" not in j:
        return datetime.fromisoformat(j["$value"])
    if t == "datetime.date" and isinstance(j.get("$args"), list):
        return date(*j["$args"])
    if t == "datetime.timedelta" and isinstance(j.get("$args"), list):
        return timedelta(*j["$args"])
    # Any other object: a plain dict keeping its type name.
    return {("$type" if k == "$type" else _unesc(k)): from_view(v) for k, v in j.items()}


def _scalars(obj: Any) -> Any:
    """A config part reduced to JSON scalars (what get_checkpoint_metadata can copy)."""
    if not isinstance(obj, dict):
        return None
    out = {}
    for k, v in obj.items():
        if not isinstance(k, str):
            continue
        if isinstance(v, (str, bool, int)) or (isinstance(v, float) and math.isfinite(v)):
            out[k] = v
        else:
            out[k] = None
    return out


def _config_json(config: RunnableConfig | None) -> Any:
    if config is None:
        return None
    out: dict[str, Any] = {"configurable": _scalars(config.get("configurable") or {})}
    if config.get("metadata"):
        out["metadata"] = _scalars(config["metadata"])
    return out


def _versions(vs: Any) -> Any:
    return {str(k): v for k, v in (vs or {}).items()}


def _checkpoint_json(cp: Checkpoint) -> dict:
    out: dict[str, Any] = {
        "v": cp.get("v", 1),
        "id": cp["id"],
        "ts": cp.get("ts", ""),
        "channel_values": {k: to_view(v) for k, v in cp.get("channel_values", {}).items()},
        "channel_versions": _versions(cp.get("channel_versions")),
        "versions_seen": {
            n: _versions(vs) for n, vs in (cp.get("versions_seen") or {}).items()
        },
        "updated_channels": cp.get("updated_channels"),
    }
    if "pending_sends" in cp:
        out["pending_sends"] = [to_view(s) for s in cp["pending_sends"] or []]
    return out


def _tuple(t: dict) -> CheckpointTuple:
    cp = dict(t["checkpoint"])
    cp["channel_values"] = {k: from_view(v) for k, v in cp["channel_values"].items()}
    if "pending_sends" in cp:
        cp["pending_sends"] = [from_view(s) for s in cp["pending_sends"]]
    return CheckpointTuple(
        config=t["config"],
        checkpoint=cp,  # type: ignore[arg-type]
        metadata=t["metadata"],
        parent_config=t["parent_config"],
        pending_writes=[(tid, ch, from_view(v)) for tid, ch, v in t["pending_writes"]],
    )


# ---------------------------------------------------------------------------------------------
# The saver


def default_bin() -> str:
    return os.environ.get("FLASHBACK_BIN") or str(REPO / "target" / "debug" / "flashback")


class FlashbackSaver(BaseCheckpointSaver[str]):
    """A checkpointer that stores through one `flashback bridge` subprocess."""

    def __init__(self, db: str, *, create: bool = False, bin: str | None = None) -> None:
        super().__init__()
        self.db = db
        self.create = create
        self.bin = bin or default_bin()
        self._proc: asyncio.subprocess.Process | None = None
        self._lock = asyncio.Lock()

    # -- lifecycle --------------------------------------------------------------------------

    async def open(self) -> FlashbackSaver:
        args = [self.bin, "bridge", self.db] + (["--create"] if self.create else [])
        # e.g. "--schema three-table" (tests/interop/conformance.sh three-table-sqlite)
        args += os.environ.get("FLASHBACK_BRIDGE_ARGS", "").split()
        self._proc = await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            limit=1 << 30,
        )
        return self

    async def aclose(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 10)
        except asyncio.TimeoutError:
            proc.kill()
            await proc.wait()

    @classmethod
    @asynccontextmanager
    async def start(cls, db: str, **kwargs: Any) -> AsyncIterator[FlashbackSaver]:
        saver = await cls(db, **kwargs).open()
        try:
            yield saver
        finally:
            await saver.aclose()

    async def _call(self, op: str, **fields: Any) -> Any:
        line = json.dumps({"op": op, **fields}, ensure_ascii=False, allow_nan=False) + "\n"
        async with self._lock:
            if self._proc is None:
                await self.open()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None
            proc.stdin.write(line.encode("utf-8"))
            await proc.stdin.drain()
            raw = await proc.stdout.readline()
        if not raw:
            code = await proc.wait()
            raise BridgeError("bridge_exited", f"flashback bridge exited with status {code}")
        resp = json.loads(raw)
        if not resp.get("ok"):
            err = resp.get("error") or {}
            raise BridgeError(err.get("code", "unknown"), err.get("message", ""))
        return resp.get("result")

    # -- BaseCheckpointSaver (async) ---------------------------------------------------------

    async def asetup(self) -> None:
        await self._call("setup")

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        t = await self._call("get_tuple", config=_config_json(config))
        return None if t is None else _tuple(t)

    async def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        rows = await self._call(
            "list",
            config=_config_json(config),
            filter=json.loads(json.dumps(filter, default=str)) if filter else None,
            before=_config_json(before),
            limit=limit,
        )
        for t in rows:
            yield _tuple(t)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return await self._call(
            "put",
            config=_config_json(config),
            checkpoint=_checkpoint_json(checkpoint),
            metadata=dict(metadata),
            new_versions=_versions(new_versions),
        )

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._call(
            "put_writes",
            config=_config_json(config),
            writes=[[ch, to_view(v)] for ch, v in writes],
            task_id=task_id,
            task_path=task_path,
        )

    async def adelete_thread(self, thread_id: str) -> None:
        await self._call("delete_thread", thread_id=str(thread_id))

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await self._call("delete_for_runs", run_ids=[str(r) for r in run_ids])

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await self._call(
            "copy_thread",
            source_thread_id=str(source_thread_id),
            target_thread_id=str(target_thread_id),
        )

    async def aprune(
        self, thread_ids: Sequence[str], *, strategy: str = "keep_latest"
    ) -> None:
        await self._call("prune", thread_ids=[str(t) for t in thread_ids], strategy=strategy)

    # -- versions: the same format as the SQLite/Postgres savers -----------------------------

    def get_next_version(self, current: str | int | None, channel: None) -> str:
        if current is None:
            current_v = 0
        elif isinstance(current, int):
            current_v = current
        else:
            current_v = int(str(current).split(".")[0])
        return f"{current_v + 1:032}.{random.random():016}"

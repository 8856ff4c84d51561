"""A LangGraph checkpointer backed by Flashback's Rust saver (`flashback bridge DB`).

``FlashbackSaver`` is a ``BaseCheckpointSaver`` whose async methods (``aput``,
``aput_writes``, ``aget_tuple``, ``alist``, ``adelete_thread``, ``adelete_for_runs``,
``acopy_thread``, ``aprune``) send one JSON line per call to a ``flashback bridge``
subprocess and read one response line back (requests are serialised with a lock). The Rust
side does all encoding and storage, into a SQLite file or a Postgres database laid out
exactly as the Python savers lay them out, or into Flashback's three-table store
(docs/three-table.md; an existing database is opened as the schema it holds, ``--create``
takes ``FLASHBACK_BRIDGE_ARGS``). The sync methods (``get_tuple``, ``list``, ``put``,
``put_writes``, ``delete_thread``, ``delete_for_runs``, ``copy_thread``, ``prune``, so that
``graph.invoke`` works too) run the async ones on a private event loop in a background
thread; see ``FlashbackSaver``.

Values cross as Flashback's JSON view (docs/json-view.md): Python → JSON with
``tests/fixtures/jsonview.py``; JSON → Python with ``from_view`` below, which revives the kinds
the conformance suite and ordinary graphs use (JSON-native values, bytes/bytearray, dicts with
non-str keys, special floats, sets, UUIDs, datetimes, Decimals); any other object comes back
as a plain dict with its ``"$type"``, unless the saver is made with ``objects=True``: then
every object is revived as LangGraph's msgpack ext hook constructs it (langchain messages,
``Send``, ``Interrupt``, dataclasses, enums, numpy arrays…), as a graph needs them.

Checkpoint metadata: ``get_checkpoint_metadata(config, metadata)`` is applied by the Rust
bridge. This adapter sends ``config["configurable"]`` and ``config["metadata"]`` reduced to
their JSON scalar values (str, int, bool, finite float; anything else becomes ``null``, which
the rule skips just as Python skips non-scalar values).

Usage::

    async with FlashbackSaver.start("/tmp/x.sqlite", create=True) as saver:
        graph = builder.compile(checkpointer=saver)
        await graph.ainvoke(...)

    with FlashbackSaver("/tmp/x.sqlite", objects=True) as saver:  # sync (fork_resume.py)
        graph = builder.compile(checkpointer=saver)
        graph.invoke(...)

Environment: ``FLASHBACK_BIN`` (default ``target/debug/flashback`` of this repository).
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import decimal
import importlib
import json
import math
import os
import random
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Coroutine, Iterator, Sequence
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


def from_view(j: Any, *, objects: bool = False) -> Any:
    """A JSON view back to a Python value (see the module docs for what is revived).

    ``objects=True``: every other ``$type`` object is revived too, as LangGraph's msgpack
    ext hook constructs it (``_revive_object``); one that cannot be (a module that does not
    import, a constructor that fails, ``$error``/``$opaque``/``$encrypted`` values) stays
    the plain dict below."""
    if isinstance(j, list):
        return [from_view(x, objects=objects) for x in j]
    if not isinstance(j, dict):
        return j
    t = j.get("$type")
    if t is None:
        return {k: from_view(v, objects=objects) for k, v in j.items()}
    if t == "builtins.bytes":
        return base64.b64decode(j["base64"])
    if t == "builtins.bytearray":
        return bytearray(base64.b64decode(j["base64"]))
    if t == "builtins.dict":
        return {
            _hashable(from_view(k, objects=objects)): from_view(v, objects=objects)
            for k, v in j["$items"]
        }
    if t == "builtins.float":
        return float(j["$value"])
    if t in ("builtins.set", "builtins.frozenset"):
        items = [_hashable(from_view(x, objects=objects)) for x in j["$value"]]
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
    if objects:
        revived = _revive_object(t, j)
        if revived is not _NOT_REVIVED:
            return revived
    # Any other object: a plain dict keeping its type name.
    return {("$type" if k == "$type" else _unesc(k)): from_view(v, objects=objects) for k, v in j.items()}


_NOT_REVIVED = object()
_UNREVIVABLE_KEYS = ("$error", "$opaque", "$encrypted", "$locked", "$too_large", "$secret")


def _revive_object(t: str, j: dict) -> Any:
    """A ``{"$type": "module.name", ...}`` view as LangGraph's msgpack ext hook
    (``langgraph.checkpoint.serde.jsonplus._create_msgpack_ext_hook``) constructs the stored
    object, or ``_NOT_REVIVED``:

    * ``$value`` (ext 0): ``cls(value)``; a datetime (ext 3) ``cls.fromisoformat(value)``, or
      ``getattr(cls, $method)(value)``; the DeltaChannel snapshot ``_DeltaSnapshot(value)``
    * ``$args`` (ext 1): ``cls(*args)``; ``langgraph.types.Send`` as ``Send(node, arg[,
      timeout=])``
    * ``numpy.ndarray`` (ext 6): ``np.frombuffer(buffer, dtype).reshape(shape, order=order)``
    * fields (ext 2 dataclasses/NamedTuples/Interrupt…, ext 4/5 pydantic incl. langchain
      messages): ``cls(**fields)``, falling back to ``model_construct``/``construct`` as the
      hook does for pydantic models."""
    if any(k in j for k in _UNREVIVABLE_KEYS) or t in ("pickle", "encrypted"):
        return _NOT_REVIVED
    module, _, name = t.rpartition(".")
    try:
        if t == "numpy.ndarray":
            import numpy as np

            arr = np.frombuffer(base64.b64decode(j["base64"]), dtype=np.dtype(j["dtype"]))
            return arr.reshape(j["shape"], order=j["order"])
        cls = getattr(importlib.import_module(module), name)
        if "$value" in j:
            arg = from_view(j["$value"], objects=True)
            if "$method" in j:
                return getattr(cls, j["$method"])(arg)
            if isinstance(cls, type) and issubclass(cls, datetime):
                return cls.fromisoformat(arg)
            return cls(arg)
        if "$args" in j:
            args = [from_view(a, objects=True) for a in j["$args"]]
            if t == "langgraph.types.Send":
                return cls(args[0], args[1]) if len(args) == 2 else cls(args[0], args[1], timeout=args[2])
            return cls(*args)
        fields = {_unesc(k): from_view(v, objects=True) for k, v in j.items() if k != "$type"}
        try:
            return cls(**fields)
        except Exception:
            if hasattr(cls, "model_construct"):
                return cls.model_construct(**fields)
            if hasattr(cls, "construct"):
                return cls.construct(**fields)
            raise
    except Exception:
        return _NOT_REVIVED


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


def _tuple(t: dict, objects: bool = False) -> CheckpointTuple:
    cp = dict(t["checkpoint"])
    cp["channel_values"] = {k: from_view(v, objects=objects) for k, v in cp["channel_values"].items()}
    if "pending_sends" in cp:
        cp["pending_sends"] = [from_view(s, objects=objects) for s in cp["pending_sends"]]
    return CheckpointTuple(
        config=t["config"],
        checkpoint=cp,  # type: ignore[arg-type]
        metadata=t["metadata"],
        parent_config=t["parent_config"],
        pending_writes=[(tid, ch, from_view(v, objects=objects)) for tid, ch, v in t["pending_writes"]],
    )


# ---------------------------------------------------------------------------------------------
# The saver


def default_bin() -> str:
    return os.environ.get("FLASHBACK_BIN") or str(REPO / "target" / "debug" / "flashback")


class FlashbackSaver(BaseCheckpointSaver[str]):
    """A checkpointer that stores through one `flashback bridge` subprocess.

    ``objects=True`` revives every stored Python object (messages, ``Send``, ``Interrupt``,
    dataclasses…) as LangGraph's own serializer would (``from_view``); by default, objects
    other than the module docs' kinds come back as dicts with their ``"$type"``.

    Async use: ``FlashbackSaver.start`` (or ``open``/``aclose``) on the caller's loop.
    Sync use (``graph.invoke``, ``get_state``, the sync methods ``get_tuple``, ``list``,
    ``put``, ``put_writes``, ``delete_thread``…): ``with FlashbackSaver(db) as saver:`` —
    the bridge then runs on a private event loop in a background thread, every sync method
    waits for its request there (``asyncio.run_coroutine_threadsafe``; any thread may call),
    the async methods called from another loop are forwarded to it, and leaving the block
    (or ``close()``) ends the bridge, stops the loop and joins the thread."""

    def __init__(
        self, db: str, *, create: bool = False, bin: str | None = None, objects: bool = False
    ) -> None:
        super().__init__()
        self.db = db
        self.create = create
        self.bin = bin or default_bin()
        self.objects = objects
        self._proc: asyncio.subprocess.Process | None = None
        self._proc_loop: asyncio.AbstractEventLoop | None = None
        self._lock = asyncio.Lock()
        # the sync API's private loop and its thread (None until the first sync call)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._loop_guard = threading.Lock()

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
        self._proc_loop = asyncio.get_running_loop()
        return self

    async def aclose(self) -> None:
        loop = self._loop
        if loop is not None and asyncio.get_running_loop() is not loop:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.aclose(), loop))
            return
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
        loop = self._loop
        if loop is not None and asyncio.get_running_loop() is not loop:
            # the sync API owns the bridge: forward to its loop
            fut = asyncio.run_coroutine_threadsafe(self._request(op, fields), loop)
            return await asyncio.wrap_future(fut)
        return await self._request(op, fields)

    async def _request(self, op: str, fields: dict[str, Any]) -> Any:
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

    # -- the sync API: a private event loop in a background thread ---------------------------

    def _background_loop(self) -> asyncio.AbstractEventLoop:
        with self._loop_guard:
            if self._loop is None:
                if self._proc is not None:
                    raise RuntimeError(
                        "FlashbackSaver: the bridge was opened on another event loop; "
                        "use the async methods there"
                    )
                loop = asyncio.new_event_loop()
                ready = threading.Event()

                def run() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(ready.set)
                    loop.run_forever()

                thread = threading.Thread(target=run, name="flashback-bridge-loop", daemon=True)
                thread.start()
                ready.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    def _run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Run ``coro`` on the private loop and wait for its result."""
        loop = self._background_loop()
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            coro.close()
            raise RuntimeError("FlashbackSaver: a sync method called on the bridge's own loop")
        fut: concurrent.futures.Future = asyncio.run_coroutine_threadsafe(coro, loop)
        return fut.result()

    def open_sync(self) -> FlashbackSaver:
        """Start the bridge for the sync API (otherwise the first request starts it)."""
        if self._proc is None:
            self._run(self.open())
        return self

    def close(self) -> None:
        """End the bridge, stop the private loop and join its thread (idempotent)."""
        with self._loop_guard:
            loop, thread = self._loop, self._thread
        if loop is None or thread is None:
            return
        try:
            asyncio.run_coroutine_threadsafe(self.aclose(), loop).result()
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join()
            loop.close()
            with self._loop_guard:
                self._loop = self._thread = None

    def __enter__(self) -> FlashbackSaver:
        return self.open_sync()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def setup(self) -> None:
        self._run(self.asetup())

    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return self._run(self.aget_tuple(config))

    def list(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> Iterator[CheckpointTuple]:
        async def collect() -> list[CheckpointTuple]:
            return [t async for t in self.alist(config, filter=filter, before=before, limit=limit)]

        return iter(self._run(collect()))

    def put(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        return self._run(self.aput(config, checkpoint, metadata, new_versions))

    def put_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        self._run(self.aput_writes(config, writes, task_id, task_path))

    def delete_thread(self, thread_id: str) -> None:
        self._run(self.adelete_thread(thread_id))

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        self._run(self.adelete_for_runs(run_ids))

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        self._run(self.acopy_thread(source_thread_id, target_thread_id))

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        self._run(self.aprune(thread_ids, strategy=strategy))

    # -- BaseCheckpointSaver (async) ---------------------------------------------------------

    async def asetup(self) -> None:
        await self._call("setup")

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        t = await self._call("get_tuple", config=_config_json(config))
        return None if t is None else _tuple(t, self.objects)

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
            yield _tuple(t, self.objects)

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

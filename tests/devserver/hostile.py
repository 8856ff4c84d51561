#!/usr/bin/env python3
"""Write tests/devserver-fixtures/hostile/: pickles a `.langgraph_api` reader must refuse (or
read) without running code, allocating gigabytes, recursing 100k deep or crashing. Made from
the committed py fixture (itself never modified) and from hand-written opcodes; nothing here
is ever unpickled. Deterministic: running it again gives the same bytes.

    python tests/devserver/hostile.py      (any Python 3; no packages needed)

See tests/devserver-fixtures/hostile/README.md for what each file is.
"""

from __future__ import annotations

import io
import pathlib
import pickle
import shutil
import struct
import sys

HERE = pathlib.Path(__file__).resolve().parent
FIXTURES = HERE.parent / "devserver-fixtures"
SRC = FIXTURES / "py" / ".langgraph_api"
OUT = FIXTURES / "hostile"
FAILED = "e783c7a8-a31c-51ff-b8a0-fd493fabadba"  # chat-failed: 2 checkpoints, small
WAITING = "0bef1a79-9960-5461-a6ca-5205f585d9db"  # approval-waiting
MARKER = "/tmp/flashback-hostile-pickle-ran"


class _Load(pickle.Unpickler):
    """Loads only the committed checkpoint files (builtins, defaultdict, _codecs.encode)."""

    ALLOWED = {("collections", "defaultdict"), ("_codecs", "encode"), ("__builtin__", "dict"), ("__builtin__", "bytes"),
               ("builtins", "dict"), ("builtins", "bytes")}

    def find_class(self, module: str, name: str):
        if (module, name) not in self.ALLOWED:
            raise pickle.UnpicklingError(f"refusing {module}.{name}")
        return super().find_class(module, name)


def load(name: str):
    return _Load(io.BytesIO((SRC / name).read_bytes())).load()


def dump(obj) -> bytes:
    """As PersistentDict.dump does: pickle.dump(dict(self), f, 2)."""
    return pickle.dumps(dict(obj), 2)


class _System:
    """Pickles as os.system(cmd): GLOBAL 'os system' + REDUCE. Never called here."""

    def __init__(self, cmd: str) -> None:
        self.cmd = cmd

    def __reduce__(self):
        import os

        return (os.system, (self.cmd,))


def small_checkpoints() -> dict:
    full = load(".langgraph_checkpoint.1.pckl")
    return {FAILED: full[FAILED]}


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    files: dict[str, bytes] = {}

    valid = dump(small_checkpoints())
    files["valid-small.checkpoint.1.pckl"] = valid
    files["truncated.checkpoint.1.pckl"] = valid[: len(valid) // 2]

    # BINBYTES8 (protocol 4, 0x8e) announcing 2**62 bytes, followed by 3.
    files["lying-length.pckl"] = (
        b"\x80\x04}" + b"\x8c\x03key" + b"\x8e" + struct.pack("<Q", 2**62) + b"abc" + b"s."
    )
    # The same lie with 4-byte lengths at protocol 2 (BINUNICODE 0xffffffff, BINBYTES 0x7fffffff).
    files["lying-length-binunicode.pckl"] = b"\x80\x02}X" + struct.pack("<I", 0xFFFFFFFF) + b"abc" + b"Ns."
    # A memo index of 2**30: LONG_BINPUT 0x40000000 then LONG_BINGET 0x40000000.
    files["memo-1g.pckl"] = b"\x80\x02}q\x00" + b"N" + b"r" + struct.pack("<I", 0x40000000) + b"0" \
        + b"X\x01\x00\x00\x00k" + b"j" + struct.pack("<I", 0x40000000) + b"s."
    # Only the LONG_BINGET of a never-stored 2**30 index.
    files["memo-get-1g.pckl"] = b"\x80\x02}X\x01\x00\x00\x00kj" + struct.pack("<I", 0x40000000) + b"s."

    # A valid checkpoint file where one checkpoint's metadata bytes are os.system(...) applied
    # with REDUCE: a reader that runs it creates MARKER.
    cps = small_checkpoints()
    ns = cps[FAILED][""]
    first = sorted(ns)[0]
    cp, meta, parent = ns[first]
    ns[first] = (cp, (meta[0], _System(f"touch {MARKER}")), parent)
    data = dump(cps)
    # os.system pickles as `posix system` (its __module__); name it `os system` as an attacker
    # would (GLOBAL's argument is newline-terminated: nothing else moves).
    assert data.count(b"cposix\nsystem\n") == 1
    files["global-os-system.checkpoint.1.pckl"] = data.replace(b"cposix\nsystem\n", b"cos\nsystem\n")
    # The same call with protocol 4's STACK_GLOBAL, alone.
    cmd = f"touch {MARKER}".encode()
    files["stack-global-os-system.pckl"] = (
        b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c" + bytes([len(cmd)]) + cmd + b"\x85R."
    )

    # 100,000 nested tuples (TUPLE1 over and over) as a dict value: loading needs no recursion,
    # but anything that walks the value recursively does.
    files["deep-100k.pckl"] = b"\x80\x02}X\x01\x00\x00\x00kN" + b"\x85" * 100_000 + b"s."
    # 100,000 nested lists built with MARK/APPEND-free opcodes: EMPTY_LIST + APPEND from the end.
    files["deep-100k-lists.pckl"] = b"\x80\x02" + b"]" * 100_000 + b"a" * 99_999 + b"."

    files["not-a-pickle.pckl"] = b"SQLite format 3\x00 is what this is not; it is plain text.\n"
    files["empty.pckl"] = b""

    for name, data in files.items():
        (OUT / name).write_bytes(data)

    # The stale folder: the py fixture with approval-waiting removed from the three checkpoint
    # files (re-pickled as the server pickles them); the ops file, retry counter and store
    # files are byte-identical, so the ops file names a thread the checkpoint files lack.
    stale = OUT / "stale" / ".langgraph_api"
    if stale.exists():
        shutil.rmtree(stale)
    stale.mkdir(parents=True)
    for f in SRC.iterdir():
        if not f.name.startswith(".langgraph_checkpoint."):
            shutil.copy2(f, stale / f.name)
    c1 = load(".langgraph_checkpoint.1.pckl")
    del c1[WAITING]
    c2 = {k: v for k, v in load(".langgraph_checkpoint.2.pckl").items() if k[0] != WAITING}
    c3 = {k: v for k, v in load(".langgraph_checkpoint.3.pckl").items() if k[0] != WAITING}
    for n, obj in ((1, c1), (2, c2), (3, c3)):
        (stale / f".langgraph_checkpoint.{n}.pckl").write_bytes(dump(obj))

    for p in sorted(OUT.rglob("*")):
        if p.is_file() and p.name != "README.md":
            print(f"{p.relative_to(OUT)}: {p.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Describe a `.langgraph_api/` folder: what each pickle holds, its shapes and types, the
classes its opcodes name (GLOBAL / STACK_GLOBAL) and the serde type tags of the stored
(type, bytes) pairs. Reads with pickletools first (no code runs for the opcode survey), then
with pickle.load (run it only on folders you trust: pickle.load executes what a file names).

    python tests/devserver/inspect_state.py tests/devserver-fixtures/py/.langgraph_api
"""

from __future__ import annotations

import collections
import io
import pathlib
import pickle
import pickletools
import sys
from typing import Any


def tname(x: Any) -> str:
    t = type(x)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def globals_named(raw: bytes) -> collections.Counter:
    """Classes/functions a pickle names (without loading it)."""
    out: collections.Counter = collections.Counter()
    strings: list[str] = []
    for op, arg, _ in pickletools.genops(raw):
        if op.name == "GLOBAL":
            out[arg.replace(" ", ".")] += 1
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL" and len(strings) >= 2:
            out[f"{strings[-2]}.{strings[-1]}"] += 1
    return out


def protocols(raw: bytes) -> set:
    return {arg for op, arg, _ in pickletools.genops(raw) if op.name == "PROTO"}


class Named:
    """Stands for a function or class of langgraph_api (importing it needs the server's
    environment); repr is its dotted name."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"

    def __call__(self, *args: Any) -> Any:
        return ("call", self.name, args)


class Loader(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if module.startswith("langgraph_api"):
            return Named(f"{module}.{name}")
        return super().find_class(module, name)


def tags(pairs) -> collections.Counter:
    return collections.Counter(p[0] for p in pairs)


def describe(d: pathlib.Path) -> None:
    for f in sorted(d.iterdir()):
        raw = f.read_bytes()
        print(f"== {f.name}: {len(raw)} bytes, protocol {sorted(protocols(raw)) if raw else '-'}")
        g = globals_named(raw) if raw else {}
        print(f"   names: {sorted(g) if g else 'none (only builtin containers/scalars)'}")
        if not raw:
            continue
        obj = Loader(io.BytesIO(raw)).load()
        print(f"   top: {tname(obj)} with {len(obj)} entries")
        name = f.name
        if name == ".langgraph_checkpoint.1.pckl":
            n = 0
            t: collections.Counter = collections.Counter()
            shapes = set()
            for tid, by_ns in obj.items():
                for ns, by_id in by_ns.items():
                    for cid, entry in by_id.items():
                        n += 1
                        (ct, cb), (mt, mb), parent = entry
                        t[("checkpoint", ct)] += 1
                        t[("metadata", mt)] += 1
                        shapes.add((tname(tid), tname(by_ns), tname(ns), tname(by_id), tname(cid),
                                    f"(({tname(ct)}, {tname(cb)}), ({tname(mt)}, {tname(mb)}), {tname(parent)})"))
            print(f"   {n} checkpoints; shapes: {sorted(shapes)}; tags: {dict(t)}")
            for tid, by_ns in obj.items():
                print(f"     {tid}: namespaces {[(ns, len(v)) for ns, v in by_ns.items()]}")
        elif name == ".langgraph_checkpoint.2.pckl":
            shapes = set()
            t = collections.Counter()
            for key, by_task in obj.items():
                for k2, w in by_task.items():
                    shapes.add((f"({', '.join(map(tname, key))})", f"({', '.join(map(tname, k2))})",
                                f"({', '.join(tname(x) if not isinstance(x, tuple) else '(' + ', '.join(map(tname, x)) + ')' for x in w)})"))
                    t[w[2][0]] += 1
            print(f"   {sum(len(v) for v in obj.values())} writes under {len(obj)} checkpoints; shapes: {sorted(shapes)}; tags: {dict(t)}")
            chans = collections.Counter(w[1] for v in obj.values() for w in v.values())
            print(f"   channels written: {dict(chans)}")
        elif name == ".langgraph_checkpoint.3.pckl":
            shapes = {(f"({', '.join(map(tname, k))})", f"({', '.join(map(tname, v))})") for k, v in obj.items()}
            print(f"   shapes: {sorted(shapes)}; tags: {dict(tags(obj.values()))}")
            print(f"   version examples: {[k[3] for k in list(obj)[:3]]}")
        elif name == ".langgraph_ops.pckl":
            for k, v in obj.items():
                print(f"   [{k!r}]: {tname(v)} of {len(v)}")
                if isinstance(v, list) and v:
                    fields = collections.OrderedDict()
                    for item in v:
                        for fk, fv in item.items():
                            fields.setdefault(fk, set()).add(tname(fv))
                    print("      fields: " + ", ".join(f"{fk}: {'|'.join(sorted(ts))}" for fk, ts in fields.items()))
                    for item in v:
                        for fk in ("kwargs", "config", "metadata", "values", "interrupts"):
                            if isinstance(item.get(fk), dict) and item[fk]:
                                sub = {sk: tname(sv) for sk, sv in item[fk].items()}
                                print(f"      {fk} e.g. {sub}")
                        break
        elif name in ("store.pckl", "store.vectors.pckl", ".langgraph_retry_counter.pckl"):
            for k, v in list(obj.items())[:4]:
                print(f"   [{k!r}] ({tname(k)}): {tname(v)}")
                if isinstance(v, dict):
                    for k2, v2 in list(v.items())[:2]:
                        fields = {a: tname(getattr(v2, a, None)) for a in ("namespace", "key", "value", "created_at", "updated_at")} if hasattr(v2, "key") else None
                        print(f"      [{k2!r}]: {tname(v2)} {fields or repr(v2)[:200]}")
                else:
                    print(f"      {v!r}"[:200])


if __name__ == "__main__":
    describe(pathlib.Path(sys.argv[1]))

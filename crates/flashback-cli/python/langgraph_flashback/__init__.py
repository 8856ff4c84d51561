"""Flashback, the time-travel debugger for LangGraph checkpoint databases, from Python.

    import langgraph_flashback
    langgraph_flashback.open(checkpointer)    # after graph.invoke(...): the app in the browser

`open` takes a SqliteSaver / AsyncSqliteSaver / PostgresSaver / AsyncPostgresSaver (or its
shallow variant), a compiled graph with one of them, a sqlite3 or psycopg connection, a
`.sqlite` path, a `postgres://` URL, a `langgraph dev` folder or an Agent Server URL. The
`flashback` command line comes with the same package (`python -m langgraph_flashback` runs it).
Flashback only reads what you open until you ask it to fork, merge or delete.
"""

from __future__ import annotations

from importlib import metadata as _metadata

from ._binary import FlashbackError, binary
from ._locate import location as _location
from ._session import Session, start as _start

try:
    __version__ = _metadata.version("langgraph-flashback")
except _metadata.PackageNotFoundError:  # run from a source tree
    __version__ = "0+unknown"

__all__ = ["FlashbackError", "Session", "binary", "open", "__version__"]


def open(  # noqa: A001 - `langgraph_flashback.open(saver)` reads as what it does
    target: object = None,
    *,
    browser: bool = True,
    port: int = 0,
    allow_run: bool = False,
    timeout: float = 60.0,
) -> Session:
    """Serve `target` in Flashback on 127.0.0.1 and open it in the browser.

    Returns the running Session (`.url`, `.stop()`; a context manager; stopped at exit). With
    `target=None` it serves the built-in demo database. `browser=False` only prints the link
    (as it does anyway where there is no display). `allow_run=True` lets the app re-run a
    checkpoint with a command you give (as `flashback serve --allow-run`).
    Raises FlashbackError with one line when the target cannot be opened.
    """
    if target is None:
        return _start("", {}, port=port, allow_run=allow_run, demo=True, browser=browser, timeout=timeout)
    loc, env = _location(target)
    return _start(loc, env, port=port, allow_run=allow_run, demo=False, browser=browser, timeout=timeout)

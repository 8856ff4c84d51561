"""What Flashback should open for a Python object: a saver, a compiled graph, a path or a URL.

Returns the location `flashback` takes on its command line and the environment it needs (a
Postgres password travels in PGPASSWORD, never on the command line other users can read).
Nothing here imports LangGraph, psycopg or aiosqlite: objects are recognised by what they have.
"""

from __future__ import annotations

import os
import sqlite3
from urllib.parse import quote, urlencode

from ._binary import FlashbackError

# libpq parameters the Postgres URL carries on (the ones Flashback's driver reads).
_PG_QUERY_KEYS = ("sslmode", "sslrootcert", "sslcert", "sslkey", "options", "application_name")


def _sqlite_file(conn: sqlite3.Connection) -> str:
    try:
        rows = conn.execute("PRAGMA database_list").fetchall()
    except sqlite3.Error as e:
        raise FlashbackError(f"cannot ask the SQLite connection for its file ({e}): pass the path instead") from e
    for row in rows:
        if row[1] == "main":
            if not row[2]:
                raise _in_memory()
            return str(row[2])
    raise _in_memory()


def _in_memory() -> FlashbackError:
    return FlashbackError(
        "this checkpointer keeps its checkpoints in this process's memory, which another program "
        "cannot read: use a file (SqliteSaver.from_conn_string('agent.sqlite')) or Postgres"
    )


def _aiosqlite_file(conn: object) -> str:
    # aiosqlite.connect(database) keeps `database` in the closure of the function that opens
    # the connection in its worker thread (the sqlite3 connection itself belongs to that thread).
    connector = getattr(conn, "_connector", None)
    for cell in getattr(connector, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:
            continue
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        if isinstance(value, (str, os.PathLike)):
            path = os.fspath(value)
            if path in ("", ":memory:") or path.startswith("file::memory:"):
                raise _in_memory()
            return str(path)
    raise FlashbackError("cannot tell which file this AsyncSqliteSaver uses: pass its path instead")


def pg_url(params: dict[str, str]) -> tuple[str, dict[str, str]]:
    """A postgres:// URL from libpq parameters, and PGPASSWORD for the password."""
    params = {k: str(v) for k, v in params.items() if v is not None and str(v) != ""}
    host = params.get("host") or params.get("hostaddr") or ""
    query = {k: params[k] for k in _PG_QUERY_KEYS if k in params}
    if host.startswith("/"):
        # A Unix socket directory goes in the query; the URL still needs a host name.
        query["host"] = host
        host = "localhost"
    elif ":" in host and not host.startswith("["):
        host = f"[{host}]"
    user = params.get("user", "")
    netloc = (quote(user, safe="") + "@" if user else "") + host
    if params.get("port") and host:
        netloc += f":{params['port']}"
    elif params.get("port"):
        query["port"] = params["port"]
    url = f"postgresql://{netloc}/{quote(params.get('dbname', ''), safe='')}"
    if query:
        url += "?" + urlencode(query)
    env = {"PGPASSWORD": params["password"]} if params.get("password") else {}
    return url, env


def _psycopg_params(conninfo: str, **kwargs: object) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict  # the caller's object is psycopg's: it is installed

    return {k: str(v) for k, v in conninfo_to_dict(conninfo, **kwargs).items() if v is not None}


def _postgres(conn: object) -> tuple[str, dict[str, str]]:
    info = getattr(conn, "info", None)
    if info is not None and hasattr(info, "dsn"):  # psycopg.Connection / AsyncConnection
        params = _psycopg_params(info.dsn)
        password = getattr(info, "password", None)
        if password:
            params["password"] = password
        return pg_url(params)
    if hasattr(conn, "conninfo"):  # psycopg_pool.ConnectionPool / AsyncConnectionPool
        kwargs = {k: v for k, v in (getattr(conn, "kwargs", None) or {}).items() if isinstance(v, (str, int))}
        return pg_url(_psycopg_params(conn.conninfo, **kwargs))
    raise FlashbackError(f"cannot tell which database this {type(conn).__name__} connects to: pass its URL instead")


def location(target: object) -> tuple[str, dict[str, str]]:
    """(location for the command line, extra environment) for `target`."""
    if isinstance(target, (str, os.PathLike)):
        loc = os.fspath(target)
        if not isinstance(loc, str) or not loc:
            raise FlashbackError("give a .sqlite path, a postgres:// URL, a folder or an http:// URL")
        return loc, {}
    # A compiled graph: open its checkpointer.
    if hasattr(target, "get_state") and hasattr(target, "checkpointer"):
        saver = target.checkpointer
        if saver is None or isinstance(saver, bool):
            raise FlashbackError("this graph was compiled without a checkpointer: compile(checkpointer=…) first")
        return location(saver)
    if isinstance(target, sqlite3.Connection):
        return _sqlite_file(target), {}
    conn = getattr(target, "conn", None)
    if conn is None:
        if hasattr(target, "storage") and hasattr(target, "put"):  # InMemorySaver / MemorySaver
            raise _in_memory()
        raise FlashbackError(
            f"cannot open a {type(target).__name__}: give a SqliteSaver, a PostgresSaver, a compiled "
            "graph, a .sqlite path or a postgres:// URL"
        )
    if isinstance(conn, sqlite3.Connection):
        return _sqlite_file(conn), {}
    module = type(conn).__module__.split(".")[0]
    if module == "aiosqlite":
        return _aiosqlite_file(conn), {}
    if module in ("psycopg", "psycopg_pool"):
        return _postgres(conn)
    raise FlashbackError(f"cannot open a saver whose connection is a {type(conn).__module__}.{type(conn).__name__}")

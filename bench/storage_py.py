#!/usr/bin/env python3
"""What a user's one-off script does to see where a thread's bytes go (bench/storage.sh's
Python baseline): `SqliteSaver.list()` over the thread (or, without THREAD, the whole database),
summing per channel the length of each channel value as the serializer encodes it
(`serde.dumps_typed(v)[1]`), and the pending writes' values per channel. Prints one JSON line.

    python bench/storage_py.py DB [THREAD]
"""

from __future__ import annotations

import collections
import json
import sqlite3
import sys

from langgraph.checkpoint.sqlite import SqliteSaver


def main() -> None:
    db = sys.argv[1]
    thread = sys.argv[2] if len(sys.argv) > 2 else None
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, check_same_thread=False)
    saver = SqliteSaver(conn)
    config = {"configurable": {"thread_id": thread}} if thread else None
    inline: collections.Counter[str] = collections.Counter()
    writes: collections.Counter[str] = collections.Counter()
    checkpoints = 0
    for t in saver.list(config):
        checkpoints += 1
        for channel, value in t.checkpoint["channel_values"].items():
            inline[channel] += len(saver.serde.dumps_typed(value)[1])
        for _task, channel, value in t.pending_writes or ():
            writes[channel] += len(saver.serde.dumps_typed(value)[1])
    print(
        json.dumps(
            {
                "thread": thread,
                "checkpoints": checkpoints,
                "inline_bytes": sum(inline.values()),
                "write_bytes": sum(writes.values()),
                "by_channel": dict(inline.most_common()),
            }
        )
    )


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Start the real `langgraph dev` (drive.start()), run the scenario (drive.run_scenario()), print
{"port": P, "url": "http://127.0.0.1:P", "threads": {name: id}} as one JSON line, and keep the
server running until stdin closes (or this process is killed); then stop it.

Used by the browser e2e (ui/e2e/browser/agentserver.mjs). Exit 3 with one line when the Python
packages (langgraph-cli[inmem], langgraph-sdk) are missing.
"""

import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import drive  # noqa: E402
except ImportError as e:  # the SDK or LangGraph is not installed in this Python
    print(f"missing Python packages: {e}", file=sys.stderr)
    sys.exit(3)


def main() -> int:
    held: dict = {"server": None, "stopped": False}

    def stop_server() -> None:
        if held["server"] is not None and not held["stopped"]:
            held["stopped"] = True
            held["server"].stop(signal.SIGKILL, timeout=10)

    def on_term(*_):
        raise SystemExit(0)  # unwinds through the finally below, which stops the server

    signal.signal(signal.SIGTERM, on_term)
    try:
        held["server"] = drive.start()
        server = held["server"]
        scenario = drive.run_scenario(server.client())
        print(json.dumps({"port": server.port, "url": server.url, "threads": scenario["threads"]}), flush=True)
        sys.stdin.read()  # until the test closes stdin
    finally:
        stop_server()
    return 0


if __name__ == "__main__":
    sys.exit(main())

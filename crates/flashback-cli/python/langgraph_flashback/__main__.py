"""`python -m langgraph_flashback ARGS…` runs the `flashback` binary with ARGS."""

from __future__ import annotations

import os
import subprocess
import sys

from ._binary import FlashbackError, binary


def main() -> int:
    try:
        exe = binary()
    except FlashbackError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    args = [exe, *sys.argv[1:]]
    if os.name == "posix":
        # Become the binary: signals, exit status and the terminal are its own.
        os.execv(exe, args)
    try:
        return subprocess.call(args)
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""Where the `flashback` binary this package installed is.

pip puts a wheel's binary in the scripts directory of the scheme it installs into (the venv's
`bin/`, `~/.local/bin` for `--user`, `<prefix>/bin` for `--prefix`), which is not always on
PATH (a notebook kernel started from elsewhere). So look where this package's own files say it
is first, and fall back to PATH last.
"""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

_NAME = "flashback.exe" if os.name == "nt" else "flashback"


class FlashbackError(RuntimeError):
    """Flashback could not do what was asked; the message is one line saying why."""


def _candidates() -> list[Path]:
    found: list[Path] = []
    override = os.environ.get("FLASHBACK_BIN")
    if override:
        found.append(Path(override))
    # The scheme this interpreter installs into, then the user scheme (`pip install --user`).
    schemes = [None]
    user_scheme = f"{os.name}_user" if os.name != "posix" else "posix_user"
    if user_scheme in sysconfig.get_scheme_names():
        schemes.append(user_scheme)
    for scheme in schemes:
        try:
            scripts = sysconfig.get_path("scripts", scheme) if scheme else sysconfig.get_path("scripts")
        except KeyError:
            continue
        if scripts:
            found.append(Path(scripts) / _NAME)
    # `--prefix`/`--target` installs: .../lib/pythonX.Y/site-packages/langgraph_flashback/ → .../bin.
    here = Path(__file__).resolve().parent
    for parent in list(here.parents)[:5]:
        found.append(parent / "bin" / _NAME)
        found.append(parent / "Scripts" / _NAME)
    found.append(Path(sys.executable).parent / _NAME)
    on_path = shutil.which(_NAME)
    if on_path:
        found.append(Path(on_path))
    return found


def binary() -> str:
    """The path of the `flashback` executable (raises FlashbackError when there is none)."""
    for path in _candidates():
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
    raise FlashbackError(
        "the flashback binary is missing from this environment: reinstall with "
        "`pip install --force-reinstall langgraph-flashback` (or set FLASHBACK_BIN)"
    )

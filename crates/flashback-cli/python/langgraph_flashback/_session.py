"""`flashback serve` as a child process of this Python: started, its URL read, stopped."""

from __future__ import annotations

import atexit
import collections
import os
import queue
import re
import subprocess
import sys
import threading
import time
import webbrowser
import weakref

from ._binary import FlashbackError, binary

_URL = re.compile(r"open (http://127\.0\.0\.1:\d+/#token=[0-9a-f]+)")
_live: "weakref.WeakSet[Session]" = weakref.WeakSet()


class Session:
    """A running `flashback serve`. `url` opens it (it carries the access token)."""

    def __init__(self, location: str, url: str, proc: subprocess.Popen, stderr: collections.deque):
        self.location = location
        self.url = url
        self._proc = proc
        self._stderr = stderr

    @property
    def running(self) -> bool:
        return self._proc.poll() is None

    @property
    def token(self) -> str:
        return self.url.rsplit("#token=", 1)[1]

    @property
    def base_url(self) -> str:
        return self.url.split("#", 1)[0].rstrip("/")

    def stop(self) -> None:
        """Stop the server (idempotent)."""
        if self._proc.poll() is None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
        _live.discard(self)

    def __enter__(self) -> "Session":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "serving" if self.running else "stopped"
        return f"<Flashback {state} {self.location} at {self.url}>"

    def _repr_html_(self) -> str:  # a link in Jupyter
        if not self.running:
            return f"Flashback stopped ({self.location})"
        return f'<a href="{self.url}" target="_blank" rel="noopener">Open {self.location} in Flashback</a>'


def _drain(stream, sink) -> None:
    for line in iter(stream.readline, ""):
        sink(line.rstrip("\n"))
    stream.close()


def _can_show_browser() -> bool:
    # Without a display, Python's webbrowser falls back to text browsers that take over the
    # terminal: only print the link there.
    if sys.platform.startswith("linux") and not (
        os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY") or os.environ.get("BROWSER")
    ):
        return False
    return True


def start(location: str, env: dict[str, str], *, port: int, allow_run: bool, demo: bool,
          browser: bool, timeout: float) -> Session:
    exe = binary()
    args = [exe, "serve", "--port", str(int(port))]
    args += ["--demo"] if demo else [location]
    if allow_run:
        args.append("--allow-run")
    proc = subprocess.Popen(
        args,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        text=True,
        encoding="utf-8",
        errors="replace",
    )
    lines: "queue.Queue[str]" = queue.Queue()
    stderr: collections.deque = collections.deque(maxlen=50)
    threading.Thread(target=_drain, args=(proc.stdout, lines.put), daemon=True).start()
    threading.Thread(target=_drain, args=(proc.stderr, stderr.append), daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            line = lines.get(timeout=0.1)
        except queue.Empty:
            if proc.poll() is not None:
                time.sleep(0.1)  # let the stderr reader take the last line
                said = next((l for l in reversed(stderr) if l.strip()), f"exited with status {proc.returncode}")
                raise FlashbackError(f"flashback serve {location}: {said.removeprefix('error: ')}") from None
            if time.monotonic() > deadline:
                proc.kill()
                proc.wait()
                raise FlashbackError(f"flashback serve {location} did not start within {timeout:g} s") from None
            continue
        match = _URL.search(line)
        if match:
            break
    session = Session("the demo database" if demo else location, match.group(1), proc, stderr)
    _live.add(session)
    print(f"Flashback is serving {session.location}: {session.url}", flush=True)
    if browser and _can_show_browser():
        try:
            webbrowser.open(session.url)
        except Exception:  # noqa: BLE001 - the printed link is enough
            pass
    return session


@atexit.register
def _stop_all() -> None:
    for session in list(_live):
        session.stop()

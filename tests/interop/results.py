"""The interop scripts' tally: one line per failed check (and per passed one when `verbose`),
counted for the final `N passed, M failed` line that scripts/test sums up."""

from __future__ import annotations


class Results:
    def __init__(self, verbose: bool = False) -> None:
        self.passed = 0
        self.failed = 0
        self.verbose = verbose

    def check(self, where: str, what: str, ok: bool, detail: str = "") -> bool:
        if ok:
            self.passed += 1
            if self.verbose:
                print(f"ok   {where}: {what}", flush=True)
        else:
            self.failed += 1
            print(f"FAIL {where}: {what}" + (f"\n       {detail}" if detail else ""), flush=True)
        return ok

    def note(self, line: str) -> None:
        print(line, flush=True)

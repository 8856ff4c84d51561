"""Run langgraph-checkpoint-conformance 0.0.2 against Flashback's Rust saver.

    python tests/interop/conformance_test.py DB [--summary-file FILE] [--verbose]

DB is a SQLite file path (created if missing) or a postgres:// URL of an existing (empty or
set-up) database. Every capability suite gets a fresh ``FlashbackSaver`` (a fresh
``flashback bridge DB --create`` subprocess) on the same database, as ``validate`` requires.

Prints the conformance report, the failures with their tracebacks, per-capability counts and
a last line ``N passed, M failed`` (written to --summary-file instead when given). Exits 0 only when all 81
tests of the 0.0.2 suite ran and passed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langgraph.checkpoint.conformance import checkpointer_test, validate  # noqa: E402
from langgraph.checkpoint.conformance.report import ProgressCallbacks  # noqa: E402
from saver_adapter import FlashbackSaver  # noqa: E402

EXPECTED_TESTS = 81  # langgraph-checkpoint-conformance 0.0.2, all eight capabilities


async def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db")
    ap.add_argument("--summary-file")
    ap.add_argument("--verbose", action="store_true", help="one line per test")
    args = ap.parse_args()

    tracebacks: list[tuple[str, str, str]] = []

    @checkpointer_test(name=f"FlashbackSaver({args.db.split('@')[-1]})")
    async def flashback_saver():
        async with FlashbackSaver.start(args.db, create=True) as saver:
            yield saver

    base = ProgressCallbacks.verbose() if args.verbose else ProgressCallbacks.default()
    inner = base.on_test_result

    def on_test_result(cap: str, name: str, ok: bool, tb: str | None) -> None:
        if not ok:
            tracebacks.append((cap, name, tb or ""))
        if inner:
            inner(cap, name, ok, tb)

    progress = ProgressCallbacks(
        on_capability_start=base.on_capability_start,
        on_test_result=on_test_result,
        on_capability_end=base.on_capability_end,
    )
    report = await validate(flashback_saver, progress=progress)
    print()
    report.print_report()

    if tracebacks:
        print("\nFailures:")
        for cap, name, tb in tracebacks:
            print(f"\n--- {cap}: {name}\n{tb.rstrip()}")

    passed = failed = 0
    print("\nPer capability:")
    for cap, res in report.results.items():
        passed += res.tests_passed
        failed += res.tests_failed
        state = "not run" if not res.detected else f"{res.tests_passed} passed, {res.tests_failed} failed"
        print(f"  {cap:16} {state}")
    missing = max(0, EXPECTED_TESTS - passed - failed)
    if missing:
        print(f"  ({missing} of the {EXPECTED_TESTS} tests did not run: counted as failed)")
    failed += missing
    summary = f"{passed} passed, {failed} failed"
    if args.summary_file:
        # conformance.sh prints it as its last line, after cleaning up.
        Path(args.summary_file).write_text(summary + "\n")
    else:
        print(summary)
    return 0 if failed == 0 and passed == EXPECTED_TESTS else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))

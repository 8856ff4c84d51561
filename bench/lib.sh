# shellcheck shell=bash
# Sourced by the bench/ scripts (after `cd` to the repository root): bench/out, and $py, the
# Python of the venv with the real LangGraph packages (tests/fixtures/requirements.txt;
# $FLASHBACK_VENV, created when missing).
out=bench/out
mkdir -p "$out"
venv="${FLASHBACK_VENV:-$HOME/.cache/flashback/venv-test}"
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q -r tests/fixtures/requirements.txt
fi
# shellcheck disable=SC2034 # used by the scripts that source this file
py="$venv/bin/python"

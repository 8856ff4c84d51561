# Sourced by the interop scripts: builds the CLI and exports FLASHBACK_BIN (the binary in the
# cargo target directory, which CARGO_TARGET_DIR or `cargo metadata` names). Needs $python (any
# Python 3, to read cargo's JSON). Exits the script when no binary is there after the build.
echo "building flashback-cli"
cargo build -q -p flashback-cli
target_dir="${CARGO_TARGET_DIR:-}"
if [ -z "$target_dir" ]; then
    target_dir="$(cargo metadata -q --format-version 1 --no-deps 2>/dev/null |
        "$python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])' 2>/dev/null ||
        true)"
    target_dir="${target_dir:-target}"
fi
export FLASHBACK_BIN="$target_dir/debug/flashback"
if [ ! -x "$FLASHBACK_BIN" ]; then
    echo "ERROR: no flashback binary at $FLASHBACK_BIN after cargo build" >&2
    exit 1
fi

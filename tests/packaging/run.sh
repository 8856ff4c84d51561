#!/usr/bin/env bash
# Checks the release artifacts `scripts/release` put in DIST as a user gets them:
#
#   bash tests/packaging/run.sh DIST [--no-deb-install] [--no-cargo-install]
#
# 1. SHA256SUMS matches; every artifact carries Cargo.toml's version.
# 2. The wheel: its platform tag is the one auditwheel finds the binary meets; it installs into
#    fresh virtualenvs (every Python from 3.10 up that is here) made in a temp dir outside the
#    checkout, with PATH holding only the venv and the system, where `flashback --version`,
#    `python -m langgraph_flashback --version`, `flashback threads` on a copied fixture and
#    `flashback serve` answering with the UI work; on one Python, the helper against databases
#    written by the real SqliteSaver and PostgresSaver (helper_check.py); `pip uninstall`
#    leaves the venv as it was.
# 3. `cargo install --path crates/flashback-cli --locked` (into a temp root, sharing
#    CARGO_TARGET_DIR) gives a CLI with the UI embedded.
# 4. The .deb: its control fields (version, WebKitGTK/GTK dependencies), its files (both
#    binaries, the .desktop entry, the icon); installed with dpkg -i (dependencies with apt),
#    `flashback --version` from /usr/bin, the installed flashback-app driven under Xvfb by the
#    real-window test (screenshots in .artifacts/screenshots/deb/), then purged: none of its
#    files remain. Installing needs root (or sudo); without it that part is skipped, except on
#    CI where it fails.
# Each check prints `ok - name` or `not ok - name: why`; the last line is
# `packaging: N passed, M failed`.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD

dist=${1:?usage: tests/packaging/run.sh DIST [--no-deb-install] [--no-cargo-install]}
shift
deb_install=true
cargo_install=true
for a in "$@"; do
    case "$a" in
    --no-deb-install) deb_install=false ;;
    --no-cargo-install) cargo_install=false ;;
    *) echo "packaging: unknown argument $a" >&2; exit 2 ;;
    esac
done
dist=$(cd "$dist" && pwd)
# shellcheck source=../../scripts/lib/version.sh
. scripts/lib/version.sh
version=$(workspace_version)
work=$(mktemp -d /tmp/flashback-packaging.XXXXXX)
serve_pid=""
cleanup() {
    [ -n "$serve_pid" ] && kill "$serve_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1: $2"; }
# check NAME COMMAND...: ok when COMMAND succeeds; its output is the reason otherwise.
check() {
    local name=$1 out
    shift
    if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"; fi
}

echo "packaging: Flashback $version, artifacts in $dist"
wheel=$(ls "$dist"/langgraph_flashback-*.whl 2>/dev/null | head -n 1)
deb=$(ls "$dist"/flashback_*.deb 2>/dev/null | head -n 1)
check "SHA256SUMS matches the artifacts" bash -c "cd '$dist' && sha256sum -c --quiet SHA256SUMS"
check "the wheel is named for $version" test -n "$(ls "$dist"/langgraph_flashback-"$version"-py3-none-*.whl 2>/dev/null)"
check "the .deb is named for $version" test -n "$(ls "$dist"/flashback_"$version"_*.deb 2>/dev/null)"

# ---- the wheel ---------------------------------------------------------------------------------

wheel_checks() {
    local tag size
    tag=$(basename "$wheel" .whl | sed 's/^.*-py3-none-//')
    size=$(du -k "$wheel" | cut -f1)
    echo "wheel: $(basename "$wheel"), ${size} kB"
    if [ "$size" -lt 40000 ]; then ok "the wheel is under 40 MB (${size} kB)"; else not_ok "the wheel is under 40 MB" "${size} kB"; fi
    # auditwheel, independently of maturin: the binary meets the tag the wheel claims.
    local tools="${FLASHBACK_TOOLS:-${HOME:-/root}/.cache/flashback/tools}" shown
    if [ ! -x "$tools/auditwheel-venv/bin/auditwheel" ]; then
        python3 -m venv "$tools/auditwheel-venv" &&
            "$tools/auditwheel-venv/bin/pip" install -q --disable-pip-version-check auditwheel==6.6.0 >/dev/null
    fi
    shown=$("$tools/auditwheel-venv/bin/auditwheel" show "$wheel" 2>&1)
    if printf '%s' "$shown" | tr -s ' \n' ' ' | grep -q "consistent with the following platform tag: \"$tag\""; then
        ok "auditwheel: the binary meets the wheel's tag $tag"
    else
        not_ok "auditwheel: the binary meets the wheel's tag $tag" "$(printf '%s' "$shown" | tr '\n' ' ' | cut -c1-400)"
    fi
    case "$tag" in manylinux_*|manylinux2014_*) ok "the wheel has a manylinux tag ($tag)" ;; *) not_ok "the wheel has a manylinux tag" "$tag" ;; esac

    local pythons=() py v
    for v in 3.11 3.10 3.12 3.13 3.14; do
        py=$(find_python "$v") && pythons+=("$py")
    done
    [ "${#pythons[@]}" -gt 0 ] || pythons=(python3)
    cp tests/fixtures/langgraph.sqlite "$work/fixture.sqlite"
    local first=true
    for py in "${pythons[@]}"; do
        wheel_in_venv "$py" "$first"
        first=false
    done
}

# find_python 3.X: an interpreter of that version that can make a venv (PATH, pyenv, /usr).
find_python() {
    local v=$1 p
    for p in "$(command -v "python$v" 2>/dev/null)" "${PYENV_ROOT:-${HOME:-/root}/.pyenv}"/versions/"$v".*/bin/"python$v" \
        "/usr/bin/python$v" "/usr/local/bin/python$v"; do
        [ -n "$p" ] && [ -x "$p" ] && "$p" -c 'import venv, ensurepip' >/dev/null 2>&1 && { echo "$p"; return 0; }
    done
    return 1
}

# A command in the fresh venv, from outside the checkout, with only the venv and the system on PATH.
in_venv() {
    (cd "$work" && env -i HOME="$work/home" PATH="$venv/bin:/usr/bin:/bin" LANG=C.UTF-8 \
        FLASHBACK_DATA_DIR="$work/data" "$@")
}

# serve_answers NAME BIN: `BIN serve` on the fixture answers / with the UI and its API with the version.
serve_answers() {
    local name=$1 bin=$2 url=""
    local log="$work/serve.log"
    if [ "$bin" = "$venv/bin/flashback" ]; then
        in_venv flashback serve "$work/fixture.sqlite" >"$log" 2>&1 &
    else
        (cd "$work" && env -i HOME="$work/home" PATH=/usr/bin:/bin FLASHBACK_DATA_DIR="$work/data" \
            "$bin" serve "$work/fixture.sqlite" >"$log" 2>&1) &
    fi
    serve_pid=$!
    for _ in $(seq 1 100); do
        url=$(grep -o 'http://127\.0\.0\.1:[0-9]*/#token=[0-9a-f]*' "$log" 2>/dev/null | head -n 1)
        [ -n "$url" ] && break
        sleep 0.1
    done
    if [ -z "$url" ]; then
        not_ok "$name" "no URL printed: $(tr '\n' ' ' <"$log")"
    else
        local base=${url%%/#*} token=${url##*#token=} html info
        html=$(curl -fsS "$base/" 2>&1)
        info=$(curl -fsS -X POST -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
            -d '{"req":null}' "$base/api/app_info" 2>&1)
        if [[ "$html" == *"<title>Flashback"* && "$html" == *"/assets/"* && "$info" == *"\"version\":\"$version\""* ]]; then
            ok "$name"
        else
            not_ok "$name" "page: ${html:0:120} api: ${info:0:200}"
        fi
    fi
    pkill -P "$serve_pid" 2>/dev/null
    kill "$serve_pid" 2>/dev/null
    wait "$serve_pid" 2>/dev/null
    serve_pid=""
}

wheel_in_venv() {
    local py=$1 full=$2 pyv
    pyv=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
    venv="$work/venv-$pyv"
    rm -rf "${venv:?}" "${work:?}/home" "${work:?}/data"
    mkdir -p "$work/home"
    if ! "$py" -m venv "$venv" >/dev/null 2>&1; then
        not_ok "Python $pyv: a venv" "python -m venv failed"
        return
    fi
    if $full; then
        # The real savers first, so that the venv as it was before the wheel can be compared.
        # The real savers first (at the versions the suite pins), so that the venv as it was
        # before the wheel can be compared after uninstalling it.
        grep -E '^(langgraph|langgraph-checkpoint|langgraph-checkpoint-sqlite|langgraph-checkpoint-postgres|langgraph-prebuilt|langchain-core|ormsgpack|pydantic|psycopg\[binary\]|typing-extensions)==' \
            "$repo/tests/fixtures/requirements.txt" >"$work/requirements.txt"
        check "Python $pyv: the pinned LangGraph savers install" in_venv python -m pip install -q \
            --disable-pip-version-check -r "$work/requirements.txt"
    fi
    local before="$work/before.txt" after="$work/after.txt"
    (cd "$venv" && find . -path '*/__pycache__' -prune -o -print | sort) >"$before"
    check "Python $pyv: pip install the wheel" in_venv python -m pip install -q --disable-pip-version-check "$wheel"
    local got
    got=$(in_venv flashback --version 2>&1)
    if [ "$got" = "flashback $version" ]; then ok "Python $pyv: flashback --version"; else not_ok "Python $pyv: flashback --version" "$got"; fi
    got=$(in_venv python -m langgraph_flashback --version 2>&1)
    if [ "$got" = "flashback $version" ]; then ok "Python $pyv: python -m langgraph_flashback --version"; else not_ok "Python $pyv: python -m langgraph_flashback --version" "$got"; fi
    got=$(in_venv flashback threads "$work/fixture.sqlite" 2>&1)
    local count
    count=$(in_venv flashback threads --json "$work/fixture.sqlite" 2>/dev/null |
        in_venv python -c 'import json, sys; print(len(json.load(sys.stdin)))' 2>&1)
    if [[ "$got" == *forked* && "$count" == 12 ]]; then
        ok "Python $pyv: flashback threads on a fixture"
    else
        not_ok "Python $pyv: flashback threads on a fixture" "--json: $count; $(printf '%s' "$got" | tail -n 3 | tr '\n' ' ')"
    fi
    got=$(in_venv sh -c 'command -v flashback')
    if [ "$got" = "$venv/bin/flashback" ]; then ok "Python $pyv: flashback is the venv's"; else not_ok "Python $pyv: flashback is the venv's" "$got"; fi
    serve_answers "Python $pyv: flashback serve answers with the UI" "$venv/bin/flashback"
    if $full; then
        local pg="${FLASHBACK_TEST_PG:-postgresql://postgres@127.0.0.1:5432/postgres}"
        psql -q -d "$pg" -c 'SELECT 1' >/dev/null 2>&1 || pg=""
        [ -n "$pg" ] || echo "# no Postgres answers: the helper's Postgres checks are left out"
        local out
        out=$(in_venv python "$repo/tests/packaging/helper_check.py" "$work" "$version" $pg 2>&1)
        printf '%s\n' "$out" | sed 's/^/  /'
        if printf '%s' "$out" | grep -q '^helper: [0-9]* passed, 0 failed'; then
            ok "Python $pyv: the helper against the real savers ($(printf '%s' "$out" | grep -o '^helper: [0-9]* passed' | cut -d' ' -f2) checks)"
        else
            not_ok "Python $pyv: the helper against the real savers" "$(printf '%s' "$out" | grep '^not ok\|^Traceback\|Error' | head -n 3 | tr '\n' ' ')"
        fi
    fi
    check "Python $pyv: pip uninstall" in_venv python -m pip uninstall -y -q langgraph-flashback
    (cd "$venv" && find . -path '*/__pycache__' -prune -o -print | sort) >"$after"
    if diff -q "$before" "$after" >/dev/null; then
        ok "Python $pyv: uninstalling leaves the venv as it was"
    else
        not_ok "Python $pyv: uninstalling leaves the venv as it was" "$(diff "$before" "$after" | head -n 5 | tr '\n' ' ')"
    fi
}

if [ -n "$wheel" ]; then wheel_checks; else not_ok "a wheel in $dist" "none"; fi

# ---- cargo install -----------------------------------------------------------------------------

if $cargo_install; then
    echo "cargo install --path crates/flashback-cli --locked"
    if out=$(cargo install --quiet --path crates/flashback-cli --locked --root "$work/cargo-root" 2>&1); then
        ok "cargo install --path crates/flashback-cli --locked"
        got=$("$work/cargo-root/bin/flashback" --version 2>&1)
        if [ "$got" = "flashback $version" ]; then ok "cargo install: flashback --version"; else not_ok "cargo install: flashback --version" "$got"; fi
        serve_answers "cargo install: serve answers with the embedded UI" "$work/cargo-root/bin/flashback"
    else
        not_ok "cargo install --path crates/flashback-cli --locked" "$(printf '%s' "$out" | tail -n 3 | tr '\n' ' ')"
    fi
fi

# ---- the .deb ----------------------------------------------------------------------------------

deb_checks() {
    local field files
    echo "deb: $(basename "$deb"), $(du -k "$deb" | cut -f1) kB"
    field=$(dpkg-deb -f "$deb" Version)
    if [ "$field" = "$version" ]; then ok "deb: Version $version"; else not_ok "deb: Version $version" "$field"; fi
    field=$(dpkg-deb -f "$deb" Depends)
    if [[ "$field" == *libwebkit2gtk-4.1-0* && "$field" == *libgtk-3-0* ]]; then
        ok "deb: depends on WebKitGTK and GTK ($field)"
    else
        not_ok "deb: depends on WebKitGTK and GTK" "$field"
    fi
    files=$(dpkg-deb -c "$deb")
    local want
    for want in /usr/bin/flashback-app /usr/bin/flashback /usr/share/applications/Flashback.desktop \
        /usr/share/icons/hicolor/256x256/apps/flashback-app.png; do
        if printf '%s\n' "$files" | grep -Eq " (\./)?${want#/}\$"; then ok "deb: holds $want"; else not_ok "deb: holds $want" "not in dpkg-deb -c"; fi
    done
    local desktop
    desktop=$(dpkg-deb --fsys-tarfile "$deb" | tar -xO --wildcards '*usr/share/applications/*.desktop' 2>/dev/null)
    if [[ "$desktop" == *"Exec=flashback-app %f"* && "$desktop" == *"Icon=flashback-app"* && "$desktop" == *"MimeType=application/vnd.sqlite3"* ]]; then
        ok "deb: the .desktop entry runs flashback-app with a file, with its icon"
    else
        not_ok "deb: the .desktop entry" "$(printf '%s' "$desktop" | tr '\n' ' ')"
    fi
    if command -v desktop-file-validate >/dev/null 2>&1; then
        printf '%s\n' "$desktop" >"$work/Flashback.desktop"
        check "deb: desktop-file-validate accepts the .desktop entry" desktop-file-validate "$work/Flashback.desktop"
    fi
    $deb_install || return 0
    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if sudo -n true 2>/dev/null; then
            sudo=(sudo -n)
        else
            case "${CI:-}" in
            true | 1) not_ok "deb: install" "needs root or password-less sudo" ;;
            *) echo "# deb: not root and no password-less sudo: the install checks are skipped" ;;
            esac
            return 0
        fi
    fi
    local package
    package=$(dpkg-deb -f "$deb" Package)
    if "${sudo[@]}" dpkg -i "$deb" >"$work/dpkg.log" 2>&1 ||
        { DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -f -y -qq >>"$work/dpkg.log" 2>&1 &&
            dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed'; }; then
        ok "deb: dpkg -i (dependencies from apt)"
    else
        not_ok "deb: dpkg -i" "$(tail -n 3 "$work/dpkg.log" | tr '\n' ' ')"
        return 0
    fi
    local got
    got=$(env -i PATH=/usr/bin:/bin flashback --version 2>&1)
    if [ "$got" = "flashback $version" ]; then ok "deb: /usr/bin/flashback --version"; else not_ok "deb: /usr/bin/flashback --version" "$got"; fi
    local window
    window=$(FLASHBACK_APP=/usr/bin/flashback-app ./scripts/window-test --out .artifacts/screenshots/deb 2>&1)
    printf '%s\n' "$window" | sed 's/^/  /'
    if printf '%s' "$window" | grep -q '^window: [1-9][0-9]* passed, 0 failed'; then
        ok "deb: the installed flashback-app runs the real-window test under Xvfb ($(printf '%s' "$window" | grep -o '^window: [0-9]* passed' | cut -d' ' -f2) checks; .artifacts/screenshots/deb/)"
    else
        not_ok "deb: the installed flashback-app under Xvfb" "$(printf '%s' "$window" | grep '^not ok\|^window' | head -n 3 | tr '\n' ' ')"
    fi
    local installed
    installed=$(dpkg -L "$package" | while read -r f; do [ -f "$f" ] && echo "$f"; done)
    if "${sudo[@]}" dpkg --purge "$package" >>"$work/dpkg.log" 2>&1; then
        ok "deb: dpkg --purge"
    else
        not_ok "deb: dpkg --purge" "$(tail -n 2 "$work/dpkg.log" | tr '\n' ' ')"
    fi
    local left
    left=$(printf '%s\n' "$installed" | while read -r f; do [ -n "$f" ] && [ -e "$f" ] && echo "$f"; done)
    if [ -z "$left" ] && [ -n "$installed" ]; then
        ok "deb: purging leaves none of its $(printf '%s\n' "$installed" | wc -l) files"
    else
        not_ok "deb: purging leaves none of its files" "${left:-dpkg -L listed no files}"
    fi
}

if [ -n "$deb" ]; then deb_checks; else not_ok "a .deb in $dist" "none"; fi

echo "packaging: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# Run every test, in three tiers, from a fresh machine.
#
#   bash tools/test.sh
#
#   (a) core:          plain pytest, no bpy                  tests/core
#   (b) bpy module:    PyPI bpy 4.2.0 + the built zip         tests/blender tests/bpy_module
#   (c) real Blender:  Debian's Blender 4.3.2 (pytest-blender) tests/blender
#                      + GUI under Xvfb and blender -b         tests/real_blender
#
# Sets up what is missing first: the venv, the extension zip (linux-x64), the
# Debian 13 root with Blender. Prints each tier's counts and a total line.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_env.sh"
cd "$REPO"

ensure_system || exit 1
ensure_venv full || exit 1
bash tools/blender_root.sh ensure || exit 1
"$VENV/bin/python" tools/build_extension.py --platforms linux-x64 || exit 1
ZIP="$(ls "$REPO"/dist/real2gym-*-linux_x64.zip | tail -n1)"
export REAL2GYM_EXTENSION_ZIP="$ZIP"

SCRATCH="$(mktemp -d)"
trap 'rm -rf "$SCRATCH"' EXIT
PYTEST=("$VENV/bin/python" -m pytest -p no:cacheprovider)
declare -A SUMMARY
failed_tiers=0

tier() {
    # tier NAME ARGS...: runs pytest with a throw-away Blender user folder.
    local name=$1 log="$SCRATCH/$1.log"
    shift
    echo "=== tier $name ==="
    BLENDER_USER_RESOURCES="$(mktemp -d -p "$SCRATCH")" "$@" 2>&1 | tee "$log"
    local rc=${PIPESTATUS[0]}
    SUMMARY[$name]="$(grep -E '^=* *[0-9]+ (passed|failed|errors?)|no tests ran' "$log" | tail -n1 | tr -d '=' | sed 's/^ *//; s/ in [0-9.]*s.*$//')"
    [ "$rc" -eq 0 ] || failed_tiers=$((failed_tiers + 1))
}

# The core tier's modules run in two processes (pytest-xdist, a module to a process, so its
# fixtures are made once): about 8 minutes instead of 12 to 14 on 2 cores.
tier a-core "${PYTEST[@]}" -p no:pytest-blender -n "${REAL2GYM_TEST_WORKERS:-2}" --dist loadfile tests/core
tier b-bpy-module "${PYTEST[@]}" -p no:pytest-blender tests/blender tests/bpy_module
tier c-real-blender "${PYTEST[@]}" tests/blender --blender-executable "$REPO/tools/blender"
tier c-gui-and-batch "${PYTEST[@]}" -p no:pytest-blender tests/real_blender

passed=0 failed=0
echo
echo "=== summary ==="
for name in a-core b-bpy-module c-real-blender c-gui-and-batch; do
    line="${SUMMARY[$name]:-no result}"
    printf '%-18s %s\n' "$name" "$line"
    p=$(grep -oE '[0-9]+ passed' <<<"$line" | awk '{s += $1} END {print s + 0}')
    f=$(grep -oE '[0-9]+ (failed|errors?)' <<<"$line" | awk '{s += $1} END {print s + 0}')
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
done
if [ "$failed_tiers" -gt 0 ] && [ "$failed" -eq 0 ]; then
    failed=$failed_tiers
fi
echo "total: $passed passed, $failed failed"
[ "$failed_tiers" -eq 0 ]

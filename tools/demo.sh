#!/usr/bin/env bash
# Run Real2Gym on the bundled demo, headless, from a fresh machine.
#
#   bash tools/demo.sh [DEMO_DIR] [OUT_DIR]
#
# Creates .venv (Python 3.11) with the pinned run-time dependencies if needed, runs the
# whole pipeline with the PyPI bpy module (so scene.blend is written too) and
# prints where the outputs are.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup_env.sh"

DEMO="${1:-$REPO/examples/block_in_cup}"
OUT="${2:-$REPO/out/block_in_cup}"
ensure_system
ensure_venv runtime
"$VENV/bin/real2gym" run "$DEMO" --out "$OUT"
echo
echo "Outputs are in $OUT:"
ls -1 "$OUT" | sed 's/^/  /'

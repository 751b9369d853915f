#!/usr/bin/env bash
# SAM2.1-tiny speed on a GPU machine: benchmarks/bench_sam2.py with REAL2GYM_BENCH_DEVICE=cuda
# (random weights, all frames of the bundled demo, the classical backend as the baseline).
#
# 1. Here, once, in the development checkout (needs .venv with torch and sam2, and PyPI):
#
#      bash tools/gpu_sam2_speed.sh prepare
#
#    fills .cache/gpu_sam2/ (git ignored, about 16 MB): site/ holds the pure-Python
#    packages SAM2 needs (sam2, hydra, omegaconf, antlr4, iopath), copied from .venv,
#    and wheels/ MuJoCo's wheels for CPython 3.12 (the core package imports mujoco).
#    The GPU machine's python3 (3.12) has CUDA PyTorch, numpy, SciPy, OpenCV, PyYAML,
#    tqdm, Pillow and portalocker, but none of these, and it cannot reach PyPI.
#
# 2. On the GPU machine, in the repository root (the device tool: command
#    "bash tools/gpu_sam2_speed.sh", carry [".cache/gpu_sam2"], timeout_s 480):
#
#      bash tools/gpu_sam2_speed.sh
#
#    installs the wheels into a temporary folder, checks that PyTorch sees a GPU and
#    runs `benchmarks/run.py --only sam2` under a hard timeout (REAL2GYM_GPU_TIMEOUT
#    seconds, default 420), printing the table; with $OUT set, also $OUT/sam2.json.
#    Exits 2 when something is missing, 1 when the benchmark printed no SAM2 figure,
#    124 on the timeout (137 if it had to be killed).
#
# Environment: REAL2GYM_PYTHON (default python3), REAL2GYM_GPU_TIMEOUT, and the
# benchmark's own REAL2GYM_BENCH_SAM2_FRAMES (default there: every frame on a GPU).
set -uo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE="$REPO/.cache/gpu_sam2"
SAM2_PACKAGES=(sam2 hydra omegaconf antlr4 iopath)
SAM2_DISTS=(sam2 hydra_core omegaconf antlr4_python3_runtime iopath)
# mujoco-studio (the viewer and Filament renderer) is left out: importing mujoco does not need it.
MUJOCO_WHEELS=(mujoco mujoco-core)
PLATFORMS=(manylinux_2_28_x86_64 manylinux_2_27_x86_64 manylinux_2_17_x86_64 manylinux2014_x86_64)

_say() { echo "gpu_sam2_speed: $*" >&2; }

prepare() {
    local python="$REPO/.venv/bin/python" site version name dist platform_args=()
    [ -x "$python" ] || { _say "no $python: make the development venv first (tools/setup_env.sh)"; return 2; }
    site="$("$python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')" || return 2
    version="$("$python" -c 'import importlib.metadata as m; print(m.version("mujoco"))')" || {
        _say "mujoco is not installed in .venv"
        return 2
    }
    rm -rf "$CACHE"
    mkdir -p "$CACHE/site" "$CACHE/wheels"
    for name in "${SAM2_PACKAGES[@]}"; do
        [ -d "$site/$name" ] || {
            _say "$name is not installed in .venv (pip install -r requirements-sam2.txt, see README)"
            return 2
        }
        cp -r "$site/$name" "$CACHE/site/"
    done
    for dist in "${SAM2_DISTS[@]}"; do
        cp -r "$site/$dist"-*.dist-info "$CACHE/site/" 2>/dev/null || true  # versions for importlib.metadata
    done
    find "$CACHE/site" -name __pycache__ -type d -prune -exec rm -rf {} +
    for platform in "${PLATFORMS[@]}"; do platform_args+=(--platform "$platform"); done
    "$python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
        "${platform_args[@]}" -d "$CACHE/wheels" "${MUJOCO_WHEELS[@]/%/==$version}" || {
        _say "could not download MuJoCo $version's wheels for CPython 3.12"
        return 2
    }
    _say "ready: $(du -sh "$CACHE" | cut -f1) in $CACHE; carry .cache/gpu_sam2 to the GPU machine"
}

run_on_gpu() {
    local python="${REAL2GYM_PYTHON:-python3}" rc json=()
    if [ ! -d "$CACHE/site/sam2" ] || ! ls "$CACHE"/wheels/mujoco*.whl >/dev/null 2>&1; then
        _say "$CACHE is missing or incomplete: run 'bash tools/gpu_sam2_speed.sh prepare' in the" \
            "development checkout and carry .cache/gpu_sam2"
        return 2
    fi
    TARGET="$(mktemp -d)"  # global: the EXIT trap runs after this function has returned
    LOG="$(mktemp)"
    trap 'rm -rf "$TARGET" "$LOG"' EXIT
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$TARGET" \
        "$CACHE"/wheels/*.whl || { _say "could not install the carried MuJoCo wheels"; return 2; }
    export PYTHONPATH="$CACHE/site:$TARGET${PYTHONPATH:+:$PYTHONPATH}"
    export MUJOCO_GL=disable  # nothing is rendered: MuJoCo skips loading OpenGL
    export REAL2GYM_BENCH_DEVICE=cuda PYTHONUNBUFFERED=1
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader 2>/dev/null || true
    "$python" - <<'EOF' || { _say "PyTorch sees no CUDA GPU here"; return 2; }
import sys
import torch
ok = torch.cuda.is_available()
print(f"python {sys.version.split()[0]}, torch {torch.__version__} (CUDA {torch.version.cuda}), "
      f"GPU: {torch.cuda.get_device_name() if ok else 'none'}")
sys.exit(0 if ok else 1)
EOF
    [ -n "${OUT:-}" ] && json=(--json "$OUT/sam2.json")
    cd "$REPO" || return 2
    timeout -k 10 "${REAL2GYM_GPU_TIMEOUT:-420}" \
        "$python" benchmarks/run.py --only sam2 ${json[@]+"${json[@]}"} 2>&1 | tee "$LOG"
    rc=${PIPESTATUS[0]}
    [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && _say "timed out after ${REAL2GYM_GPU_TIMEOUT:-420} s, or was killed"
    if [ "$rc" -eq 0 ] && ! grep -q "frames/s per object" "$LOG"; then
        _say "the benchmark printed no SAM2 figure: see its lines above"
        rc=1
    fi
    return "$rc"
}

case "${1:-run}" in
    prepare) prepare ;;
    run) run_on_gpu ;;
    *)
        _say "usage: bash tools/gpu_sam2_speed.sh [prepare|run]"
        exit 2
        ;;
esac
exit $?

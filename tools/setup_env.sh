#!/usr/bin/env bash
# Shared set-up for tools/demo.sh and tools/test.sh (sourced, not run).
#
# ensure_venv [runtime|full]: creates .venv with Python 3.11 if missing (bpy 4.2.0 needs
# 3.11) and installs the project itself (editable) with its pinned dependencies:
# runtime (requirements.txt: what tools/demo.sh needs) or full (also requirements-dev.txt
# and requirements-sam2.txt: the tests). Re-installs only when those files changed.
# ensure_system: the Debian packages the tools need on the host.

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
export PIP_DISABLE_PIP_VERSION_CHECK=1

_say() { echo "real2gym-setup: $*" >&2; }

_apt_install() {
    local missing=()
    for pkg in "$@"; do
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    _say "installing Debian packages: ${missing[*]}"
    if [ "$(id -u)" != 0 ]; then
        _say "need root to install ${missing[*]} (run as root or install them first)"
        return 1
    fi
    apt-get update -qq >/dev/null
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
}

_python311() {
    for candidate in python3.11 python3; do
        if command -v "$candidate" >/dev/null &&
            "$candidate" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2>/dev/null; then
            command -v "$candidate"
            return 0
        fi
    done
    return 1
}

ensure_system() {
    # EGL/Mesa for MuJoCo's offscreen renderer; unshare (util-linux) for tools/blender; an X server,
    # xwd and ImageMagick for the test of `real2gym view` (MuJoCo's viewer window, under Xvfb).
    _apt_install libegl1 libgl1-mesa-dri libgles2 util-linux ca-certificates xvfb x11-apps imagemagick
}

ensure_venv() {
    local python stamp want
    if [ ! -x "$VENV/bin/python" ]; then
        python="$(_python311)" || {
            _apt_install python3.11 python3.11-venv || return 1
            python="$(_python311)"
        }
        _say "creating $VENV with $python"
        "$python" -m venv "$VENV" || {
            _apt_install python3.11-venv && "$python" -m venv "$VENV"
        }
    fi
    stamp="$VENV/.real2gym-installed"
    local kind="${1:-full}" have
    have="$(cat "$stamp" 2>/dev/null || true)"  # no stamp yet: set -e must not stop here
    # runtime: requirements.txt; full: that, requirements-dev.txt and requirements-sam2.txt.
    local runtime_want full_want
    runtime_want="runtime $(cat "$REPO/requirements.txt" "$REPO/pyproject.toml" | sha256sum | cut -d' ' -f1)"
    full_want="full $(cat "$REPO/requirements.txt" "$REPO/requirements-dev.txt" "$REPO/requirements-sam2.txt" \
        "$REPO/pyproject.toml" | sha256sum | cut -d' ' -f1)"
    want="$runtime_want"
    [ "$kind" = full ] && want="$full_want"
    # A full venv serves a runtime request too.
    if [ "$have" = "$want" ] || { [ "$kind" = runtime ] && [ "$have" = "$full_want" ]; }; then
        return 0
    fi
    "$VENV/bin/python" -m pip install -q --upgrade pip >/dev/null
    if [ "$kind" = full ]; then
        _say "installing the pinned run-time, test and SAM2 dependencies into $VENV (first run downloads about 1.6 GB)"
        # torch first, by its exact version (the CPU build); then everything else.
        "$VENV/bin/python" -m pip install -q "torch==2.13.0" 2>&1 | grep -v '^WARNING: Location' >&2 || true
        "$VENV/bin/python" -m pip install -q -r "$REPO/requirements.txt" -r "$REPO/requirements-dev.txt" \
            -r "$REPO/requirements-sam2.txt" 2>&1 | grep -v '^WARNING: Location' >&2 || true
        # sam2's metadata asks for torchvision, which its video predictor never imports
        # (and whose reachable builds do not load beside the CPU torch): no deps.
        SAM2_BUILD_CUDA=0 "$VENV/bin/python" -m pip install -q --no-deps --no-build-isolation "sam2==1.1.0" 2>&1 |
            grep -v '^WARNING: Location' >&2 || true
    else
        _say "installing the pinned run-time dependencies into $VENV (first run downloads about 450 MB)"
        "$VENV/bin/python" -m pip install -q -r "$REPO/requirements.txt" 2>&1 | grep -v '^WARNING: Location' >&2 || true
    fi
    "$VENV/bin/python" -m pip install -q --no-deps -e "$REPO" 2>&1 | grep -v '^WARNING: Location' >&2 || true
    local check='import bpy, mujoco, cv2, av, trimesh, scipy, real2gym.real2gym_addon'
    [ "$kind" = full ] && check="$check, pytest, torch, sam2, dm_control.mjcf"
    "$VENV/bin/python" -c "$check" || {
        _say "the venv is incomplete; see the pip messages above"
        return 1
    }
    echo "$want" >"$stamp"
}

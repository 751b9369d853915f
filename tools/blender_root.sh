#!/usr/bin/env bash
# Provide a real Blender 4.3.2 (Debian 13's package) for the tests.
#
# On Debian 13 Blender comes straight from apt. On older Debian (12) we build a
# Debian 13 root once with debootstrap, cache it, and run Blender inside it with
# chroot; the repository and the venv are bind-mounted at the same paths so the
# same file names work inside and out.
#
# Usage:
#   tools/blender_root.sh ensure          # install/build once (idempotent)
#   tools/blender_root.sh path            # print the path of the blender wrapper
#   tools/blender_root.sh blender ARGS    # run Blender (mounts, runs, unmounts)
#
# Environment:
#   REAL2GYM_BLENDER_ROOT   where the Debian 13 root lives
#                           (default /var/cache/real2gym/trixie-root)
set -euo pipefail

ROOT="${REAL2GYM_BLENDER_ROOT:-/var/cache/real2gym/trixie-root}"
PACKAGES="blender,xvfb,xauth,x11-apps,x11-utils,imagemagick,libgl1-mesa-dri,libegl1,python3-pytest,python3-numpy"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(dirname "$HERE")"

native_blender() {
    # Debian 13 or later with Blender from apt: no root needed.
    if grep -qE '^VERSION_ID="?(1[3-9]|[2-9][0-9])' /etc/os-release 2>/dev/null; then
        return 0
    fi
    return 1
}

mirror() {
    # The machine's own Debian mirror, as apt is configured here.
    local uri
    uri=$(grep -hoE '^URIs: *[^ ]+/debian$' /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 | awk '{print $2}')
    if [ -z "$uri" ]; then
        uri=$(grep -hoE '^deb +[^ ]+/debian ' /etc/apt/sources.list 2>/dev/null | head -n1 | awk '{print $2}')
    fi
    echo "${uri:?no Debian mirror found in the apt sources}"
}

ensure() {
    if native_blender; then
        command -v blender >/dev/null || { apt-get update -qq && apt-get install -y -qq blender xvfb xauth x11-apps imagemagick python3-pytest >/dev/null; }
        return 0
    fi
    if [ -x "$ROOT/usr/bin/blender" ] && [ -f "$ROOT/.real2gym-ready" ]; then
        [ -e "$ROOT/etc/mtab" ] || ln -sf ../proc/self/mounts "$ROOT/etc/mtab"
        add_missing_packages
        return 0
    fi
    command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
    echo "real2gym: building a Debian 13 root with Blender in $ROOT (once, about 3-5 minutes)" >&2
    rm -rf "$ROOT.partial"
    mkdir -p "$(dirname "$ROOT")"
    debootstrap --variant=minbase --include="$PACKAGES" trixie "$ROOT.partial" "$(mirror)" >&2
    # Blender lists mounted file systems through /etc/mtab.
    ln -sf ../proc/self/mounts "$ROOT.partial/etc/mtab"
    rm -rf "$ROOT"
    mv "$ROOT.partial" "$ROOT"
    touch "$ROOT/.real2gym-ready"
}

add_missing_packages() {
    # A root built by an older version of this script lacks some packages: add them.
    local missing=()
    for pkg in ${PACKAGES//,/ }; do
        chroot "$ROOT" dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "real2gym: adding ${missing[*]} to the Blender root" >&2
    cp /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null || true
    unshare --mount --propagation private /bin/bash -c '
        mount -t proc proc "$1/proc"; mount --rbind /dev "$1/dev"
        chroot "$1" /bin/sh -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $2" >&2
    ' add "$ROOT" "${missing[*]}"
}

wrapper_path() {
    if native_blender; then command -v blender; else echo "$HERE/blender"; fi
}

case "${1:-}" in
    ensure) ensure ;;
    path) wrapper_path ;;
    blender) shift; exec "$HERE/blender" "$@" ;;
    *) echo "usage: $0 ensure|path|blender ARGS" >&2; exit 2 ;;
esac

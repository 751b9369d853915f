"""Build the real2gym extension zips, one per platform, with their wheels.

Blender installs an extension's wheels itself, so each zip carries the wheels of
what the add-on imports (MuJoCo, trimesh, OpenCV, SciPy, CoACD) for each Python
the supported Blenders use: 3.11 (official Blender 4.2-5.0) and 3.13 (Debian's
Blender 4.3, Blender 5.1 and later). numpy is never bundled: Blender ships it.

Usage::

    python tools/build_extension.py                        # all platforms, both Pythons
    python tools/build_extension.py --platforms linux-x64 --python 3.11 --offline --out dist/

A platform where some package has no wheel (macos-x64: mujoco-core 4.0 and
coacd have none) is skipped with a message. User errors exit 2 with one line.

Wheels are downloaded once into ``wheels/``; ``wheels/index.json`` remembers
which file serves which package on which Python and platform. A staging copy of
the source gets a manifest listing the wheels and platforms, then Blender's own
``blender_ext.py build --split-platforms`` writes one zip per platform, named
by Blender with an underscore (``dist/real2gym-0.1.0-linux_x64.zip``), and
``blender_ext.py validate`` checks each.
"""

from __future__ import annotations

import argparse
import fnmatch
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PYTHONS = ("3.11", "3.13")
# pip --platform tags per Blender platform, oldest first: pip prefers the first
# tag that matches, so the wheel chosen runs on the most systems (Blender 4.2+
# needs glibc 2.28 on Linux and macOS 11.2).
PLATFORM_TAGS = {
    "linux-x64": (
        "manylinux2014_x86_64",
        "manylinux_2_17_x86_64",
        "manylinux_2_27_x86_64",
        "manylinux_2_28_x86_64",
    ),
    "windows-x64": ("win_amd64",),
    "macos-arm64": ("macosx_11_0_arm64", "macosx_12_0_arm64", "macosx_13_0_arm64", "macosx_14_0_arm64"),
    "macos-x64": ("macosx_11_0_x86_64", "macosx_12_0_x86_64", "macosx_13_0_x86_64", "macosx_14_0_x86_64"),
}
# What the add-on imports, with the run-time dependencies that import and
# off-screen rendering need. mujoco 4 is split in two: `mujoco` (pure Python)
# and `mujoco-core` (the bindings, same version). mujoco.Renderer needs PyOpenGL
# for MUJOCO_GL=egl/osmesa on Linux and glfw on Windows. mujoco-studio (the
# viewer, which pulls in websockets) is left out: import, MjSpec and Renderer
# never touch it. av (PyAV) writes the H.264 comparison video. numpy is left out on purpose.
PACKAGES = "mujoco mujoco-core pyopengl glfw trimesh opencv-python-headless scipy coacd av".split()
# Pins for the packages requirements.txt does not list (mujoco-core follows mujoco).
DEFAULT_PINS = {"pyopengl": "3.1.10", "glfw": "2.11.0"}
# Never copied into the staging tree, whatever the manifest says.
STAGING_EXCLUDES = ("/wheels/", "/build/", "/dist/", "/.*", "__pycache__/", "*.pyc")


class BuildError(Exception):
    """A problem the user can fix; printed as one line, exit status 2."""


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def read_pins(requirements: Path) -> dict[str, str]:
    """Returns ``{package: "package==version"}`` for every package in PACKAGES.

    Args:
        requirements: The requirements file with ``name==version`` lines.

    Returns:
        One pinned requirement per package, in the order of PACKAGES.
    """
    found: dict[str, str] = {}
    for line in requirements.read_text(encoding="utf-8").splitlines():
        match = re.match(r"\s*([A-Za-z0-9_.-]+)\s*==\s*([^\s;#]+)", line)
        if match:
            found[_normalize(match.group(1))] = match.group(2)
    if "mujoco" in found:
        found.setdefault("mujoco_core", found["mujoco"])
    pins = {}
    for package in PACKAGES:
        version = found.get(_normalize(package)) or DEFAULT_PINS.get(package)
        pins[package] = f"{package}=={version}" if version else package
    return pins


def find_blender_ext(explicit: str | None) -> Path:
    """Finds Blender's extension command line ``blender_ext.py``.

    Args:
        explicit: A path given with --blender-ext, or None to search the bpy
            module of this Python, the repository's .venv and system Blenders.

    Returns:
        The path of blender_ext.py.

    Raises:
        BuildError: When it is not found.
    """
    if explicit:
        if Path(explicit).is_file():
            return Path(explicit)
        raise BuildError(f"--blender-ext {explicit}: no such file")
    tail = "*/scripts/addons_core/bl_pkg/cli/blender_ext.py"
    roots = []
    spec = importlib.util.find_spec("bpy")
    if spec and spec.origin:
        roots.append(Path(spec.origin).parent)
    roots += sorted(REPO.glob(".venv/lib/python3*/site-packages/bpy")) + [Path("/usr/share/blender")]
    for root in roots:
        candidates = sorted(root.glob(tail))
        if candidates:
            return candidates[-1]
    raise BuildError(
        "blender_ext.py not found: install the bpy module (pip install bpy) or pass --blender-ext PATH"
    )


class WheelCache:
    """The wheels/ folder and its index of which wheel serves which request."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.pip_error = ""
        self.index_path = folder / "index.json"
        try:
            self.index = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.index = {}

    def lookup(self, pair: str, requirement: str) -> str | None:
        """Returns the cached wheel's file name, or None when it must be downloaded."""
        name = self.index.get(pair, {}).get(requirement)
        return name if name and (self.folder / name).is_file() else None

    def record(self, pair: str, requirement: str, name: str) -> None:
        """Remembers that ``name`` serves ``requirement`` for ``pair`` and saves the index."""
        self.index.setdefault(pair, {})[requirement] = name
        temporary = self.index_path.with_name(f".index-{os.getpid()}.tmp")
        temporary.write_text(json.dumps(self.index, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, self.index_path)

    def download(self, requirements: list[str], python: str, platform: str) -> dict[str, str]:
        """Downloads wheels with pip; returns ``{requirement: file name}`` for those found.

        Tries all requirements in one pip call, then one by one when that fails,
        so that one package without a wheel does not hide the others.
        """
        found: dict[str, str] = {}
        batches = [requirements] + ([[r] for r in requirements] if len(requirements) > 1 else [])
        for batch in batches:
            batch = [r for r in batch if r not in found]
            if not batch:
                continue
            with tempfile.TemporaryDirectory(dir=self.folder, prefix=".download-") as temporary:
                command = [sys.executable, "-m", "pip", "download", "--only-binary=:all:", "--no-deps"]
                command += ["--python-version", python, "--implementation", "cp", "-d", temporary]
                for tag in PLATFORM_TAGS[platform]:
                    command += ["--platform", tag]
                command += ["--progress-bar", "off", "--disable-pip-version-check", *batch]
                completed = subprocess.run(command, capture_output=True, text=True)
                if completed.returncode != 0:
                    self.pip_error = (completed.stderr.strip().splitlines() or [""])[-1]
                    continue
                for wheel in Path(temporary).glob("*.whl"):
                    for requirement in batch:
                        if _normalize(wheel.name.split("-")[0]) == _normalize(requirement.split("==")[0]):
                            os.replace(wheel, self.folder / wheel.name)
                            found[requirement] = wheel.name
        return found


def _pair(python: str, platform: str) -> str:
    return f"cp{python.replace('.', '')}-{platform}"


def collect_wheels(
    cache: WheelCache, pins: dict[str, str], pythons: list[str], platforms: list[str], offline: bool
) -> tuple[dict[str, set[str]], dict[str, dict[str, list[str]]]]:
    """Finds or downloads the wheel of every package for every (Python, platform) pair.

    Args:
        cache: The wheels folder.
        pins: Pinned requirement per package, from :func:`read_pins`.
        pythons: Python versions such as "3.11".
        platforms: Blender platforms such as "linux-x64".
        offline: Use only cached wheels; a missing one is an error.

    Returns:
        Per platform, the wheel file names found, and the requirements that have
        no wheel with the Python versions they lack (empty when complete).

    Raises:
        BuildError: When offline and a wheel is not cached.
    """
    todo: dict[tuple[str, str], list[str]] = {}
    for platform in platforms:
        for python in pythons:
            missing = [r for r in pins.values() if not cache.lookup(_pair(python, platform), r)]
            if missing and offline:
                raise BuildError(
                    f"--offline: no wheel of {missing[0]} for Python {python} on {platform} in "
                    f"{cache.folder}; run once without --offline to download it"
                )
            if missing:
                todo[(python, platform)] = missing
                print(f"fetching {len(missing)} wheel(s) for Python {python} on {platform}", file=sys.stderr)
    with ThreadPoolExecutor(max_workers=4) as pool:
        futures = {key: pool.submit(cache.download, missing, *key) for key, missing in todo.items()}
    for (python, platform), future in futures.items():
        for requirement, name in future.result().items():
            cache.record(_pair(python, platform), requirement, name)
    wheels: dict[str, set[str]] = {platform: set() for platform in platforms}
    absent: dict[str, dict[str, list[str]]] = {platform: {} for platform in platforms}
    for platform in platforms:
        for python in pythons:
            for requirement in pins.values():
                if name := cache.lookup(_pair(python, platform), requirement):
                    wheels[platform].add(name)
                else:
                    absent[platform].setdefault(requirement, []).append(python)
    return wheels, absent


def _excluded(relative: str, is_dir: bool, patterns: list[str]) -> bool:
    """Whether a path matches a gitignore-like pattern of the manifest's [build] table."""
    name = relative.rsplit("/", 1)[-1]
    for pattern in patterns:
        if pattern.endswith("/") and not is_dir:
            continue
        core = pattern.strip("/")
        if pattern.startswith("/") or "/" in core:
            if fnmatch.fnmatchcase(relative, core):
                return True
        elif fnmatch.fnmatchcase(name, core):
            return True
    return False


def staging_manifest(text: str, wheels: list[str], platforms: list[str]) -> str:
    """Returns the manifest text with the wheels and platforms lists filled in.

    Args:
        text: The committed blender_manifest.toml (with ``wheels = []``).
        wheels: Wheel file names, to be listed as ``./wheels/NAME``.
        platforms: Blender platforms, needed by ``build --split-platforms``.

    Returns:
        The same TOML with only the top-level ``wheels`` and ``platforms`` changed.
    """
    listed = "".join(f'  "./wheels/{name}",\n' for name in sorted(wheels))
    block = f"wheels = [\n{listed}]\nplatforms = [{', '.join(json.dumps(p) for p in platforms)}]\n"
    first_table = re.search(r"^\[", text, flags=re.M)
    split = first_table.start() if first_table else len(text)
    head, rest = text[:split], text[split:]
    head = re.sub(r"^platforms\s*=\s*\[.*?\][ \t]*\n", "", head, flags=re.M | re.S)
    head, count = re.subn(
        r"^wheels\s*=\s*\[.*?\][ \t]*\n", lambda _m: block, head, count=1, flags=re.M | re.S
    )
    if count == 0:
        head = head.rstrip("\n") + "\n\n" + block + "\n"
    result = head + rest
    if tomllib.loads(result).get("wheels") != [f"./wheels/{name}" for name in sorted(wheels)]:
        raise BuildError("could not write the wheels list into the staging blender_manifest.toml")
    return result


def stage(source: Path, staging: Path, manifest_text: str, wheels: list[Path], platforms: list[str]) -> None:
    """Copies the extension's files, its wheels and a filled-in manifest into ``staging``.

    Args:
        source: The extension's source tree (the repository root).
        staging: A directory that does not exist yet.
        manifest_text: The committed blender_manifest.toml.
        wheels: The wheel files of all platforms, hard-linked (or copied) into staging/wheels/.
        platforms: The Blender platforms to build.
    """
    manifest = tomllib.loads(manifest_text)
    patterns = [*manifest.get("build", {}).get("paths_exclude_pattern", []), *STAGING_EXCLUDES]

    def ignore(directory: str, names: list[str]) -> set[str]:
        relative = Path(directory).relative_to(source).as_posix()
        prefix = "" if relative == "." else relative + "/"
        return {
            n for n in names if _excluded(prefix + n, os.path.isdir(os.path.join(directory, n)), patterns)
        }

    shutil.copytree(source, staging, ignore=ignore)
    text = staging_manifest(manifest_text, [wheel.name for wheel in wheels], platforms)
    (staging / "blender_manifest.toml").write_text(text, encoding="utf-8")
    (staging / "wheels").mkdir()
    for wheel in wheels:
        try:
            os.link(wheel, staging / "wheels" / wheel.name)
        except OSError:
            shutil.copy2(wheel, staging / "wheels" / wheel.name)


def run_blender_ext(blender_ext: Path, *args: str) -> None:
    """Runs ``blender_ext.py`` with this Python; raises BuildError with its output on failure."""
    completed = subprocess.run([sys.executable, str(blender_ext), *args], capture_output=True, text=True)
    if completed.returncode != 0:
        output = " | ".join(
            line.strip() for line in (completed.stdout + completed.stderr).splitlines() if line.strip()
        )
        raise BuildError(f"blender_ext.py {args[0]} failed: {output}")


def _check_args(args: argparse.Namespace) -> tuple[list[str], list[str], Path]:
    """Returns the platforms, Python versions and source tree, or raises BuildError."""
    platforms = [p for p in args.platforms.split(",") if p]
    pythons = [p for p in args.python.split(",") if p]
    if unknown := [p for p in platforms if p not in PLATFORM_TAGS]:
        raise BuildError(f"unknown platform {unknown[0]!r}; choose from {', '.join(PLATFORM_TAGS)}")
    if bad := [p for p in pythons if not re.fullmatch(r"3\.\d+", p)]:
        raise BuildError(f"bad Python version {bad[0]!r}; give versions such as 3.11,3.13")
    if not platforms or not pythons:
        raise BuildError("give at least one platform and one Python version")
    source = Path(args.source).resolve()
    if not (source / "blender_manifest.toml").is_file():
        raise BuildError(f"--source {source}: no blender_manifest.toml there")
    if not args.offline and importlib.util.find_spec("pip") is None:
        raise BuildError(f"pip is not installed for {sys.executable}: use .venv/bin/python or pass --offline")
    return platforms, pythons, source


def build(args: argparse.Namespace) -> int:
    """Builds and validates the zips the command line asks for; returns the exit status."""
    platforms, pythons, source = _check_args(args)
    blender_ext = find_blender_ext(args.blender_ext)
    cache = WheelCache(REPO / "wheels")
    cache.folder.mkdir(exist_ok=True)
    pins = read_pins(REPO / "requirements.txt")
    wheels, absent = collect_wheels(cache, pins, pythons, platforms, args.offline)
    for platform in platforms:
        if absent[platform]:
            lacking = ", ".join(f"{r} (Python {', '.join(v)})" for r, v in absent[platform].items())
            print(f"skipping {platform}: no wheel of {lacking}", file=sys.stderr)
    buildable = [p for p in platforms if not absent[p]]
    if not buildable:
        print(
            f"build_extension: nothing built, no platform has every wheel ({cache.pip_error})",
            file=sys.stderr,
        )
        return 1

    manifest_text = (source / "blender_manifest.toml").read_text(encoding="utf-8")
    manifest = tomllib.loads(manifest_text)
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    (REPO / "build").mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory(dir=REPO / "build", prefix="extension-") as temporary:
        staging = Path(temporary) / manifest["id"]
        names = sorted(set().union(*(wheels[p] for p in buildable)))
        stage(source, staging, manifest_text, [cache.folder / name for name in names], buildable)
        command = ["build", "--source-dir", str(staging), "--output-dir", str(out), "--split-platforms"]
        try:
            run_blender_ext(blender_ext, *command)
        except BuildError as error:  # Name the user's manifest, not the staging copy.
            raise BuildError(str(error).replace(str(staging), str(source))) from None
    for platform in buildable:
        zip_path = out / f"{manifest['id']}-{manifest['version']}-{platform.replace('-', '_')}.zip"
        run_blender_ext(blender_ext, "validate", str(zip_path))
        print(f"{zip_path}  {zip_path.stat().st_size / 1e6:.1f} MB")
    return 0


def main(argv: list[str] | None = None) -> int:
    """The command line; returns the exit status (2 for a user error)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--platforms", default=",".join(PLATFORM_TAGS), help="comma-separated, default: all")
    parser.add_argument("--python", default=",".join(PYTHONS), help="comma-separated, default: 3.11,3.13")
    parser.add_argument("--offline", action="store_true", help="use only the wheels already in wheels/")
    parser.add_argument("--out", default=str(REPO / "dist"), help="output folder, default: dist/")
    parser.add_argument("--source", default=str(REPO), help="extension source tree, default: this repository")
    parser.add_argument("--blender-ext", help="path of Blender's bl_pkg/cli/blender_ext.py")
    try:
        return build(parser.parse_args(argv))
    except BuildError as error:
        print(f"build_extension: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

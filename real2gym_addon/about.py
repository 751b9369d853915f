"""What this installation is: the package's version and what it runs on."""

from __future__ import annotations

from pathlib import Path


def version_text() -> str:
    """``real2gym X.Y.Z (MuJoCo A.B.C, Python D.E.F)``: the package's version, or the extension manifest's
    when the package is not installed (a source checkout, the Blender extension)."""
    import platform

    try:
        from importlib.metadata import PackageNotFoundError, version

        ours = version("real2gym")
    except (ImportError, PackageNotFoundError):
        import tomllib

        manifest = Path(__file__).resolve().parents[1] / "blender_manifest.toml"
        try:
            ours = tomllib.loads(manifest.read_text())["version"]
        except (OSError, KeyError, ValueError):
            ours = "unknown"
    try:
        import mujoco

        engine = f"MuJoCo {mujoco.__version__}"
    except ImportError:
        engine = "MuJoCo not installed"
    return f"real2gym {ours} ({engine}, Python {platform.python_version()})"

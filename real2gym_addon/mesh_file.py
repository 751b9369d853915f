"""A user's mesh file (``"shape": "mesh", "mesh": "file.obj"`` in prompts.json), read and checked at the door.

The OBJ file's ``v`` and ``f`` lines are read (polygons fanned into triangles, the rest
ignored); a file outside the demo folder, over the size limits, empty or flat is refused
with the object and the line named, before any stage runs. Fitting it to the video is
:mod:`.geometry.user_mesh`'s work.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .errors import DemoFolderError

MAX_MESH_BYTES = 200 * 1024 * 1024
"""Larger OBJ files are refused (a scan this size is decimated first)."""
MAX_MESH_FACES = 200_000
"""More triangles (after polygons are fanned) are refused: the fit and the collision pieces slow to minutes
beyond it, and a scan this fine is no better for physics. Decimate first."""
MAX_MESH_VERTICES = 200_000
"""More vertices are refused, as for faces."""
DECIMATE_ADVICE = (
    "decimate it first (Blender's Decimate modifier, or MeshLab's Quadric Edge Collapse) to at most "
    f"{MAX_MESH_FACES:,} triangles"
)


def read_obj(folder: Path, relative: str, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Reads the OBJ file ``relative`` inside the demo folder.

    Args:
        folder: The demo folder.
        relative: The prompt's ``mesh`` path, relative to the folder.
        name: The object's name (for messages).

    Returns:
        ``Vx3`` vertices (the file's units and frame) and ``Fx3`` triangle indices.

    Raises:
        DemoFolderError: The path leaves the demo folder, the file is missing,
            unreadable or not an OBJ, or its mesh is empty or flat.
    """
    where = f"prompts.json, object '{name}': mesh '{relative}'"
    root = Path(folder).resolve()
    path = (root / relative).resolve()
    if Path(relative).is_absolute() or not path.is_relative_to(root):
        raise DemoFolderError(
            f"{where} is outside the demo folder; put the file inside it and give its path there"
        )
    if not path.is_file():
        raise DemoFolderError(f"{where}: no such file in the demo folder")
    if path.suffix.lower() != ".obj":
        raise DemoFolderError(f"{where}: only Wavefront .obj files are read; export the mesh as OBJ")
    if path.stat().st_size > MAX_MESH_BYTES:
        raise DemoFolderError(f"{where}: the file is over {MAX_MESH_BYTES >> 20} MB; decimate the mesh first")
    try:
        text = path.read_text(errors="replace")
    except OSError as e:
        raise DemoFolderError(f"{where}: cannot be read ({e.strerror})") from e
    _check_counts(
        text.count("\nv ") + text.startswith("v "), text.count("\nf ") + text.startswith("f "), where
    )
    vertices, faces = _parse_obj(text, where)
    _check_counts(len(vertices), len(faces), where)
    _check_mesh(vertices, faces, where)
    return vertices, faces


def _parse_obj(text: str, where: str) -> tuple[np.ndarray, np.ndarray]:
    """The ``v`` and ``f`` lines of an OBJ text (``f`` entries ``i``, ``i/t``, ``i//n``, ``i/t/n``; negative
    indices count back from the last vertex read)."""
    vertices, faces = [], []
    for number, line in enumerate(text.splitlines(), 1):
        fields = line.split()
        if not fields or fields[0] not in ("v", "f"):
            continue
        try:
            if fields[0] == "v":
                vertices.append([float(v) for v in fields[1:4]])
                if len(vertices[-1]) != 3:
                    raise ValueError("a vertex needs x, y and z")
                continue
            corners = [int(f.split("/")[0]) for f in fields[1:]]
        except ValueError as e:
            raise DemoFolderError(f"{where}, line {number}: not a valid OBJ '{fields[0]}' line ({e})") from e
        corners = [c - 1 if c > 0 else len(vertices) + c for c in corners]
        if len(corners) < 3 or not all(0 <= c < len(vertices) for c in corners):
            raise DemoFolderError(f"{where}, line {number}: a face needs 3 or more existing vertices")
        faces += [[corners[0], corners[i], corners[i + 1]] for i in range(1, len(corners) - 1)]
    return np.asarray(vertices, float).reshape(-1, 3), np.asarray(faces, np.int64).reshape(-1, 3)


def _check_counts(vertices: int, faces: int, where: str) -> None:
    """Refuses a mesh over :data:`MAX_MESH_VERTICES` or :data:`MAX_MESH_FACES` (counted from its lines
    before parsing, then exactly after)."""
    if faces > MAX_MESH_FACES:
        raise DemoFolderError(
            f"{where}: {faces:,} faces, over the limit of {MAX_MESH_FACES:,}; {DECIMATE_ADVICE}"
        )
    if vertices > MAX_MESH_VERTICES:
        raise DemoFolderError(
            f"{where}: {vertices:,} vertices, over the limit of {MAX_MESH_VERTICES:,}; {DECIMATE_ADVICE}"
        )


def _check_mesh(vertices: np.ndarray, faces: np.ndarray, where: str) -> None:
    if len(faces) == 0:
        raise DemoFolderError(f"{where}: the file has no faces ('f' lines); a point cloud cannot be fitted")
    if not np.isfinite(vertices).all():
        raise DemoFolderError(f"{where}: some vertices are not finite numbers")
    used = vertices[np.unique(faces)]
    extents = used.max(axis=0) - used.min(axis=0)
    if np.sort(extents)[1] <= 1e-9 * max(float(extents.max()), 1e-300) or extents.max() <= 0:
        raise DemoFolderError(f"{where}: the mesh is flat or a single point (extents {extents.tolist()})")

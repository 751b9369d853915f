"""What a shape kind is: one entry of the shape table (:data:`..shape_kinds.SHAPE_KINDS`).

An entry holds the kind's name and flags, the parameters its shapes carry, and the
functions that give a shape of the kind its form: the visual mesh, the collision
pieces, the outline whose projection is the silhouette, the signed distance to its
surface, a container's outer profile and, for a kind that holds things in a box-shaped
space (a cabinet, a drawer), that space. They take the shape (a
:class:`..shapes.Shape`) and read its ``size``, ``params`` and ``vertices``; the
:class:`..shapes.Shape` methods of the same names call them. The fitters, which sit
above the shapes, are in :data:`..fit.FITTERS` under the entries' names.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import numpy as np


@dataclasses.dataclass(frozen=True)
class ShapeKind:
    """One kind of shape.

    Attributes:
        name: As prompts.json and report.json write it.
        description: What it is, for the user (Blender's tooltips, docs).
        container: A round kind with an opening that holds things (a ``place_in`` target): its shapes
            carry :data:`.container.WALL_PARAMS` (``inner_radius`` ...) and an ``outer_profile``. A
            box-shaped kind that holds things (a cabinet, a drawer) is not one: it has a ``cavity``.
        round: Its outline seen from above is a circle (fitted as a cylinder by a known size).
        round_when: For a round kind whose shapes may not be (a plate standing on its edge): shape -> whether
            this one's outline from above is a circle. None: all of the kind's are.
        reported: A fit can end as this kind in report.json (``auto`` and ``mug`` are only
            prompt hints: ``auto`` becomes the kind chosen, ``mug`` a cup with a handle).
        user_file: prompts.json may give the shape as the user's own mesh file (``"mesh": "x.obj"``).
        params: The parameters (m) its shapes carry in ``params``; optional ones in ``optional_params``.
        optional_params: Parameters a shape of the kind may carry (a cup's handle, a bowl's base radius).
        mesh: shape -> its watertight visual ``trimesh.Trimesh`` in the local frame.
        collision_pieces: shape -> its :class:`..pieces.CollisionPiece` list (``primitives`` collision).
        outline_points: shape -> ``Nx3`` local points whose projection's hull is the silhouette.
        surface_distance: (shape, ``Nx3`` local points) -> signed distances (m) to its surface.
        outer_profile: For a container: (shape, samples) -> its outer radius along its height, ``(z, r)``.
        open_form: shape -> the open container it is for distances and collision (a plate with a raised
            rim is a shallow dish), or None when it is one already or has no opening.
        cavity: For a kind that holds things in a box-shaped space open on one side (a cabinet, open on
            its front, local +x; a drawer, open on its top): shape -> ``(centre (3,), half extents (3,))``
            of that empty space in the local frame, metres, its open side reaching the shape's face
            there. None for every other kind.
        spaces: For a kind with box-shaped spaces things stand in besides a cavity (a shelf's space above each
            board, a dish rack's slots): shape -> a list of ``(centre (3,), half extents (3,))``, local
            frame, lowest first. None for every other kind (a cavity, where there is one, is its space).
        scale_params: For a kind whose parameters follow a scale in their own way (a rack's pegs, a shelf's
            boards, a dish rack's slots): (params, factors) -> ``(params, size or None)``, the parameters
            after the scale and the full extents they imply (None: ``size`` times ``factors``). The radii
            and heights every kind shares (:meth:`..shapes.Shape.scaled`) are scaled before it.
        rolling_friction: Rolling resistance (m, the lever arm of the normal force) of contacts with its
            collision pieces, 0 for none. Things that hang on it rock about a thin contact; MuJoCo's
            contacts without it make that rocking lossless, a swing that never settles.
    """

    name: str
    description: str
    container: bool = False
    round: bool = False
    round_when: Callable | None = None
    reported: bool = True
    user_file: bool = False
    params: tuple[str, ...] = ()
    optional_params: tuple[str, ...] = ()
    mesh: Callable | None = None
    collision_pieces: Callable | None = None
    outline_points: Callable[..., np.ndarray] | None = None
    surface_distance: Callable[..., np.ndarray] | None = None
    outer_profile: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    open_form: Callable | None = None
    cavity: Callable[..., tuple[np.ndarray, np.ndarray]] | None = None
    spaces: Callable[..., list[tuple[np.ndarray, np.ndarray]]] | None = None
    scale_params: Callable[..., tuple[dict, tuple[float, float, float] | None]] | None = None
    rolling_friction: float = 0.0

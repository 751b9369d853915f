"""What a container holds that can be poured out of it: ``contents`` (docs/data-contract.md).

The contract's one kind is ``particles``: spheres that stand for a liquid or grains. The verifier makes
each a free MuJoCo sphere, packed into the container's cavity as the video starts (:func:`fill_points`:
square layers from the floor up, a sphere's spacing apart); the ``pour`` task counts how many end in the
target. The tilt at which they start to leave (measured by :func:`..mjcf.spill.probe_spill_angle`, which
tips the container with its contents in MuJoCo; :func:`spill_angle`, a liquid's level-surface rule, where it
cannot) places the ``pour_start`` and ``pour_end`` keyframes on the video's tilt of the container
(:func:`pour_events`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import DemoFolderError
from .shape_kinds import MESH
from .shapes import Shape

PARTICLES = "particles"
"""The one kind of contents: spheres."""
KINDS = (PARTICLES,)
DEFAULT_COUNT = 40
"""Spheres when the pour's source gives no ``contents`` (the contract's example)."""
DEFAULT_RADIUS = 0.004
"""m: a sphere's radius when not given (the contract's example: 4 mm)."""
DEFAULT_DENSITY = 1000.0
"""kg/m3 when not given: water's (what the spheres stand for most often)."""
COUNT_RANGE = (1, 400)
"""Spheres one container may hold: beyond a few hundred the simulation slows down more than it gains."""
RADIUS_RANGE = (0.001, 0.02)
"""m: a sphere's radius (1 mm grains to 2 cm balls)."""
DENSITY_RANGE = (50.0, 20000.0)
"""kg/m3: foam to lead."""
SPACING = 1.04
"""Packed spheres stand this many diameters apart, centre to centre (a little play, so that none starts
pressed into a neighbour or a wall)."""
WALL_PLAY = 0.0005
"""m: a packed sphere's surface stays this far from the cavity's wall and floor."""
SPILL_EVENTS = ("pour_start", "pour_end")
"""The keyframes of a pour: its tilt passes the spill angle, going over and coming back."""


@dataclasses.dataclass(frozen=True)
class Contents:
    """A container's contents.

    Attributes:
        kind: One of :data:`KINDS`.
        count: How many spheres.
        radius: m, each sphere's.
        density: kg/m3, each sphere's.
    """

    kind: str = PARTICLES
    count: int = DEFAULT_COUNT
    radius: float = DEFAULT_RADIUS
    density: float = DEFAULT_DENSITY

    @property
    def sphere_mass(self) -> float:
        """kg: one sphere's mass."""
        return self.density * 4.0 / 3.0 * math.pi * self.radius**3

    def to_json(self) -> dict:
        """As prompts.json and report.json write it."""
        return {"kind": self.kind, "count": self.count, "radius": self.radius, "density": self.density}

    @classmethod
    def from_json(cls, entry, where: str) -> Contents:
        """Checks a ``contents`` object (prompts.json, report.json).

        Args:
            entry: The parsed JSON value.
            where: The file and object, for messages.

        Raises:
            DemoFolderError: Not an object, an unknown kind, or a number out of its range; the message names
                the field and its range.
        """
        if not isinstance(entry, dict):
            raise DemoFolderError(
                f"{where}: 'contents' must be an object such as "
                f'{{"kind": "particles", "count": {DEFAULT_COUNT}, "radius": {DEFAULT_RADIUS}}}'
            )
        kind = entry.get("kind", PARTICLES)
        if kind not in KINDS:
            raise DemoFolderError(
                f"{where}: contents 'kind' {kind!r} is not known; use one of {', '.join(KINDS)}"
            )
        count = entry.get("count", DEFAULT_COUNT)
        low, high = COUNT_RANGE
        if isinstance(count, bool) or not isinstance(count, int) or not low <= count <= high:
            raise DemoFolderError(
                f"{where}: contents 'count' must be a whole number {low} to {high}, got {count!r}"
            )
        radius = _number(entry, "radius", DEFAULT_RADIUS, RADIUS_RANGE, "m", where)
        density = _number(entry, "density", DEFAULT_DENSITY, DENSITY_RANGE, "kg/m3", where)
        return cls(kind, count, radius, density)


def _number(
    entry: dict, field: str, default: float, bounds: tuple[float, float], unit: str, where: str
) -> float:
    value = entry.get(field, default)
    low, high = bounds
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not (low <= value <= high)
    ):
        raise DemoFolderError(
            f"{where}: contents '{field}' must be {low:g} to {high:g} {unit}, got {value!r}"
        )
    return float(value)


def fill_points(shape: Shape, contents: Contents, name: str = "the container") -> np.ndarray:
    """Where the spheres start: ``count x 3`` centres in the container's local frame (its box centre the
    origin, z up), packed in square layers from its floor up, each layer as many as fit inside the wall.

    Raises:
        DemoFolderError: The shape has no cavity, or the spheres do not all fit below its rim; the message
            says how many would.
    """
    if shape.kind == MESH.name:
        raise DemoFolderError(
            f"object '{name}' has contents but was fitted as a closed mesh, which holds nothing (its shape "
            "fitted its masks badly: see the geometry warnings); check its masks, or give its 'size'"
        )
    if not shape.is_container:
        raise DemoFolderError(
            f"object '{name}' has contents but its shape is a {shape.kind}, which holds nothing; "
            "give it shape 'cup', 'mug' or 'bowl'"
        )
    r, pitch = contents.radius, 2 * contents.radius * SPACING
    bottom = -shape.size[2] / 2
    rim = shape.size[2]  # above the bottom
    inner = shape.params.get("inner_radius", shape.size[0] / 2 - shape.params.get("wall_thickness", 0.0))
    axis = shape.axis_offset()
    points: list[np.ndarray] = []
    floor = shape.inner_height(0.0)
    z = floor + r + WALL_PLAY
    while len(points) < contents.count and z + r <= rim + 1e-9:
        # The cavity's radius at this layer: where the inner surface is below the sphere's bottom.
        reach = _reach(shape, inner, z - r) - r - WALL_PLAY
        if reach >= 0:
            steps = int(math.floor(reach / pitch))
            grid = np.arange(-steps, steps + 1) * pitch
            xs, ys = np.meshgrid(grid, grid)
            layer = np.column_stack((xs.ravel(), ys.ravel()))
            layer = layer[np.hypot(layer[:, 0], layer[:, 1]) <= reach + 1e-9]
            layer = layer[np.argsort(np.hypot(layer[:, 0], layer[:, 1]), kind="stable")]
            for x, y in layer[: contents.count - len(points)]:
                points.append(np.array([x, y, z]))
        z += pitch
    if len(points) < contents.count:
        raise DemoFolderError(
            f"object '{name}': {contents.count} spheres of {contents.radius * 1000:g} mm do not fit in its "
            f"cavity (room for {len(points)} below the rim); give fewer or smaller 'contents'"
        )
    local = np.array(points)
    local[:, 2] += bottom
    local[:, :2] += axis[:2]
    return local


def _reach(shape: Shape, inner: float, height: float) -> float:
    """m: the cavity's radius at ``height`` above the container's bottom (its inner wall's, where a curved
    wall has risen that high; 0 below the floor)."""
    radii = np.linspace(0.0, inner, 64)
    floors = np.array([shape.inner_height(r) for r in radii])
    under = radii[floors <= height + 1e-9]
    return float(under.max()) if len(under) else 0.0


def spill_angle(shape: Shape, contents: Contents) -> float:
    """rad: the tilt at which the contents first reach the rim, taken as a liquid filling the cavity to the
    packed spheres' top: its level surface, as the container tips, passes the rim's lowest point once what
    lies below that level, inside the cavity (a cylinder of the inner radius from the floor to the rim),
    is less than the fill. A shallow fill gathers in the corner between the floor and the wall before it
    reaches the rim, so it spills later than ``atan((rim - top) / inner radius)`` says."""
    points = fill_points(shape, contents)
    floor = shape.inner_height(0.0)
    fill = points[:, 2].max() + contents.radius + shape.size[2] / 2 - floor  # the fill's depth
    depth = shape.size[2] - floor  # the cavity's, floor to rim
    inner = max(shape.params.get("inner_radius", shape.size[0] / 2), 1e-6)
    if fill >= depth:
        return 0.0
    # The cavity sampled on a regular grid: its share below the level is the fill's share of its volume.
    steps = np.linspace(-1.0, 1.0, 41)
    x, y, z = np.meshgrid(steps, steps, (steps + 1.0) / 2, indexing="ij")
    inside = x**2 + y**2 <= 1.0
    ys, zs = y[inside] * inner, z[inside] * depth
    wanted = fill / depth

    def below(tilt: float) -> float:  # the share of the cavity under the level through the rim's lowest point
        up_y, up_z = -math.sin(tilt), math.cos(tilt)
        return float(np.mean(ys * up_y + zs * up_z <= inner * up_y + depth * up_z))

    low, high = 0.0, math.pi / 2
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if below(middle) > wanted else (low, middle)
    return (low + high) / 2


def pour_events(name: str, tilts: np.ndarray, spill: float) -> list[dict]:
    """``pour_start`` where the container's tilt (``N`` rad from upright, per frame) first passes ``spill``,
    and ``pour_end`` where it next comes back under it (left out when it never does); none without a pour."""
    over = np.flatnonzero(np.asarray(tilts) > spill)
    if not len(over):
        return []
    start = int(over[0])
    events = [{"frame": start, "event": SPILL_EVENTS[0], "object": name}]
    back = np.flatnonzero(np.asarray(tilts)[start:] <= spill)
    if len(back):
        events.append({"frame": start + int(back[0]), "event": SPILL_EVENTS[1], "object": name})
    return events

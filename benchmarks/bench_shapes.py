"""Shape fits on objects users have: mugs with handles, tapered cups, flared bowls, thin plates, blocks.

    .venv/bin/python benchmarks/run.py --only shapes

Each case is made without the fit's shape model: the object's analytic surface
(a mug's handle is a curved tube, a bowl's wall a power curve) is sampled densely,
splatted into a depth buffer from a camera at a given elevation (so the far side
is hidden as a camera would hide it), and the depth gets noise and 1 mm steps.
The fit sees the mask and the back-projected depth points; the figure is the
largest error of its bounding-box extents against the true ones, per case, and
the worst over all cases.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import cv2
import numpy as np

NAME = "shapes"
CAMERA_DISTANCE = 0.5
"""m from the camera to the object's centre."""
DEPTH_NOISE = 0.0015
"""m: standard deviation of the depth noise (before the 1 mm steps)."""
SAMPLES_PER_M2 = 2.0e7
"""Surface samples per square metre: about 14 per pixel at the camera distance."""
SIZE_TARGET = 5.0
"""%: the largest extent error a fit may have."""


@dataclasses.dataclass
class Case:
    """One synthetic object and how it is seen.

    Attributes:
        name: What it is, for the figures.
        surface: ``rng -> Nx3`` points sampled over its surface (world frame, z up, on z = 0, not yet turned).
        size: True bounding-box extents in the object's frame (m), x along its handle for a mug.
        elevation: Camera elevation above the table (degrees).
        azimuth: Camera azimuth about the object (degrees; 0 looks along +y... from -y).
        yaw: The object's rotation about z (radians).
        hint: The prompt's shape hint.
        truth: Extra true parameters (``outer_radius``, ``base_radius``, ``handle``...).
        mesh: For ``hint = "mesh"``: the user's mesh ``(vertices, faces)``, in its own units and frame.
    """

    name: str
    surface: Callable[[np.random.Generator], np.ndarray]
    size: tuple[float, float, float]
    elevation: float
    azimuth: float = -90.0
    yaw: float = 0.0
    hint: str = "auto"
    truth: dict = dataclasses.field(default_factory=dict)
    mesh: tuple | None = None


def _count(area: float) -> int:
    return max(int(area * SAMPLES_PER_M2), 2000)


def _revolved(rng, radius_at, z0: float, z1: float) -> np.ndarray:
    """Points on the surface of revolution ``r = radius_at(z)`` for z in [z0, z1]."""
    widest = float(radius_at(np.linspace(z0, z1, 64)).max())
    n = _count(2 * math.pi * widest * (z1 - z0))
    z = rng.uniform(z0, z1, n)
    angle = rng.uniform(0, 2 * math.pi, n)
    r = radius_at(z)
    keep = rng.uniform(0, 1, n) < r / max(widest, 1e-9)  # area weighting along the height
    return np.c_[r * np.cos(angle), r * np.sin(angle), z][keep]


def _disc(rng, r0: float, r1: float, z: float) -> np.ndarray:
    """Points on the annulus r0 <= r <= r1 at height z."""
    n = _count(math.pi * (r1**2 - r0**2))
    r = np.sqrt(rng.uniform(r0**2, r1**2, n))
    angle = rng.uniform(0, 2 * math.pi, n)
    return np.c_[r * np.cos(angle), r * np.sin(angle), np.full(n, z)]


def container(rim: float, base: float, height: float, wall: float, power: float = 1.0, handle=None):
    """A cup or bowl: outer radius ``base + (rim - base) * (z / height) ** power``; optional handle.

    Args:
        rim: Outer radius at the top (m).
        base: Outer radius at the bottom (m).
        height: m.
        wall: Wall thickness (m).
        power: The profile's exponent (1: straight; below 1: flared).
        handle: ``(protrusion, z_low, z_high, tube)`` (m): a half-elliptic tube on +x whose outer
            edge is ``protrusion`` outside the wall, joining it at ``z_low`` and ``z_high``.
    """

    def outer(z):
        return base + (rim - base) * np.clip(z / height, 0, 1) ** power

    def surface(rng) -> np.ndarray:
        bottom = 0.006
        parts = [
            _revolved(rng, outer, 0.0, height),
            _revolved(rng, lambda z: outer(z) - wall, bottom, height),
            _disc(rng, rim - wall, rim, height),
            _disc(rng, 0.0, float(outer(np.array([bottom]))[0]) - wall, bottom),
        ]
        if handle is not None:
            parts.append(_handle_tube(rng, outer, *handle))
        return np.concatenate(parts)

    return surface


def _handle_tube(rng, outer, protrusion: float, z_low: float, z_high: float, tube: float) -> np.ndarray:
    """A tube of radius ``tube`` along a half ellipse from the wall at z_low out and back at z_high."""
    middle, half = (z_low + z_high) / 2, (z_high - z_low) / 2
    root = float(outer(np.array([middle]))[0]) - tube  # the centre line starts inside the wall
    n = _count(2 * math.pi * tube * math.pi * max(half, protrusion))
    s, phi = rng.uniform(0, math.pi, n), rng.uniform(0, 2 * math.pi, n)
    centre = np.c_[root + protrusion * np.sin(s), np.zeros(n), middle - half * np.cos(s)]
    tangent = np.c_[protrusion * np.cos(s), np.zeros(n), half * np.sin(s)]
    tangent /= np.linalg.norm(tangent, axis=1, keepdims=True)
    normal = np.c_[tangent[:, 2], np.zeros(n), -tangent[:, 0]]
    points = centre + tube * (np.cos(phi)[:, None] * normal + np.sin(phi)[:, None] * [0.0, 1.0, 0.0])
    return points[np.hypot(points[:, 0], points[:, 1]) > outer(points[:, 2])]


def plate(radius: float, height: float, rim_width: float = 0.0, dish: float = 0.0):
    """A plate: a disc of ``height``; with a raised rim the middle is ``dish`` lower inside ``radius - rim_width``."""

    def surface(rng) -> np.ndarray:
        inner = radius - rim_width
        parts = [
            _revolved(rng, lambda z: np.full_like(z, radius), 0.0, height),
            _disc(rng, inner, radius, height),
        ]
        parts.append(_disc(rng, 0.0, inner, height - dish))
        if dish > 0:
            parts.append(_revolved(rng, lambda z: np.full_like(z, inner), height - dish, height))
        return np.concatenate(parts)

    return surface


def block(sx: float, sy: float, sz: float):
    """A box on the table."""

    def surface(rng) -> np.ndarray:
        faces = []
        for axis, extent in enumerate((sx, sy, sz)):
            others = [a for a in range(3) if a != axis]
            sizes = np.array([sx, sy, sz])
            n = _count(sizes[others[0]] * sizes[others[1]])
            for sign in (-1, 1):
                if axis == 2 and sign == -1:
                    continue
                face = (rng.uniform(-0.5, 0.5, (n, 3))) * sizes
                face[:, axis] = sign * extent / 2
                faces.append(face)
        return np.concatenate(faces) + [0, 0, sz / 2]

    return surface


def camera_pose(elevation: float, azimuth: float, target: np.ndarray) -> np.ndarray:
    """world_from_camera (4x4, OpenCV axes) of a camera at CAMERA_DISTANCE looking at ``target``."""
    e, a = math.radians(elevation), math.radians(azimuth)
    eye = target + CAMERA_DISTANCE * np.array(
        [math.cos(e) * math.cos(a), math.cos(e) * math.sin(a), math.sin(e)]
    )
    forward = (target - eye) / np.linalg.norm(target - eye)
    right = np.cross(forward, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(forward, right)
    pose = np.eye(4)
    pose[:3, :3] = np.c_[right, down, forward]
    pose[:3, 3] = eye
    return pose


def render_view(case: Case, seed: int = 0):
    """The case seen by the camera: ``(RestView, Camera)`` with a splatted mask and noisy depth points."""
    from real2gym.real2gym_addon.demo import Camera
    from real2gym.real2gym_addon.geometry.camera import invert, transform, yaw_rotation
    from real2gym.real2gym_addon.geometry.fit import RestView

    rng = np.random.default_rng(seed)
    camera = Camera(640, 480, 600.0, 600.0, 320.0, 240.0)
    world = case.surface(rng) @ yaw_rotation(case.yaw).T
    world_from_camera = camera_pose(case.elevation, case.azimuth, np.array([0.0, 0.0, case.size[2] / 2]))
    camera_from_world = invert(world_from_camera)
    cam = transform(camera_from_world, world)
    u = np.round(camera.fx * cam[:, 0] / cam[:, 2] + camera.cx).astype(int)
    v = np.round(camera.fy * cam[:, 1] / cam[:, 2] + camera.cy).astype(int)
    inside = (u >= 0) & (u < camera.width) & (v >= 0) & (v < camera.height)
    depth = np.full((camera.height, camera.width), np.inf)
    np.minimum.at(depth, (v[inside], u[inside]), cam[inside, 2])
    mask = np.isfinite(depth)
    mask = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8)) > 0
    rows, cols = np.nonzero(np.isfinite(depth))
    z = depth[rows, cols] + rng.normal(0.0, DEPTH_NOISE, len(rows))
    z = np.round(z * 1000.0) / 1000.0
    points = np.c_[(cols - camera.cx) * z / camera.fx, (rows - camera.cy) * z / camera.fy, z]
    return RestView(mask, transform(world_from_camera, points), camera_from_world), camera


def size_error(fitted_size, true_size) -> float:
    """Largest relative error (%) of the extents, x and y compared sorted unless the truth has a handle axis."""
    fitted, truth = np.asarray(fitted_size, float), np.asarray(true_size, float)
    return float(100 * np.max(np.abs(fitted - truth) / truth))


def cases() -> list[Case]:
    """The benchmark's cases: each object from three camera elevations."""
    made = []
    for elevation in (25.0, 35.0, 60.0):
        mug = container(0.04, 0.04, 0.095, 0.005, handle=(0.025, 0.02, 0.08, 0.005))
        made.append(
            Case("mug with handle", mug, (0.105, 0.08, 0.095), elevation, yaw=0.4, truth={"handle": True})
        )
        side = container(0.04, 0.04, 0.095, 0.005, handle=(0.022, 0.025, 0.075, 0.004))
        made.append(Case("mug, handle sideways", side, (0.102, 0.08, 0.095), elevation, yaw=-1.2,
                         truth={"handle": True}))  # fmt: skip
        made.append(Case("plain cup", container(0.04, 0.04, 0.1, 0.004), (0.08, 0.08, 0.1), elevation,
                         truth={"handle": False}))  # fmt: skip
        tapered = container(0.045, 0.032, 0.11, 0.004)
        made.append(Case("tapered cup", tapered, (0.09, 0.09, 0.11), elevation,
                         truth={"outer_radius": 0.045, "base_radius": 0.032}))  # fmt: skip
        bowl = container(0.075, 0.035, 0.06, 0.005, power=0.5)
        made.append(Case("flared bowl", bowl, (0.15, 0.15, 0.06), elevation, hint="bowl",
                         truth={"outer_radius": 0.075}))  # fmt: skip
        made.append(Case("thin plate", plate(0.11, 0.012), (0.22, 0.22, 0.012), elevation))
        made.append(
            Case("plate with a raised rim", plate(0.11, 0.015, 0.025, 0.007), (0.22, 0.22, 0.015), elevation)
        )
        made.append(Case("user's mug mesh (cm, y up)", mug, (0.105, 0.08, 0.095), elevation, yaw=0.4, hint="mesh",
                         mesh=_user_mug()))  # fmt: skip
        made.append(Case("block", block(0.05, 0.035, 0.04), (0.05, 0.035, 0.04), elevation, yaw=0.3))
    return made


def _user_mug() -> tuple[np.ndarray, np.ndarray]:
    """A mug mesh as a user might give it: the project's handled cup, in centimetres, y up, off the origin."""
    from real2gym.real2gym_addon.geometry.shapes import Shape

    params = {"outer_radius": 0.04, "inner_radius": 0.035, "wall_thickness": 0.005, "bottom_thickness": 0.006,
              "handle_reach": 0.065, "handle_bottom": 0.02, "handle_top": 0.08, "handle_thickness": 0.008,
              "handle_width": 0.012}  # fmt: skip
    mesh = Shape("cup", (0.105, 0.08, 0.095), params).mesh()
    y_up = np.c_[mesh.vertices[:, 0], mesh.vertices[:, 2], -mesh.vertices[:, 1]] * 100.0
    return y_up + [3.0, 20.0, -1.0], np.asarray(mesh.faces)


def measure(case: Case) -> dict:
    """Fits one case; returns the fitted shape, its extents error (%) and the true-parameter errors."""
    from real2gym.real2gym_addon.geometry.fit import fit_shape

    view, camera = render_view(case)
    fitted, _ = fit_shape(case.hint, [view], camera, mesh=case.mesh)
    shape = fitted.shape
    truth = np.array(case.size)
    if not (shape.has_handle or case.hint == "mesh"):
        fitted_size, truth = (
            np.r_[np.sort(shape.size[:2]), shape.size[2]],
            np.r_[np.sort(truth[:2]), truth[2]],
        )
    else:
        fitted_size = shape.size
    result = {"shape": shape, "fitted": fitted, "size_error": size_error(fitted_size, truth)}
    for key in ("outer_radius", "base_radius"):
        if key in case.truth:
            found = shape.params.get(key, shape.params.get("outer_radius", shape.size[0] / 2))
            result[f"{key}_error"] = float(100 * abs(found - case.truth[key]) / case.truth[key])
    return result


def run(args) -> list:
    """Fits every case and returns its figures."""
    from run import Figure

    figures, worst = [], 0.0
    for case in cases():
        result = measure(case)
        label = f"{case.name} at {case.elevation:.0f} deg"
        error = result["size_error"]
        worst = max(worst, error)
        figures.append(Figure(NAME, f"{label}: size error ({result['shape'].kind})", round(error, 2), "%",
                              target=f"<= {SIZE_TARGET:g}", passed=error <= SIZE_TARGET))  # fmt: skip
        if "handle" in case.truth:
            found = result["shape"].has_handle
            figures.append(Figure(NAME, f"{label}: handle found", float(found), "", target=str(case.truth["handle"]),
                                  passed=found == case.truth["handle"]))  # fmt: skip
        for key in ("outer_radius", "base_radius"):
            if f"{key}_error" in result:
                figures.append(Figure(NAME, f"{label}: {key} error", round(result[f"{key}_error"], 2), "%",
                                      target="<= 5", passed=result[f"{key}_error"] <= 5))  # fmt: skip
    figures.append(Figure(NAME, "worst size error", round(worst, 2), "%", target=f"<= {SIZE_TARGET:g}",
                          passed=worst <= SIZE_TARGET))  # fmt: skip
    return figures

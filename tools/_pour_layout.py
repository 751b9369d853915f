"""Draw the pour scene of a seed (``_pour_scene``): the cup, the bowl, their places, the hand's choices, colours
and the camera's direction.

The draws (metres, radians, kilograms): a cup of outer radius 0.026-0.032, height 0.08-0.10, wall
0.003-0.004, bottom 0.005-0.006, 0.06-0.10 kg; a bowl of rim radius 0.065-0.08 (its foot
``_demo_scene.BOWL_BASE_RATIO`` of that), height 0.045-0.06, wall 0.0035-0.0045, bottom 0.005-0.007,
0.25-0.40 kg, its axis 0.18-0.24 from the cup's; the grasp 42-52 % of the cup's height up (at least
``GRASP_LOWEST`` above the table, for the palm's lower edge), a lift of 0.08-0.10 and a tilt of 110-125
degrees. The camera looks from the side of the cup-bowl line away from the hand, within 30 degrees of
square to it, 20-35 degrees above the table.
"""

from __future__ import annotations

import numpy as np
from _demo_gripper import PALM_HALF
from _demo_scene import BOWL_BASE_RATIO
from _hang_layout import place_camera
from _pour_scene import Bowl, Contents, Cup, PourLayout

GRASP_LOWEST = PALM_HALF[0] + 0.008  # the palm's lower edge 8 mm above the table while the hand grasps
CONTENT_COLOURS = ([0.95, 0.55, 0.05], [0.1, 0.75, 0.25], [0.85, 0.1, 0.55], [0.98, 0.85, 0.1])


def sample_layout(
    rng: np.random.Generator,
    contents: Contents,
    miss: float = 0.0,
    camera_azimuth: float | None = None,
    camera_elevation: float | None = None,
) -> PourLayout:
    """Draw the seed's cup, bowl, places, grasp, lift, tilt, colours and camera direction (its distance comes
    with ``frame_camera``).

    Args:
        rng: Random generator of the seed.
        contents: The spheres in the cup.
        miss: Pour this far short of the bowl (m); 0 pours into it.
        camera_azimuth: World azimuth of the camera (rad); None draws it square to the cup-bowl line, on
            the side away from the hand, within 30 degrees.
        camera_elevation: The camera's elevation (rad); None draws 20-35 degrees.
    """
    radius, height = rng.uniform(0.026, 0.032), rng.uniform(0.08, 0.10)
    yaw = rng.uniform(-np.pi, np.pi)
    u = np.array([np.cos(yaw), np.sin(yaw)])
    distance = rng.uniform(0.18, 0.24)
    middle = rng.uniform(-0.03, 0.03, 2)
    cup = Cup(
        outer_radius=float(radius),
        wall=float(rng.uniform(0.003, 0.004)),
        bottom=float(rng.uniform(0.005, 0.006)),
        height=float(height),
        mass=float(rng.uniform(0.06, 0.10)),
        xy=middle - u * distance / 2,
        yaw=float(yaw),
    )
    rim = rng.uniform(0.065, 0.08)
    bowl = Bowl(
        outer_radius=float(rim),
        base_radius=float(BOWL_BASE_RATIO * rim),
        height=float(rng.uniform(0.045, 0.06)),
        wall=float(rng.uniform(0.0035, 0.0045)),
        bottom=float(rng.uniform(0.005, 0.007)),
        mass=float(rng.uniform(0.25, 0.40)),
        xy=middle + u * distance / 2,
    )
    n_azimuth = yaw + np.pi / 2  # the azimuth of n = z x u
    if camera_azimuth is None:
        side = int(rng.choice([-1, 1]))
        turn = rng.choice([-1, 1]) * np.deg2rad(rng.uniform(5, 30))
        camera_azimuth = n_azimuth + (np.pi if side > 0 else 0.0) + turn
    else:
        side = -1 if np.cos(camera_azimuth - n_azimuth) >= 0 else 1
    if camera_elevation is None:
        camera_elevation = np.deg2rad(rng.uniform(20, 35))
    grasp = max(rng.uniform(0.42, 0.52) * height, GRASP_LOWEST)
    return PourLayout(
        cup=cup,
        bowl=bowl,
        contents=contents,
        side=side,
        grasp_height=float(grasp),
        lift=float(rng.uniform(0.08, 0.10)),
        tilt=float(np.deg2rad(rng.uniform(110, 125))),
        miss=float(miss),
        colours=_colours(rng),
        camera_azimuth=float(camera_azimuth),
        camera_elevation=float(camera_elevation),
    )


def _colours(rng: np.random.Generator) -> dict[str, list[float]]:
    """A glazed cup's colour, another for the bowl, and a bright one for the contents unlike both."""
    glazes = [[0.92, 0.9, 0.85], [0.75, 0.16, 0.12], [0.16, 0.32, 0.7], [0.2, 0.55, 0.35], [0.55, 0.55, 0.6]]
    cup_index, bowl_index = rng.choice(len(glazes), size=2, replace=False)
    cup = np.clip(np.array(glazes[cup_index]) * rng.uniform(0.92, 1.05), 0, 1)
    bowl = np.clip(np.array(glazes[bowl_index]) * rng.uniform(0.92, 1.05), 0, 1)
    far = [c for c in CONTENT_COLOURS if min(np.abs(np.subtract(c, cup)).sum(), np.abs(np.subtract(c, bowl)).sum()) > 0.6]  # fmt: skip
    beads = np.array(far[rng.integers(len(far))])
    return {"cup": [*cup.tolist(), 1.0], "bowl": [*bowl.tolist(), 1.0], "contents": [*beads.tolist(), 1.0]}


def ring(radius: float, z: float, centre: np.ndarray, samples: int = 16) -> np.ndarray:
    """Points round a level circle of ``radius`` at height ``z`` about ``centre`` (world xy, m), (samples, 3)."""
    angle = np.linspace(0, 2 * np.pi, samples, endpoint=False)
    return np.c_[centre[0] + radius * np.cos(angle), centre[1] + radius * np.sin(angle), np.full(samples, z)]


def frame_camera(layout: PourLayout, hand_points: np.ndarray, distance: float) -> PourLayout:
    """The layout with its camera ``distance`` metres from the scene's middle, or farther until the cup, the
    bowl and ``hand_points`` (world, m, (N, 3)) are all in the image (``_hang_layout.place_camera``).

    Raises:
        ValueError: If no camera within 3 m frames them.
    """
    cup, bowl = layout.cup, layout.bowl
    points = np.concatenate([
        ring(cup.outer_radius, 0.0, cup.xy), ring(cup.outer_radius, cup.height, cup.xy),
        ring(bowl.outer_radius, 0.0, bowl.xy), ring(bowl.outer_radius, bowl.height, bowl.xy), hand_points,
    ])  # fmt: skip
    try:
        return place_camera(layout, points, distance)
    except ValueError:
        raise ValueError(
            "no camera within 3 m frames the cup, the bowl and the hand (raise --fovy)"
        ) from None

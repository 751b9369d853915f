"""Draw the dish rack scene of a seed (``_dish_rack_scene``): the plate, the stand, the dish rack, the slot,
colours and the camera's direction.

The draws (metres, radians, kilograms): a plate of radius 0.07-0.085, 0.012-0.016 thick, 0.15-0.25 kg. A
dish rack of 4 slots, 0.10-0.14 deep and 0.08-0.10 tall on a base 8-12 mm thick, its slots the plate's
thickness plus 8-12 mm wide, 3-3.5 cm apart (farther where that leaves a divider thinner than
``MIN_DIVIDER``); its middle within 3 cm of the world's origin, turned within 15 degrees of the world's
axes. A one-slot stand 0.09-0.12 deep and 0.07-0.09 tall on a base 8-12 mm thick, its slot the plate's
thickness plus 6-10 mm wide, 22-28 cm to one side of the dish rack along the world's y (within 4 cm
along x), turned within 15 degrees too. The plate goes into slot 1 or 2. A failing demo's dish rack has
slots ``NARROW_BY`` narrower than the plate is thick (``narrowed``), the rest of the seed's scene the same.

The racks are low beside the plate (their tops at most 10 cm over the table, the plate 14-17 cm tall): the
fingers pinch the plate's top rim ``PAD_BELOW_TOP`` under its top and stay over the dividers with it in
either rack. The camera looks from 30-45 degrees to a side of the racks' +x (so that it sees the plate's
faces and down the row of slots), 25-40 degrees above the table.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from _demo_gripper import PAD_HALF
from _dish_rack_scene import DishRack, DishRackLayout, Plate
from _hang_layout import place_camera

PAD_BELOW_TOP = 0.003  # the pads' tops this far (m) under the plate's top
CLEARANCE = 0.025  # the plate's bottom this far (m) over the higher rack's top while carried
SET_GAP = 0.001  # the plate is let go with its bottom this far (m) over the dish rack's base
MIN_DIVIDER = 0.004  # a divider at least this thick (m)
NARROW_BY = 0.004  # a failing demo's slots are this much (m) narrower than the plate is thick
SLOT_COUNT = 4
RACKS = ([0.80, 0.64, 0.44], [0.55, 0.36, 0.20], [0.30, 0.31, 0.33], [0.88, 0.88, 0.86], [0.20, 0.42, 0.55])
PLATES = ([0.93, 0.91, 0.84], [0.16, 0.32, 0.70], [0.75, 0.16, 0.12], [0.20, 0.55, 0.35], [0.95, 0.75, 0.20],
          [0.55, 0.25, 0.60])  # fmt: skip


def _rack(rng: np.random.Generator, slot_count: int, slot_width: float, depth: tuple[float, float],
          height: tuple[float, float]) -> tuple[float, float, float, float]:  # fmt: skip
    """Depth, height, base thickness and pitch (m) of a rack with slots ``slot_width`` wide."""
    pitch = rng.uniform(max(0.030, slot_width + MIN_DIVIDER), max(0.035, slot_width + MIN_DIVIDER + 0.002))
    return (
        float(rng.uniform(*depth)),
        float(rng.uniform(*height)),
        float(rng.uniform(0.008, 0.012)),
        float(pitch),
    )


def sample_layout(
    rng: np.random.Generator, camera_azimuth: float | None = None, camera_elevation: float | None = None
) -> DishRackLayout:
    """Draw the seed's plate, racks, slot, colours and camera direction (its distance comes with
    ``frame_camera``); the dish rack's slots fit the plate (``narrowed`` makes them too narrow).

    Args:
        rng: Random generator of the seed.
        camera_azimuth: World azimuth of the camera (rad); None draws it 30-45 degrees to a side of the
            racks' +x.
        camera_elevation: The camera's elevation (rad); None draws 25-40 degrees.
    """
    plate = Plate(
        float(rng.uniform(0.07, 0.085)), float(rng.uniform(0.012, 0.016)), float(rng.uniform(0.15, 0.25))
    )
    slot_width = plate.thickness + rng.uniform(0.008, 0.012)
    depth, height, base, pitch = _rack(rng, SLOT_COUNT, slot_width, (0.10, 0.14), (0.08, 0.10))
    rack = DishRack(depth, height, base, SLOT_COUNT, pitch, float(slot_width), rng.uniform(-0.03, 0.03, 2),
                    float(np.deg2rad(rng.uniform(-15, 15))))  # fmt: skip
    stand_slot = plate.thickness + rng.uniform(0.006, 0.010)
    depth, height, base, pitch = _rack(rng, 1, stand_slot, (0.09, 0.12), (0.07, 0.09))
    side = float(rng.choice([-1, 1]))
    stand_xy = rack.xy + [rng.uniform(-0.04, 0.04), side * rng.uniform(0.22, 0.28)]
    stand = DishRack(depth, height, base, 1, pitch, float(stand_slot), stand_xy,
                     float(np.deg2rad(rng.uniform(-15, 15))))  # fmt: skip
    slot = int(rng.choice([1, 2]))
    if camera_azimuth is None:
        camera_azimuth = rack.yaw + rng.choice([-1, 1]) * np.deg2rad(rng.uniform(30, 45))
    if camera_elevation is None:
        camera_elevation = np.deg2rad(rng.uniform(25, 40))
    return DishRackLayout(
        stand=stand,
        rack=rack,
        plate=plate,
        slot=slot,
        narrow=False,
        grasp_below_top=PAD_HALF[2] + PAD_BELOW_TOP,
        clearance=CLEARANCE,
        set_gap=SET_GAP,
        colours=_colours(rng),
        camera_azimuth=float(camera_azimuth),
        camera_elevation=float(camera_elevation),
    )


def narrowed(layout: DishRackLayout) -> DishRackLayout:
    """The failing demo's layout: the dish rack's slots ``NARROW_BY`` narrower than the plate is thick (its
    pitch kept, its dividers thicker), all else as drawn."""
    rack = replace(layout.rack, slot_width=layout.plate.thickness - NARROW_BY)
    return replace(layout, rack=rack, narrow=True)


def _colours(rng: np.random.Generator) -> dict[str, list[float]]:
    """The racks' colours (wood, bamboo, grey or white plastic, blue) and a plate's unlike both."""
    stand, rack = (
        np.clip(np.array(RACKS[i]) * rng.uniform(0.92, 1.08), 0, 1) for i in rng.integers(len(RACKS), size=2)
    )
    plates = [
        c
        for c in PLATES
        if min(np.abs(np.subtract(c, stand)).sum(), np.abs(np.subtract(c, rack)).sum()) > 0.5
    ]
    plate = np.clip(np.array(plates[rng.integers(len(plates))]) * rng.uniform(0.95, 1.05), 0, 1)
    return {
        "plate": [*plate.tolist(), 1.0],
        "stand": [*stand.tolist(), 1.0],
        "dish_rack": [*rack.tolist(), 1.0],
    }


def must_see(layout: DishRackLayout, hand_points: np.ndarray) -> np.ndarray:
    """What the camera must see, world (m), (N, 3): both racks' corners, the plate's box at its start and in
    its slot, and ``hand_points``."""
    signs = np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T
    plate = layout.plate.corners()
    stand, rack = layout.stand, layout.rack
    return np.concatenate([
        stand.to_world(signs * stand.size / 2),
        rack.to_world(signs * rack.size / 2),
        plate @ stand.rotation.T + layout.start,
        plate @ rack.rotation.T + layout.place,
        hand_points,
    ])  # fmt: skip


def frame_camera(layout: DishRackLayout, points: np.ndarray, distance: float) -> DishRackLayout:
    """The layout with its camera ``distance`` metres from the middle of ``points`` (world, m, (N, 3)), or
    farther until they are all in the image (``_hang_layout.place_camera``).

    Raises:
        ValueError: If no camera within 3 m frames them.
    """
    try:
        return place_camera(layout, points, distance)
    except ValueError:
        raise ValueError(
            "no camera within 3 m frames the stand, the dish rack, the plate and the hand (raise --fovy)"
        ) from None

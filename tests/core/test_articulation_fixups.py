"""What makes a fitted body and its part simulate together: a drawer inside its chest, a body behind its
closed door, a handle where the recorded hand closed, a push told from a grasp, and a door's hinge line
where its panel's planes put it.

Each case is built by hand from known boxes (no video), so each rule is checked apart from the fits;
the articulated benchmark (benchmarks/bench_articulated.py) measures them on generated scenes.
"""

from __future__ import annotations

import dataclasses

import mujoco
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.geometry.articulation import (
    DOOR_GAP,
    DOOR_THICKNESS,
    DRAWER_CLEARANCE,
    GRIP_SPAN,
    PALM_REACH,
    body_behind_door,
    drawer_inside,
    handle_where_held,
    hinge_line_from_planes,
    out_of_cavities,
    part_events,
    part_hand_path,
    square_hinge_axis,
)
from real2gym.real2gym_addon.geometry.camera import transform, yaw_rotation
from real2gym.real2gym_addon.geometry.fit_base import FittedObject
from real2gym.real2gym_addon.geometry.keyframes import GripperTrajectory
from real2gym.real2gym_addon.geometry.parts import Joint, PartGeometry
from real2gym.real2gym_addon.geometry.shapes import Shape
from real2gym.real2gym_addon.mjcf.gripper import GripperSpec

FRAMES = 60
WALL = 0.015


def _chest(yaw: float = 0.3) -> FittedObject:
    """A 30 x 40 x 30 cm cabinet opening at local +x, standing on the table."""
    size = (0.3, 0.4, 0.3)
    return FittedObject(Shape("cabinet", size, {"wall_thickness": WALL}), np.array([0.1, -0.05, 0.15]), yaw)


def _front_frame(body: FittedObject, turn: float = 0.0) -> np.ndarray:
    return yaw_rotation(body.yaw + turn)


def _part(shape: Shape, centre: np.ndarray, rotation: np.ndarray, joint: Joint) -> PartGeometry:
    q = np.linspace(0.0, 0.5 * joint.range[1], FRAMES)
    return PartGeometry("part", shape, centre, rotation, 0.0, joint, q, np.ones(FRAMES, bool))


def _overlaps(body: FittedObject, part: PartGeometry, q: float) -> float:
    """The deepest overlap (m, > 0) between the body's and the part's collision boxes at ``q``, from MuJoCo."""
    spec = mujoco.MjSpec()
    for name, shape, pose in (("body", body.shape, None), ("part", part.shape, part.pose_at(q))):
        if pose is None:
            pose = np.eye(4)
            pose[:3, :3], pose[:3, 3] = yaw_rotation(body.yaw), body.position
        frame = spec.worldbody.add_body(name=name, pos=pose[:3, 3].tolist(),
                                        quat=Rotation.from_matrix(pose[:3, :3]).as_quat()[[3, 0, 1, 2]].tolist())  # fmt: skip
        if name == "part":
            frame.add_freejoint()  # two fixed bodies never collide
        for piece in shape.collision_pieces():
            frame.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=list(piece.size), pos=list(piece.position),
                           contype=1 if name == "body" else 2, conaffinity=2 if name == "body" else 1)  # fmt: skip
    model = spec.compile()
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    return max([-c.dist for c in data.contact[: data.ncon]], default=0.0)


def test_a_drawer_wider_than_the_opening_and_askew_is_put_inside() -> None:
    body = _chest()
    front = _front_frame(body)
    # Its front as wide as the chest, its axes 2 degrees off the chest's, its slide too.
    askew = front @ Rotation.from_euler("z", 2, degrees=True).as_matrix()
    size = (0.25, 0.4, 0.12)
    centre = body.position + front @ np.array([0.15 - 0.125 + 0.005, 0.0, 0.05])
    shape = Shape("drawer", size, {"wall_thickness": 0.01, "bottom_thickness": 0.008, "handle_length": 0.1,
                                   "handle_offset_y": 0.02, "handle_offset_z": 0.01})  # fmt: skip
    joint = Joint("slide", askew[:, 0], centre, (0.0, 0.2))
    drawer = _part(shape, centre, askew, joint)
    assert _overlaps(body, drawer, 0.0) > 0.01  # as fitted: 2 cm into the side walls

    inside = drawer_inside(drawer, body)
    assert np.degrees(np.arccos(np.clip(inside.joint.axis @ front[:, 0], -1, 1))) < 1e-6
    assert np.allclose(inside.rotation, front, atol=1e-9)
    assert inside.shape.size[1] == pytest.approx(0.4 - 2 * WALL - 2 * DRAWER_CLEARANCE, abs=1e-6)
    for q in (0.0, 0.1, 0.2):  # it slides out along the chest without touching its walls
        assert _overlaps(body, inside, q) < 1e-4, q
    # Its front stays where it was seen, and its handle on the front where it was.
    front_before = transform(drawer.pose_at(0.0), np.array([[size[0] / 2, 0.02, 0.01]]))[0]
    handle = inside.shape.params
    front_after = transform(inside.pose_at(0.0), np.array([[inside.shape.size[0] / 2, handle["handle_offset_y"],
                                                            handle["handle_offset_z"]]]))[0]  # fmt: skip
    assert np.linalg.norm(front_after - front_before) < 0.01


def test_a_given_slide_keeps_its_axis_and_no_drawer_is_left_alone() -> None:
    body = _chest()
    front = _front_frame(body)
    askew = front @ Rotation.from_euler("z", 2, degrees=True).as_matrix()
    centre = body.position + front @ np.array([0.05, 0.0, 0.05])
    shape = Shape("drawer", (0.2, 0.3, 0.1), {"wall_thickness": 0.01, "bottom_thickness": 0.008})
    given = _part(shape, centre, askew, Joint("slide", askew[:, 0], centre, (0.0, 0.2), source="given"))
    assert np.allclose(drawer_inside(given, body).joint.axis, askew[:, 0])
    door = _part(
        Shape("door", (0.02, 0.4, 0.3)), centre, front, Joint("hinge", [0, 0, 1], centre, (0.0, 1.5))
    )
    assert drawer_inside(door, body) is door


def _door_on(body: FittedObject, into: float) -> PartGeometry:
    """A door over the body's front, ``into`` metres into it, hinged on its left edge."""
    front = _front_frame(body)
    centre = body.position + front @ np.array([0.15 + 0.01 - into, 0.0, 0.0])
    pivot = body.position + front @ np.array([0.15, 0.2, 0.0])
    return _part(Shape("door", (0.02, 0.4, 0.3)), centre, front, Joint("hinge", [0, 0, 1], pivot, (0.0, 1.5)))


def test_the_body_steps_back_behind_its_closed_door() -> None:
    body = _chest()
    door = _door_on(body, 0.005)
    assert _overlaps(body, door, 0.0) > 0.004
    behind = body_behind_door(body, door)
    assert behind.shape.size[0] == pytest.approx(0.3 - 0.005 - DOOR_GAP, abs=1e-6)
    assert behind.shape.size[1:] == body.shape.size[1:] and behind.yaw == body.yaw
    back = body.position - _front_frame(body)[:, 0] * 0.15
    assert np.allclose(
        behind.position - _front_frame(body)[:, 0] * behind.shape.size[0] / 2, back
    )  # back stays
    assert _overlaps(behind, door, 0.0) < 1e-4
    # A door clear of the body, or one far into it (a misfit, not a few millimetres), leaves it alone.
    assert body_behind_door(body, _door_on(body, -0.01)) is body
    assert body_behind_door(body, _door_on(body, 0.05)) is body


def test_the_handle_is_where_the_hand_closed() -> None:
    body = _chest()
    door = _door_on(body, 0.0)
    short = {"handle_length": 0.03, "handle_depth": 0.04, "handle_offset_y": -0.15, "handle_offset_z": 0.06}
    door = _part(Shape("door", (0.02, 0.4, 0.3), short), door.position, door.rotation, door.joint)
    grasp_local = np.array([0.01 + 0.035, -0.15, -0.02])  # on the bar's axis 3.5 cm off the face, 8 cm lower
    grasp = transform(door.pose_at(0.2), grasp_local[None])[0]
    held = handle_where_held(door, grasp, 0.2)
    params = held.shape.params
    low, high = (
        params["handle_offset_z"] - params["handle_length"] / 2,
        params["handle_offset_z"] + params["handle_length"] / 2,
    )
    assert low <= -0.02 - GRIP_SPAN / 2 + 1e-9 and high >= 0.06 + 0.015 - 1e-9  # the found bar and the grip
    assert params["handle_offset_y"] == pytest.approx(-0.15)
    assert params["handle_depth"] == pytest.approx(0.035 + 0.012 / 2)  # its outer face, a bar 12 mm thick
    assert len(held.shape.collision_pieces()) == 4  # the panel, the bar and its two standoffs
    # A hand that closed off the face (beside the door, or on it) leaves the door as it was.
    for off in (np.array([0.045, -0.3, 0.0]), np.array([0.012, -0.1, 0.0])):
        assert handle_where_held(door, transform(door.pose_at(0.2), off[None])[0], 0.2) is door


def test_closed_fingers_push_and_fingers_on_a_bar_grasp() -> None:
    door = _door_on(_chest(), 0.0)
    q = np.zeros(FRAMES)
    q[40:] = np.linspace(0.0, 1.2, FRAMES - 40)
    door = PartGeometry(
        "door", door.shape, door.position, door.rotation, 0.0, door.joint, q, np.ones(FRAMES, bool)
    )
    fps = 15.0
    opening = np.ones(FRAMES)
    opening[20:] = 0.22  # closed on a bar 1.3 s before the door moves
    events = {e["event"] for e in part_events("cabinet.door", door, fps, opening)}
    assert "grasp" in events and "push" not in events
    opening[20:] = 0.0  # closed on nothing: its tips push
    events = {e["event"] for e in part_events("cabinet.door", door, fps, opening)}
    assert "push" in events and "grasp" not in events


def test_unrecorded_a_part_with_a_handle_is_pulled_open_and_pushed_shut() -> None:
    chest = _chest()
    front = _front_frame(chest)
    centre = chest.position + front @ np.array([0.05, 0.0, 0.05])
    handle = {"wall_thickness": 0.01, "bottom_thickness": 0.008, "handle_length": 0.1}
    q = np.zeros(FRAMES)
    q[20:40] = np.linspace(0.0, 0.15, 20)
    q[40:] = 0.15
    drawer = PartGeometry("drawer", Shape("drawer", (0.2, 0.3, 0.1), handle), centre, front, 0.0,
                          Joint("slide", front[:, 0], centre, (0.0, 0.2)), q, np.ones(FRAMES, bool))  # fmt: skip
    events = {e["event"]: e["frame"] for e in part_events("chest.drawer", drawer, 15.0, None)}
    moved, stopped = np.flatnonzero(q > 0.01)[0], np.flatnonzero(q < 0.15 - 0.01)[-1] + 1  # 1 cm: MOVING
    assert (events["grasp"], events["release"]) == (moved, stopped) and "push" not in events
    shut = PartGeometry(
        "drawer", drawer.shape, centre, front, 0.0, drawer.joint, q[::-1].copy(), drawer.visible
    )
    events = {e["event"] for e in part_events("chest.drawer", shut, 15.0, None)}
    assert "push" in events and "grasp" not in events  # a push shuts it
    plain = Shape("drawer", (0.2, 0.3, 0.1), {"wall_thickness": 0.01, "bottom_thickness": 0.008})
    bare = PartGeometry("drawer", plain, centre, front, 0.0, drawer.joint, q, drawer.visible)
    assert "grasp" not in {
        e["event"] for e in part_events("chest.drawer", bare, 15.0, None)
    }  # nothing to pull by


def _door_faces(
    hinge: np.ndarray, angles: np.ndarray, eye: np.ndarray, thick: float, rng
) -> list[np.ndarray]:
    """A 30 x 40 cm door hinged at its outer face's edge (about +z through ``hinge``), turned to each angle;
    per frame the points of the face the camera at ``eye`` sees, with 1.5 mm of depth noise."""
    y, z = np.meshgrid(np.linspace(0.0, 0.3, 30), np.linspace(0.0, 0.4, 30))
    clouds = []
    for angle in angles:
        turn = Rotation.from_rotvec([0.0, 0.0, angle]).as_matrix()
        faces = [np.column_stack([np.full(y.size, -offset), y.ravel(), z.ravel()]) for offset in (0.0, thick)]
        middle = turn @ np.array([-thick / 2, 0.15, 0.2]) + hinge
        seen = 0 if (eye - middle) @ (turn @ np.array([1.0, 0.0, 0.0])) > 0 else 1
        cloud = faces[seen] @ turn.T + hinge
        clouds.append(cloud + rng.normal(0.0, 0.0015, cloud.shape))
    return clouds


def _off_line(point: np.ndarray, hinge: np.ndarray) -> float:
    return float(np.linalg.norm((point - hinge)[:2]))


BODY_CENTRE = np.array([0.05, 0.05, 0.2])
"""Behind the test door shut (its outer face looks along +x from its hinge at (0.2, -0.1))."""


@pytest.mark.parametrize("thick", [0.016, 0.02, 0.03])
def test_a_hinge_line_far_off_its_door_is_found_from_its_faces(thick: float) -> None:
    """Shut in a few frames after standing open (its inner face seen open, its outer one shut), the door's faces
    and edges place the line within the thickness it is taken to have (DOOR_THICKNESS) of its real one."""
    rng = np.random.default_rng(7)
    hinge, eye = np.array([0.2, -0.1, 0.0]), np.array([1.2, 0.9, 0.8])
    angles = np.r_[np.full(40, 1.6), np.linspace(1.6, 0.0, 8), np.zeros(12)]
    clouds = _door_faces(hinge, angles, eye, thick, rng)
    wrong = Joint("hinge", np.array([0.0, 0.0, 1.0]), hinge + np.array([-0.07, 0.03, 0.1]), (0.0, 1.6))
    eyes = np.tile(eye, (len(angles), 1))
    found = hinge_line_from_planes(wrong, clouds, angles, eyes, BODY_CENTRE)
    assert found is not None
    assert _off_line(found.point, hinge) < abs(thick - DOOR_THICKNESS) + 0.004
    assert found.point[2] == pytest.approx(0.1, abs=1e-9)  # level with the fitted pivot
    # The middles of the panels alone meet half a thickness off in each direction: this is what it mends.
    assert _off_line(found.point, hinge) < 0.5 * np.hypot(thick / 2, thick / 2)
    assert found.replaces_fit()  # the faces lie centimetres worse about the line 7 cm off
    assert found.fitted_misfit_m > 0.005 and found.misfit_m < 0.0035


def test_a_fitted_hinge_line_the_faces_agree_with_is_kept() -> None:
    """A line 1.4 mm off is kept (the faces lie 0.5 mm RMS worse about it), one 2.8 mm off is not (1.1 mm worse):
    on these clean faces their own line is within 0.1 mm."""
    rng = np.random.default_rng(9)
    hinge, eye = np.array([0.2, -0.1, 0.0]), np.array([1.2, 0.9, 0.8])
    angles = np.r_[np.zeros(10), np.linspace(0.0, 1.4, 40), np.full(10, 1.4)]
    clouds = _door_faces(hinge, angles, eye, DOOR_THICKNESS, rng)
    eyes = np.tile(eye, (len(angles), 1))
    for off, replaced in ((0.001, False), (0.002, True)):
        fitted = Joint("hinge", np.array([0.0, 0.0, 1.0]), hinge + np.array([off, -off, 0.1]), (0.0, 1.4))
        found = hinge_line_from_planes(fitted, clouds, angles, eyes, BODY_CENTRE)
        assert found is not None and found.replaces_fit() is replaced
        assert _off_line(found.point, hinge) < 0.001


def test_planes_that_barely_turn_place_no_hinge_line() -> None:
    rng = np.random.default_rng(8)
    hinge, eye = np.array([0.2, -0.1, 0.0]), np.array([1.2, 0.9, 0.8])
    angles = np.linspace(0.0, np.radians(12.0), 30)
    clouds = _door_faces(hinge, angles, eye, 0.02, rng)
    joint = Joint("hinge", np.array([0.0, 0.0, 1.0]), hinge, (0.0, angles[-1]))
    assert hinge_line_from_planes(joint, clouds, angles, np.tile(eye, (len(angles), 1)), BODY_CENTRE) is None


def test_a_hinge_nearly_plumb_or_level_is_made_so_and_a_slanted_one_kept() -> None:
    tilted = Rotation.from_rotvec([np.radians(3.7), 0.0, 0.0]).apply([0.0, 0.0, -1.0])
    assert square_hinge_axis(tilted) == pytest.approx([0.0, 0.0, -1.0])
    lid = Rotation.from_rotvec(np.radians(4.0) * np.array([-0.8, 0.6, 0.0])).apply([0.6, 0.8, 0.0])
    assert square_hinge_axis(lid) == pytest.approx([0.6, 0.8, 0.0])
    slanted = Rotation.from_rotvec([np.radians(20.0), 0.0, 0.0]).apply([0.0, 0.0, 1.0])
    assert square_hinge_axis(slanted) == pytest.approx(slanted)


def test_a_part_is_released_where_the_fingers_start_to_open() -> None:
    """The hold is judged up to the release: fingers already parting must not count as holding."""
    door = _door_on(_chest(), 0.0)
    q = np.zeros(FRAMES)
    q[20:45] = np.linspace(0.0, 1.2, 25)
    q[45:] = 1.2
    door = PartGeometry(
        "door", door.shape, door.position, door.rotation, 0.0, door.joint, q, np.ones(FRAMES, bool)
    )
    opening = np.ones(FRAMES)
    opening[10:] = 0.22
    opening[48:] = np.minimum(1.0, 0.22 + 0.08 * np.arange(1, FRAMES - 47))  # opens slowly from frame 48
    events = {e["event"]: e["frame"] for e in part_events("cabinet.door", door, 15.0, opening)}
    assert "grasp" in events
    assert events["release"] == 48


def test_unrecorded_the_hand_closes_on_the_handle_where_the_part_rests() -> None:
    """The frame that shows a drawer moved has it 1 cm out: the hand closes on its handle before that."""
    chest = _chest()
    front = _front_frame(chest)
    centre = chest.position + front @ np.array([0.05, 0.0, 0.05])
    params = {"wall_thickness": 0.01, "bottom_thickness": 0.008, "handle_length": 0.1, "handle_depth": 0.03}
    q = np.zeros(FRAMES)
    q[20:40] = np.linspace(0.0, 0.15, 20)
    q[40:] = 0.15
    drawer = PartGeometry("drawer", Shape("drawer", (0.2, 0.3, 0.1), params), centre, front, 0.0,
                          Joint("slide", front[:, 0], centre, (0.0, 0.2)), q, np.ones(FRAMES, bool))  # fmt: skip
    events = part_events("chest.drawer", drawer, 15.0, None)
    start = next(e["frame"] for e in events if e["event"] == "grasp")
    positions, _, opening, first, _ = part_hand_path(drawer, events, "chest.drawer", 15.0, FRAMES)
    handle = centre + front[:, 0] * (0.1 + 0.03 - 0.006)  # the bar's grasp point at rest
    closed = np.flatnonzero(opening[first:] == 0.0)[0] + first
    assert closed < start  # closed on the bar before the drawer moves
    assert np.allclose(positions[closed:start], handle, atol=1e-9)
    assert np.allclose(positions[start], handle + front[:, 0] * q[start], atol=1e-9)  # then with it


def test_a_hand_that_lets_go_inside_a_cabinet_leaves_through_its_opening() -> None:
    body = _chest()
    front = _front_frame(body)[:, 0]
    count, release = 40, 10
    inside = body.position + np.array([0.0, 0.0, -0.05])
    positions = np.tile(inside, (count, 1))
    positions[release + 1 :, 2] += 0.01 * np.arange(1, count - release)  # rising: into its top
    gripper = GripperTrajectory(
        positions, np.tile([1.0, 0.0, 0.0, 0.0], (count, 1)), np.ones(count), "synthesised"
    )
    out = out_of_cavities(gripper, release, [body], 15.0)
    path = out.positions
    assert np.allclose(path[: release + 1], positions[: release + 1])
    rise = path[release + 3] - inside
    assert rise[2] == pytest.approx(0.03) and abs(rise @ front) < 1e-9  # up off the object first
    gone = (path[-1] - body.position) @ front
    assert gone >= body.shape.size[0] / 2 + PALM_REACH  # out past its front, the palm clear of it
    assert path[-1][2] == pytest.approx(inside[2] + 0.03)  # never up into its top
    # A hand that lets go outside any cavity keeps its path.
    outside = dataclasses.replace(gripper, positions=positions + front * 0.5)
    assert out_of_cavities(outside, release, [body], 15.0) is outside
    assert PALM_REACH == GripperSpec().palm_size[1] / 2


def test_a_noisy_face_is_found_at_its_middle_not_on_its_noise() -> None:
    from real2gym.real2gym_addon.geometry.articulation import _face_offset

    rng = np.random.default_rng(0)
    face = rng.normal(0.0, 0.005, 3000)  # a flat door under 5 mm of depth noise, its face at 0
    assert abs(_face_offset(face)) < 0.0015
    # A drawer: its front, and its open inside 3 cm behind it; a bar handle 3 cm in front of a door.
    drawer = np.r_[face, rng.normal(-0.03, 0.005, 2000)]
    assert abs(_face_offset(drawer)) < 0.0015
    handled = np.r_[face, rng.normal(0.03, 0.003, 150)]
    assert abs(_face_offset(handled)) < 0.0015

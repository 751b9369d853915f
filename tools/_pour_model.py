"""MuJoCo model of the pour scene (``_pour_scene``), built with ``mujoco.MjSpec``.

Not the project's MJCF exporter: the pipeline is measured on data made another way. The table, the wall
and the lights are the hang scene's (``_hang_model.add_environment``). The cup (``cup``, free, origin at
its bottom's middle) collides with a bottom disc and a ring of wall boxes (hidden, ``GROUP_HIDDEN``); a
revolved shell (``_hang_model.mug_shell``) shows it. The bowl (``bowl``, free) collides with a foot disc,
a thin disc under its floor and rings of tilted wall boxes; a revolved shell along its profile shows it.
Each sphere of the contents is a free body ``bead<i>`` in ``GROUP_CONTENTS``, with rolling friction so
that a spilt one comes to rest. Densities are set so that each object weighs what the layout says.
"""

from __future__ import annotations

import mujoco
import numpy as np
from _demo_gripper import add_gripper
from _demo_scene import GROUP_GRIPPER, GROUP_HIDDEN
from _hang_model import add_camera, add_environment, mug_shell, scene_spec
from _pour_scene import GROUP_BOWL, GROUP_CONTENTS, GROUP_CUP, Bowl, Contents, Cup, PourLayout
from scipy.spatial.transform import Rotation

CUP_FRICTION = [0.6, 0.01, 0.0002]  # glazed ceramic
BOWL_FRICTION = [0.6, 0.01, 0.0002]
# Glass beads: slippery, and a little rolling friction (condim 6) so that they stop rolling on the table.
BEAD_CONTACT = {"friction": [0.4, 0.005, 0.0004], "condim": 6, "solref": [0.004, 1.0], "priority": 2}
BEAD_SUBDIVISION = 1  # the shown spheres: icospheres of 80 faces
FILL = 0.6  # the packed spheres take at most this share of the cup's inner depth
# The finger pads' contacts, stiffer than _demo_gripper's default (solref 0.02): turning the held cup about
# the approach axis at 4 rad/s, the soft pads let it creep outwards along its axis by some 5 mm/s.
PAD_SOLREF = [0.005, 1.0]


def _quat(rot: np.ndarray) -> list[float]:
    return Rotation.from_matrix(rot).as_quat(scalar_first=True).tolist()


def _add_cup(spec: mujoco.MjSpec, cup: Cup, rgba: list[float]) -> None:
    """The free cup: hidden bottom disc and wall boxes, a visible shell."""
    body = spec.worldbody.add_body(
        name="cup", pos=[*cup.xy, 1e-4], quat=_quat(Rotation.from_euler("z", cup.yaw).as_matrix())
    )
    body.add_freejoint(name="cup")
    solid = {"density": cup.density(), "friction": CUP_FRICTION, "condim": 4, "group": GROUP_HIDDEN}
    body.add_geom(name="cup_bottom", type=mujoco.mjtGeom.mjGEOM_CYLINDER, size=[cup.outer_radius, cup.bottom / 2, 0],
                  pos=[0, 0, cup.bottom / 2], **solid)  # fmt: skip
    for k, (centre, size, angle) in enumerate(cup.wall_boxes()):
        body.add_geom(name=f"cup_wall{k}", type=mujoco.mjtGeom.mjGEOM_BOX, size=(size / 2).tolist(),
                      pos=centre.tolist(), quat=[np.cos(angle / 2), 0, 0, np.sin(angle / 2)], **solid)  # fmt: skip
    verts, faces = mug_shell(cup)
    spec.add_mesh(name="cup_shell", uservert=verts, userface=faces)
    body.add_geom(name="cup_visual", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="cup_shell", contype=0,
                  conaffinity=0, mass=0, rgba=rgba, group=GROUP_CUP)  # fmt: skip


def bowl_shell(bowl: Bowl, segments: int = 48, samples: int = 12) -> tuple[list[float], list[int]]:
    """The bowl's closed surface (outer profile, rim, inner profile, floor, bottom), bowl frame: flat vertex
    coordinates (m) and triangles, counter-clockwise seen from outside. The profile is sampled evenly in
    its quarter ellipse's angle, so that the steep foot gets as many rings as the rim."""
    angle = np.linspace(0.0, np.pi / 2, samples)
    outer_z = bowl.height * (1.0 - np.cos(angle))
    inner_z = bowl.bottom + (bowl.height - bowl.bottom) * (1.0 - np.cos(angle))
    rings = [(float(bowl.radius_at(z)), z) for z in outer_z]
    rings += [(float(bowl.radius_at(z)) - bowl.wall, z) for z in inner_z[::-1]]
    theta = np.linspace(0.0, 2 * np.pi, segments, endpoint=False)
    verts = [[r * np.cos(t), r * np.sin(t), z] for r, z in rings for t in theta]
    verts += [[0.0, 0.0, 0.0], [0.0, 0.0, bowl.bottom]]
    count, n, faces = len(rings), segments, []
    for k in range(n):
        k1 = (k + 1) % n
        for ring in range(count - 1):
            faces += [
                [ring * n + k, ring * n + k1, (ring + 1) * n + k1],
                [ring * n + k, (ring + 1) * n + k1, (ring + 1) * n + k],
            ]
        faces += [[count * n + 1, (count - 1) * n + k, (count - 1) * n + k1], [count * n, k1, k]]
    return np.ravel(verts).tolist(), np.ravel(faces).tolist()


def _add_bowl(spec: mujoco.MjSpec, bowl: Bowl, rgba: list[float]) -> None:
    """The free bowl: hidden foot disc, floor disc and wall boxes, a visible shell."""
    body = spec.worldbody.add_body(name="bowl", pos=[*bowl.xy, 1e-4])
    body.add_freejoint(name="bowl")
    solid = {"density": bowl.density(), "friction": BOWL_FRICTION, "condim": 4, "group": GROUP_HIDDEN}
    cylinder = mujoco.mjtGeom.mjGEOM_CYLINDER
    # The bottom disc reaches the wall's mid-line, under the rounded foot too, as the project's containers
    # have it: a thin floor would let a falling sphere through.
    body.add_geom(name="bowl_bottom", type=cylinder, size=[bowl.bottom_disc_radius, bowl.bottom / 2, 0],
                  pos=[0, 0, bowl.bottom / 2], **solid)  # fmt: skip
    for k, (centre, half, rot) in enumerate(bowl.wall_boxes()):
        body.add_geom(name=f"bowl_wall{k}", type=mujoco.mjtGeom.mjGEOM_BOX, size=half.tolist(),
                      pos=centre.tolist(), quat=_quat(rot), **solid)  # fmt: skip
    verts, faces = bowl_shell(bowl)
    spec.add_mesh(name="bowl_shell", uservert=verts, userface=faces)
    body.add_geom(name="bowl_visual", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="bowl_shell", contype=0,
                  conaffinity=0, mass=0, rgba=rgba, group=GROUP_BOWL)  # fmt: skip


def _add_contents(spec: mujoco.MjSpec, cup: Cup, contents: Contents, rgba: list[float]) -> None:
    """The spheres, packed in the cup (``Contents.lattice``), each a free body: a hidden collision sphere and a
    low-poly sphere to show (a few pixels across; MuJoCo's own sphere costs a fifth of a frame's rendering)."""
    mesh = spec.add_mesh(name="bead")
    mesh.make_sphere(subdivision=BEAD_SUBDIVISION)
    mesh.scale = [contents.radius] * 3
    rot = Rotation.from_euler("z", cup.yaw).as_matrix()
    for index, local in enumerate(contents.lattice(cup, FILL)):
        body = spec.worldbody.add_body(name=f"bead{index}", pos=(np.r_[cup.xy, 1e-4] + rot @ local).tolist())
        body.add_freejoint(name=f"bead{index}")
        body.add_geom(name=f"bead{index}", type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[contents.radius, 0, 0],
                      density=contents.density, group=GROUP_HIDDEN, **BEAD_CONTACT)  # fmt: skip
        body.add_geom(name=f"bead{index}_visual", type=mujoco.mjtGeom.mjGEOM_MESH, meshname="bead", contype=0,
                      conaffinity=0, mass=0, rgba=rgba, group=GROUP_CONTENTS)  # fmt: skip


def build_model(
    layout: PourLayout, hand_pos: np.ndarray, hand_quat: np.ndarray, rng: np.random.Generator
) -> mujoco.MjModel:
    """Compile the scene: environment, cup, bowl, contents, the gripper, the camera.

    Args:
        layout: The scene.
        hand_pos: Initial grasp centre, world frame (m), (3,).
        hand_quat: Initial gripper orientation [w, x, y, z], world frame.
        rng: Random generator for the table's texture.

    Returns:
        The model; the camera is ``demo``, the spheres' bodies ``bead0``, ``bead1``...

    Raises:
        ValueError: If the contents do not fit the cup.
    """
    # The hang scene's 3 no-slip iterations double the spheres' cost and change nothing here.
    spec = scene_spec("real2gym_pour", layout, noslip_iterations=0)
    middle = np.r_[(layout.cup.xy + layout.bowl.xy) / 2, 0.1]
    add_environment(spec, layout.camera_rot, middle, rng)
    _add_cup(spec, layout.cup, layout.colours["cup"])
    _add_bowl(spec, layout.bowl, layout.colours["bowl"])
    _add_contents(spec, layout.cup, layout.contents, layout.colours["contents"])
    add_gripper(spec, hand_pos, hand_quat, GROUP_GRIPPER)
    for side in ("left", "right"):
        spec.geom(f"pad_{side}").solref = PAD_SOLREF
    add_camera(spec, layout)
    return spec.compile()

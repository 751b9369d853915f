"""The spill probe: at what tilt do a container's contents start to leave it?

The fitted container, held by its centre, and its contents packed in it (as the verifier packs them) are
simulated alone: the contents settle, then the container tips about a level axis at :data:`TIP_SPEED`
until the first sphere's centre has left its cavity (through the rim's plane). A liquid's level surface
reaches the rim much sooner than rolling spheres leave (a shallow fill of spheres gathers in the corner of
floor and wall and stays there until the wall slopes towards the rim), so the probe asks the spheres
themselves; :func:`..geometry.contents.spill_angle`'s level-surface rule stands in where the probe cannot
run.
"""

from __future__ import annotations

import math

import mujoco
import numpy as np

from ..geometry.contents import Contents, spill_angle
from ..geometry.shapes import Shape
from .export import SceneObject, _add_contents, _add_shape_geoms, contents_body

SETTLE_S = 0.3
"""Seconds the contents settle in the upright container before it tips."""
TIP_SPEED = math.radians(90.0)
"""rad/s the probe tips the container at: a deliberate pour's pace (a person's takes about a second)."""
PROBE_TIMESTEP = 0.004
"""s: twice the verifier's step (the angle moves by a degree or two; the probe costs half)."""
PROBE_ITERATIONS = 8
"""Solver iterations a step: loose spheres rolling in a tipping cup need few (the default 100 cost 20 s for
150 spheres, for the same angle within a degree)."""
MOST_TILT = math.radians(180.0)
"""The probe stops here: contents still inside upside down are stuck (the rule's angle stands)."""


def probe_spill_angle(shape: Shape, contents: Contents) -> float:
    """rad: the container's tilt when its first sphere leaves it, tipped at :data:`TIP_SPEED` after the
    contents settle; the level-surface rule (:func:`..geometry.contents.spill_angle`) where none leaves."""
    if shape.collision == "hull":  # its one hull closes the opening: nothing leaves, nothing to probe
        return spill_angle(shape, contents)
    spec = mujoco.MjSpec()
    spec.option.timestep = PROBE_TIMESTEP
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_IMPLICITFAST
    spec.option.iterations, spec.option.ls_iterations = PROBE_ITERATIONS, PROBE_ITERATIONS
    holder = spec.worldbody.add_body(name="container", mocap=True, pos=[0.0, 0.0, 0.0])
    _add_shape_geoms(spec, holder, "container", shape, "container", [0.5, 0.5, 0.5, 1.0], {}, None, 600.0, 0.5, 3,
                     visual=False)  # fmt: skip
    _add_contents(spec, SceneObject("container", "manipulated", shape, np.zeros(3), 0.0, contents=contents),
                  "container")  # fmt: skip
    model = spec.compile()
    data = mujoco.MjData(model)
    spheres = np.array([model.body(contents_body("container", i)).id for i in range(contents.count)])
    rim = shape.size[2] / 2  # the rim's plane in the container's frame (its box centre the origin)
    axis = shape.axis_offset()
    inner = shape.params.get("inner_radius", shape.size[0] / 2)
    mujoco.mj_step(model, data, int(round(SETTLE_S / PROBE_TIMESTEP)))
    chunk = 5
    tilt = 0.0
    while tilt < MOST_TILT:
        tilt += TIP_SPEED * PROBE_TIMESTEP * chunk
        turn = np.array(
            [[1.0, 0.0, 0.0], [0.0, math.cos(tilt), -math.sin(tilt)], [0.0, math.sin(tilt), math.cos(tilt)]]
        )
        data.mocap_quat[0] = [math.cos(tilt / 2), math.sin(tilt / 2), 0.0, 0.0]
        mujoco.mj_step(model, data, chunk)
        local = data.xpos[spheres] @ turn  # in the container's frame (its centre stays at the origin)
        out = (local[:, 2] > rim) | (
            np.hypot(local[:, 0] - axis[0], local[:, 1] - axis[1]) > inner + contents.radius
        )
        if out.any():
            return tilt
    return spill_angle(shape, contents)

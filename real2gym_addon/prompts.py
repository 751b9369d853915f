"""The object prompts and the task of a demo (``prompts.json``).

Each object has a box (and optional points) on one frame, a shape hint and a
role; the task names which object goes where. An object may carry more prompts
on later frames (``"prompts": [{"frame", "box", "points"}, ...]``): corrections
that re-seed its mask from their frame on. :func:`parse_prompts` checks them
against the video: the frame exists, the box lies on the image.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

from .errors import DemoFolderError, WarningLog
from .geometry.contents import Contents
from .geometry.shape_kinds import PROMPT_SHAPES, SHAPE_KINDS
from .names import check_object_name, clashing_names
from .tasks import STEPS, STEPS_FIELD, TASKS, moved_step

SHAPES = PROMPT_SHAPES
"""What prompts.json's ``shape`` may say: the shape table's kinds (:data:`.geometry.shape_kinds.SHAPE_KINDS`)."""
ROLES = ("manipulated", "container", "support", "static", "hand")
"""What an object is to the task. ``hand``: the demonstrator's hand or gripper, seen in the video: it is
segmented like the objects and is evidence of the grasp and the release (``geometry.hand``), but it is not
fitted, simulated or exported as an object."""
HAND = "hand"
TASK_TYPES = tuple(TASKS)
"""The task types prompts.json may name: the task table's (:data:`.tasks.TASKS`)."""
MAX_OBJECTS = 16
"""Objects one run segments and fits; each adds a track, a fit and bodies to simulate."""
MIN_BOX_SIDE = 4.0
"""Pixels: a smaller prompt box cannot be segmented or measured."""
KNOWN_SIZE_RANGE = (0.002, 3.0)
"""Metres: a known ``height`` or ``size`` extent outside this is refused (likely not in metres)."""


@dataclasses.dataclass(frozen=True)
class Correction:
    """A further prompt for an object, on a later frame: its mask is re-seeded from there on.

    Attributes:
        frame: The video frame (0-based) the box and points are drawn on.
        box: ``(x0, y0, x1, y1)`` in pixels on that frame, clipped to the image.
        points: ``(x, y, label)`` triples in pixels; label 1 = on the object.
    """

    frame: int
    box: tuple[float, float, float, float]
    points: tuple[tuple[float, float, int], ...] = ()


@dataclasses.dataclass(frozen=True)
class PartPrompt:
    """A moving part of an object, as prompts.json gives it (docs/data-contract.md, "Articulated objects").

    Attributes:
        name: Unique within its object (``door``); the part is segmented as ``<object>.<name>``.
        prompts: Its prompts in frame order (the main one first), as an object's.
        joint: ``hinge``, ``slide`` or ``auto`` (estimated from the motion, whichever explains it).
        given: The joint as given (``axis``, ``pivot``, ``range``, world frame; radians or metres), or None
            to estimate it.
        handle: A box ``(x0, y0, x1, y1)`` on the main prompt's frame marking where the hand grips, or None.
    """

    name: str
    prompts: tuple[Correction, ...]
    joint: str = "auto"
    given: dict | None = None
    handle: tuple[float, float, float, float] | None = None

    def as_object(self, owner: str) -> ObjectPrompt:
        """The part as an object to segment, named ``<owner>.<name>``."""
        return ObjectPrompt.from_prompts(f"{owner}.{self.name}", self.prompts, "box", "static")


@dataclasses.dataclass(frozen=True)
class ObjectPrompt:
    """What to segment for one object, as given in prompts.json.

    Attributes:
        name: The object's name, unique in the demo.
        frame: The video frame (0-based) the box and points are drawn on: the
            object's earliest prompt, the one its mask starts from.
        box: ``(x0, y0, x1, y1)`` in pixels on that frame, clipped to the image.
        points: ``(x, y, label)`` triples in pixels; label 1 = on the object.
        shape: One of :data:`SHAPES`.
        role: One of :data:`ROLES`.
        corrections: Prompts on later frames, in frame order; each re-seeds the
            object's mask from its frame on (frames before it keep theirs).
        height: The object's known height in metres (``"height"``), or None.
        size: Its known full extents ``(sx, sy, sz)`` in metres (``"size"``), or None.
        mesh: For ``"shape": "mesh"``: the user's OBJ file (``"mesh"``), relative to the demo folder, or None.
        parts: Its moving parts (a door, a drawer), each prompted like an object and segmented apart
            from it.
        contents: What it holds that a ``pour`` pours out (``"contents"``), or None.
    """

    name: str
    frame: int
    box: tuple[float, float, float, float]
    points: tuple[tuple[float, float, int], ...] = ()
    shape: str = "auto"
    role: str = "manipulated"
    corrections: tuple[Correction, ...] = ()
    height: float | None = None
    size: tuple[float, float, float] | None = None
    mesh: str | None = None
    parts: tuple[PartPrompt, ...] = ()
    contents: Contents | None = None

    @property
    def known_height(self) -> float | None:
        """The known height in metres (from ``height`` or ``size``), or None."""
        return self.size[2] if self.size is not None else self.height

    @property
    def prompts(self) -> tuple[Correction, ...]:
        """All the object's prompts in frame order, the main one first."""
        return (Correction(self.frame, self.box, self.points), *self.corrections)

    @classmethod
    def from_prompts(
        cls, name: str, prompts: Sequence[Correction], shape: str = "auto", role: str = "manipulated"
    ) -> ObjectPrompt:
        """An object prompt from all its prompts, in any order: the earliest is the main one.

        Args:
            name: The object's name.
            prompts: At least one; each a frame's box and points (video pixels).
            shape: One of :data:`SHAPES`.
            role: One of :data:`ROLES`.

        Raises:
            DemoFolderError: No prompt, or two on one frame; the message names the object.
        """
        if not prompts:
            raise DemoFolderError(f"object '{name}' has no prompt: draw a box around it on one frame")
        ordered = sorted(prompts, key=lambda p: p.frame)
        for before, after in zip(ordered, ordered[1:], strict=False):
            if before.frame == after.frame:
                raise DemoFolderError(
                    f"object '{name}' has two prompts on frame {after.frame}; keep one of them"
                )
        main = ordered[0]
        return cls(name, main.frame, main.box, main.points, shape, role, tuple(ordered[1:]))


@dataclasses.dataclass(frozen=True)
class Task:
    """The demonstrated task.

    Attributes:
        type: One of :data:`TASK_TYPES`.
        object: The object that is moved (for ``steps``, the first step's that moves a free object, else
            the first step's; for ``open`` and ``close``, the object whose part moves).
        target: The container or support it goes to (None for ``lift``, ``open``, ``close``).
        part: For ``open`` and ``close``: the part that moves.
        to: For ``open`` and ``close``: the share of the range asked for, or None for the default.
        steps: For ``steps``: each step as prompts.json gives it.
        min_share: For ``pour``: the share of the contents that must end in the target, or None for the
            default.
        depth: For ``insert``: how deep (m) the object must end in the target's opening, or None for the
            default (the video's, less 2 mm).
    """

    type: str
    object: str
    target: str | None = None
    part: str | None = None
    to: float | None = None
    steps: tuple[dict, ...] | None = None
    min_share: float | None = None
    depth: float | None = None

    def to_json(self) -> dict:
        """As report.json's ``task`` (prompts.json's form: only the fields the task has)."""
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(self).items()
                if v is not None or k == "target"}  # fmt: skip


def finite_numbers(value: Any, count: int) -> tuple[float, ...] | None:
    """``value`` as ``count`` finite floats, or None if it is not such a list."""
    if not isinstance(value, (list, tuple)) or len(value) != count:
        return None
    if any(isinstance(v, bool) or not isinstance(v, (int, float)) for v in value):
        return None
    if not all(math.isfinite(v) for v in value):
        return None
    return tuple(float(v) for v in value)


def parse_object(
    entry: Any, index: int, video: tuple[int, int, int] | None = None, log: WarningLog | None = None
) -> ObjectPrompt:
    """Checks one entry of prompts.json's ``objects``.

    The entry's prompts are its ``frame``, ``box`` and ``points`` and each entry
    of its ``prompts`` list (either may be absent, not both); the earliest is the
    main prompt, the others are corrections.

    Args:
        entry: The parsed JSON entry.
        index: Its place in the list (for messages).
        video: ``(frames, width, height)`` to check the frame and the box and
            points against (a box is clipped to the image, with a warning to
            ``log``); None checks the structure only (an editor may load a box
            that is off the image, to fix it).
        log: Receives warnings.

    Raises:
        DemoFolderError: A field is missing or invalid; the message names the
            object (and the entry of ``prompts``).
    """
    if not isinstance(entry, dict):
        raise DemoFolderError(f"prompts.json: objects[{index}] must be a JSON object")
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DemoFolderError(f"prompts.json: objects[{index}] needs a non-empty 'name'")
    check_object_name(name, f"prompts.json, objects[{index}]", DemoFolderError)
    where = f"prompts.json, object '{name}'"
    listed = entry.get("prompts")
    if listed is not None and not isinstance(listed, list):
        raise DemoFolderError(
            f"{where}: 'prompts' must be a list of prompts, each with 'frame' and 'box', "
            f"got a {type(listed).__name__}"
        )
    prompts: dict[int, Correction] = {}
    if not listed or any(key in entry for key in ("frame", "box", "points")):
        main = _parse_prompt(entry, where, name, video, log, needs_frame=False)
        prompts[main.frame] = main
    for p_index, item in enumerate(listed or []):
        here = f"{where}, prompts[{p_index}]"
        if not isinstance(item, dict):
            raise DemoFolderError(f"{here}: must be a JSON object with 'frame' and 'box'")
        prompt = _parse_prompt(item, here, name, video, log, needs_frame=True)
        if prompt.frame in prompts:
            raise DemoFolderError(
                f"{here}: the object already has a prompt on frame {prompt.frame}; "
                "give each frame one prompt (its box and points together)"
            )
        prompts[prompt.frame] = prompt
    shape = entry.get("shape", "auto")
    if shape not in SHAPES:
        raise DemoFolderError(f"{where}: unknown shape {shape!r}; use one of {', '.join(SHAPES)}")
    role = entry.get("role", "manipulated")
    if role not in ROLES:
        raise DemoFolderError(f"{where}: unknown role {role!r}; use one of {', '.join(ROLES)}")
    height, size = _known_size(entry, where)
    prompt = ObjectPrompt.from_prompts(name, list(prompts.values()), shape, role)
    parts = _parts(entry, where, name, video, log)
    contents = None if entry.get("contents") is None else Contents.from_json(entry["contents"], where)
    if contents is not None and shape != "auto" and shape in SHAPE_KINDS and not SHAPE_KINDS[shape].container:
        raise DemoFolderError(f"{where}: has 'contents' but its shape '{shape}' holds nothing; "
                              "contents go in a 'cup', 'mug' or 'bowl'")  # fmt: skip
    return dataclasses.replace(
        prompt, height=height, size=size, mesh=_mesh_file(entry, where, shape), parts=parts, contents=contents
    )


JOINT_CHOICES = ("auto", "hinge", "slide")
"""What a part's ``joint`` may say."""
MAX_PARTS = 4
"""Moving parts one object may have."""


def _parts(entry: dict, where: str, name: str, video, log) -> tuple[PartPrompt, ...]:
    """An object's ``parts``, each checked like an object's prompts; none when it has no ``parts``."""
    listed = entry.get("parts")
    if listed is None:
        return ()
    if not isinstance(listed, list) or len(listed) > MAX_PARTS:
        raise DemoFolderError(f"{where}: 'parts' must be a list of at most {MAX_PARTS} parts")
    parts, seen = [], set()
    for index, item in enumerate(listed):
        here = f"{where}, parts[{index}]"
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"].strip():
            raise DemoFolderError(
                f"{here}: a part is a JSON object with a non-empty 'name', 'frame' and 'box'"
            )
        part_name = item["name"]
        check_object_name(f"{name}.{part_name}", here, DemoFolderError)
        if part_name in seen:
            raise DemoFolderError(f"{here}: the object already has a part named {part_name!r}")
        seen.add(part_name)
        prompt = parse_object({**{k: v for k, v in item.items() if k not in ("parts", "joint", "handle")},
                               "name": f"{name}.{part_name}"}, index, video, log)  # fmt: skip
        joint = item.get("joint", "auto")
        given = None
        if isinstance(joint, dict):
            given, joint = _given_joint(joint, here), joint["type"]
        if joint not in JOINT_CHOICES:
            raise DemoFolderError(
                f"{here}: 'joint' is one of {', '.join(JOINT_CHOICES)} or a given joint, got {joint!r}"
            )
        handle = item.get("handle")
        handle_box = finite_numbers(handle, 4) if handle is not None else None
        if handle is not None and handle_box is None:
            raise DemoFolderError(f"{here}: 'handle' must be a box [x0, y0, x1, y1] in pixels")
        parts.append(PartPrompt(part_name, prompt.prompts, joint, given, handle_box))
    return tuple(parts)


def _given_joint(joint: dict, where: str) -> dict:
    """A joint given in prompts.json: ``type``, ``axis``, ``pivot`` (world frame, m) and ``range``."""
    kind = joint.get("type")
    axis, pivot, limits = (
        finite_numbers(joint.get(k), n) for k, n in (("axis", 3), ("pivot", 3), ("range", 2))
    )
    if (
        kind not in ("hinge", "slide")
        or axis is None
        or limits is None
        or (kind == "hinge" and pivot is None)
    ):
        raise DemoFolderError(
            f"{where}: a given joint needs 'type' (hinge or slide), 'axis' [x, y, z], 'range' [lo, hi] and, for a "
            "hinge, 'pivot' [x, y, z] (world frame, metres and radians)"
        )
    if sum(a * a for a in axis) < 1e-12:
        raise DemoFolderError(f"{where}: the given joint's 'axis' is zero")
    return {"type": kind, "axis_world": list(axis), "pivot_world": list(pivot or (0.0, 0.0, 0.0)),
            "range": list(limits), "source": "given",
            **({"closed": float(joint["closed"])} if isinstance(joint.get("closed"), int | float) else {})}  # fmt: skip


def _mesh_file(entry: dict, where: str, shape: str) -> str | None:
    """The ``mesh`` file's path (relative to the demo folder; read and checked by the geometry stage), or None.

    Raises:
        DemoFolderError: Not a non-empty string, or given without ``"shape": "mesh"``.
    """
    mesh = entry.get("mesh")
    if mesh is None:
        return None
    if not isinstance(mesh, str) or not mesh.strip():
        raise DemoFolderError(
            f"{where}: 'mesh' must be the path of an .obj file inside the demo folder, got {mesh!r}"
        )
    if shape not in SHAPE_KINDS or not SHAPE_KINDS[shape].user_file:
        raise DemoFolderError(
            f"{where}: 'mesh' is given but 'shape' is {shape!r}; set \"shape\": \"mesh\" to use it"
        )
    return mesh


def _known_size(entry: dict, where: str) -> tuple[float | None, tuple[float, float, float] | None]:
    """The object's known ``height`` and ``size`` (metres), each None when not given.

    Raises:
        DemoFolderError: Not positive finite metres in :data:`KNOWN_SIZE_RANGE`, or a
            ``height`` that disagrees with ``size``'s third extent.
    """
    low, high = KNOWN_SIZE_RANGE
    rule = f"positive finite metres, {low:g} to {high:g}"
    height = entry.get("height")
    if height is not None:
        value = finite_numbers([height], 1)
        if value is None or not low <= value[0] <= high:
            raise DemoFolderError(f"{where}: 'height' must be the object's height in {rule}, got {height!r}")
        height = value[0]
    size = entry.get("size")
    if size is not None:
        values = finite_numbers(size, 3)
        if values is None or not all(low <= v <= high for v in values):
            raise DemoFolderError(
                f"{where}: 'size' must be [sx, sy, sz], the object's full extents in {rule}, got {size!r}"
            )
        size = values
    if height is not None and size is not None and abs(height - size[2]) > 1e-6:
        raise DemoFolderError(
            f"{where}: 'height' {height:g} differs from the height in 'size' ({size[2]:g}); give one of them"
        )
    return height, size


def _parse_prompt(
    entry: dict, where: str, name: str, video: tuple[int, int, int] | None, log: WarningLog | None,
    needs_frame: bool,
) -> Correction:  # fmt: skip
    """One prompt (``frame``, ``box``, ``points``) of an object, checked as :func:`parse_object` says."""
    if needs_frame and "frame" not in entry:
        raise DemoFolderError(f"{where}: needs a 'frame' (the frame the box is drawn on)")
    frame = entry.get("frame", 0)
    if isinstance(frame, bool) or not isinstance(frame, int):
        raise DemoFolderError(f"{where}: 'frame' must be a whole frame number, got {frame!r}")
    if video is None and frame < 0:
        raise DemoFolderError(f"{where}: 'frame' must be a frame number (0 or more), got {frame!r}")
    if video is not None and not 0 <= frame < video[0]:
        raise DemoFolderError(
            f"{where}: prompt frame {frame} is out of range; the video has frames 0 to {video[0] - 1}"
        )
    box = finite_numbers(entry.get("box", None if video else [0, 0, 0, 0]), 4)
    if box is None:
        raise DemoFolderError(f"{where}: 'box' must be [x0, y0, x1, y1] in pixels, got {entry.get('box')!r}")
    if video is not None:
        box = _box_on_image(box, entry["box"], frame, video, where, name, log)
    points = []
    for p_index, point in enumerate(entry.get("points") or []):
        values = finite_numbers(point, 3)
        if values is None or values[2] not in (0, 1):
            raise DemoFolderError(f"{where}: points[{p_index}] must be [x, y, label] with label 0 or 1")
        if video is not None and not (0 <= values[0] < video[1] and 0 <= values[1] < video[2]):
            raise DemoFolderError(
                f"{where}: point {list(point)} on frame {frame} lies outside the {video[1]}x{video[2]} image"
            )
        points.append((values[0], values[1], int(values[2])))
    return Correction(frame=frame, box=box, points=tuple(points))


def _box_on_image(box, given, frame: int, video, where: str, name: str, log: WarningLog | None):
    """The box clipped to the image; an error if it has no area or lies off the image."""
    _, width, height = video
    x0, y0, x1, y1 = box
    if x1 <= x0 or y1 <= y0:
        raise DemoFolderError(
            f"{where}: box {given} on frame {frame} has zero area (need x1 > x0 and y1 > y0)"
        )
    clipped = (max(x0, 0.0), max(y0, 0.0), min(x1, float(width)), min(y1, float(height)))
    if clipped[2] <= clipped[0] or clipped[3] <= clipped[1]:
        raise DemoFolderError(
            f"{where}: box {given} on frame {frame} lies outside the {width}x{height} image"
        )
    if min(clipped[2] - clipped[0], clipped[3] - clipped[1]) < MIN_BOX_SIDE:
        raise DemoFolderError(
            f"{where}: box {given} on frame {frame} is under {MIN_BOX_SIDE:g} pixels on a side (on the "
            "image); draw the box around the whole object"
        )
    if clipped != box and log is not None:
        log.warn("prompts", f"object '{name}': box {list(box)} on frame {frame} was clipped to the image")
    return clipped


def parse_prompts(
    data: Any, frames: int, width: int, height: int, log: WarningLog
) -> tuple[tuple[ObjectPrompt, ...], Task]:
    """Checks the content of prompts.json against the video.

    Args:
        data: The parsed JSON.
        frames: Number of video frames.
        width: Frame width in pixels.
        height: Frame height in pixels.
        log: Receives warnings (e.g. a box clipped to the image).

    Returns:
        The object prompts in file order, and the task.

    Raises:
        DemoFolderError: A field is missing or invalid; the message names the object.
    """
    if not isinstance(data, dict) or not isinstance(data.get("objects"), list) or not data["objects"]:
        raise DemoFolderError("prompts.json must hold an 'objects' list with at least one object")
    if len(data["objects"]) > MAX_OBJECTS:
        raise DemoFolderError(
            f"prompts.json lists {len(data['objects'])} objects; one run handles at most {MAX_OBJECTS} "
            "(prompt the objects the task involves and those they touch)"
        )
    objects = tuple(
        parse_object(entry, i, (frames, width, height), log) for i, entry in enumerate(data["objects"])
    )
    names = [o.name for o in objects]
    hands = [o.name for o in objects if o.role == HAND]
    if len(hands) == len(objects):
        raise DemoFolderError("prompts.json lists only hands (role 'hand'); prompt the objects they move too")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise DemoFolderError(f"prompts.json: object names must be unique; repeated: {', '.join(duplicates)}")
    for first, second in clashing_names(names):
        raise DemoFolderError(
            f"prompts.json: the object names {first!r} and {second!r} differ only by case or Unicode form; "
            "they would name the same mask folder on macOS and Windows: rename one"
        )
    task = data.get("task")
    if not isinstance(task, dict):
        raise DemoFolderError("prompts.json needs a 'task' object with 'type' and 'object'")
    kind = task.get("type")
    if not isinstance(kind, str) or kind not in TASKS:
        raise DemoFolderError(f"prompts.json: unknown task type {kind!r}; use one of {', '.join(TASKS)}")
    for field in ("object", "target"):
        if task.get(field) in hands:
            raise DemoFolderError(
                f"prompts.json: the task's {field} {task[field]!r} is a hand (role 'hand'); a hand is evidence "
                "of the grasp, not an object to place: name the object it moves"
            )
    parts = {o.name: [p.name for p in o.parts] for o in objects}
    problem = TASKS[kind].check_fields(task, [n for n in names if n not in hands], parts)
    if problem is not None:
        raise DemoFolderError(f"prompts.json: {problem}")
    if kind == STEPS.name:
        main = moved_step(task) or task[STEPS_FIELD][0]
        steps = tuple(dict(step) for step in task[STEPS_FIELD])
        return objects, Task(type=kind, object=main["object"], target=main.get("target"), steps=steps)
    to, share, depth = task.get("to"), task.get("min_share"), task.get("depth")
    return objects, Task(type=kind, object=task.get("object"), target=task.get("target"), part=task.get("part"),
                         to=None if to is None else float(to), min_share=None if share is None else float(share),
                         depth=None if depth is None else float(depth))  # fmt: skip

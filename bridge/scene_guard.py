"""Undoing a failed change to a scene: what a run, a reconstruction or an import changed.

A :class:`SceneGuard` remembers a scene's render and frame settings, its
camera's pose and which data blocks exist. The work changes existing data
through the guard (:meth:`~SceneGuard.assign`, :meth:`~SceneGuard.rename`,
:meth:`~SceneGuard.unlink`, :meth:`~SceneGuard.replace_data`,
:meth:`~SceneGuard.detach_action`, or its own :meth:`~SceneGuard.on_restore`
step). If it fails, :meth:`SceneGuard.restore` undoes those changes, removes
the blocks added since and restores the settings. Blocks the work replaced are
removed only once it succeeded (:meth:`SceneGuard.commit`), so a failure can
always put them back. As a context manager it restores on an exception and
commits otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import bpy

_RENDER_SETTINGS = (
    "resolution_x",
    "resolution_y",
    "resolution_percentage",
    "pixel_aspect_x",
    "pixel_aspect_y",
    "fps",
    "fps_base",
)
_SCENE_SETTINGS = ("frame_start", "frame_end", "frame_current", "camera", "active_clip")
_ID_COLLECTIONS = ("objects", "cameras", "movieclips", "collections", "meshes", "actions", "materials")


class SceneGuard:
    """Remembers a scene's settings and data blocks, to undo a failed change.

    Args:
        scene: The scene the work will change.
    """

    def __init__(self, scene: bpy.types.Scene) -> None:
        self.scene = scene
        self.render = {k: getattr(scene.render, k) for k in _RENDER_SETTINGS}
        self.settings = {k: getattr(scene, k) for k in _SCENE_SETTINGS}
        # By address, not name: the work may rename blocks (a replaced mesh), never free them.
        self.existing = {name: {b.as_pointer() for b in getattr(bpy.data, name)} for name in _ID_COLLECTIONS}
        camera = scene.camera
        self.camera_pose = (camera, camera.matrix_world.copy()) if camera is not None else None
        self._undo: list[Callable[[], None]] = []
        self._names: list[tuple[bpy.types.ID, str]] = []
        self._replaced: list[bpy.types.ID] = []

    def __enter__(self) -> SceneGuard:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.restore()

    def on_restore(self, undo: Callable[[], None]) -> None:
        """Registers an undo step, run (newest first) by :meth:`restore`."""
        self._undo.append(undo)

    def assign(self, owner, attribute: str, value) -> None:
        """Sets ``owner.attribute = value``; :meth:`restore` puts the old value back.

        Args:
            owner: A data block, or a struct of one that existed before the guard.
            attribute: The attribute's name.
            value: Its new value.
        """
        old = getattr(owner, attribute)
        if hasattr(old, "copy") and not isinstance(old, bpy.types.ID):
            old = old.copy()  # matrices and vectors: a snapshot, not a live view
        setattr(owner, attribute, value)
        self.on_restore(lambda: setattr(owner, attribute, old))

    def rename(self, block: bpy.types.ID, name: str) -> None:
        """Renames a block (to free its name for a new one); :meth:`restore` gives the old name back."""
        self._names.append((block, block.name))
        block.name = name

    def replace_data(self, obj: bpy.types.Object, data: bpy.types.ID) -> None:
        """Gives ``obj`` new data (a mesh) under the old data's name.

        :meth:`restore` puts the old data back; :meth:`commit` removes it if nothing else uses it.
        """
        old = obj.data
        name = old.name
        self.assign(obj, "data", data)
        self.rename(old, f"{name} (replaced)")
        self.replace_later([old])
        data.name = name

    def detach_action(self, id_block: bpy.types.ID) -> None:
        """Takes ``id_block``'s action off it to be replaced (its name freed for the new one).

        :meth:`restore` puts it back (with its slot); :meth:`commit` removes it if nothing else uses it.
        """
        animation = id_block.animation_data
        action = animation.action if animation is not None else None
        if action is None:
            return
        slot = getattr(animation, "action_slot", None)  # Blender 4.4 and later
        animation.action = None

        def reattach() -> None:
            animation.action = action
            if slot is not None:
                animation.action_slot = slot

        self.on_restore(reattach)
        self.rename(action, f"{action.name} (replaced)")
        self.replace_later([action])

    def unlink(self, obj: bpy.types.Object) -> None:
        """Takes an object out of all its collections; :meth:`restore` links it back."""
        homes = list(obj.users_collection)
        for collection in homes:
            collection.objects.unlink(obj)

        def relink() -> None:
            for collection in homes:
                if collection.objects.get(obj.name) is None:
                    collection.objects.link(obj)

        self.on_restore(relink)

    def replace_later(self, blocks: Iterable[bpy.types.ID]) -> None:
        """Removes ``blocks`` on :meth:`commit` (they were replaced); :meth:`restore` keeps them."""
        self._replaced.extend(b for b in blocks if b is not None)

    def restore(self) -> None:
        """Undoes the changes, removes the data blocks added since, restores the names and settings."""
        # Undo first: removing an added mesh also removes the objects still using it.
        for undo in reversed(self._undo):
            undo()
        added = [
            block
            for name in _ID_COLLECTIONS
            for block in getattr(bpy.data, name)
            if block.as_pointer() not in self.existing[name]
        ]
        if added:
            bpy.data.batch_remove(added)
        for block, name in reversed(self._names):  # the added blocks holding them are gone now
            block.name = name
        self._undo.clear()
        self._names.clear()
        self._replaced.clear()
        for key, value in self.render.items():
            setattr(self.scene.render, key, value)
        for key, value in self.settings.items():
            setattr(self.scene, key, value)
        if self.camera_pose is not None:
            camera, matrix = self.camera_pose
            camera.matrix_world = matrix

    def commit(self) -> None:
        """Keeps the changes and removes the blocks they replaced (those nothing uses any more)."""
        objects = [b for b in _alive(self._replaced) if isinstance(b, bpy.types.Object)]
        if objects:
            bpy.data.batch_remove(objects)
        unused = [b for b in _alive(self._replaced) if b.users == 0]
        if unused:
            bpy.data.batch_remove(unused)
        self._undo.clear()
        self._names.clear()
        self._replaced.clear()


def _alive(blocks: list[bpy.types.ID]) -> list[bpy.types.ID]:
    """The blocks not removed meanwhile (a removed one raises ReferenceError), each once."""
    alive = {}
    for block in blocks:
        try:
            alive.setdefault(block.as_pointer(), block)
        except ReferenceError:
            continue
    return list(alive.values())

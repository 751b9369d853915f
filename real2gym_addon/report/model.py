"""report.json as typed sections: the one model every reader and writer of a report passes.

:class:`Report` types the report's top level and the sections the code reads as values
(:class:`VideoSection`, :class:`CameraSection`, :class:`TimingSection`,
:class:`VerificationSection`); the sections whose typed form is the fitted geometry
(``objects``, ``keyframes``, ``table``, ``gripper``; read by
``geometry.report_io.geometry_from_report``) and the free-form ones (``task``,
``segmentation``, ``edit_log``, ``repair``, ``variant``) stay JSON values. Keys the
model does not know are kept (:class:`~.section.Section`), so a report of a newer minor
shape, or one a person added a note to, is written back whole.

What a command adds to a report after a stage goes through the model's methods: the
verification (:meth:`Report.set_verification`), its suggestions
(:meth:`Report.attach_suggestions`), the physics it used (:meth:`Report.record_physics`),
the files written (:meth:`Report.add_artifacts`) and the time taken
(:meth:`Report.record_stage_time`). The contract is docs/data-contract.md; the JSON
Schema docs/schemas/report.schema.json names the same fields (a test holds the two together).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, ClassVar

from .section import Section

REPORT_VERSION = 1
"""The version of report.json this real2gym writes and reads (docs/data-contract.md)."""


@dataclasses.dataclass
class VideoSection(Section):
    """``video``: the demo's video.

    Attributes:
        frames: Number of frames.
        fps: Frames per second.
        width: Pixels.
        height: Pixels.
        source: The movie file or frames folder, absolute; None when not recorded.
    """

    frames: int
    fps: float
    width: int
    height: int
    source: str | None = None


@dataclasses.dataclass
class CameraSection(Section):
    """``camera``: the intrinsics (pixels) and the camera's pose in the world.

    Attributes:
        fx: Focal length in x, pixels.
        fy: Focal length in y, pixels.
        cx: Principal point x, pixels.
        cy: Principal point y, pixels.
        width: Image width, pixels.
        height: Image height, pixels.
        world_from_camera: 4x4 (row-major, metres), of frame 0 for a camera that moves;
            None before the geometry stage.
        world_from_camera_source: ``"camera.json"`` or ``"table"``.
        world_from_camera_frames: One 4x4 per video frame for a camera that moves; None otherwise.
        camera_motion_source: How the per-frame poses were found.
    """

    fx: float
    fy: float
    cx: float
    cy: float
    width: int
    height: int
    world_from_camera: list[list[float]] | None = None
    world_from_camera_source: str | None = None
    world_from_camera_frames: list[list[list[float]]] | None = None
    camera_motion_source: str | None = None


@dataclasses.dataclass
class TimingSection(Section):
    """``timing``: wall time per stage.

    Attributes:
        stages_s: Stage name -> seconds.
    """

    stages_s: dict[str, float] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class VerificationSection(Section):
    """``verification``: the verifier's verdict (docs/checks.md).

    Attributes:
        passed: Every check passed.
        checks: Check name -> a boolean or ``{"passed", ...figures}``.
        mjcf: The verified scene, relative to the output folder.
        name_map: Object name -> its MJCF body.
        simulation: The simulation's figures (time step, steps, real-time factor).
        margin: The perturbed runs (``verify.margin.Margin.to_report``); None without them.
        suggestions: The computed fixes for the failed checks (``fixes.suggest``); None
            until attached.
        stale: True once the scene was edited without verifying again.
    """

    passed: bool
    checks: dict[str, Any]
    mjcf: str | None = None
    name_map: dict[str, str] | None = None
    simulation: dict[str, Any] | None = None
    margin: dict[str, Any] | None = None
    suggestions: list[dict[str, Any]] | None = None
    stale: bool | None = None

    def failed(self) -> list[str]:
        """The names of the failed checks, in report order."""
        return [name for name, check in self.checks.items() if not _passed(check)]


def _passed(check: Any) -> bool:
    return bool(check.get("passed", True)) if isinstance(check, Mapping) else bool(check)


@dataclasses.dataclass
class Report(Section):
    """report.json (docs/data-contract.md), version :data:`REPORT_VERSION`.

    Attributes:
        version: The contract's version.
        video: The video.
        camera: The intrinsics and the world pose.
        demo: The demo folder, absolute.
        task: The task from prompts.json.
        objects: Per object, in prompts.json order (shape, size, per-frame poses, physics).
        keyframes: The interaction events, in frame order.
        artifacts: Kind -> file written, relative to the output folder.
        warnings: ``{"stage", "message"}`` entries.
        timing: Wall time per stage.
        table: The support plane; None before the geometry stage.
        segmentation: The masks' figures and review flags; None before the segment stage.
        gripper: The gripper trajectory used in simulation; None without one.
        verification: The verifier's verdict; None before the verify stage.
        edit_log: The fixes applied, oldest first.
        repair: What ``--repair`` tried; None before it ran.
        variant: A variant's id, seed and parameters (a variant's report only).
    """

    NESTED: ClassVar[dict[str, type[Section]]] = {
        "video": VideoSection,
        "camera": CameraSection,
        "timing": TimingSection,
        "verification": VerificationSection,
    }

    version: int
    video: VideoSection
    camera: CameraSection
    demo: str | None = None
    task: dict[str, Any] = dataclasses.field(default_factory=dict)
    objects: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    keyframes: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    artifacts: dict[str, str] = dataclasses.field(default_factory=dict)
    warnings: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    timing: TimingSection | None = None
    table: dict[str, Any] | None = None
    segmentation: dict[str, Any] | None = None
    gripper: dict[str, Any] | None = None
    verification: VerificationSection | None = None
    edit_log: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    repair: dict[str, Any] | None = None
    variant: dict[str, Any] | None = None

    def object_names(self) -> list[str]:
        """The objects' names, in report order."""
        return [str(entry.get("name")) for entry in self.objects]

    def set_verification(self, section: Mapping[str, Any] | VerificationSection) -> VerificationSection:
        """Replaces the verification (``Verification.to_report``'s content, or a section).

        Returns:
            The new section; attach its suggestions with :meth:`attach_suggestions`.
        """
        if not isinstance(section, VerificationSection):
            section = VerificationSection.from_json(section)
        self.verification = section
        return section

    def attach_suggestions(self, suggestions: list[dict[str, Any]]) -> None:
        """Records the computed fixes for the verification's failed checks (``fixes.suggest``).

        Raises:
            ValueError: The report has no verification to attach them to.
        """
        if self.verification is None:
            raise ValueError("suggestions attach to a verification; the report has none")
        self.verification.suggestions = suggestions

    def mark_stale(self) -> None:
        """Marks the verification as of the scene before an edit (until verified again)."""
        if self.verification is not None:
            self.verification.stale = True

    def record_physics(
        self,
        frictions: Mapping[str, float],
        masses: Mapping[str, float] | None = None,
        default_friction: float | None = None,
    ) -> None:
        """Writes what the verifier used into the objects (``objects[].mass``, ``objects[].friction``).

        Args:
            frictions: Object name -> sliding friction.
            masses: Object name -> kg; None writes no masses (a mass given for one
                verification would otherwise outlive a fix that rescales the object).
            default_friction: The friction of objects ``frictions`` does not name; None
                leaves their entry as it is.
        """
        for entry in self.objects:
            name = entry.get("name")
            if masses is not None and name in masses:
                entry["mass"] = masses[name]
            if name in frictions:
                entry["friction"] = float(frictions[name])
            elif default_friction is not None:
                entry["friction"] = float(default_friction)

    def add_artifacts(self, artifacts: Mapping[str, str], replace: bool = False) -> None:
        """Names files written into the output folder (kind -> path relative to it).

        Args:
            artifacts: The files.
            replace: Drop the files named before (a variant names only its own).
        """
        if replace:
            self.artifacts = {}
        self.artifacts.update(artifacts)

    def record_stage_time(self, stage: str, seconds: float) -> None:
        """Records a stage's wall time (``timing.stages_s``)."""
        if self.timing is None:
            self.timing = TimingSection()
        self.timing.stages_s[stage] = seconds

"""Errors and warnings shown to users.

Every problem a user can fix (a missing file, a malformed prompt, a frame out of
range) is raised as a :class:`Real2GymError` whose message names what is wrong
and where: the file, the object, the frame. Entry points turn these into one
line (command line, exit code 2) or a Blender report; they never show a
traceback. Anything else is a bug.
"""

from __future__ import annotations

import dataclasses


class Real2GymError(Exception):
    """A problem with the user's input or environment, with a message for them."""


class DemoFolderError(Real2GymError):
    """The demo folder, or a file in it, is missing or malformed."""


class VideoError(DemoFolderError):
    """The video (or frame sequence) cannot be read as a whole."""


class OutputError(Real2GymError):
    """The output folder cannot be written."""


class Cancelled(Real2GymError):
    """The user cancelled a long run; nothing was written."""


@dataclasses.dataclass
class PipelineWarning:
    """One warning, kept for the report and the user interface.

    Attributes:
        stage: The pipeline stage that raised it (``"video"``, ``"prompts"``...).
        message: What happened and what it means for the result.
    """

    stage: str
    message: str


class WarningLog:
    """Collects warnings so they are shown and written to report.json, not lost.

    Modelled on glTF-Blender-IO's ``Log``: stages call :meth:`warn`, entry points
    show :attr:`warnings` at the end (command line: one line each on stderr;
    Blender: ``self.report({'WARNING'}, ...)``).
    """

    def __init__(self) -> None:
        self.warnings: list[PipelineWarning] = []

    def warn(self, stage: str, message: str) -> None:
        """Records a warning.

        Args:
            stage: The pipeline stage that raised it.
            message: What happened, naming the object, frame or file.
        """
        self.warnings.append(PipelineWarning(stage, message))

    def as_report(self) -> list[dict[str, str]]:
        """Returns the warnings as report.json entries."""
        return [dataclasses.asdict(w) for w in self.warnings]


class SegmentationError(Real2GymError):
    """A segmentation backend cannot run, or an object cannot be segmented."""

"""report.json: one typed model, one reader (validates, knows the version, migrates), one atomic writer.

Every module that reads or writes a run's report (or an environment's demo_report.json)
uses these: :func:`read_report` and :func:`write_report` (:mod:`.disk`), the model
:class:`Report` and its sections (:mod:`.model`), the checks (:mod:`.check`) and the
version table (:mod:`.versions`). The package sits on the core's ground floor: it imports
nothing of the core but ``errors``, ``names``, ``json_files`` and ``files``.
"""

from .check import check_report, video_source
from .disk import REPORT_NAME, read_report, write_report
from .model import (
    REPORT_VERSION,
    CameraSection,
    Report,
    TimingSection,
    VerificationSection,
    VideoSection,
)
from .versions import MIGRATIONS, migrate

__all__ = [
    "MIGRATIONS",
    "REPORT_NAME",
    "REPORT_VERSION",
    "CameraSection",
    "Report",
    "TimingSection",
    "VerificationSection",
    "VideoSection",
    "check_report",
    "migrate",
    "read_report",
    "video_source",
    "write_report",
]

"""The SAM2.1 checkpoints by name: a registry, a per-user cache and a resumable download.

``real2gym models fetch sam2.1-tiny`` downloads Meta's official checkpoint once
into a per-user cache (:func:`model_cache_dir`); afterwards ``--sam2-checkpoint
sam2.1-tiny`` (or the name in Blender's checkpoint field) means that file and
its config (:func:`resolve_checkpoint`).

A download goes to ``<file>.part`` and resumes from it with an HTTP ``Range``
request (a server that ignores the range sends the whole file, and the part is
started over). The finished file is checked against the size and SHA-256 in
:data:`MODELS` and only then renamed into place, so the cache never holds a
truncated checkpoint. The checksums are the Git LFS object ids of Meta's own
Hugging Face copies (``facebook/sam2.1-hiera-tiny``, ``-small``) and of mirrors
that agree with them (``base-plus``, ``large``); Meta publishes none next to
the download URLs. An entry without a checksum (``sha256=None``, as a mirror
or a future entry may be) is trusted on its first download: the SHA-256
computed then is written next to it (``<file>.sha256``), and every later use
checks the file against that, so a cache corrupted afterwards is still caught.
A file's check is remembered for the process as long as its size and
modification time stay the same.

Standard library only (urllib); nothing here imports torch or bpy.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import shutil
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import BinaryIO

from .errors import Real2GymError
from .files import DISK_FULL_ERRNOS
from .progress import Progress

try:
    import fcntl
except ImportError:  # Windows: two downloads of one model at once are not detected there
    fcntl = None

OFFICIAL_BASE_URL = "https://dl.fbaipublicfiles.com/segment_anything_2/092824"
"""Where Meta serves the SAM2.1 checkpoints (``checkpoints/download_ckpts.sh`` of facebookresearch/sam2)."""
CACHE_ENV = "REAL2GYM_MODEL_CACHE"
BASE_URL_ENV = "REAL2GYM_MODEL_BASE_URL"
_CHUNK = 1 << 20
_TIMEOUT_S = 30.0
_ATTEMPTS = 3
"""Tries per fetch; a broken-off transfer is resumed only if the last try brought new bytes."""
_USER_AGENT = "real2gym (model download)"
_MB = 1e6


class ModelError(Real2GymError):
    """A model is unknown, not downloaded, cannot be downloaded, or its cached file is damaged."""


@dataclasses.dataclass(frozen=True)
class ModelInfo:
    """One downloadable checkpoint.

    Attributes:
        name: What the user types (``sam2.1-tiny``).
        filename: The official file name, also its name in the cache.
        config: The SAM2 config it belongs to (``sam2.1_hiera_t``).
        size_bytes: Its size in bytes, or None if unknown.
        sha256: Its SHA-256 as lower-case hex, or None if unknown (see the module's description).
    """

    name: str
    filename: str
    config: str
    size_bytes: int | None
    sha256: str | None

    @property
    def url(self) -> str:
        """The official download URL."""
        return f"{OFFICIAL_BASE_URL}/{self.filename}"

    def url_from(self, base_url: str | None) -> str:
        """The download URL, from ``base_url`` (a mirror) instead of Meta's server when given."""
        return f"{base_url.rstrip('/')}/{self.filename}" if base_url else self.url


MODELS: dict[str, ModelInfo] = {
    info.name: info
    for info in (
        ModelInfo("sam2.1-tiny", "sam2.1_hiera_tiny.pt", "sam2.1_hiera_t", 156_008_466,
                  "7402e0d864fa82708a20fbd15bc84245c2f26dff0eb43a4b5b93452deb34be69"),
        ModelInfo("sam2.1-small", "sam2.1_hiera_small.pt", "sam2.1_hiera_s", 184_416_285,
                  "6d1aa6f30de5c92224f8172114de081d104bbd23dd9dc5c58996f0cad5dc4d38"),
        ModelInfo("sam2.1-base-plus", "sam2.1_hiera_base_plus.pt", "sam2.1_hiera_b+", 323_606_802,
                  "a2345aede8715ab1d5d31b4a509fb160c5a4af1970f199d9054ccfb746c004c5"),
        ModelInfo("sam2.1-large", "sam2.1_hiera_large.pt", "sam2.1_hiera_l", 898_083_611,
                  "2647878d5dfa5098f2f8649825738a9345572bae2d4350a2468587ece47dd318"),
    )
}  # fmt: skip
"""The registry: name to checkpoint, smallest first."""

_verified: dict[tuple[str, int, int], str] = {}
"""Files whose checksum was checked in this process: (path, size, mtime_ns) to SHA-256."""


@dataclasses.dataclass(frozen=True)
class CachedModel:
    """One row of :func:`list_models`.

    Attributes:
        info: The registry entry.
        path: Where it is (or would be) cached.
        cached: Whether the file is there with the expected size (its checksum is
            checked on use, not here).
    """

    info: ModelInfo
    path: Path
    cached: bool


def model_info(name: str) -> ModelInfo:
    """The registry entry of a model.

    Raises:
        ModelError: No model has that name; the message lists the names.
    """
    info = MODELS.get(name.strip())
    if info is None:
        raise ModelError(f"unknown model '{name}': use one of {', '.join(MODELS)}")
    return info


def is_model_name(value: str | Path | None) -> bool:
    """Whether a checkpoint setting names a registry model rather than a file."""
    return isinstance(value, str) and value.strip() in MODELS


def model_cache_dir(override: str | Path | None = None) -> Path:
    """The folder of the downloaded models.

    ``override`` when given, else ``$REAL2GYM_MODEL_CACHE``, else
    ``%LOCALAPPDATA%\\real2gym\\models`` on Windows and
    ``$XDG_CACHE_HOME/real2gym/models`` (``~/.cache/real2gym/models``) elsewhere.
    """
    if override:
        return Path(override).expanduser()
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
    else:
        base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "real2gym" / "models"


def cache_path(name: str, cache_dir: str | Path | None = None) -> Path:
    """Where a model's checkpoint is, or will be once downloaded.

    Args:
        name: A registry name (``sam2.1-tiny``).
        cache_dir: The cache folder; the default is :func:`model_cache_dir`'s.

    Raises:
        ModelError: No model has that name.
    """
    return model_cache_dir(cache_dir) / model_info(name).filename


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _file_sha256(path: Path, progress: Progress | None = None, what: str = "") -> str:
    digest = hashlib.sha256()
    total = max(path.stat().st_size, 1)
    done = 0
    with open(path, "rb") as f:
        while chunk := f.read(_CHUNK * 8):
            digest.update(chunk)
            done += len(chunk)
            if progress is not None:
                progress.step(f"checking {what}", 0.95 + 0.05 * done / total)
    return digest.hexdigest()


def _expected_sha256(info: ModelInfo, path: Path) -> str | None:
    if info.sha256:
        return info.sha256
    try:
        return _sidecar(path).read_text(encoding="utf-8").split()[0].lower()
    except (OSError, IndexError):
        return None


def _check_cached(info: ModelInfo, path: Path) -> None:
    """Raises ModelError if the cached file is not the expected one; remembers a good file."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key in _verified:
        return
    fetch = f"run 'real2gym models fetch {info.name}' to download it again"
    if info.size_bytes is not None and stat.st_size != info.size_bytes:
        raise ModelError(
            f"the cached {info.name} ({path}) is damaged: {stat.st_size} bytes instead of "
            f"{info.size_bytes}; {fetch}"
        )
    actual = _file_sha256(path)
    expected = _expected_sha256(info, path)
    if expected is None:  # trusted on first use, checked from now on (if the cache is writable)
        with contextlib.suppress(OSError):
            _write_sidecar(path, actual)
    elif actual != expected:
        raise ModelError(
            f"the cached {info.name} ({path}) is damaged: its SHA-256 is {actual[:12]}... "
            f"instead of {expected[:12]}...; {fetch}"
        )
    _verified[key] = actual


def _write_sidecar(path: Path, sha256: str) -> None:
    sidecar = _sidecar(path)
    tmp = sidecar.with_name(sidecar.name + ".tmp")
    tmp.write_text(f"{sha256}  {path.name}\n", encoding="utf-8")
    os.replace(tmp, sidecar)


def cached_model(name: str, cache_dir: str | Path | None = None) -> Path | None:
    """The downloaded checkpoint of a model, checked against its size and SHA-256.

    Args:
        name: A registry name (``sam2.1-tiny``).
        cache_dir: The cache folder; the default is :func:`model_cache_dir`'s.

    Returns:
        The file, or None when it is not downloaded.

    Raises:
        ModelError: The name is unknown, or the cached file is damaged (the
            message says to fetch it again).
    """
    info = model_info(name)
    path = cache_path(name, cache_dir)
    if not path.is_file():
        return None
    _check_cached(info, path)
    return path


def list_models(cache_dir: str | Path | None = None) -> list[CachedModel]:
    """Every registry model, where it is cached and whether it is there.

    Cheap (no checksum is computed), so user interfaces may call it on every redraw.

    Args:
        cache_dir: The cache folder; the default is :func:`model_cache_dir`'s.
    """
    folder = model_cache_dir(cache_dir)
    rows = []
    for info in MODELS.values():
        path = folder / info.filename
        try:
            size = path.stat().st_size if path.is_file() else None
        except OSError:
            size = None
        cached = size is not None and (info.size_bytes is None or size == info.size_bytes)
        rows.append(CachedModel(info, path, cached))
    return rows


def resolve_checkpoint(value: str | Path, config: str | None = None) -> tuple[Path, str | None]:
    """Turns a checkpoint setting, a file or a registry name, into a file and its config.

    Args:
        value: A checkpoint file, or a registry name such as ``sam2.1-tiny``.
        config: The config chosen with a file; a registry name brings its own.

    Returns:
        ``(checkpoint file, config)``: for a name, its cached file and config;
        for a file, the file and ``config`` unchanged.

    Raises:
        ModelError: The name's model is not downloaded yet (the message gives the
            command that downloads it), or its cached file is damaged.
    """
    if not is_model_name(value):
        return Path(value), config
    name = str(value).strip()
    path = cached_model(name)
    if path is None:
        raise ModelError(f"{name} is not downloaded yet: run 'real2gym models fetch {name}'")
    return path, MODELS[name].config


def _reason(error: BaseException) -> str:
    """The system's words for a network error (``Connection refused``, ``Name or service not known``)."""
    reason = getattr(error, "reason", None) or error
    if isinstance(reason, OSError) and reason.strerror:
        return reason.strerror
    return str(reason) or type(reason).__name__


class _BrokenOff(Exception):
    """The transfer ended early; what arrived is kept in the part file."""


def _content_range_start(value: str | None) -> int | None:
    """The first byte of a ``Content-Range: bytes START-END/TOTAL`` header."""
    if not value or not value.startswith("bytes "):
        return None
    start = value[len("bytes ") :].split("-", 1)[0]
    return int(start) if start.isdigit() else None


def _open_part(part: Path) -> BinaryIO:
    """Opens the part file for appending, locked so that a second download of it is refused."""
    f = open(part, "ab")
    if fcntl is not None:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.close()
            raise ModelError(f"another download into {part} is running; wait for it to end") from None
    return f


def _restart(f: BinaryIO) -> None:
    f.seek(0)
    f.truncate()


def _transfer(info: ModelInfo, url: str, f: BinaryIO, progress: Progress) -> None:
    """One HTTP request, appending to the part file from where it ends (or starting it over).

    Raises:
        _BrokenOff: The transfer ended early (worth resuming).
        ModelError: The server cannot be reached or refuses the file.
        Cancelled: The user cancelled (through ``progress``).
    """
    have = f.seek(0, os.SEEK_END)
    if info.size_bytes is not None and have > info.size_bytes:
        _restart(f)
        have = 0
    if info.size_bytes is not None and have == info.size_bytes:
        return
    request = urllib.request.Request(url, headers={"User-Agent": _USER_AGENT})
    if have:
        request.add_header("Range", f"bytes={have}-")
    host = urllib.parse.urlsplit(url).netloc
    try:
        response = urllib.request.urlopen(request, timeout=_TIMEOUT_S)
    except urllib.error.HTTPError as e:
        if e.code == 416 and have:  # the range lies beyond the server's file
            _restart(f)
            raise _BrokenOff(f"{host} cannot resume at byte {have}") from None
        raise ModelError(
            f"cannot download {info.name}: {host} answered HTTP {e.code} {e.reason} for {url}; "
            f"check the address (--base-url, ${BASE_URL_ENV}), or download the file yourself "
            "and pass --sam2-checkpoint PATH"
        ) from None
    except (urllib.error.URLError, OSError) as e:
        raise ModelError(
            f"cannot reach {host} to download {info.name}: {_reason(e)}; check the network, "
            f"or download {url} yourself and pass --sam2-checkpoint PATH"
        ) from None
    with response:
        start = _content_range_start(response.headers.get("Content-Range")) if response.status == 206 else 0
        if start != have:
            _restart(f)  # the server ignored the range (200 and the whole file) or sent another one
            if start != 0:
                raise _BrokenOff(f"{host} answered another range ({response.headers.get('Content-Range')})")
        done = start
        length = response.headers.get("Content-Length", "")
        body = int(length) if length.isdigit() else None
        total = info.size_bytes or (done + body if body is not None else None)
        while True:
            try:
                chunk = response.read(_CHUNK)
            except Exception as e:  # reset, timeout, IncompleteRead: keep what arrived
                raise _BrokenOff(_reason(e)) from None
            if not chunk:
                break
            f.write(chunk)
            done += len(chunk)
            shown = f"{done / _MB:.1f} of {total / _MB:.1f} MB" if total else f"{done / _MB:.1f} MB"
            progress.step(f"downloading {info.name}: {shown}", 0.95 * done / total if total else 0.0)
        f.flush()
    if (body is not None and done - start < body) or (total is not None and done < total):
        raise _BrokenOff(f"the connection closed after {done / _MB:.1f} MB")


def _transfer_with_retries(info: ModelInfo, url: str, f: BinaryIO, progress: Progress) -> None:
    """Runs :func:`_transfer`, resuming a transfer that broke off, up to :data:`_ATTEMPTS` tries."""
    for attempt in range(1, _ATTEMPTS + 1):
        try:
            _transfer(info, url, f, progress)
            return
        except _BrokenOff as e:
            if attempt == _ATTEMPTS:
                arrived = os.fstat(f.fileno()).st_size
                raise ModelError(
                    f"the download of {info.name} from {urllib.parse.urlsplit(url).netloc} broke off after "
                    f"{arrived / _MB:.1f} MB ({e}); run the same command again to resume it"
                ) from None


def _disk_full(info: ModelInfo, folder: Path, needed: int | None = None) -> ModelError:
    try:
        free = f"{shutil.disk_usage(folder).free / _MB:.0f} MB free"
    except OSError:
        free = "the disk is full"
    need = f"needs {needed / _MB:.0f} MB more, " if needed else ""
    return ModelError(
        f"no space left on device: {info.name} {need}{free} in {folder}; free some space, "
        f"or set {CACHE_ENV} to a folder on another disk"
    )


def _move_aside(path: Path) -> Path:
    """Renames a damaged cached file to ``<name>.damaged`` (``.damaged-2`` ... where that is taken), never
    deleting it: the cache folder may be the user's own, and the file theirs."""
    aside = path.with_name(path.name + ".damaged")
    number = 2
    while aside.exists():
        aside = path.with_name(f"{path.name}.damaged-{number}")
        number += 1
    path.rename(aside)
    return aside


def fetch_model(
    name: str,
    progress: Progress | None = None,
    base_url: str | None = None,
    cache_dir: str | Path | None = None,
) -> Path:
    """Downloads a model into the cache, resuming an earlier partial download; checks it.

    A model already in the cache and intact is not downloaded again (a damaged
    one is). The download goes to ``<file>.part``, which a later call resumes;
    only a complete file whose size and SHA-256 match is renamed into place.

    Args:
        name: A registry name (``sam2.1-tiny``).
        progress: Reports the download (fraction of bytes) and cancels it; a
            cancelled download keeps its part file for the next call.
        base_url: Where to download from instead of Meta's server (a mirror, a
            test server); ``$REAL2GYM_MODEL_BASE_URL`` when None. The file name
            is appended to it.
        cache_dir: The cache folder; the default is :func:`model_cache_dir`'s.

    Returns:
        The checkpoint file in the cache.

    Raises:
        ModelError: Unknown name, server unreachable or refusing, a corrupt
            download (removed), a full disk; one line saying what to do.
        Cancelled: ``progress`` was cancelled.
    """
    info = model_info(name)
    progress = progress or Progress()
    url = info.url_from(base_url or os.environ.get(BASE_URL_ENV) or None)
    host = urllib.parse.urlsplit(url).netloc
    folder = model_cache_dir(cache_dir)
    path = folder / info.filename
    if path.is_file():
        try:
            _check_cached(info, path)
        except ModelError:
            _move_aside(path)  # damaged: download it again, keeping the old file beside it
        else:
            progress.step(f"{info.name} is already downloaded", 1.0)
            return path
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ModelError(
            f"cannot create the model cache {folder}: {e.strerror}; set {CACHE_ENV} to a writable folder"
        ) from None
    part = path.with_name(path.name + ".part")
    have = part.stat().st_size if part.is_file() else 0
    if info.size_bytes is not None:
        try:
            needed = info.size_bytes - have
            if shutil.disk_usage(folder).free < needed:
                raise _disk_full(info, folder, needed)
        except OSError:
            pass
    progress.step(f"downloading {info.name} from {host}", 0.0)
    try:
        with _open_part(part) as f:
            try:
                _transfer_with_retries(info, url, f, progress)
            finally:
                if not os.fstat(f.fileno()).st_size:
                    with contextlib.suppress(OSError):
                        part.unlink()  # nothing arrived: leave nothing behind
    except OSError as e:
        if e.errno in DISK_FULL_ERRNOS:
            raise _disk_full(info, folder) from None
        raise
    size = part.stat().st_size
    if info.size_bytes is not None and size != info.size_bytes:
        part.unlink()
        raise ModelError(
            f"the download of {info.name} from {host} is {size} bytes instead of {info.size_bytes}; "
            "it was removed: run the same command again, or check the mirror"
        )
    actual = _file_sha256(part, progress, info.name)
    expected = _expected_sha256(info, path)
    if expected is not None and actual != expected:
        part.unlink()
        raise ModelError(
            f"the download of {info.name} from {host} is corrupt: its SHA-256 is {actual[:12]}... "
            f"instead of {expected[:12]}...; it was removed: run the same command again, or check the mirror"
        )
    os.replace(part, path)
    _write_sidecar(path, actual)
    stat = path.stat()
    _verified[(str(path), stat.st_size, stat.st_mtime_ns)] = actual
    progress.step(f"downloaded {info.name}", 1.0)
    return path

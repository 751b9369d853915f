"""Downloading SAM2 checkpoints by name: cache, resume, checks and messages, against a local server.

No internet: a small HTTP server on 127.0.0.1 serves a fake 300 kB "checkpoint";
the registry entry of ``sam2.1-tiny`` is pointed at its size and SHA-256, and the
download chunk is made small so that the file comes in many pieces, as a real one does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import importlib.util
import os
import socket
import threading
from pathlib import Path

import pytest

from real2gym_addon import models
from real2gym_addon.cli import main
from real2gym_addon.errors import Cancelled
from real2gym_addon.models import ModelError, cached_model, fetch_model, list_models, resolve_checkpoint
from real2gym_addon.progress import Progress
from real2gym_addon.segmentation import sam2_backend

DATA = bytes(range(256)) * 1200  # 307,200 bytes
FILENAME = "sam2.1_hiera_tiny.pt"


class _Handler(http.server.BaseHTTPRequestHandler):
    """Serves ``DATA`` as ``/mirror/sam2.1_hiera_tiny.pt``, with ``Range`` unless told not to."""

    def do_GET(self) -> None:
        server = self.server
        record = {"range": self.headers.get("Range"), "sent": 0}
        server.requests.append(record)
        if self.path != f"/mirror/{FILENAME}":
            self.send_error(404)
            return
        start = 0
        if record["range"] and server.honour_range:
            start = int(record["range"].removeprefix("bytes=").split("-")[0])
        body = DATA[start:]
        self.send_response(206 if start else 200)
        if start:
            self.send_header("Content-Range", f"bytes {start}-{len(DATA) - 1}/{len(DATA)}")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if server.fail_after is not None:  # send part of the body, then close the connection
            body, server.fail_after = body[: server.fail_after], None
            self.close_connection = True
        record["sent"] = len(body)
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def server():
    """The local server: ``.url``, ``.requests`` (Range header and bytes sent), ``.honour_range``, ``.fail_after``."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.requests, httpd.honour_range, httpd.fail_after = [], True, None
    httpd.url = f"http://127.0.0.1:{httpd.server_address[1]}/mirror"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch) -> Path:
    """An empty model cache, a registry entry that fits ``DATA``, small download chunks."""
    folder = tmp_path / "models"
    monkeypatch.setenv("REAL2GYM_MODEL_CACHE", str(folder))
    monkeypatch.delenv("REAL2GYM_MODEL_BASE_URL", raising=False)
    info = dataclasses.replace(
        models.MODELS["sam2.1-tiny"], size_bytes=len(DATA), sha256=hashlib.sha256(DATA).hexdigest()
    )
    monkeypatch.setitem(models.MODELS, "sam2.1-tiny", info)
    monkeypatch.setattr(models, "_verified", {})
    monkeypatch.setattr(models, "_CHUNK", 16 * 1024)
    return folder


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_registry_names_the_official_sam2_1_files() -> None:
    assert list(models.MODELS) == ["sam2.1-tiny", "sam2.1-small", "sam2.1-base-plus", "sam2.1-large"]
    large = models.MODELS["sam2.1-large"]
    assert large.url == "https://dl.fbaipublicfiles.com/segment_anything_2/092824/sam2.1_hiera_large.pt"
    assert sam2_backend.config_name(large.config) == "configs/sam2.1/sam2.1_hiera_l.yaml"
    assert all(len(m.sha256) == 64 for m in models.MODELS.values() if m.name != "sam2.1-tiny")


def test_fetch_lands_in_the_cache_with_progress(server, cache: Path) -> None:
    updates = []
    path = fetch_model("sam2.1-tiny", Progress(lambda m, f: updates.append((m, f))), base_url=server.url)
    assert path == cache / FILENAME and path.read_bytes() == DATA
    assert sorted(p.name for p in cache.iterdir()) == [FILENAME, FILENAME + ".sha256"]
    fractions = [f for _, f in updates]
    assert fractions == sorted(fractions) and fractions[-1] == 1.0 and len(fractions) > 10
    assert any("downloading sam2.1-tiny: 0.3 of 0.3 MB" in m for m, _ in updates)
    assert server.requests == [{"range": None, "sent": len(DATA)}]
    assert fetch_model("sam2.1-tiny", base_url=server.url) == path  # cached: no second request
    assert len(server.requests) == 1


def test_an_interrupted_download_resumes_from_the_part_file(server, cache: Path, monkeypatch) -> None:
    monkeypatch.setattr(models, "_ATTEMPTS", 1)
    server.fail_after = 100_000
    with pytest.raises(ModelError, match=r"broke off after 0\.1 MB .*run the same command again to resume"):
        fetch_model("sam2.1-tiny", base_url=server.url)
    assert (cache / (FILENAME + ".part")).stat().st_size == 100_000
    assert not (cache / FILENAME).exists()
    assert fetch_model("sam2.1-tiny", base_url=server.url).read_bytes() == DATA
    assert server.requests[1] == {"range": "bytes=100000-", "sent": len(DATA) - 100_000}


def test_a_connection_that_breaks_off_is_resumed_in_the_same_fetch(server) -> None:
    server.fail_after = 70_000
    assert fetch_model("sam2.1-tiny", base_url=server.url).read_bytes() == DATA
    assert [r["range"] for r in server.requests] == [None, "bytes=70000-"]


def test_a_server_that_ignores_range_still_gives_the_right_file(server, cache: Path) -> None:
    cache.mkdir()
    (cache / (FILENAME + ".part")).write_bytes(b"x" * 50_000)  # not even the right bytes
    server.honour_range = False
    assert fetch_model("sam2.1-tiny", base_url=server.url).read_bytes() == DATA
    assert server.requests == [{"range": "bytes=50000-", "sent": len(DATA)}]


def test_a_checksum_mismatch_is_refused_and_leaves_no_file(server, cache: Path, monkeypatch) -> None:
    wrong = dataclasses.replace(models.MODELS["sam2.1-tiny"], sha256="0" * 64)
    monkeypatch.setitem(models.MODELS, "sam2.1-tiny", wrong)
    with pytest.raises(
        ModelError, match=r"is corrupt: its SHA-256 is [0-9a-f]{12}\.\.\. instead of 000000000000"
    ):
        fetch_model("sam2.1-tiny", base_url=server.url)
    assert list(cache.iterdir()) == []


def test_connection_refused_gives_one_clear_line(cache: Path) -> None:
    port = _closed_port()
    with pytest.raises(ModelError) as error:
        fetch_model("sam2.1-tiny", base_url=f"http://127.0.0.1:{port}")
    assert str(error.value) == (
        f"cannot reach 127.0.0.1:{port} to download sam2.1-tiny: Connection refused; check the network, "
        f"or download http://127.0.0.1:{port}/{FILENAME} yourself and pass --sam2-checkpoint PATH"
    )
    assert not cache.exists() or list(cache.iterdir()) == []


def test_a_missing_file_on_the_server_names_the_http_error(server) -> None:
    gone = server.url.replace("/mirror", "/gone")
    with pytest.raises(
        ModelError, match=rf"answered HTTP 404 Not Found for {gone}/{FILENAME}; check the address"
    ):
        fetch_model("sam2.1-tiny", base_url=gone)


def test_an_unknown_name_lists_the_names() -> None:
    with pytest.raises(ModelError) as error:
        fetch_model("sam2-huge")
    assert str(error.value) == (
        "unknown model 'sam2-huge': use one of sam2.1-tiny, sam2.1-small, sam2.1-base-plus, sam2.1-large"
    )


def test_resolve_checkpoint_uses_the_cache_for_names(server, tmp_path: Path) -> None:
    with pytest.raises(ModelError) as error:
        resolve_checkpoint("sam2.1-tiny")
    assert str(error.value) == "sam2.1-tiny is not downloaded yet: run 'real2gym models fetch sam2.1-tiny'"
    path = fetch_model("sam2.1-tiny", base_url=server.url)
    assert resolve_checkpoint("sam2.1-tiny", "sam2.1_hiera_l") == (path, "sam2.1_hiera_t")
    assert resolve_checkpoint(str(tmp_path / "mine.pt"), "sam2.1_hiera_s") == (
        tmp_path / "mine.pt",
        "sam2.1_hiera_s",
    )


def test_without_a_known_checksum_the_first_download_is_recorded_and_checked(
    server, cache, monkeypatch
) -> None:
    unknown = dataclasses.replace(models.MODELS["sam2.1-tiny"], sha256=None)
    monkeypatch.setitem(models.MODELS, "sam2.1-tiny", unknown)
    path = fetch_model("sam2.1-tiny", base_url=server.url)
    sidecar = cache / (FILENAME + ".sha256")
    assert sidecar.read_text() == f"{hashlib.sha256(DATA).hexdigest()}  {FILENAME}\n"
    damaged = bytearray(DATA)
    damaged[1000] ^= 0xFF
    path.write_bytes(bytes(damaged))
    os.utime(path, ns=(0, 10**9))
    with pytest.raises(
        ModelError, match=r"cached sam2\.1-tiny .* is damaged: its SHA-256 .*models fetch sam2\.1-tiny"
    ):
        cached_model("sam2.1-tiny")
    assert fetch_model("sam2.1-tiny", base_url=server.url).read_bytes() == DATA  # downloaded again
    assert (cache / (FILENAME + ".damaged")).read_bytes() == bytes(damaged)  # the damaged one kept aside


def test_cancelling_leaves_only_the_part_file(server, cache: Path) -> None:
    def cancel_after_some_bytes(message: str, fraction: float) -> None:
        if fraction > 0.2:
            progress.cancel()

    progress = Progress(cancel_after_some_bytes)
    with pytest.raises(Cancelled):
        fetch_model("sam2.1-tiny", progress, base_url=server.url)
    assert [p.name for p in cache.iterdir()] == [FILENAME + ".part"]
    assert 0 < (cache / (FILENAME + ".part")).stat().st_size < len(DATA)


def test_cli_fetches_and_lists(server, cache: Path, capsys) -> None:
    assert main(["models", "fetch", "sam2.1-tiny", "--base-url", server.url, "-q"]) == 0
    assert capsys.readouterr().out == f"sam2.1-tiny: {cache / FILENAME}\n"
    assert main(["models", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["sam2.1-tiny", "0", "MB", "cached", str(cache / FILENAME)]
    assert all("not downloaded" in line for line in lines[1:]) and len(lines) == 4
    assert [row.cached for row in list_models()] == [True, False, False, False]


def test_cli_names_an_unreachable_server_in_one_line(capsys) -> None:
    assert (
        main(["models", "fetch", "sam2.1-tiny", "--base-url", f"http://127.0.0.1:{_closed_port()}", "-q"])
        == 2
    )
    err = capsys.readouterr().err
    assert err.startswith("real2gym: error: cannot reach 127.0.0.1:") and err.count("\n") == 1


def test_sam2_backend_takes_a_model_name(server, monkeypatch) -> None:
    monkeypatch.setattr(sam2_backend, "_probe_imports", lambda: (True, "SAM2 (test)"))
    assert sam2_backend.sam2_status("sam2.1-tiny", "sam2.1_hiera_l") == (
        False,
        "sam2.1-tiny is not downloaded yet: run 'real2gym models fetch sam2.1-tiny'",
    )
    if importlib.util.find_spec("sam2") is None:
        return
    fetch_model("sam2.1-tiny", base_url=server.url)
    available, reason = sam2_backend.sam2_status("sam2.1-tiny", "sam2.1_hiera_l")
    assert available and reason.endswith("config configs/sam2.1/sam2.1_hiera_t.yaml"), reason

"""The whole job on the bundled demo, as the README's demo command runs it (without bpy)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import cv2
import numpy as np
import pytest

from real2gym.real2gym_addon.cli import main
from real2gym.real2gym_addon.truth import load_truth

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "examples" / "block_in_cup"


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("run") / "out"
    assert main(["run", str(DEMO), "--out", str(out), "--no-blend", "-q"]) == 0
    return out


def test_the_demo_is_verified_from_its_reconstruction(finished_run: Path) -> None:
    report = json.loads((finished_run / "report.json").read_text())
    assert report["verification"]["passed"], report["verification"]["checks"]
    assert report["segmentation"]["backend"] == "classical"
    assert {o["name"]: o["shape"] for o in report["objects"]} == {"block": "box", "cup": "cup"}
    assert [k["event"] for k in report["keyframes"]] == ["grasp", "lift", "release", "contact"]
    for name in ("task_success", "grasp_held", "support", "stability", "penetration", "trajectory_fidelity"):
        assert set(report["verification"]["checks"][name]) - {"passed"}, f"{name} has no figures"
    assert (finished_run / report["artifacts"]["mjcf"]).is_file()
    assert len(list((finished_run / "masks" / "block").glob("*.png"))) == 150
    # Contract fields of every object frame.
    frame = report["objects"][0]["frames"][10]
    assert {"frame", "position_cam", "quaternion_cam", "visible"} <= set(frame)
    assert abs(np.linalg.norm(report["table"]["normal_cam"]) - 1) < 1e-6


def test_the_run_writes_a_self_contained_summary(finished_run: Path) -> None:
    """summary.html opens offline: every picture inlined, the verdict, each check with its figures and what it
    needs, a keyframe row per interaction keyframe, the error plot, the frames to review, warnings, edit log."""
    import re

    report = json.loads((finished_run / "report.json").read_text())
    assert report["artifacts"]["summary"] == "summary.html"
    page = (finished_run / "summary.html").read_text()
    assert "VERIFIED" in page and "NOT VERIFIED" not in page
    sources = re.findall(r"src='([^']*)'", page)
    assert sources and all(s.startswith("data:image/png;base64,") for s in sources)
    assert "http://" not in page and "https://" not in page
    for name in report["verification"]["checks"]:
        assert f"<td>{name}</td>" in page
    assert "rms_m.carried=" in page and "held penetration at most 2 mm" in page
    for keyframe in report["keyframes"]:
        assert f"{keyframe['event']} of {keyframe['object']}, frame {keyframe['frame']}" in page
    assert "Error over time" in page and "Edit log (0)" in page and "Warnings (" in page
    flagged = sum(1 for o in report["segmentation"]["objects"] for f in o["frames"] if f.get("review"))
    assert ("frames to review (0)" in page) == (flagged == 0)


def test_verify_again_after_an_edit(finished_run: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(finished_run, tmp_path / "edited"))
    report = json.loads((out / "report.json").read_text())
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    cup["collision_mode"] = "hull"  # an artist's mistake: one convex hull closes the cup
    (out / "report.json").write_text(json.dumps(report))
    assert main(["verify", str(out)]) == 1
    checks = json.loads((out / "report.json").read_text())["verification"]["checks"]
    assert not checks["task_success"]["passed"]
    page = (out / "summary.html").read_text()
    assert "NOT VERIFIED" in page and "Failed: <b>task_success, trajectory_fidelity</b>" in page


def test_friction_reaches_the_mjcf_and_stays_in_the_report(
    finished_run: Path, tmp_path: Path, capsys
) -> None:
    """A run records the friction it verified with; an edit in report.json or --friction changes the
    next verification's MJCF, where the object's friction rules its contacts with the table."""
    import mujoco

    out = Path(shutil.copytree(finished_run, tmp_path / "friction"))
    report = json.loads((out / "report.json").read_text())
    assert {o["name"]: o["friction"] for o in report["objects"]} == {"block": 1.0, "cup": 1.0}
    cup = next(o for o in report["objects"] if o["name"] == "cup")
    cup["friction"] = 0.35
    (out / "report.json").write_text(json.dumps(report))
    assert main(["verify", str(out), "--friction", "block=0.6"]) == 0
    report = json.loads((out / "report.json").read_text())
    assert {o["name"]: o["friction"] for o in report["objects"]} == {"block": 0.6, "cup": 0.35}
    model = mujoco.MjModel.from_xml_path(str(out / report["artifacts"]["mjcf"]))
    for name, friction in (("block", 0.6), ("cup", 0.35)):
        body = model.body(report["verification"]["name_map"][name]).id
        collision = [g for g in range(model.ngeom) if model.geom_bodyid[g] == body and model.geom_contype[g]]
        assert collision and all(model.geom_friction[g][0] == pytest.approx(friction) for g in collision)
        assert all(model.geom_priority[g] > model.geom_priority[model.geom("table").id] for g in collision)
    pads = [model.geom(f"finger_{side}_pad").id for side in ("left", "right")]
    assert all(model.geom_priority[p] > model.geom_priority[collision[0]] for p in pads)
    # The cup standing on the table touches it with the cup's friction, not the table's 1.
    data = mujoco.MjData(model)
    mujoco.mj_forward(model, data)
    mujoco.mj_step(model, data, 50)
    cup_body = model.body(report["verification"]["name_map"]["cup"]).id
    table = model.geom("table").id
    frictions = [data.contact.friction[i][0] for i in range(data.ncon)
                 if table in data.contact.geom[i] and cup_body in model.geom_bodyid[data.contact.geom[i]]]  # fmt: skip
    assert frictions and all(f == pytest.approx(0.35) for f in frictions)
    # A friction out of range in the report is named, with its object.
    report["objects"][0]["friction"] = -1
    (out / "report.json").write_text(json.dumps(report))
    capsys.readouterr()
    assert main(["verify", str(out)]) == 2
    assert "object 'block': friction must be a number from 0.01 to 5" in capsys.readouterr().err


def test_compare_renders_aligned_panels(finished_run: Path, tmp_path: Path) -> None:
    out = Path(shutil.copytree(finished_run, tmp_path / "compare"))
    assert main(["compare", str(out), "-q"]) == 0
    report = json.loads((out / "report.json").read_text())
    for key in ("comparison_video", "contact_sheet", "error_plot"):
        assert (out / report["artifacts"][key]).is_file()
    assert (
        "<video controls preload=metadata src='compare/comparison.mp4'>" in (out / "summary.html").read_text()
    )
    capture = cv2.VideoCapture(str(out / report["artifacts"]["comparison_video"]))
    assert int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) == 150
    ok, first = capture.read()
    capture.release()
    assert ok and first.shape == (240 + 26, 960, 3)
    # The simulation panel lines up with the video: the cup's truth mask covers its blue pixels.
    truth = load_truth(DEMO).objects["cup"].frames[0].mask()
    panel = cv2.resize(first[:240, 640:960], (640, 480), interpolation=cv2.INTER_NEAREST)
    hsv = cv2.cvtColor(panel, cv2.COLOR_BGR2HSV)
    blue = (hsv[..., 0] > 100) & (hsv[..., 0] < 130) & (hsv[..., 1] > 120) & (hsv[..., 2] > 40)
    inside = (blue & truth).sum() / max(blue.sum(), 1)
    assert blue.sum() > 500 and inside > 0.8, (blue.sum(), inside)


def test_error_plot_is_drawn_with_opencv(tmp_path: Path) -> None:
    """The error plot needs no plotting library (Blender's Python has none): each object's line is drawn in
    its colour, a keyframe as a dotted grey vertical at its frame, and the rising line ends higher than it
    starts."""
    from real2gym.real2gym_addon.render import _PLOT_COLOURS, error_plot

    errors = {"block": np.linspace(0, 0.02, 150), "cup": np.full(150, 0.001)}
    error_plot(tmp_path / "errors.png", errors, [{"frame": 52, "event": "grasp"}], 30.0)
    image = cv2.imread(str(tmp_path / "errors.png"))
    assert image.shape == (320, 800, 3)
    block = np.all(np.abs(image.astype(int) - _PLOT_COLOURS[0]) < 30, axis=2)
    ys, xs = np.nonzero(block[:, 60:])
    assert len(xs) > 300
    # Image rows grow downwards: the block's line at its right end is higher than at its left.
    assert ys[xs > xs.max() - 20].mean() < ys[xs < xs.min() + 20].mean() - 100
    cup = np.all(np.abs(image.astype(int) - _PLOT_COLOURS[1]) < 30, axis=2)
    assert cup[:, 60:].sum() > 300
    # The keyframe: grey pixels in a column about a third of the way across the plot area.
    x = 56 + round(52 * (800 - 56 - 16) / 149)
    grey = np.all(np.abs(image[40:270, x - 1 : x + 2].astype(int) - 150) < 20, axis=2)
    assert grey.sum() > 20


def test_view_replays_the_demo_in_mujocos_viewer(finished_run: Path, tmp_path: Path) -> None:
    """real2gym view opens MuJoCo's passive viewer from the video camera and replays the simulated demo from
    scene.xml's keys; under Xvfb a screenshot of the X screen shows the scene mid-carry."""
    import subprocess
    import sys

    for tool in ("xvfb-run", "xwd", "convert"):
        assert shutil.which(tool), f"{tool} is missing: tools/setup_env.sh ensure_system installs it"
    # A screenshot a second from 3 s on: on a busy machine the window may take a few seconds to draw.
    script = (
        f"{sys.executable} -m real2gym_addon view {finished_run} --seconds 12 > {tmp_path}/view.log 2>&1 & "
        f"sleep 2; for i in 1 2 3 4 5 6 7 8; do sleep 1; xwd -root -silent | convert xwd:- {tmp_path}/shot_$i.png; "
        "done; wait $!"
    )
    result = subprocess.run(["xvfb-run", "-a", "-s", "-screen 0 1280x800x24", "bash", "-c", script],
                            cwd=REPO_ROOT, capture_output=True, text=True, timeout=180)  # fmt: skip
    log = (tmp_path / "view.log").read_text()
    assert result.returncode == 0, log + result.stderr
    assert "replayed" in log and int(log.split("replayed ")[1].split()[0]) > 60
    shots = [cv2.imread(str(p)) for p in sorted(tmp_path.glob("shot_*.png"))]
    assert shots and all(s is not None and s.shape[:2] == (800, 1280) for s in shots)
    shot = tmp_path / "viewer.png"
    drawn = max(shots, key=lambda s: s[:400, :600].std())
    cv2.imwrite(str(shot), drawn)
    assert drawn[:400, :600].std() > 20, "the viewer's window stayed blank for 10 s"
    output = REPO_ROOT / "test-output"
    output.mkdir(exist_ok=True)
    shutil.copy(shot, output / "viewer.png")


def test_view_without_a_display_says_so(finished_run: Path, monkeypatch, capsys) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    assert main(["view", str(finished_run), "--seconds", "1"]) == 2
    assert "no display to open MuJoCo's viewer on" in capsys.readouterr().err

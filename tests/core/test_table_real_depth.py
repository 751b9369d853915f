"""The table fit and the camera motion on depth as real stereo cameras give it.

Hand-made numpy scenes (not the project's generator): a table seen by a tilted
camera with noise growing with the square of the distance, invalid patches,
far outliers and mixed pixels at an object's edge; a textured table seen from
two known camera poses. And, where ../shared/real_footage is beside the
checkout, the head-mounted ZED clip c4_pour01.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from real2gym.real2gym_addon.demo import Camera
from real2gym.real2gym_addon.geometry.camera import invert
from real2gym.real2gym_addon.geometry.camera_motion import (
    camera_moves,
    estimate_camera_motion,
    relative_motion,
    rotation_degrees,
)
from real2gym.real2gym_addon.geometry.depth_clean import clean_depth
from real2gym.real2gym_addon.geometry.mask_growth import grow_in_depth
from real2gym.real2gym_addon.geometry.stage import _DepthReader
from real2gym.real2gym_addon.geometry.table import (
    GeometryError,
    fit_table,
    fit_table_frames,
    given_table_readings,
)

CAMERA = Camera(width=640, height=480, fx=500.0, fy=500.0, cx=320.0, cy=240.0)
NOISE_1M = 0.01  # stereo-like: 6.4 mm at 0.8 m
C4 = Path(__file__).resolve().parents[3] / "shared" / "real_footage" / "c4_pour01"


def world_from_camera(height: float, tilt_deg: float, yaw_deg: float = 0.0, shift=(0.0, 0.0)) -> np.ndarray:
    """A camera ``height`` m above the table z = 0, tilted ``tilt_deg`` from looking straight down."""
    down = np.array([[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, -1.0]])  # columns: camera x, y, z
    rotation = Rotation.from_euler("zx", [yaw_deg, tilt_deg], degrees=True).as_matrix() @ down
    pose = np.eye(4)
    pose[:3, :3], pose[:3, 3] = rotation, [shift[0], shift[1], height]
    return pose


def table_hits(pose: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per pixel: z-depth (m, 0 where the ray misses the table) and the world xy of the hit."""
    v, u = np.mgrid[0 : CAMERA.height, 0 : CAMERA.width].astype(float)
    rays = np.stack([(u - CAMERA.cx) / CAMERA.fx, (v - CAMERA.cy) / CAMERA.fy, np.ones_like(u)], axis=-1)
    world_rays = rays @ pose[:3, :3].T
    depth = np.where(world_rays[..., 2] < -1e-6, -pose[2, 3] / np.minimum(world_rays[..., 2], -1e-6), 0.0)
    xy = pose[:2, 3] + world_rays[..., :2] * depth[..., None]
    return depth, xy


def noisy(depth: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Stereo-like noise: sigma = NOISE_1M * z**2, smoothed a little as a stereo matcher does."""
    noise = cv2.GaussianBlur(rng.normal(size=depth.shape), (0, 0), 1.0)
    noise /= noise.std()
    return np.where(depth > 0, depth + NOISE_1M * depth**2 * noise, 0.0).astype(np.float32)


def stereo_like_frame(
    pose: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A noisy table with an object, 25 % invalid patches, far outliers and mixed pixels.

    Returns:
        The depth (m), the object's mask and the mask of the mixed pixels.
    """
    depth, _ = table_hits(pose)
    box = (slice(200, 290), slice(260, 380))
    obj = np.zeros(depth.shape, bool)
    obj[box] = True
    table_depth = depth.copy()
    depth[box] = 0.85 * depth[box]  # the object's face, nearer than the table behind it
    depth = noisy(depth, rng)
    ring = (cv2.dilate(obj.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0) & ~obj
    depth[ring] = 0.5 * (0.85 * table_depth[ring] + table_depth[ring])  # between object and table
    invalid = np.zeros(depth.shape, bool)
    while invalid.mean() < 0.25:
        r, c = rng.integers(0, 440), rng.integers(0, 600)
        invalid[r : r + rng.integers(8, 40), c : c + rng.integers(8, 40)] = True
    depth[invalid & ~ring] = 0.0
    depth[rng.random(depth.shape) < 0.002] = np.nan
    depth[rng.random(depth.shape) < 0.002] = 15.0
    return depth, obj, ring & (depth > 0)


def plane_error(normal: np.ndarray, offset: float, pose: np.ndarray) -> tuple[float, float]:
    """Degrees and metres between a fitted camera-frame plane and the true table of ``pose``."""
    camera_from_world = invert(pose)
    true_normal = camera_from_world[:3, 2]
    true_offset = -float(true_normal @ camera_from_world[:3, 3])
    angle = np.degrees(np.arccos(np.clip(normal @ true_normal, -1.0, 1.0)))
    return float(angle), abs(offset - true_offset)


def test_clean_depth_drops_invalid_far_and_mixed_pixels() -> None:
    rng = np.random.default_rng(1)
    depth, obj, mixed = stereo_like_frame(world_from_camera(0.5, 50.0), rng)
    clean = clean_depth(depth)
    assert clean.dtype == np.float32 and np.isfinite(clean).all()
    assert clean.max() < 8.0 and (clean > 0).sum() > 0.6 * clean.size
    assert mixed.sum() > 300 and (clean[mixed] > 0).mean() < 0.02  # the flying pixels are gone
    inside = cv2.erode(obj.astype(np.uint8), np.ones((7, 7), np.uint8)) > 0
    inside &= cv2.erode((depth > 0).astype(np.uint8), np.ones((3, 3), np.uint8)) > 0  # not at a hole
    assert (clean[inside] > 0).mean() > 0.98  # noise alone does not make a discontinuity


def test_a_window_of_the_depth_is_cleaned_as_the_whole_frame_is_there() -> None:
    """The joint fit cleans only the part's box (stage.CLEAN_REACH round it): the same readings must survive."""

    class Frames(_DepthReader):
        def __call__(self, frame: int) -> np.ndarray:
            return depth

    rng = np.random.default_rng(3)
    depth, obj, _ = stereo_like_frame(world_from_camera(0.5, 50.0), rng)
    whole = clean_depth(depth, 0.002)
    reader = Frames(None)
    rows, cols = np.flatnonzero(obj.any(axis=1)), np.flatnonzero(obj.any(axis=0))
    boxes = [
        (cols[0], rows[0], cols[-1] + 1, rows[-1] + 1),
        (0, 0, 50, 30),
        (590, 470, 640, 480),
        (0, 0, 640, 480),
    ]
    for _ in range(20):
        x0, y0 = int(rng.integers(0, 600)), int(rng.integers(0, 440))
        boxes.append((x0, y0, x0 + int(rng.integers(1, 200)), y0 + int(rng.integers(1, 200))))
    for x0, y0, x1, y1 in boxes:
        box = (int(x0), int(y0), min(int(x1), 640), min(int(y1), 480))
        window = reader.clean(0, 0.002, box)
        x0, y0, x1, y1 = box
        assert np.array_equal(window[y0:y1, x0:x1], whole[y0:y1, x0:x1]), box
        window[y0:y1, x0:x1] = 0.0
        assert not window.any(), box


@pytest.mark.parametrize("tilt", [35.0, 55.0])
def test_noisy_tilted_table_is_found_on_each_frame_in_its_own_camera(tilt: float) -> None:
    rng = np.random.default_rng(2)
    poses = [world_from_camera(0.5, tilt), world_from_camera(0.47, tilt + 4.0, 3.0, (0.03, -0.02))]
    frames = [stereo_like_frame(pose, rng) for pose in poses]
    masks = [cv2.dilate(obj.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0 for _, obj, _ in frames]
    fit = fit_table_frames(CAMERA, [d for d, _, _ in frames], masks, frames=[0, 7])
    assert [p.frame for p in fit.planes] == [0, 7] and fit.reference_frame == 0
    for plane, pose in zip(fit.planes, poses, strict=True):
        angle, offset = plane_error(plane.normal_cam, plane.offset_cam, pose)
        assert angle < 1.0 and offset < 0.01, (plane, angle, offset)
        assert plane.inlier_share > 0.8
        # The noise across the plane is the depth noise times the cosine of the view angle.
        assert 0.3 * NOISE_1M < plane.noise_1m < 1.2 * NOISE_1M
    angle, offset = plane_error(fit.table.normal_cam, fit.table.offset_cam, poses[0])
    assert angle < 1.0 and offset < 0.01
    assert fit.world_from_camera[2, 3] == pytest.approx(0.5, abs=0.01)
    table, pose = fit_table(CAMERA, [d for d, _, _ in frames], masks)  # the old signature still works
    assert pose.shape == (4, 4) and table.offset_cam == pytest.approx(fit.table.offset_cam)


def test_a_given_pose_still_measures_the_depth_noise_and_quantised_rows_do_not_grow_into_a_mask() -> None:
    # A stereo camera's disparity steps: a table 1.1 m away read in ~2 cm steps, whole rows of it 1 cm
    # above the true plane. With the pose given, the table is not fitted; its noise must still be measured.
    pose = world_from_camera(0.9, 35.0)
    depth, _ = table_hits(pose)
    box = (slice(200, 290), slice(280, 360))
    obj = np.zeros(depth.shape, bool)
    obj[box] = True
    depth[box] = 0.9 * depth[box]
    baseline, steps = 0.12, 1  # whole-pixel disparity steps
    disparity = np.round(CAMERA.fx * baseline / np.maximum(depth, 1e-6) * steps) / steps
    quantised = np.where(depth > 0, CAMERA.fx * baseline / disparity, 0.0).astype(np.float32)
    mask = cv2.dilate(obj.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    given, extent = given_table_readings(CAMERA, [quantised], [mask], [pose])
    fitted_table = fit_table_frames(CAMERA, [quantised], [mask])
    fitted = fitted_table.planes[0].noise_1m
    # The seen table top's extent: where its true readings outside the object fall, world x and y.
    v, u = np.nonzero((depth > 0) & ~mask)
    seen = np.c_[
        (u - CAMERA.cx) / CAMERA.fx * depth[v, u], (v - CAMERA.cy) / CAMERA.fy * depth[v, u], depth[v, u]
    ]
    seen = seen @ pose[:3, :3].T + pose[:3, 3]
    truth = np.r_[np.percentile(seen[:, :2], 1, axis=0), np.percentile(seen[:, :2], 99, axis=0)]
    assert np.allclose(extent, truth, atol=0.03), (extent, truth)
    assert given > 0.002 and given == pytest.approx(fitted, rel=0.25), (given, fitted)
    rays = np.stack(np.meshgrid((np.arange(CAMERA.width) - CAMERA.cx) / CAMERA.fx,
                                (np.arange(CAMERA.height) - CAMERA.cy) / CAMERA.fy) + [np.ones(depth.shape)], -1)  # fmt: skip
    heights = quantised * (rays @ pose[2, :3]) + pose[2, 3]
    assert ((heights > 0.006) & ~mask).sum() > 1000  # table rows the steps lift past the 6 mm rise
    grown = grow_in_depth(obj, quantised, CAMERA, pose, noise_1m=given)
    assert (grown & ~mask).sum() < 0.02 * obj.sum(), (grown & ~mask).sum()


def test_no_plane_gives_the_figures_and_what_to_do() -> None:
    rng = np.random.default_rng(3)
    clutter = cv2.resize(rng.uniform(0.4, 2.0, (12, 16)), (640, 480), interpolation=cv2.INTER_NEAREST)
    clutter = (clutter + rng.normal(0.0, 0.005, clutter.shape)).astype(np.float32)
    no_objects = np.zeros(clutter.shape, bool)
    with pytest.raises(GeometryError) as error:
        fit_table_frames(CAMERA, [clutter, clutter], [no_objects, no_objects], frames=[0, 5])
    message = str(error.value)
    assert "no table plane found on frames 0, 5" in message
    assert "cm at 1 m" in message and "of the pixels have a usable reading" in message
    # Either figure says why: the residuals never settled (no flat surface), or the best plane holds too little.
    assert "no flat surface" in message or "(at least 25% needed)" in message
    assert "world_from_camera" in message and "depth_scale" in message
    with pytest.raises(GeometryError, match="depth readings on frames"):
        fit_table_frames(CAMERA, [np.zeros_like(clutter)], [no_objects])


def textured_view(
    pose: np.ndarray, texture: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """RGB and noisy depth of a table whose top carries ``texture`` (1 px = 1 mm, centred on the origin)."""
    depth, xy = table_hits(pose)
    map_x = (xy[..., 0] * 1000 + texture.shape[1] / 2).astype(np.float32)
    map_y = (xy[..., 1] * 1000 + texture.shape[0] / 2).astype(np.float32)
    grey = cv2.remap(texture, map_x, map_y, cv2.INTER_LINEAR)
    depth = noisy(depth, rng)
    depth[rng.random(depth.shape) < 0.2] = 0.0
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2RGB), depth


@pytest.fixture(scope="module")
def texture() -> np.ndarray:
    rng = np.random.default_rng(4)
    fine = cv2.GaussianBlur(rng.uniform(0, 255, (2400, 2400)).astype(np.float32), (0, 0), 2.5)
    coarse = cv2.resize(rng.uniform(0, 255, (60, 60)).astype(np.float32), (2400, 2400))
    return np.clip(0.5 * (fine - fine.mean()) * 4 + coarse, 0, 255).astype(np.uint8)


def test_camera_motion_of_a_textured_table_from_two_known_poses(texture: np.ndarray) -> None:
    rng = np.random.default_rng(5)
    poses = [world_from_camera(0.5, 40.0), world_from_camera(0.48, 43.0, 2.5, (0.02, 0.01))]
    views = [textured_view(pose, texture, rng) for pose in poses]
    no_objects = np.zeros((CAMERA.height, CAMERA.width), bool)
    fit = fit_table_frames(CAMERA, [d for _, d in views], [no_objects, no_objects])
    blank = (np.full_like(views[0][0], 128), views[0][1])  # nothing to match
    motions = estimate_camera_motion(
        CAMERA, [v[0] for v in views] + [blank[0]], [v[1] for v in views] + [blank[1]],
        planes=[*fit.planes, None],
    )  # fmt: skip
    truth = invert(poses[0]) @ poses[1]
    estimate = motions[1].reference_from_camera
    assert rotation_degrees(invert(truth) @ estimate) < 1.0
    assert np.linalg.norm(estimate[:3, 3] - truth[:3, 3]) < 0.01
    assert motions[1].inliers >= 25 and motions[1].table_disagreement_deg < 1.0
    assert not motions[2].estimated  # flagged, not invented
    assert camera_moves(motions[:2])
    still = estimate_camera_motion(
        CAMERA, [views[0][0]] * 2, [views[0][1], textured_view(poses[0], texture, rng)[1]]
    )
    assert still[1].estimated and not camera_moves(still)
    assert rotation_degrees(relative_motion(motions, 0, 1)) == pytest.approx(motions[1].rotation_deg)


@pytest.mark.skipif(not C4.is_dir(), reason="../shared/real_footage is not beside this checkout")
def test_c4_pour01_table_on_every_frame_and_head_motion() -> None:
    """The head-mounted ZED clip: the desk on every frame, the camera moving a few degrees a frame.

    The depth puts the camera 0.78-0.81 m above the desk (the floor, seen at the
    bottom, lies 0.89 m below the desk: a kitchen counter, the camera at eye height).
    """
    from real2gym.real2gym_addon.demo import load_demo
    from real2gym.real2gym_addon.depth import read_depth

    demo = load_demo(C4)
    frames = list(range(demo.video.frames))
    depths = [read_depth(demo, f) for f in frames]
    no_objects = [np.zeros(d.shape, bool) for d in depths]
    fit = fit_table_frames(demo.camera, depths, no_objects, frames)
    assert all(p.found for p in fit.planes)
    assert all(0.7 < p.offset_cam < 0.9 for p in fit.planes), [p.offset_cam for p in fit.planes]
    assert all(0.003 < p.noise_1m < 0.03 for p in fit.planes)
    rgb = [cv2.imread(str(C4 / "frames" / f"{f:06d}.png"))[:, :, ::-1] for f in frames]
    motions = estimate_camera_motion(demo.camera, rgb, depths, planes=fit.planes, frames=frames)
    assert all(m.estimated for m in motions)
    steps = [rotation_degrees(relative_motion(motions, k, k + 1)) for k in range(len(frames) - 1)]
    assert all(0.0 < s < 10.0 for s in steps), steps
    assert all(m.table_disagreement_deg < 3.0 for m in motions[1:])
    assert camera_moves(motions)


def test_a_low_ledge_joins_its_object_over_a_quantised_table_and_the_table_bands_do_not() -> None:
    # The table read in whole-pixel disparity steps (bands of one true depth, each its own height, up to a
    # centimetre and more above the plane), and an object whose top slopes from 6 cm down to a ledge 15 mm
    # high along its front; its mask holds the part over 3 cm only. The noise's one rise for the window
    # (three sigmas: 1.9 cm here) cut all of the low part away (a chest's low front edge, its drawer then
    # fitted half as deep); the bare 6 mm took it and 1800 pixels of table bands with it. The table's own
    # level, read band by band, lets a share of it join (the object's own steps are not the table's: about
    # a quarter here) and keeps the bands out.
    pose = world_from_camera(0.9, 35.0)
    depth, _ = table_hits(pose)
    rays = np.stack(np.meshgrid((np.arange(CAMERA.width) - CAMERA.cx) / CAMERA.fx,
                                (np.arange(CAMERA.height) - CAMERA.cy) / CAMERA.fy) + [np.ones(depth.shape)], -1)  # fmt: skip
    up = rays @ pose[2, :3]
    rows = np.arange(depth.shape[0])[:, None]
    rise = np.interp(rows, [200, 290, 310], [0.06, 0.015, 0.015]) * np.ones(depth.shape)
    obj = np.zeros(depth.shape, bool)
    obj[200:310, 280:360] = True
    depth[obj] += rise[obj] / up[obj]
    disparity = np.round(CAMERA.fx * 0.12 / np.maximum(depth, 1e-6))
    quantised = np.where(depth > 0, CAMERA.fx * 0.12 / disparity, 0.0).astype(np.float32)
    heights = quantised * up + pose[2, 3]
    near = cv2.dilate(obj.astype(np.uint8), np.ones((9, 9), np.uint8)) > 0
    assert ((heights > 0.006) & ~near).sum() > 1000  # table bands the steps lift past the bare 6 mm rise
    mask = obj & (rise > 0.03)
    low = obj & (rise < 0.018)
    noise, _ = given_table_readings(CAMERA, [quantised], [near], [pose])
    assert 3 * noise * float(np.median(quantised[low])) ** 2 > 0.018  # the noise's rise is over the low part
    grown = grow_in_depth(mask, quantised, CAMERA, pose, noise_1m=noise)
    assert (grown & low).sum() > 0.2 * low.sum(), ((grown & low).sum(), low.sum())
    assert (grown & ~near).sum() < 0.02 * obj.sum(), (grown & ~near).sum()

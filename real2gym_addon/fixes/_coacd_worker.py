"""Runs CoACD on one mesh in its own process (see :func:`.collision.coacd_pieces`).

Run as a script, not imported: it needs only numpy and coacd, so it works from
any host (plain Python, the bpy module, a Blender binary) whose ``sys.path`` the
parent hands over in ``PYTHONPATH``. Reads an ``.npz`` (``vertices``, ``faces``,
``threshold``, ``max_pieces``) on stdin and writes an ``.npz`` of the pieces
(``v0``, ``f0``, ``v1``, ...) on stdout. A failure ends with exit status 1 and
one line on stderr.
"""

import io
import sys


def main() -> int:
    import numpy as np

    try:
        import coacd

        request = np.load(io.BytesIO(sys.stdin.buffer.read()))
        coacd.set_log_level("error")
        mesh = coacd.Mesh(request["vertices"], request["faces"])
        parts = coacd.run_coacd(
            mesh, threshold=float(request["threshold"]), max_convex_hull=int(request["max_pieces"])
        )
        arrays = {}
        for index, (vertices, faces) in enumerate(parts):
            arrays[f"v{index}"] = np.asarray(vertices, float)
            arrays[f"f{index}"] = np.asarray(faces, np.int64)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        sys.stdout.buffer.write(buffer.getvalue())
        sys.stdout.buffer.flush()
    except Exception as e:  # reported to the parent as one line
        print(f"{type(e).__name__}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

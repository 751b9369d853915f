"""The process pool's workers import a task from a package made in memory, and never run the main script.

Inside Blender the core is ``bl_ext.<repository>.real2gym.real2gym_addon``: ``bl_ext`` and
``bl_ext.<repository>`` exist only in Blender's memory, and a script run by ``blender -b
--python`` imports bpy with no ``if __name__ == "__main__"`` guard. Both are imitated here
in a plain interpreter.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

SCRIPT = """
import importlib
import sys
import types

# A main script without a guard: a worker that ran it would start a pool while bootstrapping.
namespace = types.ModuleType("in_memory")  # no __spec__, no __path__: as Blender's bl_ext
repository = types.ModuleType("in_memory.repository")
repository.__path__ = [{root!r}]
sys.modules.update({{"in_memory": namespace, "in_memory.repository": repository}})
tasks = importlib.import_module("in_memory.repository.tasks")
from real2gym.real2gym_addon.variants.executors import run_jobs

print(sorted(result for _, result in run_jobs(tasks.double, [1, 2, 3], 2)))
"""


def test_pool_workers_import_in_memory_packages_and_skip_the_main_script(tmp_path: Path) -> None:
    root = tmp_path / "repository"
    root.mkdir()
    (root / "tasks.py").write_text("def double(value):\n    return 2 * value\n")
    script = tmp_path / "make_variants.py"
    script.write_text(textwrap.dedent(SCRIPT.format(root=str(root))))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[2, 4, 6]"
    assert "Traceback" not in done.stderr, done.stderr[-2000:]

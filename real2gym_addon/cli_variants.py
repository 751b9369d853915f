"""The command line's variant commands: ``real2gym vary`` and ``real2gym export-gym`` (see docs/cli.md).

``cli.build_parser`` adds them; they run through the same error handling and exit codes.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .cli_args import EXIT_NOT_VERIFIED, MAX_JOBS, file_path, folder_path, whole_in
from .errors import Real2GymError


def add_variant_commands(commands) -> None:
    """Adds ``vary`` and ``export-gym`` to the ``real2gym`` subcommands."""
    vary = commands.add_parser("vary", help="make verified variants of a verified run (poses, sizes, looks)")
    vary.add_argument(
        "out_dir", type=folder_path, help="a verified run's output folder; variants go to OUT_DIR/variants"
    )
    vary.add_argument("--count", type=whole_in(1, 100000), default=20, help="variants to draw (default 20)")
    vary.add_argument("--seed", type=whole_in(0), default=None,
                      help="the plan's seed (default 0, or the --plan file's)")  # fmt: skip
    vary.add_argument("--jobs", type=whole_in(1, MAX_JOBS), default=1,
                      help=f"parallel processes or Ray tasks (1 to {MAX_JOBS}, default 1)")  # fmt: skip
    vary.add_argument("--executor", choices=("local", "ray"), default="local",
                      help="local: a process pool on this machine; ray: Ray tasks (pip install 'ray[default]')")  # fmt: skip
    vary.add_argument("--ray-address", metavar="ADDR",
                      help="a Ray cluster (ray://HOST:10001 or auto); default $RAY_ADDRESS, else a local Ray")  # fmt: skip
    vary.add_argument("--plan", metavar="PLAN.json", type=file_path,
                      help="ranges and seed (the form of OUT_DIR/variants/plan.json)")  # fmt: skip
    vary.add_argument(
        "--no-render", action="store_true", help="no render per variant (summary.html without pictures)"
    )
    vary.add_argument("-q", "--quiet", action="store_true", help="no progress output")
    vary.set_defaults(handler=_cmd_vary)
    gym = commands.add_parser("export-gym", help="write a verified scene as a Gymnasium environment folder")
    gym.add_argument("out_dir", type=folder_path, help="a verified run's output folder")
    gym.add_argument("--to", required=True, metavar="DIR", type=folder_path,
                     help="the environment folder to write: new, empty, or one export-gym wrote (with --force)")  # fmt: skip
    gym.add_argument(
        "--force", action="store_true", help="replace an environment export-gym wrote into DIR before"
    )
    gym.add_argument(
        "--variant", metavar="ID", help="export this variant (OUT_DIR/variants/ID) instead of the demo"
    )
    gym.set_defaults(handler=_cmd_export_gym)


def _cmd_vary(args: argparse.Namespace) -> int:
    from .variants.batch import vary
    from .variants.plan import VariationPlan, read_plan

    plan = read_plan(Path(args.plan)) if args.plan else VariationPlan()
    if args.seed is not None:
        plan.seed = args.seed
    if args.executor == "ray" and args.ray_address is None and os.environ.get("RAY_ADDRESS") is None:
        print("real2gym: starting a local Ray (set --ray-address for a cluster)", file=sys.stderr)

    def progress(done: int, total: int, entry: dict) -> None:
        if not args.quiet:
            verdict = "verified" if entry["passed"] else f"dropped: {entry['reason']}"
            print(f"real2gym: [{done}/{total}] {entry['id']} {verdict} ({entry['seconds']:.1f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip

    entries = vary(args.out_dir, args.count, plan, args.jobs, args.executor, args.ray_address, progress,
                   render=not args.no_render)  # fmt: skip
    passed = sum(e["passed"] for e in entries)
    folder = Path(args.out_dir).resolve() / "variants"
    print(f"{passed} of {len(entries)} variants verified (seed {plan.seed}); {folder / 'summary.json'}")
    for entry in entries:
        if not entry["passed"]:
            print(f"  {entry['id']}: {entry['reason']}")
    return 0 if passed else EXIT_NOT_VERIFIED


def _cmd_export_gym(args: argparse.Namespace) -> int:
    from .gym.export import export_gym

    if args.variant and ("/" in args.variant or args.variant.startswith(".")):
        raise Real2GymError(f"--variant wants a variant's id such as v0003, got {args.variant!r}")
    path = export_gym(args.out_dir, args.to, args.variant, force=args.force)
    print(f"environment: {path.parent.resolve()}")
    print(
        f"  from real2gym.real2gym_addon.gym import make_env; env = make_env({str(path.parent.resolve())!r})"
    )
    return 0

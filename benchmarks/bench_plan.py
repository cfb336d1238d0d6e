"""Plan against reality: ``ssdlab plan``'s estimate against the wall time of the same run.

Run: ``.venv/bin/python benchmarks/bench_plan.py [--cases enterprise-review@0.01,...]
[--dir DIR]``

Each case runs a built-in suite with real fio on a file in a temporary directory (``--dir``,
default the system's; ``tmpfs`` there makes it a file in memory): first the plan
(:func:`ssdlab.plan.plan`, whose :attr:`~ssdlab.plan.Plan.estimate` counts size-based steps
from their bytes and a rate for the target's class), then ``ssdlab run`` with the same
options, timed from its start to its exit. It prints planned (for suites with round blocks
also the plan when every block is steady after its first window), real and real / planned;
the goal is a ratio within 0.7-1.3 at ``--scale`` 0.01-0.1 on a file. A case is
``SUITE@SCALE[@TARGET_SIZE][@NAME=VALUE...]`` (``--set`` overrides).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssdlab.plan import plan
from ssdlab.runner import RunOptions
from ssdlab.units import format_hms, parse_capacity

#: feasible in a few minutes each on a 2-core VM; fill waits idle_s unscaled, so it is cut
CASES = (
    "enterprise-review@0.01",
    "enterprise-review@0.01@256m",
    "snia-wsat@0.01",
    "snia-wsat@0.1",
    "snia-xsr@0.01",
    "fill@0.01@64m@idle_s=2",
    "jesd219-enterprise@0.01@32m@segments=3",
    "snia-hir@0.01",
)


def run_case(case: str, work: Path) -> tuple[float, float, float]:
    """(planned, planned if steady early, real seconds) of one case."""
    suite, scale, *rest = case.split("@")
    size = next((parse_capacity(r) for r in rest if "=" not in r), None)
    params = [r for r in rest if "=" in r]
    out = work / case.replace("@", "_").replace("=", "-")
    options = RunOptions(suite, out, scale=float(scale), target_size=size, params=params)
    planned = plan(options)
    if planned.problems:
        raise SystemExit(f"{case}: {planned.problems[0]}")
    cmd = [sys.executable, "-m", "ssdlab", "run", suite, "--out", str(out)]
    cmd += ["--scale", scale, "--smart", "none"]
    cmd += ["--target-size", str(size)] if size else []
    for param in params:
        cmd += ["--set", param]
    start = time.monotonic()
    subprocess.run(cmd, check=True, capture_output=True)
    real = time.monotonic() - start
    return planned.estimate.seconds, planned.estimate.steady_s, real


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--dir", type=Path, default=None, help="where the runs go")
    args = parser.parse_args()
    print(f"{'case':42} {'planned':>9} {'(steady)':>9} {'real':>9} {'real/plan':>9}")
    with tempfile.TemporaryDirectory(prefix="bench-plan-", dir=args.dir) as tmp:
        for case in args.cases.split(","):
            most, steady, real = run_case(case, Path(tmp))
            early = format_hms(steady) if steady < most else ""
            print(
                f"{case:42} {format_hms(most):>9} {early:>9} {format_hms(real):>9} "
                f"{real / most:>9.2f}",
                flush=True,
            )


if __name__ == "__main__":
    main()

"""Plan against reality: ``ssdlab plan``'s estimate against the wall time of the same run.

Run: ``.venv/bin/python benchmarks/bench_plan.py [--cases enterprise-review@0.01,...]
[--dir DIR]``

Each case runs a built-in suite with real fio on a file in a temporary directory (``--dir``,
default the system's; ``tmpfs`` there makes it a file in memory): first the plan
(:func:`ssdlab.plan.plan`, whose :attr:`~ssdlab.plan.Plan.estimate` counts size-based steps
from their bytes and a rate for the target's class), then ``ssdlab run`` with the same
options, timed from its start to its exit. It prints planned, real (seconds) and real /
planned; the goal is a ratio within 0.7-1.3 at ``--scale`` 0.01-0.1 on a file. How many
rounds a round block runs depends on when its drive is steady, which no plan knows: a suite
with round blocks is planned as a range, from every block steady after its first window to
every block at its ``max`` rounds, and its goal is a real time within 0.7 x the first and
1.3 x the second (its ratio is printed against the nearer end). A case is
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
from ssdlab.units import parse_capacity

#: every built-in suite, feasible in a few minutes each on a 2-core VM; fill waits idle_s
#: unscaled, so it is cut
CASES = (
    "quick@0.1",
    "enterprise-review@0.01",
    "enterprise-review@0.01@256m",
    "snia-wsat@0.01",
    "snia-wsat@0.1",
    "snia-xsr@0.01",
    "snia-hir@0.01",
    "snia-iops@0.01",
    "snia-throughput@0.01",
    "snia-latency@0.01",
    "snia-dirth@0.01",
    "latency-load@0.01",
    "fill@0.01@64m@idle_s=2",
    "jesd219-enterprise@0.01@32m@segments=3",
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


def ratio(most: float, steady: float, real: float) -> float:
    """real / planned; for a range (``steady`` < ``most``), against its nearer end (1 inside)."""
    if real < steady:
        return real / steady
    return max(1.0, real / most) if steady < most else real / most


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default=",".join(CASES))
    parser.add_argument("--dir", type=Path, default=None, help="where the runs go")
    args = parser.parse_args()
    print(f"{'case':40} {'planned s':>15} {'real s':>8} {'real/plan':>9}  goal")
    with tempfile.TemporaryDirectory(prefix="bench-plan-", dir=args.dir) as tmp:
        for case in args.cases.split(","):
            most, steady, real = run_case(case, Path(tmp))
            planned = f"{steady:.1f}-{most:.1f}" if steady < most else f"{most:.1f}"
            r = ratio(most, steady, real)
            goal = "ok" if 0.7 <= r <= 1.3 else "MISSED"
            print(f"{case:40} {planned:>15} {real:>8.1f} {r:>9.2f}  {goal}", flush=True)


if __name__ == "__main__":
    main()

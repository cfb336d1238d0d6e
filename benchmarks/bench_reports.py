"""Report rendering: one review, and a batch of reviews serial against parallel.

Run: ``.venv/bin/python benchmarks/bench_reports.py [--results data/quick-demo] [--runs 8]
[--jobs N]``

- one review: ``ssdlab report RESULTS -o review.html`` as a user runs it (a new process:
  imports, a notebook kernel, the charts' static SVGs, nbconvert).
- batch: ``--runs`` copies of RESULTS under one root, rendered by ``run_batch`` with one worker
  and then with ``--jobs`` workers (default: CPUs, at most 4): the reviews, the comparison of
  all of them and the index. The speedup is serial time over parallel time.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

from ssdlab.batch import DEFAULT_JOBS, run_batch

ROOT = Path(__file__).resolve().parents[1]


def timed_batch(root: Path, out: Path, jobs: int) -> tuple[float, int]:
    start = time.perf_counter()
    result = run_batch(root, out, jobs=jobs)
    seconds = time.perf_counter() - start
    if result.failed:
        raise SystemExit(f"batch failed: {[o.error for o in result.failed]}")
    return seconds, len(result.reports) + 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "data" / "quick-demo")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS)
    args = parser.parse_args()
    console = Console(stderr=True)
    with tempfile.TemporaryDirectory(prefix="bench-reports-") as tmp:
        work = Path(tmp)
        start = time.perf_counter()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "ssdlab",
                "report",
                str(args.results),
                "-o",
                str(work / "review.html"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        one = time.perf_counter() - start
        if proc.returncode:
            raise SystemExit(proc.stderr)
        console.print(f"one review: {one:.1f} s")

        root = work / "root"
        for n in range(1, args.runs + 1):
            shutil.copytree(args.results, root / f"run{n:02d}")
        serial, reports = timed_batch(root, work / "serial", jobs=1)
        console.print(f"batch of {args.runs} runs ({reports} reports), 1 worker: {serial:.1f} s")
        parallel, _ = timed_batch(root, work / "parallel", jobs=args.jobs)
        console.print(
            f"batch of {args.runs} runs ({reports} reports), {args.jobs} workers: "
            f"{parallel:.1f} s, speedup {serial / parallel:.2f}x"
        )
    print(
        json.dumps(
            {
                "one_review_s": round(one, 2),
                "runs": args.runs,
                "reports": reports,
                "serial_s": round(serial, 2),
                "parallel_s": round(parallel, 2),
                "jobs": args.jobs,
                "speedup": round(serial / parallel, 2),
            }
        )
    )


if __name__ == "__main__":
    main()

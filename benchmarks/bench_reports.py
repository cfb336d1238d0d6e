"""Report rendering: the review's sections, one review, and a batch serial against parallel.

Run: ``.venv/bin/python benchmarks/bench_reports.py [--results data/quick-demo] [--runs 8]
[--jobs N] [--repeat 5]``

- sections: every drive-review section built in-process as the notebook does, from one shared
  :class:`~ssdlab.analysis.DriveAnalysis` (each figure and section computed once), against the
  baseline of a fresh analysis per cell (what each cell recomputed before sections shared one:
  the classification in every section, every section again for the key findings), and against
  ``ssdlab.load`` of the same results. Medians of ``--repeat`` runs.
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
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console

import ssdlab
from ssdlab.analysis import DriveAnalysis
from ssdlab.report.batch import DEFAULT_JOBS, run_batch
from ssdlab.review import drive

ROOT = Path(__file__).resolve().parents[1]


def timed_batch(root: Path, out: Path, jobs: int) -> tuple[float, int]:
    start = time.perf_counter()
    result = run_batch(root, out, jobs=jobs)
    seconds = time.perf_counter() - start
    if result.failed:
        raise SystemExit(f"batch failed: {[o.error for o in result.failed]}")
    return seconds, len(result.reports) + 1


def _median_s(work: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def section_times(results_dir: Path, repeat: int) -> dict[str, float]:
    """Seconds to load the results and to build every review section, shared and not."""
    results = ssdlab.load(results_dir)

    def shared() -> None:
        run = DriveAnalysis(results)
        for build in drive.SECTIONS:
            build(run)

    def per_cell() -> None:
        for build in drive.SECTIONS:
            build(DriveAnalysis(results))

    return {
        "load_s": _median_s(lambda: ssdlab.load(results_dir), repeat),
        "sections_shared_s": _median_s(shared, repeat),
        "sections_per_cell_s": _median_s(per_cell, repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=ROOT / "data" / "quick-demo")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--jobs", type=int, default=DEFAULT_JOBS)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    console = Console(stderr=True)
    sections = section_times(args.results, args.repeat)
    shared, per_cell = sections["sections_shared_s"], sections["sections_per_cell_s"]
    console.print(
        f"review sections: {shared:.2f} s shared, {per_cell:.2f} s with an analysis per cell "
        f"({per_cell / shared:.2f}x); {shared / sections['load_s']:.2f}x ssdlab.load"
    )
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
                **{k: round(v, 3) for k, v in sections.items()},
                "sections_speedup": round(per_cell / shared, 2),
                "sections_over_load": round(shared / sections["load_s"], 2),
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

"""Runner overhead: ``ssdlab run`` against bare fio running the identical job file.

Run: ``.venv/bin/python benchmarks/bench_overhead.py [--runtime 10] [--repeats 7]
[--cases null,file,cached]``

For the ``null`` engine, a file on disk (O_DIRECT) and a file in /dev/shm read through the
page cache (CPU-bound, so the most sensitive to CPU ssdlab might take), ssdlab runs a
one-step suite; then bare fio runs the very job file ssdlab wrote (same logs, same options)
with plain ``--output``, in random order within each of ``--repeats`` repeats. The figure
is the ratio of median IOPS (ssdlab / bare fio) with a bootstrap 95 % interval, since
run-to-run noise on a VM can be several percent: ssdlab's status parsing, logging and
progress display must not slow fio down (target: within 1 %).

A third column runs bare fio on the job file without the ``clocksource`` line ssdlab pins
(see ``ssdlab.fio.pinned_clocksource``), i.e. with fio choosing its clock per process: on a
machine whose cross-CPU TSC test is flaky that column is bimodal, which is why ssdlab pins it.
Every run's IOPS is printed, not only the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

SUITE = """
name = "overhead"
[[steps]]
name = "{name}"
rw = "randread"
bs = "4k"
iodepth = {iodepth}
ioengine = "{engine}"
direct = {direct}
size = "256m"
runtime_s = {runtime}
ramp_s = 1
"""


def ssdlab_iops(work: Path, suite: Path, target: Path | None) -> tuple[float, Path]:
    out = work / "out"
    shutil.rmtree(out, ignore_errors=True)
    cmd = [sys.executable, "-m", "ssdlab", "run", str(suite), "--out", str(out)]
    if target is not None:
        cmd += ["--target", str(target)]
    subprocess.run(cmd, check=True, capture_output=True)
    step = next((out / "steps").iterdir())
    result = json.loads((step / "fio.json").read_text())
    return result["jobs"][0]["read"]["iops"], step / "job.fio"


def bare_iops(work: Path, job: Path, *, fio_clock: bool = False) -> float:
    """Bare fio on ``job``; ``fio_clock`` drops the pinned clocksource (fio chooses)."""
    run = work / "bare"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir()
    lines = job.read_text().splitlines(keepends=True)
    if fio_clock:
        lines = [line for line in lines if not line.startswith("clocksource=")]
    (run / "job.fio").write_text("".join(lines))
    subprocess.run(
        ["fio", "--output-format=json+", "--output=fio.json", "job.fio"],
        cwd=run, check=True, capture_output=True,
    )  # fmt: skip
    return json.loads((run / "fio.json").read_text())["jobs"][0]["read"]["iops"]


def _bootstrap(ours: list[float], theirs: list[float], n: int = 4000) -> tuple[float, float]:
    """95 % interval of the ratio of medians, resampling each side's runs."""
    ratios = sorted(
        statistics.median(random.choices(ours, k=len(ours)))
        / statistics.median(random.choices(theirs, k=len(theirs)))
        for _ in range(n)
    )
    return ratios[int(0.025 * n)], ratios[int(0.975 * n) - 1]


def compare(
    name: str, engine: str, direct: bool, iodepth: int, where: Path | None, args: argparse.Namespace
) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"ssdlab-overhead-{name}-", dir=where))
    suite = work / "suite.toml"
    suite.write_text(
        SUITE.format(
            name=name, engine=engine, direct=str(direct).lower(), iodepth=iodepth,
            runtime=args.runtime,
        )
    )  # fmt: skip
    target = work / "target.bin" if engine != "null" else None
    if target is not None:  # a read-only suite reads an existing file: write it once
        with target.open("wb") as fh:
            for _ in range(256):
                fh.write(os.urandom(2**20))
    _, job = ssdlab_iops(work, suite, target)  # warm-up; gives the job file bare fio runs
    job = shutil.copy(job, work / "job.fio")
    runs: dict[str, Callable[[], float]] = {
        "ssdlab": lambda: ssdlab_iops(work, suite, target)[0],
        "bare fio, same job": lambda: bare_iops(work, job),
        "bare fio, fio's own clock": lambda: bare_iops(work, job, fio_clock=True),
    }
    iops: dict[str, list[float]] = {kind: [] for kind in runs}
    print(f"{name}: IOPS per run, each repeat in random order ({' | '.join(runs)})")
    for _ in range(args.repeats):
        for kind in random.sample(list(runs), len(runs)):
            iops[kind].append(runs[kind]())
        print("  " + " | ".join(f"{values[-1]:>12,.0f}" for values in iops.values()))
    ours, theirs, unpinned = iops.values()
    ratio = statistics.median(ours) / statistics.median(theirs)
    low, high = _bootstrap(ours, theirs)
    print(
        f"{name:6s} ssdlab median {statistics.median(ours):>12,.0f} IOPS  bare fio median "
        f"{statistics.median(theirs):>12,.0f} IOPS  ratio {ratio:.4f} ({(ratio - 1) * 100:+.2f} %)"
        f", 95 % bootstrap interval {low:.4f}-{high:.4f}  [bare fio, own clock: median "
        f"{statistics.median(unpinned):,.0f}, min {min(unpinned):,.0f}]"
    )
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=float, default=10.0, help="seconds per run")
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the file target")
    parser.add_argument("--cases", default="null,file,cached", help="comma-separated")
    args = parser.parse_args()
    cases = {
        "null": ("null", False, 1, None),
        "file": ("libaio", True, 32, args.dir),  # O_DIRECT: the disk's own noise included
        # buffered reads of a file in /dev/shm: CPU-bound, so any CPU ssdlab took would show
        "cached": ("libaio", False, 32, Path("/dev/shm")),
    }
    for name in args.cases.split(","):
        compare(name, *cases[name], args)


if __name__ == "__main__":
    main()

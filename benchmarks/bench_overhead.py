"""Runner overhead: ``ssdlab run`` against bare fio running the identical job file.

Run: ``.venv/bin/python benchmarks/bench_overhead.py [--runtime 10] [--repeats 3]``

For the ``null`` engine and for a file on disk, ssdlab runs a one-step suite; then bare fio
runs the very job file ssdlab wrote (same logs, same options) with plain ``--output``, in
alternation, ``--repeats`` times each. The figure is the ratio of median IOPS (ssdlab / bare
fio): ssdlab's status parsing, logging and progress display must not slow fio down (target:
within 1 %).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
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


def bare_iops(work: Path, job: Path) -> float:
    run = work / "bare"
    shutil.rmtree(run, ignore_errors=True)
    run.mkdir()
    shutil.copy(job, run / "job.fio")
    subprocess.run(
        ["fio", "--output-format=json+", "--output=fio.json", "job.fio"],
        cwd=run, check=True, capture_output=True,
    )  # fmt: skip
    return json.loads((run / "fio.json").read_text())["jobs"][0]["read"]["iops"]


def compare(name: str, engine: str, direct: bool, iodepth: int, args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix=f"ssdlab-overhead-{name}-", dir=args.dir))
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
    ours, theirs = [], []
    for _ in range(args.repeats):
        iops, job = ssdlab_iops(work, suite, target)
        ours.append(iops)
        theirs.append(bare_iops(work, job))
    ratio = statistics.median(ours) / statistics.median(theirs)
    print(
        f"{name:6s} ssdlab median {statistics.median(ours):>12,.0f} IOPS  bare fio median "
        f"{statistics.median(theirs):>12,.0f} IOPS  ratio {ratio:.4f} ({(ratio - 1) * 100:+.2f} %)"
    )
    shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runtime", type=float, default=10.0, help="seconds per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=None, help="where to put the file target")
    args = parser.parse_args()
    compare("null", "null", False, 1, args)
    compare("file", "libaio", True, 32, args)


if __name__ == "__main__":
    main()

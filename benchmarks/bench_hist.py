"""Histogram-log benchmark: percentiles per interval from fio's completion-latency histogram
logs, by ssdlab and by fio's own ``fiologparser_hist.py``, on the same logs, in one run.

Run: ``.venv/bin/python benchmarks/bench_hist.py [--workdir DIR] [--repeat 3]``
(needs fio; the tool is read from Debian's fio package, ``/usr/share/doc/fio``)

The logs are made once with real fio and kept in the work directory: one job of
``--jobs`` threads (``null`` ioengine, 4k random 70/30) writing a histogram log each at
``--interval-ms`` for ``--runtime-s`` seconds (fio 3.x's 1856 bins), in relative time (the
tool counts intervals from 0). Measured in this process, ``--repeat`` rounds of both one
after the other (so that a change in the machine's load reaches both alike):

- fiologparser_hist.py --noweight: its ``main`` over every log (they add up), output discarded;
- ssdlab: :func:`~ssdlab.io.fio_hist.read_fio_hist_log` of every log and
  :func:`~ssdlab.io.fio_hist.hist_intervals` over them, the same percentiles.

The two outputs are checked to agree (samples and every percentile to the tool's 3 decimals)
before the times are reported: the median of each, and the median of the rounds' ratios, of
wall time and of CPU time (this process's, all threads: polars' included). On a machine
others load, the CPU-time ratio varies less; the wall-time one is what a user waits.
Goal (issue 17): ssdlab >= 10x faster.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import io
import statistics
import subprocess
import tempfile
import time
import types
from collections.abc import Callable
from pathlib import Path

import polars as pl

from ssdlab.io.fio_hist import hist_intervals, read_fio_hist_log

TOOL = Path("/usr/share/doc/fio/fiologparser_hist.py.gz")
PERCENTILES = (50.0, 90.0, 99.0, 99.9, 99.99)


def make_logs(directory: Path, args: argparse.Namespace) -> list[Path]:
    """The threads' histogram logs (made once: a finished set is marked by ``.done``)."""
    if not (directory / ".done").exists():
        directory.mkdir(parents=True, exist_ok=True)
        print(f"making histogram logs in {directory} with fio ...", flush=True)
        subprocess.run(
            ["fio", "--name=h", "--ioengine=null", "--size=1g", "--rw=randrw", "--bs=4k",
             f"--numjobs={args.jobs}", "--time_based=1", f"--runtime={args.runtime_s}",
             "--write_hist_log=h", f"--log_hist_msec={args.interval_ms}",
             "--output-format=json", "--output=h.json"],
            cwd=directory, check=True, capture_output=True,
        )  # fmt: skip
        (directory / ".done").touch()
    return sorted(directory.glob("h_clat_hist.*.log"))


def tool_module() -> types.ModuleType:
    """fiologparser_hist.py as a module (its ``main(ctx)`` does the work)."""
    module = types.ModuleType("fiologparser_hist")
    exec(compile(gzip.decompress(TOOL.read_bytes()), str(TOOL), "exec"), module.__dict__)
    return module


def run_tool(module: types.ModuleType, logs: list[Path], interval_ms: int) -> str:
    ctx = argparse.Namespace(
        FILE=[str(p) for p in logs], buff_size=10000, max_latency=20, interval=interval_ms,
        noweight=True, divisor=1, decimals=3, warn=False, group_nr=29, job_file=None,
        percentiles=":".join(f"{p:g}" for p in PERCENTILES), usbin=False, directions="rw",
    )  # fmt: skip
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        module.main(ctx)
    return out.getvalue()


def run_ssdlab(logs: list[Path], interval_ms: int) -> pl.DataFrame:
    frames = [read_fio_hist_log(p) for p in logs]
    hist = pl.concat([frame for frame, _ in frames])
    return hist_intervals(hist, frames[0][1]["n_bins"], interval_ms, PERCENTILES)


def check_agree(tool_csv: str, ours: pl.DataFrame) -> None:
    rows = [[x.strip() for x in line.split(",")] for line in tool_csv.splitlines()[1:]]
    ours = ours.sort("end_ms", "direction")
    assert len(rows) == ours.height, (len(rows), ours.height)
    for theirs, mine in zip(rows, ours.iter_rows(named=True), strict=True):
        assert int(theirs[0]) == mine["end_ms"] and int(theirs[2]) == mine["samples"]
        names = [f"lat_p{p:g}_ns".replace(".", "_") for p in PERCENTILES]
        for value, name in zip(theirs[6:-1], names, strict=True):
            assert abs(float(value) - mine[name]) <= 1e-3 + 1e-9 * abs(mine[name]), name


def rounds(
    funcs: list[Callable[[], object]], repeat: int, clock: Callable[[], float]
) -> list[list[float]]:
    """The times by ``clock`` of each of ``funcs``, ``repeat`` rounds of each once."""
    times: list[list[float]] = [[] for _ in funcs]
    for _ in range(repeat):
        for func, spent in zip(funcs, times, strict=True):
            start = clock()
            func()
            spent.append(clock() - start)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ssdlab-bench" / "hist"
    )
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--runtime-s", type=int, default=60)
    parser.add_argument("--interval-ms", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if not TOOL.exists():
        raise SystemExit(f"{TOOL} not found: install Debian's fio package")
    name = f"j{args.jobs}-{args.runtime_s}s-{args.interval_ms}ms"
    logs = make_logs(args.workdir / name, args)
    size = sum(p.stat().st_size for p in logs)
    print(f"logs: {len(logs)} x {args.runtime_s} s at {args.interval_ms} ms, {size / 1e6:.1f} MB")
    module = tool_module()
    check_agree(run_tool(module, logs, args.interval_ms), run_ssdlab(logs, args.interval_ms))
    funcs = [
        lambda: run_tool(module, logs, args.interval_ms),
        lambda: run_ssdlab(logs, args.interval_ms),
    ]
    for name, clock in (("wall", time.perf_counter), ("CPU", time.process_time)):
        tool, ours = rounds(funcs, args.repeat, clock)
        ratio = statistics.median(t / o for t, o in zip(tool, ours, strict=True))
        tool_s, ours_s = statistics.median(tool), statistics.median(ours)
        print(f"{name:>4} time: the tool {tool_s:.3f} s, ssdlab {ours_s:.3f} s: {ratio:.1f}x")
    print("the outputs agree; goal: ssdlab >= 10x faster")


if __name__ == "__main__":
    main()

"""Import memory benchmark: ``ssdlab import`` of a result with one large per-I/O latency log.

Run: ``.venv/bin/python benchmarks/bench_import_memory.py [--size 1g] [--workdir DIR]``

A real fio result with a per-I/O completion-latency log (``write_lat_log``,
``log_avg_msec=0``, null engine) is made with the fio on this machine, and every row of its
log is repeated until the log reaches ``--size`` (a valid fio log of that many more I/Os in
the same seconds). The tree is kept in the work directory for later runs. ``ssdlab import``
runs in a child process, as a user runs it; the figures are ratios measured in the same run:

- peak memory (the child's maximum RSS) / the log's size (target: <= 2x);
- import time / reading the log's bytes from page cache, and / ``polars.read_csv`` of the
  log with an explicit schema (what parsing it at all costs).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ssdlab.units import parse_size

SEED_SECONDS = 2  # fio runtime of the real log the larger one is made from


def make_tree(tree: Path, size: int) -> Path:
    """A real per-I/O fio result in ``tree``, its clat log grown to ``size`` bytes."""
    tree.mkdir(parents=True)
    subprocess.run(
        ["fio", "--name=perio", "--ioengine=null", "--size=1g", "--rw=randrw", "--bs=4k",
         "--time_based=1", f"--runtime={SEED_SECONDS}", "--write_lat_log=pio",
         "--log_avg_msec=0", "--output-format=json", "--output=perio.json"],
        cwd=tree, check=True, capture_output=True,
    )  # fmt: skip
    (tree / "pio_lat.1.log").unlink()  # not imported: only checked to be a log
    log = tree / "pio_clat.1.log"
    seed = log.read_bytes()
    repeat = -(-size // len(seed))  # every row this many times: same seconds, more I/Os
    lines = seed.splitlines(keepends=True)
    with log.open("wb") as fh:
        for start in range(0, len(lines), 100_000):
            fh.write(b"".join(line * repeat for line in lines[start : start + 100_000]))
    return log


def child(args: list[str]) -> tuple[float, int]:
    """Run a command: (wall seconds, its peak RSS in bytes); it must succeed."""
    start = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if status:
        sys.exit(f"{args[:4]} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    return seconds, usage.ru_maxrss * 1024


def read_bytes_seconds(path: Path) -> float:
    start = time.perf_counter()
    with path.open("rb") as fh:
        while fh.read(2**24):
            pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1g", help="per-I/O log size (e.g. 1g, 2g, 500m)")
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ssdlab-bench-memory"
    )
    args = parser.parse_args()
    size = parse_size(args.size)
    tree = args.workdir / f"perio-{args.size}"
    log = tree / "pio_clat.1.log"
    if not log.exists():
        print(f"generating a {args.size} per-I/O log with fio ...", flush=True)
        shutil.rmtree(tree, ignore_errors=True)
        make_tree(tree, size)
    log_size = log.stat().st_size
    read_bytes_seconds(log)  # warm the page cache
    baseline = min(read_bytes_seconds(log) for _ in range(3))
    out = args.workdir / "imported"
    shutil.rmtree(out, ignore_errors=True)
    seconds, rss = child([sys.executable, "-m", "ssdlab", "import", str(tree), "--out", str(out)])
    schema = ", ".join(f"'{c}': pl.Int64" for c in ("time_ms", "value", "ddir", "bs", "offset"))
    csv_seconds, csv_rss = child(
        [sys.executable, "-c", f"import polars as pl\nschema = {{{schema}}}\n"
         f"pl.read_csv({str(log)!r}, has_header=False, new_columns=list(schema), schema=schema)"]
    )  # fmt: skip
    shutil.rmtree(out)
    print(f"per-I/O log: {log_size / 1e9:.2f} GB; reading its bytes: {baseline:.2f} s")
    print(f"ssdlab import: {seconds:.1f} s, peak RSS {rss / 1e9:.2f} GB")
    print(f"peak memory: {rss / log_size:.2f}x the log (target <= 2x); "
          f"polars.read_csv of it alone: {csv_rss / log_size:.2f}x")  # fmt: skip
    print(f"time: {seconds / baseline:.1f}x reading its bytes, "
          f"{seconds / csv_seconds:.2f}x polars.read_csv ({csv_seconds:.1f} s)")  # fmt: skip


if __name__ == "__main__":
    main()

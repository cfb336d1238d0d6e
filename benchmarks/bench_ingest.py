"""Ingest benchmark: importing a bench-fio-shaped sweep, and reading a 1 GB per-I/O log.

Run: ``.venv/bin/python benchmarks/bench_ingest.py [--workdir DIR] [--scale 1.0]``

The corpus is generated once into the work directory (kept for later runs): several hundred
json+ results (a real fio json+ output, its workload options varied) with their windowed
bw/iops/lat logs per numjobs clone (tens of thousands of files, ~150 MB), and a 1 GB per-I/O
completion-latency log. Every figure is a ratio against a baseline measured in the same run:

- sweep import (frames built and results directory written) / reading the same files' bytes
  from page cache (target: <= 3x);
- ``read_fio_log`` on the 1 GB log / ``polars.read_csv`` with an explicit schema on the same
  file (target: <= 1.5x), and the peak memory of each as a multiple of the file size
  (target: < 3x).
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

import numpy as np
import polars as pl

MODES = ["randread", "randwrite", "read", "write"]
DEPTHS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512]
JOBS = [1, 2, 4, 8, 16, 32]
BLOCK_SIZES = ["4k", "128k"]
LOG_TYPES = ["bw", "iops", "clat", "slat", "lat"]


def template_json() -> dict:
    """A real fio json+ result (null engine) to vary."""
    out = Path(tempfile.mkdtemp()) / "t.json"
    subprocess.run(
        ["fio", "--name=bench", "--ioengine=null", "--size=1g", "--rw=randread", "--bs=4k",
         "--time_based=1", "--runtime=2", "--output-format=json+", f"--output={out}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return json.loads(out.read_text())


def make_sweep(root: Path, seconds: int) -> None:
    """bench-fio layout: <root>/<bs>/<rw>-<iodepth>-<numjobs>.json plus
    <rw>-iodepth-<d>-numjobs-<j>_<type>.<clone>.log windowed logs."""
    rng = np.random.default_rng(7)
    base = template_json()
    times = (np.arange(1, seconds + 1) * 1000).astype(np.int64)
    for bs in BLOCK_SIZES:
        d = root / bs
        d.mkdir(parents=True)
        for rw in MODES:
            ddir = 0 if "read" in rw else 1
            for depth in DEPTHS:
                for jobs in JOBS:
                    prefix = f"{rw}-iodepth-{depth}-numjobs-{jobs}"
                    result = json.loads(json.dumps(base))
                    result["global options"] = {"ioengine": "libaio", "direct": "1"}
                    job = result["jobs"][0]
                    job["job options"] = {
                        "rw": rw, "bs": bs, "iodepth": str(depth), "numjobs": str(jobs),
                        "group_reporting": "1", "log_avg_msec": "1000",
                        **{f"write_{t}_log": prefix for t in ("bw", "iops", "lat")},
                    }  # fmt: skip
                    (d / f"{rw}-{depth}-{jobs}.json").write_text(json.dumps(result, indent=2))
                    for clone in range(1, jobs + 1):
                        for kind in LOG_TYPES:
                            values = rng.integers(1000, 900000, size=seconds)
                            rows = "".join(
                                f"{t}, {v}, {ddir}, 0, 0\n"
                                for t, v in zip(times, values, strict=True)
                            )
                            (d / f"{prefix}_{kind}.{clone}.log").write_text(rows)


def make_per_io_log(path: Path, size_bytes: int) -> None:
    """A per-I/O clat log (time, ns, ddir, bs, offset, prio) of about ``size_bytes``."""
    rng = np.random.default_rng(11)
    chunk = 2_000_000
    written, t0 = 0, 0
    with path.open("w") as fh:
        while written < size_bytes:
            t = t0 + np.sort(rng.integers(0, 1000, size=chunk))
            frame = pl.DataFrame(
                {
                    "t": t,
                    "v": rng.integers(20_000, 5_000_000, size=chunk),
                    "d": rng.integers(0, 2, size=chunk),
                    "bs": np.full(chunk, 4096),
                    "off": rng.integers(0, 2**34, size=chunk) // 4096 * 4096,
                    "p": np.zeros(chunk, dtype=np.int64),
                }
            )
            text = frame.write_csv(include_header=False, separator=",").replace(",", ", ")
            fh.write(text)
            written += len(text)
            t0 += 1000


def read_all_bytes(files: list[Path]) -> float:
    start = time.perf_counter()
    total = 0
    for f in files:
        with f.open("rb") as fh:
            total += len(fh.read())
    return time.perf_counter() - start


def child(code: str) -> tuple[float, int]:
    """Run ``code`` in a fresh interpreter: (seconds it reports, peak RSS in bytes)."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    seconds, rss_kib = proc.stdout.split()
    return float(seconds), int(rss_kib) * 1024


PROLOGUE = "import time, resource, polars as pl\n"
EPILOGUE = "print(time.perf_counter() - s, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ssdlab-bench"
    )
    parser.add_argument("--seconds", type=int, default=240, help="log rows per file")
    parser.add_argument("--log-gb", type=float, default=1.0)
    args = parser.parse_args()
    sweep = args.workdir / "sweep"
    big = args.workdir / "clat_per_io.log"
    if not sweep.exists():
        print("generating the sweep corpus ...", flush=True)
        make_sweep(sweep, args.seconds)
    if not big.exists():
        print("generating the per-I/O log ...", flush=True)
        make_per_io_log(big, int(args.log_gb * 1e9))
    files = [p for p in sweep.rglob("*") if p.is_file()]
    size = sum(p.stat().st_size for p in files)
    jsons = sum(p.suffix == ".json" for p in files)
    print(f"sweep: {jsons} JSON results, {len(files) - jsons} logs, {size / 1e6:.0f} MB")

    from ssdlab.importer import import_results

    read_all_bytes(files)  # warm the page cache
    baseline = min(read_all_bytes(files) for _ in range(3))
    out = args.workdir / "imported"
    timings = []
    for _ in range(3):  # the first run also pays for first use of polars and the allocator
        shutil.rmtree(out, ignore_errors=True)
        start = time.perf_counter()
        import_results([sweep], out)
        timings.append(time.perf_counter() - start)
    ingest = min(timings)
    print(f"read bytes from page cache: {baseline:.3f} s")
    runs = ", ".join(f"{t:.3f}" for t in timings)
    print(f"ssdlab import (frames + results dir): {ingest:.3f} s (best of {runs})")
    print(f"sweep ingest ratio: {ingest / baseline:.2f}x (target <= 3x)")

    log_size = big.stat().st_size
    schema = (
        "{'time_ms': pl.Int64, 'value': pl.Int64, 'ddir': pl.Int64, 'bs_bytes': pl.Int64, "
        "'offset_bytes': pl.Int64, 'prio': pl.Int64}"
    )
    polars_code = (
        PROLOGUE + f"s = time.perf_counter()\npl.read_csv({str(big)!r}, has_header=False, "
        f"new_columns=list({schema}), schema={schema})\n" + EPILOGUE
    )
    ssdlab_code = (
        PROLOGUE + "from ssdlab.io import read_fio_log\ns = time.perf_counter()\n"
        f"read_fio_log({str(big)!r}, kind='clat')\n" + EPILOGUE
    )
    child(polars_code)  # warm the page cache
    theirs, ours = [], []
    for _ in range(3):  # alternating; time: the best run, memory: the largest peak
        theirs.append(child(polars_code))
        ours.append(child(ssdlab_code))
    p_s, p_rss = min(t for t, _ in theirs), max(m for _, m in theirs)
    s_s, s_rss = min(t for t, _ in ours), max(m for _, m in ours)
    print(f"1 GB per-I/O log ({log_size / 1e9:.2f} GB): polars.read_csv {p_s:.2f} s, "
          f"read_fio_log {s_s:.2f} s -> {s_s / p_s:.2f}x (target <= 1.5x)")  # fmt: skip
    print(f"peak memory: polars {p_rss / log_size:.2f}x, read_fio_log {s_rss / log_size:.2f}x "
          "the file size (target < 3x)")  # fmt: skip


if __name__ == "__main__":
    main()

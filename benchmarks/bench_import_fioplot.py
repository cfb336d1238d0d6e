"""Import benchmark against fio-plot: a 4-drive bench-fio sweep made with real fio, loaded by
``ssdlab import`` and by fio-plot 1.1.x's own loaders, against reading the files' bytes.

Run: ``.venv/bin/python benchmarks/bench_import_fioplot.py [--workdir DIR] [--repeat 3]``
(needs the ``bench`` extra: ``pip install -e '.[bench]'``)

The corpus is made once and kept in the work directory: for every mode, queue depth and job
count one real fio run (libaio on small files, bench-fio's names: ``<rw>-<qd>-<jobs>.json`` and
``<rw>-iodepth-<qd>-numjobs-<jobs>_<bw|iops|lat|clat|slat>.<clone>.log``, windowed logs), in
``drive-1/4k/``; drives 2-4 are copies. The defaults give the issue's corpus: 98 JSON results
and 8,890 logs per drive (2 modes x 7 depths x 7 job counts, 5 logs per job clone); each log
holds about ``runtime / log-msec`` rows (bench-fio's 60 one-second windows by default).

Measured in one run, ``--repeat`` rounds, each round timing every variant once, one after
the other (so that a change in the machine's load, shared with other work, reaches all of
them alike):

- read: every byte of every file, read once before to warm the page cache (the baseline);
- ssdlab per drive: ``ssdlab import DRIVE --out OUT`` once per drive, each its own process,
  as a user runs it (process start included);
- ssdlab --each: ``ssdlab import --each DRIVE... --out ROOT``, one process;
- library: ``ssdlab.imports.import_each`` of every drive in a new Python process (process
  start included, the command line not);
- fio-plot: fio-plot's loaders in this process (no start-up counted), for every drive and
  mode: ``getdata.get_json_data`` (its bar charts' data) and ``getdata.get_log_data`` (its
  log graphs', every log type) over every depth and job count.

Reported: the median time of each, and the median over the rounds of each round's ratios,
of wall time and of CPU time (this process and its children, every thread: less swayed by
other work on the machine, though work on other cores counts in full).
Goals (issue 14): ssdlab <= 3x the read time, including process start; >= 10x faster than
fio-plot. ``--profile`` also prints cProfile's top functions of one drive's import.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

DRIVES = 4
MODES = ["randread", "randwrite"]
DEPTHS = [1, 2, 4, 8, 16, 32, 64]
JOBS = [1, 2, 4, 8, 16, 32, 64]
LOG_TYPES = ["bw", "iops", "lat", "clat", "slat"]  # what fio writes for bw, iops and lat logs
BLOCK_SIZE = "4k"


def ints(text: str) -> list[int]:
    return [int(v) for v in text.split(",")]


def make_result(directory: Path, scratch: Path, rw: str, qd: int, nj: int, args) -> None:
    """One result of the sweep, as bench-fio writes it, made with real fio: libaio (so every
    log type has rows) on a small file per job in ``scratch``, buffered (from the page cache).
    Runs with more than 8 jobs run and log proportionally longer, so that every clone's logs
    hold about ``runtime / log-msec`` rows on a machine with few CPUs; a run in which a clone
    logged fewer than 2 rows (starved; fio-plot's loader stops on such a log) runs again."""
    stretch = max(1, nj // 8)
    prefix = f"{rw}-iodepth-{qd}-numjobs-{nj}"
    for _ in range(5):
        for log in directory.glob(f"{prefix}_*.log"):
            log.unlink()
        subprocess.run(
            ["fio", "--name=bench", "--ioengine=libaio", f"--directory={scratch}", "--size=4m",
             f"--bs={BLOCK_SIZE}", f"--rw={rw}", f"--iodepth={qd}", f"--numjobs={nj}",
             "--thread=1", "--group_reporting=1", "--time_based=1",
             f"--runtime={args.runtime_ms * stretch}ms", f"--write_bw_log={prefix}",
             f"--write_iops_log={prefix}", f"--write_lat_log={prefix}",
             f"--log_avg_msec={args.log_msec * stretch}", "--output-format=json",
             f"--output={rw}-{qd}-{nj}.json"],
            cwd=directory, check=True, capture_output=True,
        )  # fmt: skip
        if all(log.read_bytes().count(b"\n") >= 2 for log in directory.glob(f"{prefix}_*.log")):
            return
    raise SystemExit(f"{directory / prefix}: a job clone logged fewer than 2 rows 5 times")


def make_drive(directory: Path, scratch: Path, args: argparse.Namespace) -> None:
    """One drive's sweep: every mode, queue depth and job count."""
    directory.mkdir(parents=True)
    scratch.mkdir(exist_ok=True)
    for rw in args.modes:
        for qd in args.depths:
            for nj in args.jobs:
                make_result(directory, scratch, rw, qd, nj, args)
    shutil.rmtree(scratch)


def corpus(args: argparse.Namespace) -> list[Path]:
    """The drives' trees (made when missing; a finished corpus is marked by ``.done``)."""
    name = (
        f"sweep-{'_'.join(args.modes)}-qd{'_'.join(map(str, args.depths))}-"
        f"nj{'_'.join(map(str, args.jobs))}-{args.runtime_ms}ms-{args.log_msec}ms"
    )
    root = args.workdir / name
    drives = [root / f"drive-{n}" for n in range(1, DRIVES + 1)]
    if not (root / ".done").exists():
        shutil.rmtree(root, ignore_errors=True)
        started = time.perf_counter()
        print(f"making the corpus in {root} with fio ...", flush=True)
        make_drive(drives[0] / BLOCK_SIZE, root / "scratch", args)
        for drive in drives[1:]:
            shutil.copytree(drives[0], drive)
        (root / ".done").touch()
        print(f"  made in {time.perf_counter() - started:.0f} s", flush=True)
    return drives


def files_of(drive: Path) -> list[Path]:
    return sorted(p for p in drive.rglob("*") if p.is_file())


def read_all(files: list[Path]) -> int:
    total = 0
    for path in files:
        with open(path, "rb") as f:
            total += len(f.read())
    return total


def ssdlab(*args: str | Path) -> None:
    python("-m", "ssdlab", *map(str, args))


def library(drives: list[Path], out: Path) -> None:
    """``ssdlab.imports.import_each`` of ``drives`` in a new Python process."""
    code = "import sys; from pathlib import Path; from ssdlab.imports import import_each; "
    code += "import_each([Path(p) for p in sys.argv[2:]], Path(sys.argv[1]))"
    python("-c", code, str(out), *map(str, drives))


def python(*args: str) -> None:
    subprocess.run(
        [sys.executable, *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


def fioplot_load(drive: Path, modes: list[str], depths: list[int], jobs: list[int]) -> int:
    """fio-plot's loaders over one drive: every mode's JSON data and log data (all types);
    the number of records they return."""
    from fio_plot.fiolib import defaultsettings, getdata

    records = 0
    for rw in modes:
        settings = defaultsettings.get_default_settings() | {
            "input_directory": [str(drive / BLOCK_SIZE)],
            "rw": rw,
            "iodepth": list(depths),
            "numjobs": list(jobs),
            "type": list(LOG_TYPES),
        }
        json_data = getdata.get_json_data(dict(settings))
        log_data = getdata.get_log_data(dict(settings))
        records += sum(len(d["data"]) for d in json_data) + len(log_data)
    return records


def cpu_s() -> float:
    """CPU seconds used so far by this process and its ended children (all threads)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def rounds(
    variants: dict[str, Callable[[], object]], repeat: int, before: Callable[[], None]
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Each variant's wall times and CPU times, ``repeat`` rounds of every variant once
    (``before`` run untimed before each)."""
    times: dict[str, list[float]] = {name: [] for name in variants}
    cpu: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeat):
        for name, func in variants.items():
            before()
            start, start_cpu = time.perf_counter(), cpu_s()
            func()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(cpu_s() - start_cpu)
    return times, cpu


def median_ratio(times: dict[str, list[float]], a: str, b: str) -> float:
    """The median over the rounds of ``a``'s time / ``b``'s."""
    return statistics.median(x / y for x, y in zip(times[a], times[b], strict=True))


def profile_import(drive: Path, out: Path, top: int = 20) -> None:
    """cProfile's top functions (own time) of one drive's import, in this process."""
    from ssdlab.importer import import_results

    shutil.rmtree(out, ignore_errors=True)
    profiler = cProfile.Profile()
    profiler.runcall(import_results, [drive], out)
    print(f"\ncProfile of one drive's import (main thread; top {top} by own time):")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(top)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--workdir", type=Path, default=Path(tempfile.gettempdir()) / "ssdlab-bench" / "fioplot"
    )
    parser.add_argument("--modes", type=lambda s: s.split(","), default=MODES)
    parser.add_argument("--depths", type=ints, default=DEPTHS)
    parser.add_argument("--jobs", type=ints, default=JOBS)
    parser.add_argument("--runtime-ms", type=int, default=1200, help="fio runtime per result")
    parser.add_argument("--log-msec", type=int, default=20, help="fio's log_avg_msec")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="also profile one import")
    args = parser.parse_args()

    drives = corpus(args)
    files = [files_of(d) for d in drives]
    logs = sum(p.suffix == ".log" for p in files[0])
    results = sum(p.suffix == ".json" for p in files[0])
    every = [p for f in files for p in f]
    size = read_all(every)  # warms the page cache
    print(
        f"corpus: {DRIVES} drives x ({results} JSON + {logs} logs), "
        f"{size / 1e6:.1f} MB in {len(every)} files"
    )
    out = args.workdir / "out"

    def clean() -> None:
        shutil.rmtree(out, ignore_errors=True)

    times, cpu = rounds(
        {
            "read": lambda: read_all(every),
            "per drive": lambda: [ssdlab("import", d, "--out", out / d.name) for d in drives],
            "each": lambda: ssdlab("import", "--each", *drives, "--out", out),
            "library": lambda: library(drives, out),
            "fio-plot": lambda: [
                fioplot_load(d, args.modes, args.depths, args.jobs) for d in drives
            ],
        },
        args.repeat,
        clean,
    )
    clean()
    median = {name: statistics.median(values) for name, values in times.items()}
    for name, values in times.items():
        print(
            f"  rounds, {name}: {', '.join(f'{v:.2f}' for v in values)} s wall, "
            f"{', '.join(f'{v:.2f}' for v in cpu[name])} s CPU"
        )
    print(f"read every byte:            {median['read']:8.2f} s")
    print(f"ssdlab import, per drive:   {median['per drive']:8.2f} s  ({DRIVES} processes)")
    print(f"ssdlab import --each:       {median['each']:8.2f} s  (1 process)")
    print(f"library import_each:        {median['library']:8.2f} s  (1 process)")
    print(f"fio-plot loaders:           {median['fio-plot']:8.2f} s  (in process, no start-up)")
    for label, measured in (("wall", times), ("CPU", cpu)):
        print(
            f"ssdlab / read bytes ({label}): "
            f"{median_ratio(measured, 'per drive', 'read'):.1f}x per drive, "
            f"{median_ratio(measured, 'each', 'read'):.1f}x --each, "
            f"{median_ratio(measured, 'library', 'read'):.1f}x library (goal <= 3x)"
        )
        print(
            f"fio-plot / ssdlab ({label}): "
            f"{median_ratio(measured, 'fio-plot', 'per drive'):.1f}x per drive, "
            f"{median_ratio(measured, 'fio-plot', 'each'):.1f}x --each (goal >= 10x)"
        )
    if args.profile:
        profile_import(drives[0], out / "profiled")
        clean()


if __name__ == "__main__":
    main()

"""Fleet endurance analysis and report on a synthetic SMART history.

Run: ``.venv/bin/python benchmarks/bench_fleet_endurance.py [--drives 10000] [--days 365]
[--repeat 3] [--no-render]``

Writes a ``smart_history`` (as ``ssdlab smart import`` would) of ``--drives`` drives with one
snapshot a day for ``--days`` days, generated with numpy: six models (one without a NAND
counter, so without WAF), one to three firmwares each, host writes per day lognormal around
a third of a drive write, each drive's WAF lognormal around its model's, 0.5 % of drives at
three times it, percentage used from the NAND written against 3000 P/E cycles, a few media
errors. Then times :class:`~ssdlab.analysis.fleet_endurance.FleetEndurance` (per drive, by
model and firmware, outliers: medians of ``--repeat``), every report section built in this
process, and the whole offline report rendered by a new process (papermill + nbconvert), and
prints the HTML's size. Goal: the report in under a minute, the HTML a few MB at most.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import polars as pl

from ssdlab.analysis.fleet_endurance import FleetEndurance
from ssdlab.importer import write_frames
from ssdlab.review import fleet_endurance
from ssdlab.telemetry.history import FRAME, RECORD, SNAPSHOT_SCHEMA, history_frame

T0 = 1_700_000_000
DAY = 86_400
#: model -> (capacity bytes, WAF median, firmwares, reports NAND writes)
MODELS = {
    "BENCH NVME 3.84TB": (3_840_000_000_000, 1.4, ("1.0", "1.1", "1.2"), True),
    "BENCH NVME 7.68TB": (7_680_000_000_000, 1.8, ("2.0", "2.1"), True),
    "BENCH QLC 15.36TB": (15_360_000_000_000, 2.6, ("Q1",), True),
    "BENCH SATA 1.92TB": (1_920_000_000_000, 1.2, ("S1", "S2"), True),
    "BENCH SATA 960GB": (960_000_000_000, 1.1, ("S9",), True),
    "BENCH HOSTONLY 3.2TB": (3_200_000_000_000, 1.5, ("H1",), False),
}
PE_CYCLES = 3000


def synthetic_history(drives: int, days: int, seed: int = 1) -> pl.DataFrame:
    """A ``smart_history`` frame of ``drives`` x ``days`` daily snapshots (see the module)."""
    rng = np.random.default_rng(seed)
    names = list(MODELS)
    model_of = rng.choice(len(names), drives, p=[0.3, 0.25, 0.1, 0.2, 0.1, 0.05])
    capacity = np.array([MODELS[n][0] for n in names])[model_of]
    waf = np.array([MODELS[n][1] for n in names])[model_of] * rng.lognormal(0, 0.12, drives)
    waf[rng.random(drives) < 0.005] *= 3
    daily = capacity / 3 * rng.lognormal(0, 0.5, drives)  # host bytes per day
    prior_days = rng.uniform(0, 700, drives)
    firmware = np.array(
        [rng.choice(MODELS[names[m]][2]) for m in model_of]
    )  # one per drive: 10,000 picks
    day = np.tile(np.arange(days), drives)
    drive = np.repeat(np.arange(drives), days)
    noise = rng.lognormal(0, 0.3, drives * days)
    host = (daily[drive] * (prior_days[drive] + day) * (0.95 + 0.1 * noise.clip(0, 1))).astype(
        np.int64
    )
    host = np.maximum.accumulate(host.reshape(drives, days), axis=1).ravel()
    nand = (host * waf[drive]).astype(np.int64)
    raw_nand = capacity[drive] * 1.07 * PE_CYCLES
    percent = np.minimum(np.floor(100 * nand / raw_nand), 255).astype(np.int64)
    errors = np.where(rng.random(drives) < 0.02, rng.poisson(3, drives), 0)
    media = (errors[drive] * day // max(days - 1, 1)).astype(np.int64)
    has_nand = np.array([MODELS[n][3] for n in names])[model_of][drive]
    frame = pl.DataFrame(
        {
            "model": np.array(names)[model_of][drive],
            "serial": np.char.add("SN", np.char.zfill(drive.astype(str), 6)),
            "namespace": np.ones(drives * days, np.int64),
            "firmware": firmware[drive],
            "capacity_bytes": capacity[drive],
            "host": np.char.add("host", (drive // 8).astype(str)),
            "time_s": (T0 + day * DAY + drive % 3600).astype(np.float64),
            "time_source": "capture",
            "source": "smartctl",
            "path": "synthetic",
            "host_written_bytes": host,
            "host_read_bytes": host * 2,
            "nand_written_bytes": pl.Series(nand).set(pl.Series(~has_nand), None),
            "nand_pages_written": None,
            "host_pages_written": None,
            "percent_used": percent,
            "available_spare_percent": 100 - percent // 10,
            "media_errors": media,
            "unsafe_shutdowns": np.zeros(drives * days, np.int64),
            "critical_warning": np.zeros(drives * days, np.int64),
            "power_on_hours": ((prior_days[drive] + day) * 24).astype(np.int64),
            "temperature_c": rng.normal(40, 5, drives * days).round(),
        },
        schema_overrides=SNAPSHOT_SCHEMA,
    ).select(list(SNAPSHOT_SCHEMA))
    return history_frame(frame)


def write_history(out: Path, frame: pl.DataFrame) -> None:
    """``frame`` as the directory ``ssdlab smart import`` writes."""
    write_frames(out, {FRAME: frame})
    (out / RECORD).write_text(json.dumps({"kind": FRAME, "snapshots": frame.height}) + "\n")


def timed(run: object) -> float:
    start = time.perf_counter()
    run()  # type: ignore[operator]
    return time.perf_counter() - start


def analysis(directory: Path) -> FleetEndurance:
    fleet = FleetEndurance.load(directory)
    for figure in ("drives", "by_model", "by_firmware", "outliers"):
        getattr(fleet, figure)
    return fleet


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--drives", type=int, default=10_000)
    parser.add_argument("--days", type=int, default=365)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-render", action="store_true", help="skip the full report")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ssdlab-bench-fleet-") as tmp:
        history = Path(tmp) / "history"
        start = time.perf_counter()
        frame = synthetic_history(args.drives, args.days)
        write_history(history, frame)
        size = (history / "frames" / f"{FRAME}.parquet").stat().st_size
        print(
            f"history: {args.drives:,} drives x {args.days} days = {frame.height:,} rows, "
            f"{size / 1e6:.1f} MB Parquet, made in {time.perf_counter() - start:.1f} s"
        )
        del frame
        times = [timed(lambda: analysis(history)) for _ in range(args.repeat)]
        print(f"analysis (per drive, by model and firmware, outliers): {min(times):.2f} s best")
        fleet = analysis(history)
        sections = timed(lambda: [build(fleet) for build in fleet_endurance.SECTIONS])
        print(f"sections (figures computed): {sections:.2f} s")
        print(f"outliers: {fleet.outliers['serial'].n_unique()} drives")
        if args.no_render:
            return
        output = Path(tmp) / "fleet.html"
        code = (
            "import sys; from pathlib import Path; "
            "from ssdlab.report.fleet_endurance import render_fleet_endurance; "
            "render_fleet_endurance(Path(sys.argv[1]), Path(sys.argv[2]))"
        )
        render = timed(
            lambda: subprocess.run(
                [sys.executable, "-c", code, str(history), str(output)], check=True
            )
        )
        print(f"report render (new process: kernel, analysis, charts, nbconvert): {render:.1f} s")
        print(f"HTML: {output.stat().st_size / 1e6:.2f} MB")


if __name__ == "__main__":
    main()

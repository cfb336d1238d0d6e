"""The golden corpora (``tests/fixtures/golden``) and how their frames are taken.

Each source is a results directory loaded in place, or a tree of fio outputs imported into
a temporary directory first. Every frame ``ssdlab.load`` offers is taken, the registered
extra frames included; an import's random ``run_id`` is replaced by ``"import"``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import polars as pl

import ssdlab
from ssdlab.importer import import_results

ROOT = Path(__file__).resolve().parents[1]
GOLDEN = ROOT / "tests" / "fixtures" / "golden"
CORPORA = GOLDEN / "corpora"
#: source name -> (path, imported?)
SOURCES = {
    "quick-demo": (ROOT / "data" / "quick-demo", False),
    "telemetry": (CORPORA / "telemetry", False),
    "rounds": (CORPORA / "rounds", False),
    "act": (CORPORA / "act", False),
    "fio-tree": (CORPORA / "fio-tree", True),
}
#: Columns renamed since the frames were recorded (frame -> recorded name -> name now), with why.
#: The recorded frames stay as they were recorded; the comparison renames their columns, so
#: every other column, value and dtype is still pinned.
RENAMED: dict[str, dict[str, str]] = {
    # issue 15: columns name their unit (fio's CPU figures are percentages)
    "summary": {"usr_cpu": "usr_cpu_pct", "sys_cpu": "sys_cpu_pct"},
}
#: Columns added since the frames were recorded (frame -> columns), with why; the comparison
#: leaves them out, so every recorded column, value and dtype is still pinned.
ADDED: dict[str, tuple[str, ...]] = {
    # issue 16: endurance projections read the capacity and the average erase count
    "smart": ("capacity_bytes", "average_erase_count"),
    # issue 25: an ACT trial names its device, and whether it is another device's or its
    # search stopped at --max-load (the ACT corpus's are pinned in test_golden.py)
    "act_trials": ("device", "other_device", "search_cap"),
    # issue 25: every step names the suite test it belongs to; the summary names each step's
    # fio JSON and the queue depth fio kept most of the time (its iodepth_level)
    **{
        frame: ("test",)
        for frame in ("timeseries", "latency_hist", "percentiles", "snapshots", "latency_intervals")
    },
    "summary": ("test", "fio_json", "iodepth_run"),
}
#: Frames added since the frames were recorded, with why (every recorded frame is still pinned)
NEW_FRAMES = {
    # issue 25: the power trace's samples before and after the run (idle power)
    "power_idle",
}
#: Values corrected since the frames were recorded (frame -> correction of the recording),
#: with why; every other value is still pinned.
FIXED = {
    # fio writes 0 for the min/mean/max/stddev of a latency it has no samples of (slat of a
    # sync engine, a step interrupted in its ramp): those are null now, not 0 ns
    "summary": lambda df: df.with_columns(
        pl.when(pl.col(f"{stat}_samples").ne_missing(0))
        .then(pl.col(f"{stat}_{key}_ns"))
        .alias(f"{stat}_{key}_ns")
        for stat in ("lat", "clat", "slat")
        for key in ("min", "mean", "max", "stddev")
    ),
}
CORE = ("summary", "timeseries", "latency_hist", "percentiles", "snapshots", "rounds")
CORE += ("steady_state",)


def recorded(name: str) -> dict[str, pl.DataFrame]:
    """The frames recorded for the source ``name``, with :data:`RENAMED` columns renamed
    and :data:`FIXED` values corrected."""
    frames = {p.stem: pl.read_parquet(p) for p in (GOLDEN / "frames" / name).glob("*.parquet")}
    frames = {
        frame: df.rename({old: new for old, new in RENAMED.get(frame, {}).items() if old in df})
        for frame, df in frames.items()
    }
    return {frame: FIXED.get(frame, lambda df: df)(df) for frame, df in frames.items()}


def frames_of(name: str) -> dict[str, pl.DataFrame]:
    """Every frame of the source ``name``, by frame name."""
    path, imported = SOURCES[name]
    if not imported:
        return _frames(ssdlab.load(path))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "imported"
        import_results([path], out, label="golden import")
        frames = _frames(ssdlab.load(out))
    return {
        k: v.with_columns(run_id=pl.lit("import")) if "run_id" in v.columns else v
        for k, v in frames.items()
    }


def _frames(results: ssdlab.Results) -> dict[str, pl.DataFrame]:
    return {name: getattr(results, name) for name in CORE} | dict(results.extra)

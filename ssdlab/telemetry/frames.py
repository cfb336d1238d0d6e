"""Telemetry frames of a results directory, registered in ``ssdlab.results.FRAME_BUILDERS``.

Each builder is ``(context) -> pl.DataFrame`` over the steps ``ssdlab.load`` loaded
(:class:`~ssdlab.pipeline.RunContext`: status ok or interrupted, fio's JSON parsed once); a
run without such data (a file target, no ``--power``, an import) gives an empty frame with
the columns below. Units follow the column names.

- ``smart``: one row per step and phase ("before"/"after") with a SMART snapshot
  (:data:`SMART_FIELDS`; ``capacity_bytes`` is the user capacity).
- ``waf``: per step with both snapshots, the host and NAND bytes written during it and their
  ratio; ``cumulative_*`` run from the run's first snapshot to the step's "after" snapshot,
  so what the drive writes between steps (garbage collection) counts.
- ``power``: per step, watts over its measured window (epoch seconds ``start_s``..``end_s``:
  fio's ``job_start``, else the start of the first log window, ``log_avg_msec`` before the
  first epoch timestamp of its logs, plus the job's runtime; fio leaves the ramp out of both.
  A job shorter than one log window logs nothing: its window then ends at the JSON's
  ``timestamp_ms``, written some 20 ms after the job ends),
  and MB/s (10^6 bytes/s) and IOPS per watt. A step the trace does not cover has ``covered``
  false, ``reason`` saying why and null statistics (see :func:`~ssdlab.telemetry.power.step_power`).
- ``power_trace``: the samples inside each step's window, ``t_s`` seconds since its start,
  averaged into 1-second bins (at most one row per second per step).
- ``power_idle``: the samples of the trace outside the run, when it has any: ``before the
  run`` (before the manifest was created: no target preparation, no fio) and ``after the run``
  (after the last step ended: the drive may still be working off writes), each with
  ``seconds``, ``samples`` and the average, least and most ``_w``.
- ``endurance``: ``item``, ``value``, ``unit`` from the drive spec in the results directory
  (``drive.toml``, ``drive.yaml`` or ``drive.yml``, see :mod:`ssdlab.telemetry.endurance`) and
  the SMART snapshots: :data:`ENDURANCE_ITEMS` in that order, those that can be computed.
"""

from __future__ import annotations

import math
from datetime import datetime
from pathlib import Path

import polars as pl

from ..errors import InputError
from ..io.fio_json import INT64_MAX
from ..layout import SMART_AFTER, SMART_BEFORE, SMART_PHASES
from ..logs import log_params
from ..manifest import Manifest, StepRecord
from ..pipeline import Damage, RunContext, StepData, log_starts
from . import store
from .endurance import (
    DriveSpec,
    implied_endurance_tb,
    implied_pe_cycles,
    load_drive_spec,
    projected_life_years,
    wear_check,
)
from .power import efficiency, step_power
from .power.steps import STEP_POWER_COLUMNS
from .record import COUNTERS, SmartRecord
from .snapshot import smart_delta, waf

SMART_FIELDS = {
    "host_bytes_written": pl.Int64,
    "nand_bytes_written": pl.Int64,
    "percent_used": pl.Int64,
    "average_erase_count": pl.Int64,
    "capacity_bytes": pl.Int64,
    "temperature_c": pl.Float64,
    "power_on_hours": pl.Int64,
    "media_errors": pl.Int64,
    "model": pl.String,
    "serial": pl.String,
    "firmware": pl.String,
}
SMART_SCHEMA = {
    "step_index": pl.Int64,
    "step": pl.String,
    "phase": pl.String,
    "time": pl.Datetime("us", "UTC"),
    **SMART_FIELDS,
}
WAF_SCHEMA = {
    "step_index": pl.Int64,
    "step": pl.String,
    "host_bytes": pl.Int64,
    "nand_bytes": pl.Int64,
    "waf": pl.Float64,
    "cumulative_host_bytes": pl.Int64,
    "cumulative_nand_bytes": pl.Int64,
    "cumulative_waf": pl.Float64,
}
WINDOW_SCHEMA = {
    "step_index": pl.Int64,
    "step": pl.String,
    "start_s": pl.Float64,
    "end_s": pl.Float64,
    "window_reason": pl.String,
    "iops": pl.Float64,
    "bw_bytes_s": pl.Float64,
}
POWER_SCHEMA = (
    {"step_index": pl.Int64, "step": pl.String}
    | STEP_POWER_COLUMNS
    | {
        "iops": pl.Float64,
        "bw_bytes_s": pl.Float64,
        "mb_s_per_w": pl.Float64,
        "iops_per_w": pl.Float64,
    }
)
POWER_TRACE_SCHEMA = {
    "step_index": pl.Int64,
    "step": pl.String,
    "t_s": pl.Float64,
    "power_w": pl.Float64,
}
POWER_IDLE_SCHEMA = {
    "phase": pl.String,
    "seconds": pl.Float64,
    "samples": pl.Int64,
    "avg_w": pl.Float64,
    "min_w": pl.Float64,
    "max_w": pl.Float64,
}
ENDURANCE_SCHEMA = {"item": pl.String, "value": pl.Float64, "unit": pl.String}
#: endurance items and their units, in frame order
ENDURANCE_ITEMS = {
    "capacity": "TB",
    "warranty": "years",
    "rated endurance": "TBW",
    "rated DWPD": "drive writes/day",
    "raw NAND capacity": "TB",
    "rated P/E cycles": "cycles",
    "host written (run)": "bytes",
    "NAND written (run)": "bytes",
    "WAF (run)": "ratio",
    "host written (lifetime)": "bytes",
    "NAND written (lifetime)": "bytes",
    "WAF (lifetime)": "ratio",
    "percent used": "%",
    "rated TBW used": "%",
    "P/E cycles used": "cycles",
    "rated P/E cycles used": "%",
    "projection WAF": "ratio",
    "implied P/E cycles": "cycles",
    "implied endurance": "TBW",
    "daily host writes": "TB/day",
    "projected life": "years",
    "projected remaining life": "years",
}


def _trace(context: RunContext) -> pl.DataFrame | None:
    """The run's power trace, None without one."""
    return store.read_trace(context.path)


def _check_fits(snapshot: SmartRecord) -> None:
    """InputError naming the capture of an integer too large for the frames' Int64 columns
    (a 128-bit counter beyond 2^63 - 1: 9.2 EB, more than any drive writes)."""
    for name in (*SMART_FIELDS, *COUNTERS):
        value = getattr(snapshot, name)
        if isinstance(value, int) and value > INT64_MAX:
            where = Path(snapshot.path or "") / snapshot.origin.get(name, "")
            raise InputError(f"{where}: {name} = {value} is beyond 2^63 - 1 bytes or counts")


def _snapshots(context: RunContext) -> list[tuple[StepRecord, str, datetime | None, SmartRecord]]:
    """(step, phase, capture time, snapshot) of every SMART snapshot, in run order."""
    found = []
    for record, step_dir in context.folders():
        try:
            captures = store.read_captures(step_dir)
        except InputError as exc:
            _left_out(context, record, exc)
            captures = {}
        for phase in SMART_PHASES:
            try:
                snapshot = store.step_snapshot(step_dir, phase)
            except InputError as exc:  # the run's other frames load without it
                _left_out(context, record, exc)
                continue
            if snapshot is not None:
                _check_fits(snapshot)
                when = captures.get(phase, {}).get("time")
                found.append(
                    (record, phase, datetime.fromisoformat(when) if when else None, snapshot)
                )
    return found


def _left_out(context: RunContext, record: StepRecord, exc: InputError) -> None:
    """A SMART capture that cannot be read, listed in the run's damage."""
    path, _, reason = str(exc).partition(": ")
    context.damaged.append(Damage(path, reason, record.index, record.name, "SMART snapshot"))


def smart_frame(context: RunContext) -> pl.DataFrame:
    """SMART snapshots before and after each step (see the module docstring)."""
    rows = [
        {"step_index": record.index, "step": record.name, "phase": phase, "time": when}
        | {name: getattr(snapshot, name) for name in SMART_FIELDS}
        for record, phase, when, snapshot in context.once(_snapshots)
    ]
    return pl.DataFrame(rows, schema=SMART_SCHEMA)


def waf_frame(context: RunContext) -> pl.DataFrame:
    """Write amplification per step and cumulative (see the module docstring)."""
    by_step: dict[int, dict[str, SmartRecord]] = {}
    names: dict[int, str] = {}
    for record, phase, _, snapshot in context.once(_snapshots):
        by_step.setdefault(record.index, {})[phase] = snapshot
        names[record.index] = record.name
    first: SmartRecord | None = None
    rows = []
    for index, phases in by_step.items():
        first = first or phases.get(SMART_BEFORE)
        if SMART_BEFORE not in phases or SMART_AFTER not in phases:
            continue
        step = smart_delta(phases[SMART_BEFORE], phases[SMART_AFTER])
        total = smart_delta(first, phases[SMART_AFTER]) if first is not None else step
        rows.append(
            {
                "step_index": index,
                "step": names[index],
                "host_bytes": step.host_bytes_written,
                "nand_bytes": step.nand_bytes_written,
                "waf": step.waf,
                "cumulative_host_bytes": total.host_bytes_written,
                "cumulative_nand_bytes": total.nand_bytes_written,
                "cumulative_waf": total.waf,
            }
        )
    return pl.DataFrame(rows, schema=WAF_SCHEMA)


def _measured_window(step: StepData) -> tuple[float, float] | str:
    """Epoch seconds (start, end) of the step's measured I/O, or why they are unknown (its
    iops logs' starts as parsed once: :func:`~ssdlab.pipeline.log_starts`)."""
    fio = step.fio
    if step.log_start_problem:
        return step.log_start_problem
    first_ms = step.log_start_ms or {}
    windows = []
    for job in log_params(fio.meta, fio.jobs):
        start_ms, runtime_s = job["start_ms"], job["runtime_s"]
        if start_ms is None and job["job_index"] in first_ms:
            start_ms = first_ms[job["job_index"]] - job["window_ms"]
        elif start_ms is None and fio.meta["timestamp_ms"]:  # shorter than one log window
            start_ms = fio.meta["timestamp_ms"] - runtime_s * 1000
        elif start_ms is None:
            return "no fio log or result timestamp to place the step in time"
        if runtime_s:
            windows.append((start_ms / 1000, start_ms / 1000 + runtime_s))
    if not windows:
        return "fio measured no I/O"
    return min(w[0] for w in windows), max(w[1] for w in windows)


def step_windows(context: RunContext) -> pl.DataFrame:
    """Each loaded step's measured window (or ``window_reason``) and its IOPS and bytes/s."""
    rows = []
    log_starts(context.steps)
    for step in context.steps:
        window = _measured_window(step)
        start, end = window if isinstance(window, tuple) else (None, None)
        jobs = step.fio.jobs
        rows.append(
            {
                "step_index": step.record.index,
                "step": step.record.name,
                "start_s": start,
                "end_s": end,
                "window_reason": window if isinstance(window, str) else None,
                "iops": float(pl.Series([j["iops"] for j in jobs]).sum()) if jobs else 0.0,
                "bw_bytes_s": float(pl.Series([j["bw_bytes_s"] for j in jobs]).sum())
                if jobs
                else 0.0,
            }
        )
    return pl.DataFrame(rows, schema=WINDOW_SCHEMA)


def _step_power(trace: pl.DataFrame, windows: pl.DataFrame) -> pl.DataFrame:
    """The ``power`` frame of a trace (time_s, power_w) and :func:`step_windows`."""
    placed = windows.filter(pl.col("window_reason").is_null())
    keyed = placed.select(pl.col("step_index").alias("step"), "start_s", "end_s")
    power = step_power(trace, keyed)
    rates = placed.select(pl.col("step_index").alias("step"), "iops", "bw_bytes_s")
    power = power.join(
        efficiency(power, rates).select("step", "mb_s_per_w", "iops_per_w"), on="step"
    ).rename({"step": "step_index"})
    return (
        windows.join(power, on="step_index", how="left", suffix="_power")
        .with_columns(
            samples=pl.col("samples").fill_null(0),
            covered=pl.col("covered").fill_null(False),
            reason=pl.coalesce("window_reason", "reason"),
        )
        .select(list(POWER_SCHEMA))
        .cast(POWER_SCHEMA)  # type: ignore[arg-type]
    )


def power_per_step(results_dir: Path) -> pl.DataFrame:
    """The ``power`` frame of a run read alone (``ssdlab power show``), its trace read once;
    InputError when the run has no power trace or no step to align it with."""
    from ..results import build_frame

    context = RunContext(results_dir, Manifest.load(results_dir))
    frame = build_frame("power", context)
    if frame.is_empty():
        raise InputError(
            f"{results_dir}: no power trace (record one with 'ssdlab run --power' or "
            "'ssdlab power attach')"
            if context.once(_trace) is None
            else f"{results_dir}: no step to align power with"
        )
    return frame


def power_frame(context: RunContext) -> pl.DataFrame:
    """Power and efficiency per step (see the module docstring)."""
    trace = context.once(_trace)
    if trace is None:
        return pl.DataFrame(schema=POWER_SCHEMA)
    return _step_power(trace, context.once(step_windows))


def power_trace_frame(context: RunContext) -> pl.DataFrame:
    """Each step's power samples in 1-second bins (see the module docstring)."""
    trace = context.once(_trace)
    if trace is None:
        return pl.DataFrame(schema=POWER_TRACE_SCHEMA)
    trace = trace.select("time_s", "power_w").drop_nulls().sort("time_s")
    times = trace["time_s"]
    windows = context.once(step_windows).filter(pl.col("window_reason").is_null())
    parts = [pl.DataFrame(schema=POWER_TRACE_SCHEMA)]
    for index, step, start, end in windows.select("step_index", "step", "start_s", "end_s").rows():
        lo = times.search_sorted(start, side="left")
        hi = times.search_sorted(end, side="right")
        inside = trace.slice(lo, hi - lo).with_columns(t_s=pl.col("time_s") - start)
        parts.append(
            inside.group_by(pl.col("t_s").floor().alias("second"), maintain_order=True)
            .agg(pl.col("t_s").mean(), pl.col("power_w").mean())
            .select(
                pl.lit(index, pl.Int64).alias("step_index"),
                pl.lit(step, pl.String).alias("step"),
                "t_s",
                "power_w",
            )
        )
    return pl.concat(parts)


def power_idle_frame(context: RunContext) -> pl.DataFrame:
    """Power outside the run, before it and after it (see the module docstring)."""
    trace = context.once(_trace)
    ended = [s.ended for s in context.manifest.steps if s.ended is not None]
    if trace is None or not ended:
        return pl.DataFrame(schema=POWER_IDLE_SCHEMA)
    trace = trace.select("time_s", "power_w").drop_nulls()
    phases = (
        ("before the run", pl.col("time_s") < context.manifest.created.timestamp()),
        ("after the run", pl.col("time_s") > max(ended).timestamp()),
    )
    rows = [
        trace.filter(inside).select(
            phase=pl.lit(phase),
            seconds=pl.col("time_s").max() - pl.col("time_s").min(),
            samples=pl.len().cast(pl.Int64),
            avg_w=pl.col("power_w").mean(),
            min_w=pl.col("power_w").min(),
            max_w=pl.col("power_w").max(),
        )
        for phase, inside in phases
    ]
    return pl.concat(rows).filter(pl.col("samples") > 0).cast(POWER_IDLE_SCHEMA)  # type: ignore[arg-type]


def _endurance_items(
    spec: DriveSpec | None, waf_rows: pl.DataFrame, latest: SmartRecord | None
) -> pl.DataFrame:
    """The ``endurance`` frame from a drive spec, a ``waf`` frame and the last snapshot."""
    values: dict[str, float | None] = {}
    if spec is not None:
        values |= {
            "capacity": spec.capacity_tb,
            "warranty": spec.warranty_years,
            "rated endurance": spec.tbw,
            "rated DWPD": spec.drive_writes_per_day,
            "raw NAND capacity": spec.raw_tb,
            "rated P/E cycles": spec.pe_cycles,
        }
    run_waf = None
    if not waf_rows.is_empty():
        last = waf_rows.row(-1, named=True)
        run_waf = last["cumulative_waf"]
        values |= {
            "host written (run)": last["cumulative_host_bytes"],
            "NAND written (run)": last["cumulative_nand_bytes"],
            "WAF (run)": run_waf,
        }
    measured = run_waf
    if latest is not None:
        measured = measured or waf(latest)
        values |= {
            "host written (lifetime)": latest.host_bytes_written,
            "NAND written (lifetime)": latest.nand_bytes_written,
            "WAF (lifetime)": waf(latest),
            "percent used": latest.percent_used,
        }
        if spec is not None:
            wear = wear_check(spec, latest)
            values |= {
                "rated TBW used": wear.tbw_percent_used,
                "P/E cycles used": wear.pe_cycles_used,
                "rated P/E cycles used": wear.pe_percent_used,
            }
    if spec is not None and measured:
        used = latest.percent_used if latest is not None else None
        values |= {
            "projection WAF": measured,
            "implied P/E cycles": implied_pe_cycles(spec.tbw, measured, spec.raw_tb)
            if spec.raw_tb
            else None,
            "implied endurance": implied_endurance_tb(spec, measured),
            "daily host writes": spec.daily_tb,
            "projected life": projected_life_years(spec, measured, spec.daily_tb),
            "projected remaining life": None
            if used is None
            else projected_life_years(spec, measured, spec.daily_tb, percent_used=used),
        }
    rows = [
        (item, float(values[item]), unit)
        for item, unit in ENDURANCE_ITEMS.items()
        if values.get(item) is not None and math.isfinite(values[item])  # type: ignore[arg-type]
    ]
    return pl.DataFrame(rows, schema=ENDURANCE_SCHEMA, orient="row")


def endurance_frame(context: RunContext) -> pl.DataFrame:
    """Rated and measured endurance of the drive (see the module docstring)."""
    snapshots = context.once(_snapshots)
    spec_path = store.find_drive_spec(context.path)
    return _endurance_items(
        load_drive_spec(spec_path) if spec_path is not None else None,
        waf_frame(context),
        snapshots[-1][3] if snapshots else None,
    )

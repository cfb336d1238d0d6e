"""ACT trials: one load level, run with the fio emulation or read from a native ACT log,
judged slice by slice by ACT's rule, and kept in ``act.json`` beside a results directory's
manifest (written atomically after every slice, so an interrupted trial keeps every slice
it judged).

Pass rule (every slice, ``reads`` only): the shown (2-decimal) percentages of reads at or over
1, 8 and 64 ms must stay strictly below 5, 1 and 0.1 (:data:`~ssdlab.act.latency.ACT_LIMITS`).

Can't keep up (fio). ACT stops when a service thread falls more than max-lag-sec behind its
schedule. The emulation measures the same lag for every fio job that has a requested rate:
``lag(t) = t - (done(t) + 1) / rate`` seconds (one request may be in flight), where ``done``
counts completions; for the small-read clones at the end of every histogram-log window, for
the other jobs (large-block reads and writes) over the slice from fio's totals. A shortfall of
s % sustained for T seconds is a lag of s x T / 100 s: a slice whose largest lag exceeds
``max_lag_s`` ends the trial as ``cant_keep_up``. fio restarts its rate clock with every
slice, so the lag does not carry over from one slice to the next.

Device identity: every trial records what it ran on (:class:`DeviceId`): a fio trial the
results directory's target (``act run`` refuses another target in the same directory), a
native trial the devices its ACT log names. A native log of another device joins a results
directory only when asked (``other_device``): it is shown, marked, and left out of the score.

Statuses: ``passed`` (every slice of the duration passed), ``failed`` (a slice over a limit,
or a native log that stopped with an ERROR), ``cant_keep_up`` (lag, or ACT's own "can't keep
up" ERROR), ``abandoned`` (no verdict: interrupted, fio failed, or a native log that ends
before its test-duration-sec without an ERROR); ``running`` while a trial runs. A fio trial
stops at its first failing slice.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np
import polars as pl
from pydantic import BaseModel, Field, ValidationError

from .. import fio_options
from ..atomic import write_text_atomic
from ..errors import InputError, SuiteError
from ..io.fio_json import FioJson
from ..io.text import read_bytes
from ..layout import ACT_RECORD, FIO_JSON
from ..logs import MISSING_LOG, job_logs, job_options
from ..manifest import TargetInfo
from ..pipeline import result_jobs
from ..units import format_capacity, parse_size
from ..vocab import DIRECTIONS
from .histogram import over_counts, read_hist_reads, same_layout
from .latency import ACT_LIMITS, latency_table, passes, pct_column, slice_table
from .log import ActLog

THRESHOLDS_MS: tuple[float, ...] = tuple(ACT_LIMITS)
ONE_X_READS = 2000  # reads/s per device at 1x load
TrialStatus = Literal["running", "passed", "failed", "cant_keep_up", "abandoned"]
VERDICTS: tuple[TrialStatus, ...] = ("passed", "failed", "cant_keep_up")


class SliceResult(BaseModel):
    """One slice of a trial: percentages of reads at or over 1/8/64 ms and the verdict.

    fio slices also hold ``reads`` (reads measured), ``pct_edge_<T>ms`` (reads in the fio bin
    straddling T, counted as over), ``lag_s`` (the largest lag of any job) and ``lagging_job``.
    """

    slice: int
    step: str | None = None
    start_s: int
    end_s: int
    reads: int | None = None
    pct_over_1ms: float
    pct_over_8ms: float
    pct_over_64ms: float
    pct_edge_1ms: float | None = None
    pct_edge_8ms: float | None = None
    pct_edge_64ms: float | None = None
    read_rate: float
    requested_read_rate: float
    lag_s: float | None = None
    lagging_job: str | None = None
    passed: bool


class FioSettings(BaseModel):
    """How a fio trial emulates ACT; a trial is reused only when these match."""

    config: dict[str, Any]  # ActConfig by ACT's names
    hist_msec: int = Field(ge=1)
    small_read_jobs: int | None = None
    ioengine: str = "psync"
    fio_options: dict[str, str] = Field(default_factory=dict)
    allowed_fio_options: list[str] = Field(default_factory=list)  # --allow-fio-option
    max_lag_s: float = Field(ge=0)

    def check(self) -> None:
        """SuiteError for options or an engine :mod:`ssdlab.fio_options` refuses, so a trial
        is refused before anything runs (``fio_jobs`` checks its job file again); not done on
        load, so records from before the policy still read."""
        for name in self.allowed_fio_options:
            if problem := fio_options.opt_in_problem(name):
                raise SuiteError(problem)
        if problem := fio_options.ioengine_problem(self.ioengine, self.allowed_fio_options):
            raise SuiteError(problem)
        fio_options.check_options(self.fio_options, self.allowed_fio_options, "--fio-option")


class DeviceId(BaseModel):
    """What a trial ran on, as known when it ran: a block device by kernel ``name``, model,
    serial and size; a file by its path and size; a device an ACT log names by the name the
    log gives (the kernel name for ``/dev/<name>``, else the whole path) and the size of its
    device line (a log names no model or serial)."""

    kind: Literal["block", "file"]
    name: str
    size_bytes: int | None = None
    model: str | None = None
    serial: str | None = None

    @classmethod
    def of_target(cls, target: TargetInfo) -> DeviceId:
        """A results directory's target (:class:`~ssdlab.manifest.TargetInfo`)."""
        device = target.device or {}
        if target.kind == "block":
            name = device.get("name") or Path(target.path).name
            return cls(
                kind="block",
                name=name,
                size_bytes=target.size_bytes,
                model=device.get("model"),
                serial=device.get("serial"),
            )
        return cls(kind="file", name=target.path, size_bytes=target.size_bytes)

    @classmethod
    def of_log(cls, log: ActLog) -> list[DeviceId]:
        """The devices a native ACT log names (``device-names``), with their sizes."""
        sizes = {d.name: d.size_bytes for d in log.devices}
        found = []
        for path in log.config.get("device-names", []):
            direct = path.startswith("/dev/") and "/" not in path[len("/dev/") :]
            found.append(
                cls(
                    kind="block" if path.startswith("/dev/") else "file",
                    name=path[len("/dev/") :] if direct else path,
                    size_bytes=sizes.get(path),
                )
            )
        return found

    def same(self, other: DeviceId) -> bool:
        """Shown to be the same device: by model, serial and size when both have a serial;
        never when only one has (the other cannot be told apart); else by kind, name and a
        known, equal size."""
        if self.serial and other.serial:
            mine, theirs = (self.model, self.serial), (other.model, other.serial)
            return mine == theirs and self.size_bytes == other.size_bytes
        if self.serial or other.serial or self.size_bytes is None:
            return False
        return (self.kind, self.name, self.size_bytes) == (other.kind, other.name, other.size_bytes)

    def describe(self) -> str:
        """``nvme0n1 (model X, serial Y, 1.7 TiB)``, ``file /data/act.dat (1 GiB)``."""
        facts = [f"{k} {v}" for k, v in (("model", self.model), ("serial", self.serial)) if v]
        if self.size_bytes is not None:
            facts.append(format_capacity(self.size_bytes))
        shown = f"file {self.name}" if self.kind == "file" else self.name
        return f"{shown} ({', '.join(facts)})" if facts else shown


def same_devices(a: list[DeviceId], b: list[DeviceId]) -> bool:
    """The two lists name the same devices (in any order), each shown the same; never an
    empty list (nothing to tell apart)."""
    if not a or not b:
        return False
    unmatched = list(b)
    for device in a:
        match = next((d for d in unmatched if device.same(d)), None)
        if match is None:
            return False
        unmatched.remove(match)
    return not unmatched


def describe_devices(devices: list[DeviceId] | None) -> str:
    """The devices of a trial in words; ``device not recorded`` for None."""
    if not devices:
        return "device not recorded"
    return " and ".join(d.describe() for d in devices)


class Trial(BaseModel):
    """One load level: its slices and verdict. ``log`` is a native trial's copy of its ACT
    log, relative to the results directory. ``devices``: what it ran on (None: not recorded;
    see :func:`trial_devices`); ``other_device``: imported from another device than the
    run's, on request, and left out of the score."""

    trial: int
    source: Literal["fio", "native"]
    load: float
    duration_s: int
    slice_s: int
    status: TrialStatus = "running"
    reason: str = ""
    started: datetime | None = None
    ended: datetime | None = None
    settings: FioSettings | None = None
    log: str | None = None
    devices: list[DeviceId] | None = None
    other_device: bool = False
    slices: list[SliceResult] = Field(default_factory=list)

    def mark_passed(self) -> None:
        self.status = "passed"
        self.reason = f"{len(self.slices)} slices of {self.slice_s} s within the limits"

    @property
    def summary(self) -> str:
        """One line: trial, load, source, verdict and why (and, for a trial from another
        device, which one and that the score leaves it out)."""
        line = f"trial {self.trial} ({self.load:g}x, {self.source}): {self.status}: {self.reason}"
        if self.other_device:
            line += f" [another device: {describe_devices(self.devices)}; not in the score]"
        return line


def trial_devices(trial: Trial, target: TargetInfo | None) -> list[DeviceId] | None:
    """What ``trial`` ran on: as its record says, else, for a fio trial, the results
    directory's ``target`` (the only one ``act run`` uses in a directory); None when unknown
    (a native trial recorded before devices were)."""
    if trial.devices is not None:
        return trial.devices
    if trial.source == "fio" and target is not None:
        return [DeviceId.of_target(target)]
    return None


class SearchRecord(BaseModel):
    """One ``act score`` search: its options, the loads it tried (in order) and its outcome
    (``capped``: the score is ``max_load``, which passed)."""

    start: float | None = None
    resolution: float
    max_load: float
    duration_s: int
    slice_s: int
    tried: list[float] = Field(default_factory=list)
    score: float | None = None
    capped: bool = False
    ended: datetime | None = None


class ActRecord(BaseModel):
    """The content of ``act.json``."""

    format_version: int = 1
    trials: list[Trial] = Field(default_factory=list)
    searches: list[SearchRecord] = Field(default_factory=list)

    @classmethod
    def load(cls, results_dir: Path) -> ActRecord:
        """The record of a results directory; empty when it has none."""
        path = results_dir / ACT_RECORD
        if not path.exists():
            return cls()
        try:
            return cls.model_validate_json(read_bytes(path))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"])
            raise InputError(
                f"{path}: invalid ACT record at {loc or 'top'}: {first['msg']}"
            ) from None

    def save(self, results_dir: Path) -> None:
        write_text_atomic(results_dir / ACT_RECORD, self.model_dump_json(indent=2) + "\n")

    def add(self, trial: Trial) -> Trial:
        """Append ``trial`` under the next trial number."""
        trial.trial = len(self.trials) + 1
        self.trials.append(trial)
        return trial


def _latency_reason(row: dict[str, Any], verdict: dict[str, Any]) -> str | None:
    """Why a slice failed the pass rule, from a :func:`passes` row; None if it passed."""
    for t, limit in ACT_LIMITS.items():
        if not verdict[pct_column(t, "pass")]:
            return (
                f"slice {row['slice']}: {row[pct_column(t)]:.2f} % of reads >= {t:g} ms "
                f"(limit {limit:g} %)"
            )
    return None


def _requested_ops(
    options: dict[str, str], direction: str, bs_bytes: int, job: str
) -> float | None:
    """Operations/s a job's ``rate_iops`` or ``rate`` (bytes/s) asks of ``direction``;
    InputError naming ``job`` for a value that is not a size, so the slice is not judged."""
    for key, per_op in (("rate_iops", 1), ("rate", bs_bytes)):
        values = options.get(key, "").split(",")
        value = (values[DIRECTIONS.index(direction)] if len(values) > 1 else values[0]).strip()
        if value:
            try:
                return parse_size(value) / per_op
            except ValueError as exc:
                raise InputError(
                    f"job {job}: {key}={options[key]}: {exc}; the slice is not judged"
                ) from None
    return None


def judge_fio_slice(
    step_dir: Path,
    fio: FioJson,
    *,
    slice_no: int,
    slice_s: int,
    max_lag_s: float,
    step: str | None = None,
) -> tuple[SliceResult, str | None, TrialStatus]:
    """Judge one slice run by fio: the slice, why it failed (None if it passed) and the
    status it gives its trial (``passed`` meaning "go on").

    Reads come from the small-read jobs' histogram logs, summed over the clones; a clone's
    log that is missing is an InputError naming it (never a sum over the others).
    """
    jobs = result_jobs(fio, step_dir / FIO_JSON)
    found, missing = job_logs(fio.meta, step_dir)
    if gaps := [log.path for log in missing if log.kind == "clat_hist"]:
        more = f" (and {len(gaps) - 1} more)" if len(gaps) > 1 else ""
        raise InputError(f"{gaps[0]}{more}: {MISSING_LOG}; the slice is not judged without it")
    logs = [log for log in found if log.kind == "clat_hist"]
    if not logs:
        raise InputError(f"{step_dir}: no small-read histogram logs (write_hist_log)")
    reads = [read_hist_reads(log.path) for log in logs]
    same_layout(reads)
    bins = np.vstack([r.bins for r in reads]).sum(axis=0, keepdims=True)
    table = slice_table("reads", [int(bins.sum())], over_counts(bins, THRESHOLDS_MS), slice_s)
    row = table.row(0, named=True) | {"slice": slice_no}
    verdict = passes(table).row(0, named=True)

    lags: list[tuple[float, str]] = []
    read_jobs: dict[int, float] = {}
    for log, hist in zip(logs, reads, strict=True):
        name = fio.meta["job_names"][log.job_index]
        rate = _requested_ops(job_options(fio.meta, log.job_index), "read", 0, name)
        if rate:
            read_jobs[log.job_index] = rate
        if rate and hist.time_ms.size:
            done = np.cumsum(hist.bins.sum(axis=1))
            lag = float(np.max(hist.time_ms / 1000 - (done + 1) / rate))
            lags.append((lag, name))
    for job in jobs.iter_rows(named=True):
        opts = job_options(fio.meta, job["job_index"])
        rate = _requested_ops(opts, job["direction"], job["bs_bytes"] or 1, job["jobname"])
        if rate:
            lags.append((job["runtime_s"] - (job["total_ios"] + 1) / rate, job["jobname"]))
    lag, lagging = max(lags, default=(0.0, None))
    small = jobs.filter(
        pl.col("job_index").is_in(list(read_jobs)) & (pl.col("direction") == "read")
    )
    result = SliceResult(
        slice=slice_no,
        step=step,
        start_s=(slice_no - 1) * slice_s,
        end_s=slice_no * slice_s,
        reads=int(bins.sum()),
        **{k: v for k, v in row.items() if k.startswith(("pct_over_", "pct_edge_"))},
        read_rate=round(float(small["iops"].sum()), 1),
        requested_read_rate=float(sum(read_jobs.values())),
        lag_s=round(lag, 3),
        lagging_job=lagging,
        passed=verdict["passed"] and lag <= max_lag_s,
    )
    if lag > max_lag_s:
        reason = (
            f"slice {slice_no}: {lagging} fell {lag:.2f} s behind its requested rate "
            f"(max {max_lag_s:g} s); reads {result.read_rate:,.0f}/s of "
            f"{result.requested_read_rate:,.0f}/s requested"
        )
        return result, reason, "cant_keep_up"
    reason = _latency_reason(row, verdict)
    return result, reason, "failed" if reason else "passed"


def native_load(log: ActLog) -> float:
    """A native log's load: its read rate over 2000 reads/s per device."""
    reads = log.config.get("read-reqs-per-sec", 0)
    return reads / (ONE_X_READS * int(log.config.get("num-devices", 1)))


def native_trial(log: ActLog, *, slice_s: int, load: float | None = None) -> Trial:
    """The trial a native ACT log records, judged at ``slice_s``-second slices.

    A log that stopped with an ERROR fails whatever its slices show (``cant_keep_up`` when
    ACT says so); one that ends before test-duration-sec without an ERROR is ``abandoned``.
    """
    duration = int(log.config.get("test-duration-sec", 0))
    last = log.reports[-1].seconds if log.reports else 0
    trial = Trial(
        trial=0,
        source="native",
        load=native_load(log) if load is None else load,
        duration_s=duration,
        slice_s=slice_s,
        devices=DeviceId.of_log(log),
    )
    requested = float(
        log.derived.get("internal-read-reqs-per-sec", log.config.get("read-reqs-per-sec", 0))
    )
    try:
        table = latency_table(log, "reads", slice_s, THRESHOLDS_MS)
    except InputError:
        if not log.errors:
            raise
        table = None  # stopped before its first slice: the ERROR is the verdict
    failure = None
    if table is not None:
        for row, verdict in zip(
            table.filter(~pl.col("slice").is_in(["avg", "max"])).iter_rows(named=True),
            passes(table).iter_rows(named=True),
            strict=True,
        ):
            n = int(row["slice"])
            trial.slices.append(
                SliceResult(
                    slice=n,
                    start_s=(n - 1) * slice_s,
                    end_s=n * slice_s,
                    **{k: v for k, v in row.items() if k.startswith("pct_over_")},
                    read_rate=row["rate"],
                    requested_read_rate=requested,
                    passed=verdict["passed"],
                )
            )
            failure = failure or _latency_reason(row, verdict)
    if log.errors:
        trial.status = "cant_keep_up" if any("can't keep up" in e for e in log.errors) else "failed"
        trial.reason = f"ACT stopped after {last} s: {log.errors[0]}"
    elif failure:
        trial.status, trial.reason = "failed", failure
    elif log.status == "incomplete":
        trial.status = "abandoned"
        trial.reason = f"log ends at {last} s of test-duration-sec {duration}"
    else:
        trial.mark_passed()
    return trial

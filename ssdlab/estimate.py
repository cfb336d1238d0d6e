"""How long a suite's steps take, for ``ssdlab plan`` and the live ETA of a run.

A time-based step takes its ``startdelay`` + ramp + runtime. A size-based step (``loops``)
ends when its planned bytes (:func:`~ssdlab.fio_options.planned_io_bytes`) are moved, so it
takes bytes / rate, bounded by its time cap (``runtime_s``). A rate depends on the I/Os a
step keeps in flight (:func:`in_flight`: iodepth x numjobs, one per job for a synchronous
engine or buffered libaio): by Little's law, IOPS = in flight / latency, up to what the
target does at most. The rate is measured in an earlier step of the run when one ran a like workload
(:meth:`Rates.learned`): the same direction and access pattern, nearest in mean I/O size
(:func:`mean_io_bytes`), then in I/Os in flight; its IOPS scaled to this step's I/Os in
flight (more in flight is counted faster only up to the larger of that step's and the
class's top IOPS and MB/s), in bytes its IOPS x the smaller of the two mean I/O sizes (a
larger block is not counted faster).
Else it is a conservative default for the target's class (:data:`DEFAULTS`). Every step
also counts :data:`STEP_START_S` for fio's start and ssdlab's bookkeeping around it.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

import polars as pl

from .fio_options import MIXED_BS_OPTIONS, SWEEP_OWN, planned_io_bytes
from .manifest import TargetInfo
from .suite import Rounds, Step, Suite, Sweep
from .tables import format_bytes
from .units import fio_seconds, parse_size
from .vocab import MIXED_RW, READ_RW, SYNC_ENGINES, TRIM_RW

__all__ = [
    "DEFAULTS",
    "RUN_START_S",
    "STEP_START_S",
    "Rate",
    "Rates",
    "StepTime",
    "TargetClass",
    "in_flight",
    "item_seconds",
    "mean_io_bytes",
    "suite_seconds",
    "target_class",
    "workload_key",
]

TargetClass = Literal["memory", "file", "device"]

#: seconds each step takes besides fio's I/O: fio's start and job setup, the job file, the
#: manifest and fio's JSON read back (measured on a 2-core VM: 0.25 s to 0.34 s, median
#: 0.28 s, over the 117 time-based steps of enterprise-review idle; up to 0.65 s busy)
STEP_START_S = 0.3
#: seconds a run takes besides its steps: ssdlab's start, the target judged, locked and laid
#: out (a new file target is written before its first step), the manifest and versions
#: (benchmarks/bench_plan.py on a 2-core VM: 0.7 s idle, 1.5 s to 3 s busy)
RUN_START_S = 0.8


@dataclass(frozen=True)
class ClassRate:
    """A target class's default rates: its top MB/s (bytes/s), top IOPS of sequential and
    random I/O and its latency of one I/O (seconds); a step's IOPS are its I/Os in flight /
    latency up to the top, its rate the lower of those IOPS x its block and the top MB/s."""

    bw_bytes_s: float
    seq_iops: float
    rand_iops: float
    latency_s: float
    label: str

    def iops(self, pattern: str) -> float:
        """The top IOPS of an access ``pattern`` (``rand`` or ``seq``)."""
        return self.rand_iops if pattern == "rand" else self.seq_iops


#: conservative rates by target class, for a size-based step no earlier step measured: a
#: file in memory (tmpfs, ramfs, or a file system without O_DIRECT: the page cache); a file
#: on a disk's file system (a SATA SSD's, below any NVMe); a block device (a SATA SSD's
#: sustained random writes once its cache is full)
DEFAULTS: dict[TargetClass, ClassRate] = {
    "memory": ClassRate(1e9, 250_000, 100_000, 10e-6, "a file in memory"),
    "file": ClassRate(500e6, 100_000, 80_000, 100e-6, "a file on disk"),
    "device": ClassRate(300e6, 50_000, 40_000, 100e-6, "a block device"),
}
#: options that hold a step below what the target can do: its rate is no measure of it
_HELD = frozenset({*SWEEP_OWN, "thinktime", "thinktime_iotime", "startdelay"})


def target_class(target: TargetInfo | None) -> TargetClass:
    """The class of ``target`` (None: not known here, a fio server's: a device, the slower
    guess): a block device, a file in memory (its file system is tmpfs/ramfs or takes no
    O_DIRECT), or a file on disk."""
    if target is None or target.kind == "block":
        return "device"
    if not target.direct_supported:
        return "memory"
    from .sysinfo import MEMORY_FS_TYPES, file_system

    path = Path(target.path).absolute()
    for place in (path, *path.parents):  # a file not made yet: the directory it goes in
        with contextlib.suppress(OSError):
            return "memory" if file_system(place).type in MEMORY_FS_TYPES else "file"
    return "file"


def _remote_class(target: TargetInfo) -> TargetClass:
    return "device" if target.kind == "block" else "file"


def workload_key(step: Step) -> tuple[str, str]:
    """What rates are matched by: the direction (a mix with its read share) and pattern."""
    rw = step.rw
    kind = (
        "read"
        if rw in READ_RW
        else "trim"
        if rw in TRIM_RW
        else f"mix{step.rwmixread}"
        if rw in MIXED_RW
        else rw.removeprefix("rand")
    )
    return kind, "rand" if rw.startswith("rand") else "seq"


def in_flight(step: Step) -> int:
    """The I/Os ``step`` keeps in flight: iodepth x numjobs; a synchronous engine's job
    (and buffered libaio's) has one at a time whatever its iodepth."""
    one = step.ioengine in SYNC_ENGINES or (step.ioengine == "libaio" and not step.direct)
    return step.numjobs * (1 if one else step.iodepth)  # buffered libaio waits per I/O


def mean_io_bytes(step: Step) -> float:
    """The mean size of ``step``'s I/Os: its ``bs``, or the weighted mean of its ``bssplit``
    (the write list of a writing step when it gives one per direction; an entry without a
    share takes an equal part of what the others leave), or the middle of its ``bsrange``
    (``bs`` when fio's notation is not read here)."""
    try:
        if split := str(step.options.get("bssplit", "")):
            lists = split.split(",")
            writes = step.rw not in READ_RW and len(lists) > 1 and lists[1]
            entries = [e.partition("/") for e in (lists[1] if writes else lists[0]).split(":")]
            free = [size for size, _, share in entries if not share]
            left = max(0.0, 100 - sum(float(share) for _, _, share in entries if share))
            weights = [
                (parse_size(size), float(share) if share else left / len(free))
                for size, _, share in entries
            ]
            total = sum(w for _, w in weights)
            return sum(b * w for b, w in weights) / total if total > 0 else float(step.bs_bytes)
        for key in ("bsrange", "blocksize_range"):
            if value := str(step.options.get(key, "")):
                low, _, high = value.split(",")[0].partition("-")
                return (parse_size(low) + parse_size(high or low)) / 2
    except ValueError:
        pass
    return float(step.bs_bytes)


def startdelay_s(step: Step) -> float:
    """fio's ``startdelay`` of ``step`` in seconds (a range's longest; 0 without one, or
    when fio's notation is not a plain time)."""
    return fio_seconds(str(step.options.get("startdelay", 0)).split("-")[-1], 1.0) or 0.0


@dataclass(frozen=True)
class Rate:
    """A rate in bytes/s and where it comes from (``measured in step X``, or a default)."""

    bytes_s: float
    source: str


@dataclass(frozen=True)
class Measured:
    """A finished step's rate: bytes/s and IOPS over its fio runtime, its mean I/O size
    (:func:`mean_io_bytes`) and its I/Os in flight."""

    step: str
    bs_bytes: float
    in_flight: int
    bw_bytes_s: float
    iops: float


@dataclass(frozen=True)
class StepTime:
    """A step's estimate: ``seconds`` (with :data:`STEP_START_S`); for a size-based step
    with known bytes, ``planned_bytes`` at ``rate`` and ``capped`` when its time cap is the
    shorter."""

    seconds: float
    planned_bytes: int | None = None
    rate: Rate | None = None
    capped: bool = False

    def describe(self) -> str:
        """How a size-based step's estimate was made, for a plan's table: ``2.15 GB at
        300 MB/s, default for a file on disk`` ('' for another step)."""
        if self.planned_bytes is None or self.rate is None:
            return ""
        said = (
            f"{format_bytes(self.planned_bytes)} at {format_bytes(self.rate.bytes_s)}/s, "
            f"{self.rate.source}"
        )
        return said + ("; its time cap ends it first" if self.capped else "")


@dataclass(frozen=True)
class Rates:
    """The rates a run's size-based steps are estimated with: the target's class and size
    (bytes; None when not known) and what earlier steps measured, by :func:`workload_key`."""

    target_class: TargetClass
    target_bytes: int | None
    measured: Mapping[tuple[str, str], tuple[Measured, ...]] = field(default_factory=dict)

    @classmethod
    def of(cls, target: TargetInfo | None, size_bytes: int | None = None) -> Rates:
        """Default rates for ``target`` (``size_bytes`` when it does not say its size)."""
        size = target.size_bytes if target and target.size_bytes else size_bytes
        return cls(target_class(target), size)

    @classmethod
    def slowest(cls, members: Iterable[tuple[TargetInfo, bool]]) -> Rates:
        """Default rates for steps run in lockstep on ``members`` (each target and whether
        it is on this machine; another machine's file is taken as a file on disk, its file
        system not looked at): the slowest class among them and the largest size (None when
        a member's is not known)."""
        classes, sizes = [], []
        for target, here in members:
            classes.append(target_class(target) if here else _remote_class(target))
            sizes.append(target.size_bytes)
        if not classes:
            return cls.of(None)
        size = None if None in sizes else max(s for s in sizes if s is not None)
        return cls(min(classes, key=lambda c: DEFAULTS[c].bw_bytes_s), size)

    def rate(self, step: Step) -> Rate:
        """``step``'s rate: measured by the like workload nearest in block size, then in
        I/Os in flight, else the class default (see the module documentation)."""
        bs, flight, pattern = mean_io_bytes(step), in_flight(step), workload_key(step)[1]
        default = DEFAULTS[self.target_class]
        if like := self.measured.get(workload_key(step)):
            near = min(
                like,
                key=lambda m: (
                    abs(math.log(m.bs_bytes / bs)),
                    abs(math.log(m.in_flight / flight)),
                    -m.bs_bytes,
                ),
            )
            iops = near.iops * flight / near.in_flight
            if flight > near.in_flight:  # faster only up to what the target is known to do
                iops = min(iops, max(near.iops, default.iops(pattern)))
            top = max(near.bw_bytes_s, default.bw_bytes_s)
            bytes_s = min(iops * min(bs, near.bs_bytes), top)
            return Rate(bytes_s, f"measured in step {near.step}")
        iops = min(default.iops(pattern), flight / default.latency_s)
        return Rate(min(default.bw_bytes_s, iops * bs), f"default for {default.label}")

    def step_time(self, step: Step) -> StepTime:
        """How long ``step`` takes (see the module documentation)."""
        fixed = STEP_START_S + startdelay_s(step) + step.ramp_s
        # mixed block sizes change only the last partial block of each pass: close enough
        whole = {k: v for k, v in step.options.items() if k not in MIXED_BS_OPTIONS}
        passes = step if whole == step.options else step.model_copy(update={"options": whole})
        planned = planned_io_bytes(passes, self.target_bytes)
        if planned is None:  # time-based, or its bytes are not known: its time (cap)
            return StepTime(fixed + (step.runtime_s or 0.0))
        rate = self.rate(step)
        seconds = planned / rate.bytes_s if rate.bytes_s > 0 else float("inf")
        capped = step.runtime_s is not None and step.runtime_s < seconds
        return StepTime(fixed + min(seconds, step.runtime_s or seconds), planned, rate, capped)

    def seconds(self, step: Step) -> float:
        return self.step_time(step).seconds

    def learned(self, step: Step, jobs: pl.DataFrame) -> Rates:
        """These rates and the one ``step`` measured (fio's per-direction rows ``jobs``:
        bytes and I/Os over the longest runtime); unchanged for a step held below what the
        target does or one that moved nothing (or whose I/Os fio did not count)."""
        runtime = float(jobs["runtime_s"].max() or 0) if jobs.height else 0.0
        moved = int(jobs["io_bytes"].sum()) if jobs.height else 0
        ios = float(jobs["total_ios"].sum() or 0) if jobs.height else 0.0
        if not _HELD.isdisjoint(step.options) or min(runtime, moved, ios) <= 0:
            return self
        flight = in_flight(step)
        new = Measured(step.name, mean_io_bytes(step), flight, moved / runtime, ios / runtime)
        key = workload_key(step)
        kept = tuple(
            m
            for m in self.measured.get(key, ())
            if (m.bs_bytes, m.in_flight) != (new.bs_bytes, flight)
        )
        return replace(self, measured={**self.measured, key: (*kept, new)})


def item_seconds(item: Step | Rounds | Sweep, rates: Rates, *, most: bool = True) -> float:
    """Seconds of one suite item: a round block at its ``max`` rounds (``most``) or its
    window, a load sweep's every run."""
    if isinstance(item, Rounds):
        rounds = item.max if most else item.window
        return rounds * sum(rates.seconds(s) for s in item.steps)
    if isinstance(item, Sweep):
        return item.runs * rates.seconds(item.workload)
    return rates.seconds(item)


def suite_seconds(suite: Suite, rates: Rates, *, most: bool = True) -> float:
    """Seconds of ``suite`` with ``rates``: every round block at its ``max`` rounds
    (``most``, what a run plans for) or steady after its first window."""
    return sum(item_seconds(item, rates, most=most) for item in suite.steps)

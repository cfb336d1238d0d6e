"""ACT storage configuration, ACT's derived rates, and a fio job file that emulates them.

The derivation follows ACT 6.5/6.6 ``cfg_storage.c`` (``derive_configuration``):

- record-stored-bytes = record-bytes rounded up to 16 bytes (Aerospike's storage granularity);
  each small read is record-stored-bytes rounded up to the device's minimum I/O size, at an
  offset aligned to it (``act_storage.c``, ``discover_read_pattern``);
- internal reads/s = reads + writes x update-pct / 100 (integer division);
- large-block writes/s = writes x RF / floor(large-block-bytes / avg-record-stored-bytes)
  x 100 / (100 - defrag-lwm-pct); large-block reads/s are the same, or 0 with
  no-defrag-reads; with commit-to-device, writes x RF are done as small writes and large-block
  writes keep only the defrag share (x (100 / (100 - defrag-lwm-pct) - 1)).
"""

from __future__ import annotations

import math
import numbers
import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from .. import fio_options
from ..errors import SsdlabError, SuiteError
from .latency import ACT_SLICE_S
from .log import typed_value

if TYPE_CHECKING:
    from .trials import FioSettings

RBLOCK_BYTES = 16  # ACT's RBLOCK_SIZE
WBLOCK_BYTES = 8 * 1024 * 1024  # ACT's WBLOCK_SIZE: largest record and large block
SMALL_READS_JOB = "act-small-reads"
LARGE_BLOCK_READS_JOB = "act-large-block-reads"
LARGE_BLOCK_WRITES_JOB = "act-large-block-writes"
SMALL_WRITES_JOB = "act-small-writes"
#: fio histogram log window of the emulation: fine enough to see ACT's 10 s max lag, coarse
#: enough for ~20 MB of logs per hour (10 small-read jobs, 1856 bins a row)
HIST_MSEC = 10_000


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple


def _power_of_2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


#: the largest load multiple ssdlab runs or configures: far above any drive's rating (hundreds)
MAX_LOAD = 10_000


def load_problem(value: float, name: str = "load") -> str | None:
    """Why ``value`` cannot be a load multiple (or a search's resolution), named ``name``:
    anything but a finite number > 0; None when it can."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"{name} must be a number, not {value!r}"
    if not (math.isfinite(value) and value > 0):
        return f"{name} must be positive and finite, not {value:g}"
    if value > MAX_LOAD:
        return f"{name} must be at most {MAX_LOAD:,}x (ACT's 1x is 2,000 reads/s), not {value:g}"
    return None


class ActConfig(BaseModel):
    """ACT storage parameters under ACT's own names (aliases) and defaults.

    ``read-reqs-per-sec`` and ``write-reqs-per-sec`` are the 1x load of ONE device; the ACT
    config file for N x load on D devices holds them multiplied by N x D (see :func:`derive`).
    ``service-threads`` None means ACT's default, 5 x CPUs. ``min-io-bytes`` is not an ACT
    setting: ACT discovers it per device (512 ... 4096, the smallest O_DIRECT read that works).
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid", frozen=True)

    device_names: list[str] = Field(default_factory=list, alias="device-names")
    num_devices: int = Field(1, ge=1, alias="num-devices")
    service_threads: int | None = Field(None, ge=1, alias="service-threads")
    test_duration_sec: int = Field(86400, ge=1, alias="test-duration-sec")
    report_interval_sec: int = Field(1, ge=1, alias="report-interval-sec")
    microsecond_histograms: bool = Field(False, alias="microsecond-histograms")
    read_reqs_per_sec: int = Field(2000, ge=0, alias="read-reqs-per-sec")
    write_reqs_per_sec: int = Field(1000, ge=0, alias="write-reqs-per-sec")
    record_bytes: int = Field(1536, ge=1, le=WBLOCK_BYTES, alias="record-bytes")
    record_bytes_range_max: int = Field(0, ge=0, le=WBLOCK_BYTES, alias="record-bytes-range-max")
    large_block_op_kbytes: int = Field(
        128, ge=1, le=WBLOCK_BYTES // 1024, alias="large-block-op-kbytes"
    )
    replication_factor: int = Field(1, ge=1, alias="replication-factor")
    update_pct: int = Field(0, ge=0, le=100, alias="update-pct")
    defrag_lwm_pct: int = Field(50, ge=0, lt=100, alias="defrag-lwm-pct")
    no_defrag_reads: bool = Field(False, alias="no-defrag-reads")
    compress_pct: int = Field(100, ge=0, le=100, alias="compress-pct")
    disable_odsync: bool = Field(False, alias="disable-odsync")
    commit_to_device: bool = Field(False, alias="commit-to-device")
    tomb_raider: bool = Field(False, alias="tomb-raider")
    tomb_raider_sleep_usec: int = Field(0, ge=0, alias="tomb-raider-sleep-usec")
    max_lag_sec: int = Field(10, ge=0, alias="max-lag-sec")
    min_io_bytes: int = Field(512, ge=512, le=4096, alias="min-io-bytes")

    @classmethod
    def from_settings(cls, settings: Mapping[str, str]) -> ActConfig:
        """The configuration from settings by ACT's names with values as text, as an ACT
        config file holds them (``{"record-bytes": "1500"}``); pydantic's ValidationError
        when one does not validate."""
        return cls.model_validate({key: typed_value(key, value) for key, value in settings.items()})

    def resolved(self, cpus: int | None = None) -> ActConfig:
        """This configuration with service-threads fixed (ACT's default: 5 per CPU of
        ``cpus``, default this machine's), so a trial resumed elsewhere runs the same jobs."""
        return self.model_copy(update={"service_threads": service_threads(self, cpus)})

    @model_validator(mode="before")
    @classmethod
    def _devices_count(cls, data: Any) -> Any:
        """``num-devices`` follows ``device-names`` when only the names are given."""
        if isinstance(data, dict):
            names = data.get("device-names", data.get("device_names"))
            if names and "num-devices" not in data and "num_devices" not in data:
                data = {**data, "num-devices": len(names)}
        return data

    @model_validator(mode="after")
    def _check(self) -> ActConfig:
        """ACT's own ``check_configuration`` rules."""
        if self.device_names and len(self.device_names) != self.num_devices:
            raise ValueError("num-devices must equal the number of device-names")
        if self.record_bytes_range_max and self.record_bytes_range_max <= self.record_bytes:
            raise ValueError("record-bytes-range-max must be 0 or larger than record-bytes")
        if not _power_of_2(self.large_block_op_kbytes):
            raise ValueError("large-block-op-kbytes must be a power of 2")
        if self.disable_odsync and self.commit_to_device:
            raise ValueError("disable-odsync can't be combined with commit-to-device")
        if not _power_of_2(self.min_io_bytes):
            raise ValueError("min-io-bytes must be a power of 2")
        return self


def act_config(settings: Mapping[str, str]) -> ActConfig:
    """:meth:`ActConfig.from_settings`, with SsdlabError naming the first setting that does
    not validate as ``--set NAME`` takes it (``--set record-bytes: ...``)."""
    try:
        return ActConfig.from_settings(settings)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = " ".join(["--set", *map(str, first["loc"])])
        raise SsdlabError(f"{where}: {first['msg']}") from None


@dataclass(frozen=True)
class DerivedConfig:
    """ACT's DERIVED CONFIGURATION for one load, plus what the fio emulation needs.

    ``read_reqs_per_sec`` / ``write_reqs_per_sec``: the rates ACT's config file would hold
    (1x per-device rate x load x devices). ``read_bytes``: size of each small read.
    """

    load: float
    num_devices: int
    service_threads: int
    read_reqs_per_sec: int
    write_reqs_per_sec: int
    record_stored_bytes: int
    record_stored_bytes_rmx: int
    internal_read_reqs_per_sec: int
    internal_write_reqs_per_sec: int
    large_block_reads_per_sec: float
    large_block_writes_per_sec: float
    large_block_bytes: int
    read_bytes: int


def service_threads(config: ActConfig, cpus: int | None = None) -> int:
    """service-threads, or ACT's default of 5 per CPU (``cpus``, default: this machine's)."""
    return config.service_threads or 5 * (cpus or os.cpu_count() or 1)


@dataclass(frozen=True)
class TrialTiming:
    """How long a fio trial runs, the length of its slices (seconds) and the window of its
    histogram logs (ms)."""

    duration_s: int
    slice_s: int
    hist_msec: int

    @classmethod
    def of(
        cls,
        config: ActConfig,
        *,
        duration_s: int | None = None,
        slice_s: int | None = None,
        hist_msec: int | None = None,
    ) -> TrialTiming:
        """What is given, else the defaults: test-duration-sec, slices of an hour (the whole
        trial when shorter), histogram windows of :data:`HIST_MSEC` (a quarter of the slice
        when shorter)."""
        duration_s = duration_s or config.test_duration_sec
        slice_s = slice_s or min(ACT_SLICE_S, duration_s)
        return cls(duration_s, slice_s, hist_msec or min(HIST_MSEC, slice_s * 250))


def fio_settings(
    config: ActConfig,
    timing: TrialTiming,
    *,
    small_read_jobs: int | None = None,
    ioengine: str = "psync",
    options: Mapping[str, str] | None = None,
    allow_fio_options: Collection[str] = (),
    max_lag_s: float | None = None,
) -> FioSettings:
    """The settings of fio trials emulating ``config`` (service-threads resolved on this
    machine), checked: SuiteError for options or an engine :mod:`ssdlab.fio_options` refuses.
    ``max_lag_s`` defaults to max-lag-sec; the other defaults are :func:`fio_jobs`'."""
    from .trials import FioSettings

    settings = FioSettings(
        config=config.resolved().model_dump(by_alias=True),
        hist_msec=timing.hist_msec,
        small_read_jobs=small_read_jobs,
        ioengine=ioengine,
        fio_options=dict(options or {}),
        allowed_fio_options=sorted(set(allow_fio_options)),
        max_lag_s=config.max_lag_sec if max_lag_s is None else max_lag_s,
    )
    settings.check()
    return settings


def derive(
    config: ActConfig, load_multiplier: float = 1.0, *, cpus: int | None = None
) -> DerivedConfig:
    """ACT's derived rates for ``load_multiplier`` x the 1x load on ``num-devices`` devices.

    Request rates are rounded to whole requests/s (ACT reads integers). ``cpus`` (default: this
    machine's) sets the default service-threads. Raises ValueError where ACT refuses to run,
    SsdlabError for a load that is not a finite number > 0.
    """
    if problem := load_problem(load_multiplier):
        raise SsdlabError(problem)
    reads = round(config.read_reqs_per_sec * load_multiplier * config.num_devices)
    writes = round(config.write_reqs_per_sec * load_multiplier * config.num_devices)
    if reads + writes == 0:
        raise ValueError("read-reqs-per-sec and write-reqs-per-sec can't both be zero")
    threads = service_threads(config, cpus)
    internal_reads = reads + writes * config.update_pct // 100
    replica_writes = config.replication_factor * writes
    stored = _round_up(config.record_bytes, RBLOCK_BYTES)
    stored_rmx = _round_up(config.record_bytes_range_max, RBLOCK_BYTES) or stored
    large_block_bytes = config.large_block_op_kbytes * 1024
    records_per_block = large_block_bytes // ((stored + stored_rmx) // 2)
    if records_per_block == 0:
        raise ValueError("large-block-op-kbytes is smaller than the (average) record")
    original_blocks = replica_writes / records_per_block
    amplification = 100.0 / (100 - config.defrag_lwm_pct)
    large_reads = original_blocks * amplification
    large_writes = (
        original_blocks * (amplification - 1.0) if config.commit_to_device else large_reads
    )
    internal_writes = replica_writes if config.commit_to_device else 0
    if (internal_reads + internal_writes) and (internal_reads + internal_writes) // threads == 0:
        raise ValueError(
            f"load too small for {threads} service threads (ACT: load config too small)"
        )
    return DerivedConfig(
        load=load_multiplier,
        num_devices=config.num_devices,
        service_threads=threads,
        read_reqs_per_sec=reads,
        write_reqs_per_sec=writes,
        record_stored_bytes=stored,
        record_stored_bytes_rmx=stored_rmx,
        internal_read_reqs_per_sec=internal_reads,
        internal_write_reqs_per_sec=internal_writes,
        large_block_reads_per_sec=0.0 if config.no_defrag_reads else large_reads,
        large_block_writes_per_sec=large_writes,
        large_block_bytes=large_block_bytes,
        read_bytes=_round_up(stored, config.min_io_bytes),
    )


def format_derived(derived: DerivedConfig) -> str:
    """The DERIVED CONFIGURATION block as ACT prints it."""
    return (
        "DERIVED CONFIGURATION\n"
        f"record-stored-bytes: {derived.record_stored_bytes} ... "
        f"{derived.record_stored_bytes_rmx}\n"
        f"internal-read-reqs-per-sec: {derived.internal_read_reqs_per_sec}\n"
        f"internal-write-reqs-per-sec: {derived.internal_write_reqs_per_sec}\n"
        f"large-block-reads-per-sec: {derived.large_block_reads_per_sec:.2f}\n"
        f"large-block-writes-per-sec: {derived.large_block_writes_per_sec:.2f}\n"
    )


def _split(rate: int, jobs: int) -> list[tuple[int, int]]:
    """(numjobs, rate_iops) pairs whose clones add up to exactly ``rate``."""
    jobs = max(1, min(jobs, rate))
    per_job, extra = divmod(rate, jobs)
    return [(n, r) for n, r in ((jobs - extra, per_job), (extra, per_job + 1)) if n]


def _clones(name: str, rate: int, jobs: int, options: list[str]) -> dict[str, list[str]]:
    """Job sections running ``rate`` I/O/s over ``jobs`` clones: ``name`` at rate // jobs
    each, then ``name-1`` with the remainder's clones at one more; ``{name}`` and ``{rate}``
    in ``options`` become the section's name and per-clone rate."""
    sections = {}
    for i, (n, per_job) in enumerate(_split(rate, jobs) if rate else []):
        section = name + (f"-{i}" if i else "")
        sections[section] = [
            *(o.format(name=section, rate=per_job) for o in options),
            f"numjobs={n}",
        ]
    return sections


def config_text(
    settings: Mapping[str, str], load: float = 1.0, fio_target: str | None = None
) -> str:
    """ACT's DERIVED CONFIGURATION for ``load`` x the 1x load of ``settings`` (ACT's names,
    values as text: :func:`act_config`), and the fio job file emulating it on ``fio_target``
    when given (what ``ssdlab act config`` prints); SsdlabError for a load ACT cannot run."""
    if problem := load_problem(load, "--load"):
        raise SsdlabError(problem)
    chosen = act_config(settings)
    try:
        text = format_derived(derive(chosen, load))
        return text + ("\n" + fio_jobs(chosen, load, fio_target) if fio_target else "")
    except ValueError as exc:
        raise SsdlabError(f"{load:g}x load: {exc}") from None


def fio_jobs(
    config: ActConfig,
    load: float,
    target: str | Sequence[str],
    *,
    duration_s: int | None = None,
    hist_msec: int | None = None,
    small_read_jobs: int | None = None,
    size: int | str | None = None,
    ioengine: str = "psync",
    direct: bool = True,
    options: Mapping[str, str] | None = None,
    allow_fio_options: Collection[str] = (),
    cpus: int | None = None,
) -> str:
    """A fio job file emulating ACT at ``load`` x the 1x load on ``target`` device(s).

    Jobs (all run together, ``direct=1``, ``norandommap``, ``time_based``):

    - ``act-small-reads``: randread, bs = record-stored-bytes rounded up to min-io-bytes,
      ``blockalign`` = min-io-bytes, synchronous (``psync``), the internal read rate split
      over ``small_read_jobs`` clones (default: ACT's service-threads), each with
      ``rate_iops`` = rate // jobs; when that leaves a remainder r, r of the clones are a second
      section ``act-small-reads-1`` at one more I/O per second, so the clones add up to the
      exact rate (ACT itself runs each service thread at floor(rate / threads)). Only these
      write histogram logs (``write_hist_log`` = their job name, ``log_hist_msec``).
    - ``act-large-block-reads`` / ``act-large-block-writes``: 128 KiB (large-block-op-kbytes)
      random I/O at ``rate`` = blocks/s x block bytes, in bytes/s (23.53 blocks/s is not a whole
      IOPS figure); writes with ``sync=dsync`` (O_DSYNC, unless disable-odsync) and
      ``refill_buffers`` (fresh random data each write, ``buffer_compress_percentage`` when
      compress-pct < 100).
    - ``act-small-writes`` with commit-to-device: record-sized O_DSYNC random writes.

    Several targets are used as one fio file set with ``file_service_type=random`` (ACT picks a
    random device per request). ``duration_s`` and ``hist_msec`` default to test-duration-sec
    and report-interval-sec; ``direct=False`` is for file systems without O_DIRECT (tmpfs);
    ``options`` are further fio options for every job (e.g. ``cpus_allowed``), checked with
    ``ioengine`` and the targets by :mod:`ssdlab.fio_options` (``allow_fio_options`` are the
    user's opt-ins; SuiteError). Raises ValueError for ACT options fio does not emulate here,
    SsdlabError for a load that is not a finite number > 0.
    """
    if config.record_bytes_range_max:
        raise ValueError("record-bytes-range-max (variable record sizes) is not emulated")
    if config.tomb_raider:
        raise ValueError("tomb-raider is not emulated")
    targets = [target] if isinstance(target, str) else list(target)
    _check_job_values(targets, size, ioengine, options or {}, allow_fio_options)
    if len(targets) != config.num_devices:
        raise ValueError(f"{len(targets)} target(s) for num-devices {config.num_devices}")
    derived = derive(config, load, cpus=cpus)
    write_sync = "none" if config.disable_odsync else "dsync"
    fresh_data = ["refill_buffers=1"] + (
        [f"buffer_compress_percentage={100 - config.compress_pct}"]
        if config.compress_pct < 100
        else []
    )
    glob = [
        f"filename={':'.join(map(fio_options.target_value, targets))}",
        f"ioengine={ioengine}",
        f"direct={int(direct)}",
        "thread=1",
        "norandommap=1",
        "randrepeat=0",
        "time_based=1",
        f"runtime={duration_s or config.test_duration_sec}",
    ]
    glob += ["file_service_type=random"] if len(targets) > 1 else []
    glob += [f"size={size}"] if size is not None else []
    glob += [f"{key}={value}" for key, value in (options or {}).items()]
    sections = {"global": glob}
    small = [f"bs={derived.read_bytes}", f"blockalign={config.min_io_bytes}"]
    jobs = small_read_jobs or derived.service_threads
    hist = f"log_hist_msec={hist_msec or config.report_interval_sec * 1000}"
    sections |= _clones(
        SMALL_READS_JOB,
        derived.internal_read_reqs_per_sec,
        jobs,
        ["rw=randread", *small, "rate_iops={rate}", "write_hist_log={name}", hist],
    )
    sections |= _clones(
        SMALL_WRITES_JOB,
        derived.internal_write_reqs_per_sec,
        jobs,
        ["rw=randwrite", *small, "rate_iops=,{rate}", f"sync={write_sync}", *fresh_data],
    )
    block = f"bs={derived.large_block_bytes}"
    if derived.large_block_reads_per_sec:
        rate = round(derived.large_block_reads_per_sec * derived.large_block_bytes)
        sections[LARGE_BLOCK_READS_JOB] = ["rw=randread", block, f"rate={rate}"]
    if derived.large_block_writes_per_sec:
        rate = round(derived.large_block_writes_per_sec * derived.large_block_bytes)
        sections[LARGE_BLOCK_WRITES_JOB] = [
            "rw=randwrite",
            block,
            f"rate=,{rate}",
            f"sync={write_sync}",
            *fresh_data,
        ]
    head = [
        f"; ACT storage workload, {load:g}x load on {config.num_devices} device(s), "
        f"{derived.service_threads} service threads",
        *(f"; {line}" for line in format_derived(derived).splitlines()),
    ]
    body = [f"\n[{name}]\n" + "\n".join(options) for name, options in sections.items()]
    return "\n".join(head) + "\n" + "\n".join(body) + "\n"


def _check_job_values(
    targets: list[str],
    size: int | str | None,
    ioengine: str,
    options: Mapping[str, str],
    allowed: Collection[str],
) -> None:
    """SuiteError for what the job file must not hold (see :mod:`ssdlab.fio_options`)."""
    for path in targets:
        fio_options.check_target(path)
    if size is not None and (problem := fio_options.value_problem(size)):
        raise SuiteError(f"size: {problem}")
    if problem := fio_options.ioengine_problem(ioengine, allowed):
        raise SuiteError(f"--ioengine: {problem}")
    fio_options.check_options(options, allowed, "--fio-option")

"""Declarative test suites: a TOML or YAML file listing steps, each one fio workload.

A suite file has a ``name``, an optional ``description``, ``params``, ``defaults`` applied to
every step, and ``steps``. Every step field can be set in ``defaults``; ``options`` holds
further fio options, as :mod:`ssdlab.fio_options` allows.

- ``"@name"`` anywhere in ``defaults`` or a step stands for ``params.name``, so a suite
  exposes its QD list, durations or LBA span as parameters a user can override.
- A list in ``iodepth``, ``numjobs``, ``bs`` or ``rwmixread`` expands the step into one step
  per value (in the order the fields appear); its name must hold ``{field}`` placeholders.
- Any list holds at most :data:`MAX_LIST` entries, and a suite at most :data:`MAX_STEPS`
  fio runs (steps after expansion, every round block to its ``max``, every load of a sweep).
- A step with ``rounds`` is a block of sub-steps repeated round after round until the
  tracked step's metric is steady by the SNIA PTS rule (or ``max`` rounds).
- A step with ``sweep`` is a load sweep (:class:`Sweep`): its workload run unlimited to
  measure the maximum IOPS (unless ``max_iops`` gives it), then rate-limited at each of
  ``fractions`` of that maximum, then (``unlimited``) unlimited again.
- ``include = ["name-or-file", ...]`` starts from other suites: their params, defaults and
  steps, overridden by this file's params and defaults; ``exclude`` drops steps by name. An
  include is a built-in suite's name or a file in the including file's directory or below.

What ``options`` may hold is :mod:`ssdlab.fio_options`' policy; options it guards need the
user's ``--allow-fio-option NAME`` (``allow_fio_options``), which a suite file cannot give.

Built-in suites live in ``ssdlab/suites/<name>.toml``.
"""

from __future__ import annotations

import dataclasses
import difflib
import itertools
import math
import re
import tomllib
from collections import Counter
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    SerializerFunctionWrapHandler,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_serializer,
)

from . import fio_options
from .errors import InputError, SuiteError
from .io.text import read_mapping
from .units import MAX_BYTES, format_size, parse_size
from .vocab import MIXED_RW, PURE_RW, READ_RW, WRITE_RW, Direction, ReadWrite

BUILTIN_DIR = Path(__file__).resolve().parent / "suites"
EXPANDABLE = ("iodepth", "numjobs", "bs", "rwmixread")
#: entries in any list of a suite file or a ``--set`` value (``bs``, ``steps``, ``include``...)
MAX_LIST = 1000
#: fio runs of a suite (:attr:`Suite.max_steps`); the built-in suites have at most 1,401
MAX_STEPS = 10_000
#: ``--scale`` factors taken (0.01 makes a test run, 10 a long one)
SCALE_RANGE = (1e-4, 1e4)
#: seconds a step's ``runtime_s`` or ``ramp_s`` may be, scaled or not (about 116 days)
MAX_SECONDS = 10**7

Metric = Literal["iops", "bw_bytes_s", "lat_mean_ns", "clat_mean_ns", "clat_p99_ns"]
NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]*$"
#: a test's name: a step name, or the name template of a list entry (``qd-randread-4k-qd{iodepth}``)
TEST_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9 ._{}-]*$"


_SHARE = re.compile(r"\d+(\.\d+)?%")


def _is_relative(size: str) -> bool:
    return size.strip().endswith("%")


def _share(value: str | None) -> float:
    """The percentage of a ``size``/``offset`` share (``"75%"``), 0 when it is none."""
    if value is None or not _is_relative(value):
        return 0.0
    if not _SHARE.fullmatch(value.strip()):
        raise ValueError(f"{value!r} is not a share of the target (a number then %, e.g. 75%)")
    return float(value.strip()[:-1])


class Step(BaseModel):
    """One fio workload. Durations are seconds; sizes take fio's notation (``4k``, ``16g``) or
    a share of the target (``75%``). With ``loops`` the step is size-based: it writes or reads
    its ``size`` that many times (``runtime_s`` then caps it). ``test``: the suite test the
    step belongs to (the entry it was expanded from, or the suite's own ``test`` key); a
    report groups sweeps by it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN, max_length=120)
    test: str | None = Field(None, pattern=TEST_PATTERN, max_length=120)
    rw: ReadWrite
    bs: str = "4k"
    iodepth: int = Field(1, ge=1, le=65536)
    numjobs: int = Field(1, ge=1, le=4096)
    rwmixread: int | None = Field(None, ge=0, le=100)
    runtime_s: float | None = Field(None, gt=0, le=MAX_SECONDS, allow_inf_nan=False)
    ramp_s: float = Field(0, ge=0, le=MAX_SECONDS, allow_inf_nan=False)
    loops: int | None = Field(None, ge=1, le=2**31 - 1)
    size: str | None = None
    offset: str | None = None
    ioengine: str = "libaio"
    direct: bool = True
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @field_validator("bs", "size", "offset", mode="before")
    @classmethod
    def _size_to_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("bs", "size", "offset", "ioengine")
    @classmethod
    def _check_value(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is not None and (problem := fio_options.value_problem(v)):
            raise ValueError(problem)
        if info.field_name == "ioengine" and (
            problem := fio_options.ioengine_problem(v, ("ioengine",))  # what no opt-in allows
        ):
            raise ValueError(problem)
        return v

    @field_validator("bs")
    @classmethod
    def _check_bs(cls, v: str) -> str:
        parse_size(v)
        return v

    @field_validator("size", "offset")
    @classmethod
    def _check_size(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v is None:
            return v
        if not _is_relative(v):
            parse_size(v)
        elif info.field_name == "size" and not 0 < _share(v) <= 100:
            raise ValueError(f"size {v!r}: a share of the target is more than 0% and at most 100%")
        elif info.field_name == "offset" and not 0 <= _share(v) < 100:
            raise ValueError(f"offset {v!r}: a share of the target is 0% or more, under 100%")
        return v

    def model_post_init(self, _: Any) -> None:
        if _share(self.size) + _share(self.offset) > 100:
            raise ValueError(f"size {self.size} from offset {self.offset} ends past the target")
        if self.rw in MIXED_RW and self.rwmixread is None:
            raise ValueError(f"rw={self.rw} needs rwmixread (the read share in percent)")
        if self.runtime_s is None and self.loops is None:
            raise ValueError("needs runtime_s (time-based) or loops (size-based)")

    @property
    def bs_bytes(self) -> int:
        return parse_size(self.bs)

    @property
    def cap_s(self) -> float:
        """The most seconds fio runs the step's I/O: its ramp and ``runtime_s`` (a size-based
        step without a time cap: its ramp only; not its ``startdelay``; how long a step
        takes is :mod:`ssdlab.estimate`'s)."""
        return self.ramp_s + (self.runtime_s or 0.0)

    @property
    def writes(self) -> bool:
        """Whether fio would write: see :func:`ssdlab.fio_options.writes`."""
        return fio_options.writes(self.rw not in READ_RW, self.ioengine, self.options)

    def scaled(self, factor: float) -> Step:
        """Durations and absolute sizes times ``factor`` (shares of the target stay);
        InputError naming ``--scale`` when one leaves its range (:data:`MAX_SECONDS`,
        :data:`~ssdlab.units.MAX_BYTES`)."""
        update: dict[str, Any] = {"ramp_s": self.ramp_s * factor}
        if self.runtime_s is not None:
            update["runtime_s"] = max(self.runtime_s * factor, 0.5)
        for key in ("ramp_s", "runtime_s"):
            if update.get(key, 0) > MAX_SECONDS:
                raise InputError(
                    f"--scale {factor:g}: step {self.name!r} {key} becomes "
                    f"{update[key]:,.0f} s, more than {MAX_SECONDS:,}"
                )
        for key in ("size", "offset"):
            value = getattr(self, key)
            if value and not _is_relative(value):
                scaled = max(int(parse_size(value) * factor), self.bs_bytes)
                if scaled > MAX_BYTES:
                    raise InputError(
                        f"--scale {factor:g}: step {self.name!r} {key} {value} becomes "
                        f"{scaled:,} bytes, more than fio's {MAX_BYTES:,}"
                    )
                update[key] = format_size(scaled)
        return self.model_copy(update=update)


class Rounds(BaseModel):
    """Sub-steps repeated in rounds until ``track``'s ``metric`` is steady (SNIA PTS rule)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN, max_length=80)
    max: int = Field(25, ge=1, le=MAX_STEPS)
    window: int = Field(5, ge=2, le=MAX_STEPS)
    track: str
    metric: Metric = "iops"
    direction: Direction | None = None
    steps: list[Step] = Field(min_length=1)

    def model_post_init(self, _: Any) -> None:
        if self.track not in {s.name for s in self.steps}:
            raise ValueError(f"track {self.track!r} is not one of the block's steps")
        if self.max < self.window:
            raise ValueError(f"max ({self.max}) must be at least the window ({self.window})")

    def round_steps(self, round_no: int) -> list[Step]:
        """The sub-steps of one round, named ``<block>-r<NN>-<step>``."""
        return [
            s.model_copy(update={"name": f"{self.name}-r{round_no:02d}-{s.name}"})
            for s in self.steps
        ]

    def tracked_name(self, round_no: int) -> str:
        return f"{self.name}-r{round_no:02d}-{self.track}"


#: a rate-limited sweep step counts as reaching its rate when fio achieved at least this
#: share of the requested IOPS (fio's rate limiter runs a little under its rate at high load;
#: ACT likewise marks a trial that misses its load)
DEFAULT_REACH = 0.97


class LoadSweep(BaseModel):
    """What a load sweep runs: ``fractions`` of ``max_iops`` (measured by an unlimited step
    first when not given), then, with ``unlimited``, the workload unlimited once more.
    ``reach``: the share of the requested rate a step must achieve (else it is marked as
    missing its rate); ``process``: fio's ``rate_process`` (``linear`` evenly spaced, or
    ``poisson`` arrivals)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fractions: list[float] = Field(min_length=1, max_length=100)
    max_iops: float | None = Field(None, gt=0, allow_inf_nan=False)
    unlimited: bool = True
    reach: float = Field(DEFAULT_REACH, gt=0, le=1, allow_inf_nan=False)
    process: Literal["linear", "poisson"] = "linear"

    @field_validator("fractions")
    @classmethod
    def _check_fractions(cls, v: list[float]) -> list[float]:
        for f in v:
            if not 0 < f <= 1:
                raise ValueError(f"fraction {f} is not a share of the maximum: above 0, at most 1")
        labels = [fraction_label(f) for f in v]
        if twice := sorted({x for x in labels if labels.count(x) > 1}):
            raise ValueError(f"fraction {twice[0]} % is given twice")
        return v


def fraction_label(fraction: float) -> str:
    """A fraction as the percentage its step's name holds (``0.125`` -> ``12.5``)."""
    return f"{fraction * 100:.6g}"


#: whole per-job rates that offer more than this many percent above or below the rate
#: asked for are flagged (:meth:`RateSplit.rounding_problem`)
ROUNDING_TOLERANCE_PCT = 1.0


@dataclasses.dataclass(frozen=True)
class RateSplit:
    """A total rate split over a step's jobs: fio's ``rate_iops`` is per job, and per
    direction for a mix (one value would cap reads and writes each, turning 70/30 into 50/50).
    Each job's rate is rounded to whole IOPS, never to 0 (fio reads ``rate_iops=0`` as no
    limit: such a direction is ``raised`` to 1); ``requested_iops`` is what the jobs add up
    to, the rate the step offers."""

    target_iops: float  # fraction x maximum, before rounding
    numjobs: int
    read_per_job: int | None
    write_per_job: int | None
    raised: tuple[str, ...] = ()  # directions whose rate per job rounded to 0, raised to 1

    @property
    def option(self) -> str:
        """fio's ``rate_iops`` value: ``r`` or ``,w`` or ``r,w`` (per job)."""
        if self.write_per_job is None:
            return str(self.read_per_job)
        if self.read_per_job is None:
            return f",{self.write_per_job}"
        return f"{self.read_per_job},{self.write_per_job}"

    @property
    def requested_iops(self) -> int:
        return self.numjobs * ((self.read_per_job or 0) + (self.write_per_job or 0))

    @property
    def offered_change_pct(self) -> float:
        """How far whole per-job rates move the offered load: 100 x (requested / target - 1)."""
        return 100 * (self.requested_iops / self.target_iops - 1)

    def rounding_problem(self) -> str | None:
        """What rounding did to the load, when it matters: the jobs offer more than
        :data:`ROUNDING_TOLERANCE_PCT` above or below the rate asked for, or a direction's
        rate per job rounded to 0 and was raised to 1; None otherwise."""
        change = self.offered_change_pct
        if not self.raised and abs(change) <= ROUNDING_TOLERANCE_PCT:
            return None
        said = (
            f"{self.numjobs} job(s) x rate_iops={self.option} offer {self.requested_iops:,} "
            f"IOPS, {change:+.1f} % from the {self.target_iops:,.6g} asked"
        )
        if self.raised:
            said += (
                f" ({' and '.join(self.raised)} raised from 0 to 1 IOPS per job: fio reads "
                "rate_iops=0 as no limit)"
            )
        return said + "; fewer jobs or a higher rate offer the load asked for"


def split_rate(total: float, step: Step) -> RateSplit:
    """``total`` IOPS over ``step``'s jobs and, for a mix, its read share (:class:`RateSplit`)."""
    n = step.numjobs
    if step.rw in READ_RW or (step.rw in MIXED_RW and step.rwmixread == 100):
        shares = {"read": 1.0}
    elif step.rw in WRITE_RW or (step.rw in MIXED_RW and step.rwmixread == 0):
        shares = {"write": 1.0}
    else:
        read = (step.rwmixread or 0) / 100
        shares = {"read": read, "write": 1 - read}
    per_job = {d: round(total * share / n) for d, share in shares.items()}
    raised = tuple(d for d, rate in per_job.items() if rate < 1)
    return RateSplit(
        total,
        n,
        max(1, per_job["read"]) if "read" in per_job else None,
        max(1, per_job["write"]) if "write" in per_job else None,
        raised,
    )


class Sweep(BaseModel):
    """A load sweep: ``workload`` (named as the sweep) at offered loads (:class:`LoadSweep`).

    Its fio runs, in order: ``<name>-max`` (unlimited; its IOPS is the maximum; only without
    ``max_iops``), ``<name>-<pct>pct`` per fraction (fio ``rate_iops``, split over the jobs
    by :func:`split_rate`), then ``<name>-unlimited`` (with ``unlimited``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=NAME_PATTERN, max_length=80)
    sweep: LoadSweep
    workload: Step

    def model_post_init(self, _: Any) -> None:
        step = self.workload
        if step.rw not in (*PURE_RW, *MIXED_RW):
            raise ValueError(f"a load sweep reads or writes: rw={step.rw} cannot be rate-limited")
        if step.loops is not None or step.runtime_s is None:
            raise ValueError("a load sweep's steps are time-based: give runtime_s, not loops")
        for option in step.options:
            if problem := fio_options.sweep_option_problem(option):
                raise ValueError(problem)

    @property
    def measure_name(self) -> str | None:
        return None if self.sweep.max_iops is not None else f"{self.name}-max"

    def rate_name(self, fraction: float) -> str:
        return f"{self.name}-{fraction_label(fraction)}pct"

    @property
    def unlimited_name(self) -> str | None:
        return f"{self.name}-unlimited" if self.sweep.unlimited else None

    @property
    def names(self) -> list[str]:
        """Every fio run's step name, in the order they run."""
        rates = [self.rate_name(f) for f in self.sweep.fractions]
        return [n for n in (self.measure_name, *rates, self.unlimited_name) if n]

    def named(self, name: str) -> Step:
        """The workload as the unlimited step ``name``."""
        return self.workload.model_copy(update={"name": name})

    def rate_step(self, fraction: float, rate_iops: str) -> Step:
        """The workload at fio ``rate_iops`` (per job: :attr:`RateSplit.option`), named for
        ``fraction``."""
        options = dict(self.workload.options) | {"rate_iops": rate_iops}
        if self.sweep.process != "linear":
            options["rate_process"] = self.sweep.process
        return self.workload.model_copy(
            update={"name": self.rate_name(fraction), "options": options}
        )

    @property
    def runs(self) -> int:
        return len(self.names)

    @property
    def steps(self) -> list[Step]:
        """The workload (the definition, as :meth:`Suite.all_steps` lists it)."""
        return [self.workload]

    def scaled(self, factor: float) -> Sweep:
        return self.model_copy(update={"workload": self.workload.scaled(factor)})


def _item_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "rounds" if "steps" in value else "load_sweep" if "sweep" in value else "step"
    if isinstance(value, Sweep):
        return "load_sweep"
    return "rounds" if isinstance(value, Rounds) else "step"


Item = Annotated[
    Annotated[Step, Tag("step")]
    | Annotated[Rounds, Tag("rounds")]
    | Annotated[Sweep, Tag("load_sweep")],
    Discriminator(_item_kind),
]


class Suite(BaseModel):
    """A named, ordered list of steps and round blocks. ``allowed_fio_options`` records the
    user's ``--allow-fio-option`` opt-ins (:func:`load_suite` refuses it in a suite file)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, max_length=120)
    description: str = ""
    steps: list[Item] = Field(min_length=1)
    allowed_fio_options: tuple[str, ...] = ()

    @model_serializer(mode="wrap")
    def _without_empty_opt_ins(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No opt-ins leave no key, so runs from before opt-ins existed still resume."""
        data = handler(self)
        if not self.allowed_fio_options:
            data.pop("allowed_fio_options", None)
        return data

    @field_validator("name")
    @classmethod
    def _one_line(cls, v: str) -> str:
        if problem := fio_options.line_problem(v):
            raise ValueError(f"a suite name is one line: {problem}")
        return v

    @field_validator("steps")
    @classmethod
    def _unique_names(cls, steps: list[Item]) -> list[Item]:
        runs = [n for item in steps if isinstance(item, Sweep) for n in item.names]
        groups = [[item.name for item in steps] + runs]
        groups += [[s.name for s in item.steps] for item in steps if isinstance(item, Rounds)]
        for names in groups:
            if twice := sorted(n for n, times in Counter(names).items() if times > 1):
                raise ValueError(f"step name {twice[0]!r} is used twice")
        return steps

    @property
    def max_steps(self) -> int:
        """fio runs of the suite with every round block run to ``max`` rounds."""
        return sum(
            item.max * len(item.steps)
            if isinstance(item, Rounds)
            else item.runs
            if isinstance(item, Sweep)
            else 1
            for item in self.steps
        )

    @property
    def has_rounds(self) -> bool:
        return any(isinstance(item, Rounds) for item in self.steps)

    @property
    def writes(self) -> bool:
        """Whether any step writes (and so needs a confirmed, unused device)."""
        return any(s.writes for s in self.all_steps())

    def all_steps(self) -> list[Step]:
        """Every step definition, round blocks' sub-steps included (not per round), a load
        sweep's workload once (not per load)."""
        out: list[Step] = []
        for item in self.steps:
            out += item.steps if isinstance(item, Rounds | Sweep) else [item]
        return out

    @property
    def sweeps(self) -> list[Sweep]:
        return [item for item in self.steps if isinstance(item, Sweep)]

    def scaled(self, factor: float) -> Suite:
        """The same suite with every duration and absolute size times ``factor``; InputError
        naming ``--scale`` for a factor outside :data:`SCALE_RANGE` or a step it would take
        out of range (:meth:`Step.scaled`)."""
        low, high = SCALE_RANGE
        if not low <= factor <= high:  # NaN fails too
            raise InputError(
                f"--scale must be a positive number from {low:g} to {high:g}, not {factor}"
            )
        if factor == 1:
            return self
        items: list[Item] = [
            item.model_copy(update={"steps": [s.scaled(factor) for s in item.steps]})
            if isinstance(item, Rounds)
            else item.scaled(factor)  # a step, or a sweep's workload
            for item in self.steps
        ]
        return self.model_copy(update={"steps": items})


def builtin_suites() -> list[str]:
    """Names of the suites shipped with ssdlab."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))


def resolve_suite_path(name_or_path: str | Path) -> Path:
    """A suite file: the path itself, or the built-in suite of that name."""
    path = Path(name_or_path)
    if path.is_file():
        if path.suffix not in {".toml", ".yaml", ".yml"}:
            raise SuiteError(f"{path}: suite files are .toml, .yaml or .yml")
        return path
    builtin = BUILTIN_DIR / f"{name_or_path}.toml"
    if not builtin.is_file():
        known = builtin_suites()
        close = _closest(path.stem, known) if len(path.parts) == 1 else []
        guess = f"; did you mean {' or '.join(close)}?" if close else ""
        raise SuiteError(
            f"no suite file {path} and no built-in suite of that name{guess} "
            f"(built-in: {', '.join(known)})"
        )
    return builtin


def _closest(name: str, names: list[str]) -> list[str]:
    """The (at most 3) of ``names`` closest to a mistyped ``name``, the best first."""
    ratios = {n: difflib.SequenceMatcher(None, name, n).ratio() for n in names}
    best = max(ratios.values(), default=0.0)
    close = [n for n, r in ratios.items() if r >= max(0.6, best - 0.1)]
    return sorted(close, key=lambda n: -ratios[n])[:3]


def _read_mapping(path: Path) -> dict[str, Any]:
    """A suite file's mapping; SuiteError naming the file when it is unreadable or a list in
    it is longer than :data:`MAX_LIST`."""
    try:
        data = read_mapping(path, "suite file")
    except InputError as exc:
        raise SuiteError(str(exc)) from None
    _check_lists(data, path, "")
    return data


def _check_lists(value: Any, source: Path, where: str) -> None:
    """SuiteError naming ``source`` and the key of the first list in ``value`` longer than
    :data:`MAX_LIST`."""
    items = value.items() if isinstance(value, dict) else enumerate(value)
    for key, item in items:
        at = f"{where}[{key}]" if isinstance(key, int) else f"{where}.{key}".lstrip(".")
        if isinstance(item, list) and len(item) > MAX_LIST:
            raise SuiteError(f"{source}: {at} lists {len(item):,} entries, at most {MAX_LIST:,}")
        if isinstance(item, dict | list):
            _check_lists(item, source, at)


class _SetParams:
    """The ``--set`` parameters of a load, to blame them for the errors their values cause."""

    def __init__(self, given: Mapping[str, Any], raw: Any) -> None:
        self.given = dict(given)
        self.refs: dict[str, set[str]] = {}  # field or option name -> params it references
        self._collect(raw, None)

    def _collect(self, value: Any, key: str | None) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                self._collect(v, str(k))
        elif isinstance(value, list):
            for v in value:
                self._collect(v, key)
        elif isinstance(value, str) and value.startswith("@") and key is not None:
            self.refs.setdefault(key, set()).add(value[1:])

    def blame(self, key: str, value: Any) -> str | None:
        """The ``--set`` parameter that gave field or option ``key`` its ``value``."""
        names = [p for p in sorted(self.refs.get(key, ())) if p in self.given]
        hits = [p for p in names if value == self.given[p] or _contains(self.given[p], value)]
        hits = hits or names
        return hits[0] if len(hits) == 1 else None

    def error(self, key: str, value: Any, where: str, problem: str, source: Path) -> SuiteError:
        """One line naming the ``--set`` parameter behind ``key`` if one is, else the file."""
        name = self.blame(key, value)
        if name is None:
            return SuiteError(f"{source}: {where}: {problem}")
        return SuiteError(f"--set {name}={self.given[name]!r} ({key} of {where}): {problem}")


def _contains(container: Any, value: Any) -> bool:
    return isinstance(container, list) and value in container


def _format_validation(
    path: Path, exc: ValidationError, steps: list[Any], given: _SetParams
) -> SuiteError:
    problems = []
    for err in exc.errors():
        parts = [p for p in err["loc"] if p not in ("step", "rounds", "load_sweep")]
        msg = " ".join(err["msg"].split())
        loc = ".".join(map(str, parts))
        step = None
        if len(parts) >= 2 and parts[0] == "steps" and isinstance(parts[1], int):
            step = steps[parts[1]].get("name")
            loc += f" ({step})" if fio_options.line_problem(str(step)) is None else f" ({step!r})"
        field = next((p for p in reversed(parts) if isinstance(p, str) and p != "steps"), None)
        if field is not None and given.blame(field, err.get("input")):
            where = f"step {step!r}" if step else "the suite"
            return given.error(field, err.get("input"), where, msg, path)
        problems.append(f"{loc or '(top)'}: {msg}")
    return SuiteError(f"{path}: invalid suite: " + "; ".join(problems))


def _include_path(name: Any, source: Path) -> Path:
    """An included suite: a file in ``source``'s directory or below, else a built-in."""
    if not isinstance(name, str) or not name:
        raise SuiteError(f"{source}: include takes suite names or file names, not {name!r}")
    if Path(name).is_absolute():
        raise SuiteError(
            f"{source}: include {name!r}: an absolute path; include files next to the suite"
        )
    base = source.parent.resolve()
    path = (base / name).resolve()
    if not path.is_relative_to(base):
        raise SuiteError(f"{source}: include {name!r} leaves the suite file's directory {base}")
    if path.is_file():
        if path.suffix not in {".toml", ".yaml", ".yml"}:
            raise SuiteError(f"{source}: include {name!r}: suite files are .toml, .yaml or .yml")
        return path
    if name in builtin_suites():
        return BUILTIN_DIR / f"{name}.toml"
    known = ", ".join(builtin_suites())
    raise SuiteError(
        f"{source}: include {name!r}: no such file under {base} and no built-in suite "
        f"of that name ({known})"
    )


def _kind(value: Any) -> str:
    return {dict: "a table", list: "a list", str: "a string"}.get(type(value), repr(value))


def _table(value: Any, source: Path, key: str) -> dict[str, Any]:
    """``value`` (absent: empty) when it is a table, else SuiteError naming ``key``."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise SuiteError(f"{source}: {key} must be a table, not {_kind(value)}")
    return value


def _tables(value: Any, source: Path, key: str) -> list[dict[str, Any]]:
    """``value`` (absent: empty) when it is a list of tables, else SuiteError naming ``key``."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise SuiteError(f"{source}: {key} must be a list of tables, not {_kind(value)}")
    if bad := [v for v in value if not isinstance(v, dict)]:
        raise SuiteError(f"{source}: {key} must be a list of tables, not hold {_kind(bad[0])}")
    return value


def _names(value: Any, source: Path, key: str) -> list[str]:
    """``value`` as a list of names (one name, or absent: none), else SuiteError naming ``key``."""
    value = [] if value is None else [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise SuiteError(f"{source}: {key} must be a name or a list of names, not {value!r}")
    return value


def _defaults(value: Any, source: Path) -> dict[str, Any]:
    """The ``defaults`` table, its ``options`` a table; it holds no steps."""
    defaults = _table(value, source, "defaults")
    if nested := [k for k in ("steps", "rounds") if k in defaults]:
        raise SuiteError(f"{source}: defaults cannot hold {nested[0]}: it applies to steps")
    return {**defaults, "options": _table(defaults.get("options"), source, "defaults.options")}


def _merge_includes(data: dict[str, Any], source: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    """Fold ``include``d suites into ``data``: their params/defaults under this file's. The
    result holds a ``params`` table, a ``defaults`` table and ``steps``, a list of tables."""
    includes = _names(data.pop("include", None), source, "include")
    excluded = _names(data.pop("exclude", None), source, "exclude")
    params: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    steps: list[dict[str, Any]] = []
    for name in includes:
        path = _include_path(name, source)
        if path.resolve() in seen:
            raise SuiteError(f"{source}: include cycle through {path}")
        base = _merge_includes(_read_mapping(path), path, (*seen, path.resolve()))
        params |= base["params"]
        defaults = _merge_defaults(defaults, base["defaults"])
        steps += base["steps"]
    own = _tables(data.get("steps"), source, "steps")
    merged = dict(data)
    merged["params"] = params | _table(data.get("params"), source, "params")
    merged["defaults"] = _merge_defaults(defaults, _defaults(data.get("defaults"), source))
    names = [s.get("name") for s in steps + own]
    known = {n for n in names if isinstance(n, str)}
    if unknown := [n for n in excluded if n not in known]:
        close = difflib.get_close_matches(unknown[0], [str(n) for n in names], n=1, cutoff=0.5)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise SuiteError(f"{source}: exclude names no step: {', '.join(unknown)}{hint}")
    dropped = set(excluded)
    merged["steps"] = [s for s in steps + own if not _named(s, dropped)]
    return merged


def _named(step: dict[str, Any], names: set[str]) -> bool:
    """Whether a raw step's name is one of ``names`` (a name that is no string is none)."""
    name = step.get("name")
    return isinstance(name, str) and name in names


def _merge_defaults(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    return {**base, **over, "options": {**base.get("options", {}), **over.get("options", {})}}


def _substitute(value: Any, params: dict[str, Any], source: Path) -> Any:
    if isinstance(value, str) and value.startswith("@"):
        if value[1:] not in params:
            raise SuiteError(f"{source}: {value!r} names no entry of [params]")
        return params[value[1:]]
    if isinstance(value, dict):
        return {k: _substitute(v, params, source) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, params, source) for v in value]
    return value


def _expand(step: dict[str, Any], source: Path, given: _SetParams) -> list[dict[str, Any]]:
    """One step per combination of the list-valued expandable fields; each ``{field}`` in the
    name becomes the step's value. Every step is given its ``test``: the entry's own ``test``
    or its name (the template, for a list)."""
    lists = [k for k in step if k in EXPANDABLE and isinstance(step[k], list)]
    name = str(step.get("name", ""))
    step = {**step, "test": step.get("test") or name or None}
    if not lists:
        return [step]
    missing = [k for k in lists if "{" + k + "}" not in name]
    empty = [k for k in lists if not step[k]]
    long = [k for k in lists if len(step[k]) > MAX_LIST]
    if missing or empty or long:
        k = (missing or empty or long)[0]
        problem = (
            f"lists no {k}: give it at least one value"
            if empty
            else f"lists {len(step[k]):,} {k} values, at most {MAX_LIST:,}"
            if long
            else f"lists several {', '.join(missing)}: "
            f"put {' '.join('{' + k + '}' for k in missing)} in its name"
        )
        raise given.error(k, step[k], f"step {name!r}", problem, source)
    if (combos := math.prod(len(step[k]) for k in lists)) > MAX_STEPS:
        listed = " x ".join(f"{len(step[k]):,} {k}" for k in lists)
        raise SuiteError(
            f"{source}: step {name!r} expands to {combos:,} steps ({listed}), at most {MAX_STEPS:,}"
        )
    out = []
    for combo in itertools.product(*(step[k] for k in lists)):
        values = dict(zip(lists, combo, strict=True))
        named = name
        for key, value in values.items():
            named = named.replace("{" + key + "}", str(value))
        out.append({**step, **values, "name": named})
    return out


def _build_steps(
    raw: list[dict[str, Any]],
    defaults: dict[str, Any],
    source: Path,
    given: _SetParams,
    *,
    in_block: bool = False,
) -> list[dict[str, Any]]:
    built: list[dict[str, Any]] = []
    defined = 0  # step definitions built, a round block's own steps included
    for step in raw:
        where = f"step {step.get('name')!r}"
        _check_defined(defined, source)
        if "rounds" in step:
            if extra := sorted(map(str, step.keys() - {"name", "rounds", "steps"})):
                raise SuiteError(f"{source}: {where}: a rounds block takes no {extra[0]}")
            block = dict(_table(step["rounds"], source, f"{where}: rounds"))
            block["name"] = step.get("name")
            inner = _tables(step.get("steps"), source, f"{where}: steps")
            block["steps"] = _build_steps(inner, defaults, source, given, in_block=True)
            defined += len(block["steps"])
            built.append(block)
            continue
        if "sweep" in step and in_block:
            raise SuiteError(f"{source}: {where}: a rounds block's steps cannot be load sweeps")
        own = _table(step.get("options"), source, f"{where}: options")
        options = {**defaults.get("options", {}), **own}
        if "sweep" not in step:
            expanded = _expand({**defaults, **step, "options": options}, source, given)
            defined += len(expanded)
            built += expanded
            continue
        sweep = _table(step["sweep"], source, f"{where}: sweep")
        workload = {k: v for k, v in step.items() if k != "sweep"}
        for one in _expand({**defaults, **workload, "options": options}, source, given):
            _no_lists(one, source, given)
            built.append({"name": one.get("name"), "sweep": sweep, "workload": one})
            defined += 1
    _check_defined(defined, source)
    return built


def _check_defined(defined: int, source: Path) -> None:
    """SuiteError naming ``source`` when ``defined`` steps are more than :data:`MAX_STEPS`."""
    if defined > MAX_STEPS:
        raise SuiteError(f"{source}: the steps expand to more than {MAX_STEPS:,}")


def _no_lists(step: dict[str, Any], source: Path, given: _SetParams) -> None:
    """SuiteError naming a field left holding a list (only expandable fields may)."""
    for key, value in step.items():
        if isinstance(value, list) and key not in ("steps", "sweep", "workload"):
            where = f"step {step.get('name')!r}"
            raise given.error(key, value, where, f"{key} cannot be a list", source)


def _check_set_names(given: Mapping[str, Any], params: Mapping[str, Any], suite: str) -> None:
    """Every ``--set`` name must be one of the suite's parameters."""
    for name in given:
        if name in params:
            continue
        if not params:
            raise SuiteError(f"--set {name}: suite {suite!r} has no parameters")
        close = difflib.get_close_matches(name, list(params), n=1, cutoff=0.5)
        listed = close + sorted(p for p in params if p not in close)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise SuiteError(
            f"--set {name}: suite {suite!r} has no such parameter{hint}; its parameters: "
            + ", ".join(listed)
        )


def _check_options(suite: Suite, source: Path, given: _SetParams) -> None:
    """Every step's options and ioengine against the policy and the user's opt-ins."""
    allowed = suite.allowed_fio_options
    for step in suite.all_steps():
        where = f"step {step.name!r}"
        checks = [("ioengine", step.ioengine, fio_options.ioengine_problem(step.ioengine, allowed))]
        checks += [
            (name, value, fio_options.option_problem(name, value, allowed))
            for name, value in step.options.items()
        ]
        for key, value, problem in checks:
            if problem:
                raise given.error(key, value, where, problem, source)


def parse_suite(
    data: dict[str, Any],
    source: Path,
    params: Mapping[str, Any] | None = None,
    *,
    allow_fio_options: Collection[str] = (),
) -> Suite:
    """Validate a suite mapping: includes, ``@params`` (``params`` override the suite's), list
    expansion, defaults, then the fio option policy with the user's ``allow_fio_options``."""
    for name in allow_fio_options:
        if problem := fio_options.opt_in_problem(name):
            raise SuiteError(problem)
    if "allowed_fio_options" in data:
        raise SuiteError(
            f"{source}: allowed_fio_options is not a suite setting: only the user opts in, "
            "with --allow-fio-option NAME"
        )
    data = _merge_includes(dict(data), source, (source.resolve(),))
    suite_params = data.pop("params")
    defaults = data.pop("defaults")
    raw_steps = data["steps"]
    given = _SetParams(params or {}, [defaults, raw_steps])
    _check_set_names(given.given, suite_params, str(data.get("name", source)))
    suite_params = {**suite_params, **given.given}
    if not raw_steps:
        raise SuiteError(f"{source}: steps must be a list of tables, and not empty")
    defaults = _substitute(defaults, suite_params, source)
    steps = _build_steps(_substitute(raw_steps, suite_params, source), defaults, source, given)
    for step in steps:
        _no_lists(step, source, given)
    opt_ins = tuple(sorted(set(allow_fio_options)))
    try:
        suite = Suite.model_validate({**data, "steps": steps, "allowed_fio_options": opt_ins})
    except ValidationError as exc:
        raise _format_validation(source, exc, steps, given) from None
    if suite.max_steps > MAX_STEPS:
        raise SuiteError(
            f"{source}: {suite.max_steps:,} fio runs (every round block to its max, every load "
            f"of a sweep), at most {MAX_STEPS:,}"
        )
    _check_options(suite, source, given)
    return suite


def load_suite(
    name_or_path: str | Path,
    params: dict[str, Any] | None = None,
    *,
    allow_fio_options: Collection[str] = (),
) -> Suite:
    """Load a suite from a ``.toml``/``.yaml``/``.yml`` file or a built-in by name; ``params``
    (``--set``) override the suite's ``[params]``; ``allow_fio_options`` (the user's
    ``--allow-fio-option``) lets steps use those guarded fio options."""
    path = resolve_suite_path(name_or_path)
    return parse_suite(_read_mapping(path), path, params, allow_fio_options=allow_fio_options)


def parse_param(text: str) -> tuple[str, Any]:
    """``name=value`` from the command line; the value is read as TOML when it can be
    (``qd_list=[1,2,4]``, ``step_s=30``), else taken as a string."""
    if not re.match(r"^[A-Za-z_]\w*=", text):
        raise SuiteError(f"--set takes name=value, not {text!r}")
    name, value = text.split("=", 1)
    try:
        return name, tomllib.loads(f"v = {value}")["v"]
    except tomllib.TOMLDecodeError:
        return name, value

"""QoS profiles: per-workload targets in a TOML (or YAML) file, validated with pydantic.

A profile has a ``name``, a ``description`` and ``[[targets]]``. A target selects steps by
their workload, as :func:`ssdlab.analysis.workloads.classify` classifies them (never by step
name): ``pattern`` (random or sequential), ``bs`` (sizes), ``read_pct`` (100 reads, 0
writes, 70 a 70/30 mix; a number or ``[low, high]``), ``qd`` (iodepth x numjobs),
``jobs`` and ``iodepth`` (a number or ``[low, high]``); ``act = true`` selects the run's ACT
trials instead. A step matches when it meets every key given. A target then sets limits on
the ``direction`` it names (default: each direction the step has):

- ``latency_ms``: percentiles (``p99``, ``"p99.99"``) and ``max``, each at most so many ms;
- ``min_iops``, ``min_mb_s`` and their ``_per_tb`` forms (per 10^12 bytes of the target);
- ``exceedance``: ACT's rule, the percent of I/Os at or over each ``over_ms`` threshold in
  every slice of ``slice_s`` seconds (``strict``: below the limit, as ACT; else at most);
  a fio step is judged only when its histogram logs hold at least ``min_coverage_pct`` of
  fio's I/O count (default 99; fio never logs the last partial interval, so a step needs
  about 100 log intervals to reach 99 %).
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, model_validator

from ..analysis.exceedance import MIN_COVERAGE_PCT
from ..errors import InputError
from ..io.text import read_mapping
from ..units import parse_size
from ..vocab import MixDirection

BUILTIN_DIR = Path(__file__).resolve().parent / "profiles"
_PERCENTILE_RE = re.compile(r"^p(\d+(?:\.\d+)?)$")


def _range(value: Any) -> Any:
    """``32`` -> (32, 32); ``[1, 32]`` -> (1, 32)."""
    if isinstance(value, bool):
        return value  # pydantic refuses it
    if isinstance(value, int | float):
        return (value, value)
    if isinstance(value, list | tuple) and len(value) == 2:
        return tuple(value)
    raise ValueError("a number or [low, high]")


def _sizes(value: Any) -> Any:
    """``"4k"`` or ``["4k", "8k"]`` -> block sizes in bytes."""
    values = value if isinstance(value, list) else [value]
    try:
        return [parse_size(v) if isinstance(v, str) else v for v in values]
    except ValueError as exc:
        raise ValueError(str(exc)) from None


Range = Annotated[tuple[float, float], BeforeValidator(_range)]
#: the values a selector's ranges can take (a read share in percent; counts from 1)
SELECTOR_BOUNDS = {
    "read_pct": (0.0, 100.0),
    "qd": (1.0, float("inf")),
    "jobs": (1.0, float("inf")),
    "iodepth": (1.0, float("inf")),
}
#: the longest latency limit (ms) a profile may set: an hour; beyond it a limit says nothing
MAX_LATENCY_MS = 3_600_000.0


class Selector(BaseModel):
    """Which steps a target judges (every key given must match)."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    act: bool = False
    pattern: Literal["random", "sequential"] | None = None
    bs: Annotated[list[int], BeforeValidator(_sizes)] | None = None
    read_pct: Range | None = None
    qd: Range | None = None
    jobs: Range | None = None
    iodepth: Range | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> Selector:
        workload = [
            k
            for k in ("pattern", "bs", "read_pct", "qd", "jobs", "iodepth")
            if getattr(self, k) is not None
        ]
        if self.act and workload:
            raise ValueError(f"act selects ACT trials; {', '.join(workload)} select fio steps")
        for key, (least, most) in SELECTOR_BOUNDS.items():
            bounds = getattr(self, key)
            if bounds is None:
                continue
            if bounds[0] > bounds[1]:
                raise ValueError(f"{key}: low {bounds[0]:g} above high {bounds[1]:g}")
            if bounds[0] < least or bounds[1] > most:
                given = f"{bounds[0]:g}" + (f"..{bounds[1]:g}" if bounds[1] != bounds[0] else "")
                span = f"{least:g} to {most:g}" if most < float("inf") else f"{least:g} or more"
                raise ValueError(f"{key} {given} is not within {span}")
        return self


class Exceedance(BaseModel):
    """ACT's rule: percent of I/Os at or over each threshold (ms), in every slice; judged
    on a fio step whose histogram logs hold ``min_coverage_pct`` of its I/Os."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    over_ms: dict[Annotated[float, Field(gt=0)], Annotated[float, Field(ge=0, le=100)]]
    slice_s: Annotated[float, Field(gt=0)] = 1.0
    strict: bool = False
    min_coverage_pct: Annotated[float, Field(ge=0, le=100)] = MIN_COVERAGE_PCT

    @model_validator(mode="after")
    def _thresholds(self) -> Exceedance:
        if not self.over_ms:
            raise ValueError("over_ms needs at least one threshold")
        n = len(self.over_ms)  # verdicts name thresholds in ms, columns in ns (with :g)
        names = ({f"{t:g}" for t in self.over_ms}, {f"{t * 1e6:g}" for t in self.over_ms})
        if any(len(shown) < n for shown in names):
            raise ValueError(
                f"over_ms thresholds {sorted(self.over_ms)} are too close to tell apart"
            )
        return self


class Target(BaseModel):
    """One workload's limits."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str | None = None
    select: Selector = Selector()
    direction: MixDirection | None = None
    latency_ms: dict[str, Annotated[float, Field(gt=0)]] = {}
    min_iops: Annotated[float, Field(gt=0)] | None = None
    min_mb_s: Annotated[float, Field(gt=0)] | None = None
    min_iops_per_tb: Annotated[float, Field(gt=0)] | None = None
    min_mb_s_per_tb: Annotated[float, Field(gt=0)] | None = None
    exceedance: Exceedance | None = None

    @model_validator(mode="after")
    def _limits(self) -> Target:
        for key, limit in self.latency_ms.items():
            if key != "max" and latency_percentile(key) is None:
                raise ValueError(f"latency_ms.{key}: not p<percentile> (p99, p99.99) or max")
            if limit > MAX_LATENCY_MS:
                raise ValueError(f"latency_ms.{key}: {limit:g} ms is over an hour")
        ordered = sorted(self.latency_ms.items(), key=lambda kv: _depth(kv[0]))
        for (shallow, low), (deep, high) in itertools.pairwise(ordered):
            if high < low:  # a deeper percentile (or the maximum) is never faster
                raise ValueError(
                    f"latency_ms: {deep} ({high:g} ms) is below {shallow} ({low:g} ms); a "
                    "deeper percentile is never faster"
                )
        if not (self.latency_ms or self.exceedance or self.throughput_limits):
            raise ValueError("sets no limit (latency_ms, min_iops..., exceedance)")
        if self.select.act and (self.latency_ms or self.throughput_limits):
            raise ValueError("ACT trials are judged on exceedance only")
        return self

    @property
    def throughput_limits(self) -> dict[str, float]:
        """The minimum-throughput limits set: ``min_iops``... by name."""
        names = ("min_iops", "min_mb_s", "min_iops_per_tb", "min_mb_s_per_tb")
        return {n: v for n in names if (v := getattr(self, n)) is not None}


def _depth(key: str) -> float:
    """How deep a ``latency_ms`` key reaches: its percentile, ``max`` deepest."""
    return 100.0 if key == "max" else latency_percentile(key) or 0.0


def latency_percentile(key: str) -> float | None:
    """The percentile a ``latency_ms`` key names (``p99.99`` -> 99.99); None for ``max`` or
    anything else."""
    m = _PERCENTILE_RE.match(key)
    return float(m[1]) if m and 0 < float(m[1]) < 100 else None


class Profile(BaseModel):
    """A QoS profile: per-workload targets."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)

    name: str
    description: str
    targets: Annotated[list[Target], Field(min_length=1)]

    def target_names(self) -> list[str]:
        """Each target's name, or ``target N`` (from 1) when it has none."""
        return [t.name or f"target {i}" for i, t in enumerate(self.targets, start=1)]


def builtin_profiles() -> dict[str, Path]:
    """The profiles shipped with ssdlab, by name."""
    return {p.stem: p for p in sorted(BUILTIN_DIR.glob("*.toml"))}


def load_profile(name_or_path: str | Path | Profile) -> Profile:
    """A built-in profile by name, or a profile file; InputError naming the file and the key
    for anything invalid."""
    if isinstance(name_or_path, Profile):
        return name_or_path
    path = Path(name_or_path)
    if not path.is_file():
        builtins = builtin_profiles()
        if str(name_or_path) not in builtins:
            known = ", ".join(builtins)
            raise InputError(
                f"no QoS profile file {path} and no built-in profile of that name ({known})"
            )
        path = builtins[str(name_or_path)]
    data = read_mapping(path, "QoS profile")
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = ".".join(str(p) for p in err["loc"] if not str(p).startswith("function-"))
            message = " ".join(err["msg"].split()).removeprefix("Value error, ")
            problems.append(f"{loc or '(top)'}: {message}")
        raise InputError(f"{path}: invalid QoS profile: " + "; ".join(problems)) from None

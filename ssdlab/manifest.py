"""The manifest of a results directory: what ran, where, with what, and how each step ended.

``manifest.json`` is rewritten atomically at every state change, so it always describes the
results on disk: a step's results count only once the manifest marks it ``ok`` (or
``interrupted``, which keeps what fio measured until it was stopped).
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from .atomic import write_text_atomic
from .errors import InputError
from .io.text import read_bytes
from .layout import MANIFEST
from .suite import Step
from .sysinfo import FileSystem, HostInfo

StepStatus = Literal["pending", "running", "ok", "failed", "interrupted"]
LOADABLE: tuple[StepStatus, ...] = ("ok", "interrupted")


def now() -> datetime:
    return datetime.now(UTC)


def new_run_id() -> str:
    """A run's id: its UTC start time and 6 random hex digits, ``20260101T120000Z-1a2b3c``."""
    return f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"


class TargetInfo(BaseModel):
    """What fio wrote to or read from."""

    path: str
    kind: Literal["file", "block"]
    size_bytes: int | None = None
    temporary: bool = False
    direct_supported: bool = True
    device: dict[str, Any] | None = None  # identity of a block device (ssdlab.devices)
    file_system: FileSystem | None = None  # a file's, as the run found it (None: not recorded)


class LoadPoint(BaseModel):
    """A load sweep's step: its role and, for a rate-limited one, the rate it asked for and
    whether fio reached it (:class:`ssdlab.suite.Sweep`).

    ``role``: ``max`` (the unlimited step measuring the maximum), ``rate`` (rate-limited at
    ``fraction`` of ``max_iops``) or ``unlimited`` (the workload unlimited after the rates).
    ``requested_iops`` is what the per-job ``rate_iops`` (as the job file has it) add up to;
    ``achieved_iops`` what fio measured (all jobs and directions); ``reached`` whether that is
    at least ``reach`` x requested (None for unlimited steps and before the step ends).
    ``rounding`` says what whole per-job rates did to the load when they offer more than 1 %
    off ``target_iops`` or raise a direction from 0 to 1 IOPS per job
    (:meth:`ssdlab.suite.RateSplit.rounding_problem`; None otherwise). A resumed run reuses
    the recorded rates."""

    sweep: str
    role: Literal["max", "rate", "unlimited"]
    fraction: float | None = None
    max_iops: float | None = None
    max_from: Literal["measured", "given"] | None = None
    target_iops: float | None = None  # fraction x max_iops, before rounding per job
    requested_iops: float | None = None
    rate_iops: str | None = None
    numjobs: int | None = None
    reach: float | None = None
    achieved_iops: float | None = None
    reached: bool | None = None
    rounding: str | None = None


class StepRecord(BaseModel):
    index: int
    name: str
    dir: str | None = None  # its folder under steps/ (a native run; imports: sources)
    status: StepStatus = "pending"
    started: datetime | None = None
    ended: datetime | None = None
    error: str | None = None
    direct: bool | None = None
    workload: Step | None = None
    sources: list[str] = Field(default_factory=list)
    block: str | None = None  # the round block this step belongs to
    round: int | None = None
    notes: list[str] = Field(default_factory=list)
    load: LoadPoint | None = None  # a load sweep's step (None: any other step)

    @model_serializer(mode="wrap")
    def _without_empty_load(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No ``load`` key for other steps: their records stay as before sweeps existed."""
        data = handler(self)
        if self.load is None:
            data.pop("load", None)
        return data


class SteadyStateRecord(BaseModel):
    """The steady-state determination of a rounds block, as the runner recorded it.

    ``round_values``: the tracked value of every round run; ``rounds``/``values``: the
    measurement window judged; the figures are those of
    :class:`~ssdlab.analysis.steady_state.SteadyState` (None when not computed, e.g. a round
    failed: ``reason`` says why).
    """

    block: str
    metric: str
    direction: str | None = None
    track: str
    window: int
    max_rounds: int | None = None
    round_values: list[float] = Field(default_factory=list)
    steady: bool
    reason: str
    rounds: list[int] = Field(default_factory=list)
    values: list[float] = Field(default_factory=list)
    mean: float | None = None
    data_excursion: float | None = None
    allowed_data_excursion: float | None = None
    slope: float | None = None
    intercept: float | None = None
    slope_excursion: float | None = None
    allowed_slope_excursion: float | None = None


class Manifest(BaseModel):
    format_version: int = 1
    run_id: str
    label: str
    source: Literal["run", "import"] = "run"
    suite: str
    suite_description: str = ""
    target: TargetInfo | None = None
    host: HostInfo | None = None
    fio_version: str = ""
    fio_clocksource: str | None = None  # pinned for every step; None: fio chose per process
    ssdlab_version: str = ""
    created: datetime = Field(default_factory=now)
    started: datetime | None = None
    ended: datetime | None = None
    status: Literal["pending", "running", "complete", "failed", "interrupted"] = "pending"
    suite_definition: dict[str, Any] | None = None
    scale: float = 1.0
    # the --set overrides as given (name: text) and the fio options opted in to; None: not
    # recorded (a run from before ssdlab recorded them)
    params: dict[str, str] | None = None
    allowed_fio_options: list[str] | None = None
    purge: str | None = None
    steps: list[StepRecord] = Field(default_factory=list)
    steady_state: list[SteadyStateRecord] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)

    def failures(self) -> list[str]:
        """One line per step that failed (left out of the results), with why."""
        return [
            f"step {s.name} failed and is left out: {s.error or 'no reason recorded'}"
            for s in self.steps
            if s.status == "failed"
        ]

    def record(self, name: str) -> StepRecord | None:
        """The step record of that name, if the step ran (or started)."""
        return next((s for s in self.steps if s.name == name), None)

    def save(self, results_dir: Path) -> None:
        """Replace ``manifest.json`` atomically; SsdlabError (one line) when it cannot."""
        write_text_atomic(results_dir / MANIFEST, self.model_dump_json(indent=2) + "\n")

    @classmethod
    def load(cls, results_dir: Path) -> Manifest:
        """The manifest of ``results_dir``; InputError naming the file when it is unusable."""
        path = results_dir / MANIFEST
        if not path.exists() and not path.is_symlink():
            raise InputError(f"{results_dir}: not an ssdlab results directory (no {MANIFEST})")
        raw = read_bytes(path)
        try:
            data = json.loads(raw.decode("utf-8"))
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: unreadable manifest: not UTF-8 (byte {exc.start})") from None
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: unreadable manifest: {exc}") from None
        except RecursionError:
            raise InputError(f"{path}: unreadable manifest: nested too deeply") from None
        except ValueError as exc:  # an integer of more digits than Python converts
            raise InputError(f"{path}: unreadable manifest: {exc}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"]) or "top level"
            raise InputError(f"{path}: invalid manifest at {loc}: {first['msg']}") from None
        except RecursionError:
            raise InputError(f"{path}: invalid manifest: nested too deeply") from None

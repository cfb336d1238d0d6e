"""Declarative test suites: a TOML or YAML file listing steps, each one fio workload.

A suite file has a ``name``, an optional ``description``, optional ``defaults`` applied to
every step, and ``steps``. Every step field can be set in ``defaults``; ``options`` holds any
further fio option verbatim. Built-in suites live in ``ssdlab/suites/<name>.toml``.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from .errors import SuiteError
from .units import parse_size

BUILTIN_DIR = Path(__file__).resolve().parent / "suites"

ReadWrite = Literal[
    "read", "write", "trim", "randread", "randwrite", "randtrim",
    "rw", "readwrite", "randrw", "trimwrite",
]  # fmt: skip
MIXED_RW = {"rw", "readwrite", "randrw"}


class Step(BaseModel):
    """One fio workload. Durations are seconds; sizes take fio's notation (``4k``, ``16GiB``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=80)
    rw: ReadWrite
    bs: str = "4k"
    iodepth: int = Field(1, ge=1, le=65536)
    numjobs: int = Field(1, ge=1, le=4096)
    rwmixread: int | None = Field(None, ge=0, le=100)
    runtime_s: float = Field(gt=0)
    ramp_s: float = Field(0, ge=0)
    size: str | None = None
    offset: str | None = None
    ioengine: str = "libaio"
    direct: bool = True
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)

    @field_validator("bs", "size", "offset", mode="before")
    @classmethod
    def _size_to_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int) else v

    @field_validator("bs")
    @classmethod
    def _check_bs(cls, v: str) -> str:
        parse_size(v)
        return v

    @property
    def bs_bytes(self) -> int:
        return parse_size(self.bs)

    @property
    def planned_s(self) -> float:
        """Seconds the step is expected to take (ramp plus measured runtime)."""
        return self.ramp_s + self.runtime_s

    def model_post_init(self, _: Any) -> None:
        if self.rw in MIXED_RW and self.rwmixread is None:
            raise ValueError(f"rw={self.rw} needs rwmixread (the read share in percent)")


class Suite(BaseModel):
    """A named, ordered list of steps."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    description: str = ""
    steps: list[Step] = Field(min_length=1)

    @field_validator("steps")
    @classmethod
    def _unique_names(cls, steps: list[Step]) -> list[Step]:
        seen: set[str] = set()
        for step in steps:
            if step.name in seen:
                raise ValueError(f"step name {step.name!r} is used twice")
            seen.add(step.name)
        return steps

    @property
    def planned_s(self) -> float:
        return sum(step.planned_s for step in self.steps)


def builtin_suites() -> list[str]:
    """Names of the suites shipped with ssdlab."""
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.toml"))


def _read_mapping(path: Path) -> dict[str, Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SuiteError(f"{path}: cannot read suite file: {exc.strerror}") from None
    try:
        data = tomllib.loads(text) if path.suffix == ".toml" else yaml.safe_load(text)
    except (tomllib.TOMLDecodeError, yaml.YAMLError) as exc:
        raise SuiteError(f"{path}: not valid {path.suffix.lstrip('.').upper()}: {exc}") from None
    if not isinstance(data, dict):
        raise SuiteError(f"{path}: a suite file must be a mapping with 'name' and 'steps'")
    return data


def _format_validation(path: Path, exc: ValidationError) -> str:
    lines = [f"{path}: invalid suite:"]
    for err in exc.errors():
        loc = ".".join(str(part) for part in err["loc"])
        lines.append(f"  {loc or '(top)'}: {err['msg']}")
    return "\n".join(lines)


def parse_suite(data: dict[str, Any], source: Path) -> Suite:
    """Validate a suite mapping; ``defaults`` are merged under each step."""
    data = dict(data)
    defaults = data.pop("defaults", {}) or {}
    steps = data.get("steps")
    if not isinstance(defaults, dict) or not isinstance(steps, list):
        raise SuiteError(f"{source}: 'defaults' must be a table and 'steps' a list of tables")
    merged = []
    for step in steps:
        if not isinstance(step, dict):
            raise SuiteError(f"{source}: every entry of 'steps' must be a table")
        options = {**defaults.get("options", {}), **step.get("options", {})}
        merged.append({**defaults, **step, "options": options})
    try:
        return Suite.model_validate({**data, "steps": merged})
    except ValidationError as exc:
        raise SuiteError(_format_validation(source, exc)) from None


def load_suite(name_or_path: str | Path) -> Suite:
    """Load a suite from a ``.toml``/``.yaml``/``.yml`` file, or a built-in suite by name."""
    path = Path(name_or_path)
    if not path.is_file():
        builtin = BUILTIN_DIR / f"{name_or_path}.toml"
        if not builtin.is_file():
            known = ", ".join(builtin_suites())
            raise SuiteError(f"no suite file {path} and no built-in suite of that name ({known})")
        path = builtin
    if path.suffix not in {".toml", ".yaml", ".yml"}:
        raise SuiteError(f"{path}: suite files are .toml, .yaml or .yml")
    return parse_suite(_read_mapping(path), path)

"""Power traces: readers for meters and BMCs, live samplers, and per-step power and efficiency.

Every source gives a :class:`PowerTrace` (``time_s`` epoch seconds, ``power_w`` watts, plus
``voltage_v``/``current_a`` where measured). ``read_power(path)`` picks the reader from the
file's content; register more with ``POWER_FORMATS.register(name, reader, sniff)``. The generic
CSV reader is registered without ``sniff``: call it by name with its column mapping.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..registry import Registry
from . import generic, ipmitool, quarch, yokotool
from .generic import read_power_csv
from .ipmitool import parse_instantaneous, read_ipmitool_dcmi
from .quarch import read_quarch_csv
from .sampler import (
    CommandSampler,
    IpmitoolSampler,
    PeriodicSampler,
    RaplSampler,
    parse_watts,
)
from .steps import efficiency, step_power
from .trace import PowerTrace
from .yokotool import read_yokotool_csv

POWER_FORMATS: Registry[PowerTrace] = Registry("power")
POWER_FORMATS.register(generic.NAME, read_power_csv)
POWER_FORMATS.register(quarch.NAME, read_quarch_csv, quarch.sniff)
POWER_FORMATS.register(yokotool.NAME, read_yokotool_csv, yokotool.sniff)
POWER_FORMATS.register(ipmitool.NAME, read_ipmitool_dcmi, ipmitool.sniff)


def detect_power(path: str | Path) -> str:
    """The registered power format of ``path``, recognised by its content."""
    return POWER_FORMATS.detect(path)


def read_power(path: str | Path, format: str | None = None, **options: Any) -> PowerTrace:
    """Read a power log with the named format (``options`` go to its reader) or the detected one."""
    return POWER_FORMATS.read(path, format, **options)


__all__ = [
    "POWER_FORMATS",
    "CommandSampler",
    "IpmitoolSampler",
    "PeriodicSampler",
    "PowerTrace",
    "RaplSampler",
    "detect_power",
    "efficiency",
    "parse_instantaneous",
    "parse_watts",
    "read_ipmitool_dcmi",
    "read_power",
    "read_power_csv",
    "read_quarch_csv",
    "read_yokotool_csv",
    "step_power",
]

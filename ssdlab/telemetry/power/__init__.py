"""Power traces: readers for meters and BMCs, live samplers, and per-step power and efficiency.

Every source gives a :class:`PowerTrace` (``time_s`` epoch seconds, ``power_w`` watts, plus
``voltage_v``/``current_a`` where measured). ``read_power(path)`` picks the reader from the
file's content; register more with ``POWER_FORMATS.register(name, reader, sniff)``. The generic
CSV reader is registered without ``sniff``: call it by name with its column mapping.

Live sources, sampled during ``ssdlab run --power SOURCE``, are named ``NAME[:ARGUMENT]`` and
made by :func:`power_sampler`; register more with ``POWER_SOURCES.register(name, factory)``,
``factory(argument, interval_s=...)`` returning a :class:`PeriodicSampler`:

- ``command:CMD``: run CMD (split like a shell would, no shell runs) and read the first number
  it prints as watts, e.g. ``command:/usr/local/bin/meter --watts``.
- ``ipmitool[:ARGS]``: ``ipmitool ARGS dcmi power reading`` (whole-server power from the BMC),
  e.g. ``ipmitool:-I lanplus -H bmc1 -U admin -f /root/bmc.pw`` (give the password with
  ``-f FILE`` or ``-E``, never ``-P``: the command is recorded with the results).
- ``rapl[:DOMAIN]``: a Linux RAPL domain (CPU power, never drive power).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ...errors import InputError
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


def _command(argument: str, interval_s: float) -> PeriodicSampler:
    if not argument.strip():
        raise InputError("power source 'command' needs the command: command:CMD")
    return CommandSampler(argument, interval_s)


def _ipmitool(argument: str, interval_s: float) -> PeriodicSampler:
    return IpmitoolSampler(interval_s, args=shlex.split(argument))


def _rapl(argument: str, interval_s: float) -> PeriodicSampler:
    return RaplSampler(argument, interval_s) if argument else RaplSampler(interval_s=interval_s)


POWER_SOURCES: Registry[PeriodicSampler] = Registry("power source")
POWER_SOURCES.register("command", _command)
POWER_SOURCES.register("ipmitool", _ipmitool)
POWER_SOURCES.register("rapl", _rapl)


def power_sampler(source: str, interval_s: float = 1.0) -> PeriodicSampler:
    """The live sampler a ``NAME[:ARGUMENT]`` source names (see the module docstring)."""
    name, _, argument = source.partition(":")
    if name not in POWER_SOURCES:
        raise InputError(
            f"unknown power source {name!r} in {source!r} (known: {', '.join(POWER_SOURCES)})"
        )
    if interval_s <= 0:
        raise InputError(f"power sampling interval must be positive, not {interval_s}")
    return POWER_SOURCES[name](argument, interval_s)


def detect_power(path: str | Path) -> str:
    """The registered power format of ``path``, recognised by its content."""
    return POWER_FORMATS.detect(path)


def read_power(path: str | Path, format: str | None = None, **options: Any) -> PowerTrace:
    """Read a power log with the named format (``options`` go to its reader) or the detected one."""
    return POWER_FORMATS.read(path, format, **options)


__all__ = [
    "POWER_FORMATS",
    "POWER_SOURCES",
    "CommandSampler",
    "IpmitoolSampler",
    "PeriodicSampler",
    "PowerTrace",
    "RaplSampler",
    "detect_power",
    "efficiency",
    "parse_instantaneous",
    "parse_watts",
    "power_sampler",
    "read_ipmitool_dcmi",
    "read_power",
    "read_power_csv",
    "read_quarch_csv",
    "read_yokotool_csv",
    "step_power",
]

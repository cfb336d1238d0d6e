"""Power traces: readers for meters and BMCs, live samplers, and per-step power and efficiency.

Every source gives a :class:`PowerTrace` (``time_s`` epoch seconds, ``power_w`` watts, plus
``voltage_v``/``current_a`` where measured). ``read_power(path)`` picks the reader from the
file's content; register more with ``POWER_FORMATS.register(name, reader, sniff)``. The generic
CSV reader is registered without ``sniff``: call it by name with its column mapping.

Live sources, sampled during ``ssdlab run --power SOURCE``, are named ``NAME[:ARGUMENT]`` and
made by :func:`power_sampler`; register more with ``POWER_SOURCES.register(name, factory)``,
``factory(argument, interval_s)`` returning a :class:`PeriodicSampler` (anything else, or a
factory raising, is an error naming the source before the run starts):

- ``command:CMD``: run CMD (split like a shell would, no shell runs) and read the first number
  it prints as watts, e.g. ``command:/usr/local/bin/meter --watts``.
- ``ipmitool[:ARGS]``: ``ipmitool ARGS dcmi power reading`` (whole-server power from the BMC),
  e.g. ``ipmitool:-I lanplus -H bmc1 -U admin -f /root/bmc.pw`` (give the password with
  ``-f FILE`` or ``-E``, never ``-P``: the command is recorded with the results).
- ``rapl[:DOMAIN]``: a Linux RAPL domain (CPU power, never drive power).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import InputError, SsdlabError
from ...formats import FORMATS, KindView
from ...plugins import Plugins, is_callable, type_name
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

#: the power kind of the one format registry (:mod:`ssdlab.formats`)

POWER_FORMATS: KindView[PowerTrace] = FORMATS.kind("power")
#: A live source: ``factory(argument, interval_s) -> PeriodicSampler``.
PowerSource = Callable[[str, float], PeriodicSampler]


def command_source(argument: str, interval_s: float) -> PeriodicSampler:
    """``command:CMD``."""
    if not argument.strip():
        raise InputError("power source 'command' needs the command: command:CMD")
    return CommandSampler(argument, interval_s)


def ipmitool_source(argument: str, interval_s: float) -> PeriodicSampler:
    """``ipmitool[:ARGS]``."""
    return IpmitoolSampler(interval_s, args=shlex.split(argument))


def rapl_source(argument: str, interval_s: float) -> PeriodicSampler:
    """``rapl[:DOMAIN]``."""
    return RaplSampler(argument, interval_s) if argument else RaplSampler(interval_s=interval_s)


#: Live power sources by name; a package adds one under the entry-point group
#: ``ssdlab.power_sources`` (:mod:`ssdlab.plugins`).
POWER_SOURCES: Plugins[PowerSource] = Plugins(
    "ssdlab.power_sources",
    "power source",
    {
        "command": "ssdlab.telemetry.power:command_source",
        "ipmitool": "ssdlab.telemetry.power:ipmitool_source",
        "rapl": "ssdlab.telemetry.power:rapl_source",
    },
    check=is_callable,
)


def power_sampler(source: str, interval_s: float = 1.0) -> PeriodicSampler:
    """The live sampler a ``NAME[:ARGUMENT]`` source names (see the module docstring)."""
    name, _, argument = source.partition(":")
    if name not in POWER_SOURCES:
        raise InputError(
            f"unknown power source {name!r} in {source!r} (known: {', '.join(POWER_SOURCES)})"
        )
    if interval_s <= 0:
        raise InputError(f"power sampling interval must be positive, not {interval_s}")
    factory = POWER_SOURCES[name]
    try:
        sampler = factory(argument, interval_s)
    except SsdlabError:
        raise
    except Exception as exc:  # a plug-in written for another signature, or its bug
        raise SsdlabError(f"{POWER_SOURCES.label(name)} failed: {exc!r}") from exc
    if not isinstance(sampler, PeriodicSampler):
        raise SsdlabError(
            f"{POWER_SOURCES.label(name)} returned {type_name(sampler)}, "
            "not a ssdlab.telemetry.power.PeriodicSampler"
        )
    return sampler


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

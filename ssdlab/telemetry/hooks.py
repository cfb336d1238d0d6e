"""Telemetry during ``ssdlab run``: SMART snapshots around every step, power sampled throughout.

``--smart``:

- ``auto`` (default): on a block device, ``nvme smart-log``, ``nvme id-ctrl`` and ``nvme ocp
  smart-add-log`` (all ``-o json``) for an NVMe drive, ``smartctl -j -a`` otherwise (and for
  NVMe when nvme-cli is missing), with whatever is installed; each command is tried once when
  the run starts and dropped, with a note, when it gives no SMART data (e.g. the OCP log on a
  drive without it). On a file target nothing is recorded.
- ``none``: nothing.
- any other value is a COMMAND printing one supported SMART format (nvme-cli or smartctl
  JSON); ``{device}`` is replaced by the target's path. It is split like a shell would split
  it and runs without a shell (wrap pipes in ``sh -c '...'``). COMMAND runs for file targets
  too, for a drive whose file system holds the target file.

Commands run with ``LC_ALL=C``. Their output is stored in the step's directory (see
:mod:`ssdlab.telemetry.store`); a failure becomes a note on the step and loses no result.

``--power SOURCE`` samples a live power source (:func:`ssdlab.telemetry.power.power_sampler`)
from the start of the run to its end, appending every sample to ``power/samples.csv`` and
rewriting ``power/trace.parquet`` after every step, so an interrupted run keeps its samples; a
resumed run appends to them.

On a fleet run (``--hosts``) hooks run on the controlling machine, not on the hosts:

- ``--power``: the meter is sampled here from the fleet's start to its end into
  ``ROOT/power/`` (one meter, one trace), and after each step every member's results
  directory gets the trace so far in its own ``power/``, so its steps' power comes from its
  own step windows (``ssdlab.load(member).power``): a member's results directory stays
  complete on its own, for reports and comparisons. The meter measures what it is wired to
  (one host, a shelf): members measured at once see the same watts, not a share each. The
  hosts' clocks must agree with this machine's (NTP): fio's logs are stamped by the host.
- ``--smart auto`` takes no snapshots (nvme-cli and smartctl here cannot reach the hosts'
  drives): each member's manifest says so in a note. ``--smart COMMAND`` is refused.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import TextIO

import polars as pl

from ..errors import InputError, SsdlabError
from ..execute import FleetHook, RunHook
from ..io.text import read_bytes
from ..layout import (
    POWER_DIR,
    POWER_RAW,
    POWER_SAMPLES,
    POWER_TRACE,
    SMART_AFTER,
    SMART_BEFORE,
    SMART_DIR,
    smart_capture,
)
from ..manifest import Manifest, StepRecord, TargetInfo, now
from . import store
from .power import POWER_FORMATS, PeriodicSampler, PowerTrace, generic, power_sampler
from .smart import SMART_FORMATS

SMART_AUTO = "auto"
SMART_NONE = "none"
CAPTURE_TIMEOUT_S = 60.0
#: seconds a run waits for the power meter's first measurement before its first step
FIRST_SAMPLE_WAIT_S = 60.0
SAMPLE_COLUMNS = {"time": "time_s", "power": "power_w"}
#: the note on each member of a fleet run with ``--smart auto``
FLEET_SMART_NOTE = (
    "--smart auto: no SMART snapshots on a fleet run (nvme-cli and smartctl on the "
    "controlling machine cannot reach the hosts' drives)"
)

#: a capture: (file stem, argument list)
Capture = tuple[str, list[str]]


def _is_nvme(target: TargetInfo) -> bool:
    device = target.device or {}
    return device.get("transport") == "nvme" or str(device.get("name", "")).startswith("nvme")


def auto_captures(target: TargetInfo) -> list[Capture]:
    """The SMART commands ``--smart auto`` uses for a block device with the tools installed."""
    dev = target.path
    if _is_nvme(target) and shutil.which("nvme"):
        return [
            ("nvme-smart-log", ["nvme", "smart-log", dev, "-o", "json"]),
            ("nvme-id-ctrl", ["nvme", "id-ctrl", dev, "-o", "json"]),
            ("nvme-ocp-smart-add-log", ["nvme", "ocp", "smart-add-log", dev, "-o", "json"]),
        ]
    if shutil.which("smartctl"):
        return [("smartctl", ["smartctl", "-j", "-a", dev])]
    return []


def capture(name: str, argv: list[str], directory: Path) -> str | None:
    """Run one SMART command into ``directory/<name>.json``; None, or what went wrong."""
    shown = shlex.join(argv)
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            text=True,
            timeout=CAPTURE_TIMEOUT_S,
            env={**os.environ, "LC_ALL": "C"},
            check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{shown}: {exc}"
    path = smart_capture(directory, name)
    path.write_text(done.stdout)
    try:
        SMART_FORMATS.read(path)  # smartctl's exit status is a bit mask: judge the output
    except InputError as exc:
        path.rename(smart_capture(directory, name, rejected=True))
        detail = done.stderr.strip().splitlines()[-1:] or [str(exc)]
        return f"{shown} (exit status {done.returncode}): {detail[0]}"
    return None


class SmartHook(RunHook):
    """SMART snapshots before and after every step (``smart``: auto or a COMMAND)."""

    def __init__(self, smart: str = SMART_AUTO) -> None:
        try:
            self.command = None if smart == SMART_AUTO else shlex.split(smart)
        except ValueError as exc:
            raise InputError(f"--smart {smart!r}: {exc}") from None
        if self.command == []:
            raise InputError("--smart needs auto, none or a command")
        self.captures: list[Capture] = []

    def start(self, out: Path, manifest: Manifest) -> None:
        target = manifest.target
        assert target is not None
        if self.command is not None:
            argv = [arg.replace("{device}", target.path) for arg in self.command]
            self.captures = [("command", argv)]
            return
        if target.kind != "block":
            return
        candidates = auto_captures(target)
        if not candidates:
            raise SsdlabError(
                f"no SMART snapshots of {target.path}: neither nvme-cli nor smartctl is "
                "installed (install one, or give --smart COMMAND)"
            )
        with tempfile.TemporaryDirectory() as probe:
            failed = {name: capture(name, argv, Path(probe)) for name, argv in candidates}
        self.captures = [(name, argv) for name, argv in candidates if failed[name] is None]
        problems = [error for error in failed.values() if error]
        if problems:
            usable = ", ".join(name for name, _ in self.captures) or "none"
            raise SsdlabError(f"SMART captures in use: {usable}; failed: " + "; ".join(problems))

    def _snapshot(self, step_dir: Path, phase: str) -> None:
        if not self.captures:
            return
        directory = step_dir / SMART_DIR / phase
        directory.mkdir(parents=True, exist_ok=True)
        when = now()
        errors = [e for name, argv in self.captures if (e := capture(name, argv, directory))]
        store.write_captures(step_dir, phase, when, errors)
        if errors:
            raise SsdlabError(f"SMART {phase}: " + "; ".join(errors))

    def before_step(self, step_dir: Path, record: StepRecord) -> None:
        self._snapshot(step_dir, SMART_BEFORE)

    def on_fleet(self, root: Path) -> FleetHook:
        """``auto``: no snapshots, a note on each member; a COMMAND is refused (see above)."""
        if self.command is not None:
            raise SsdlabError(
                "--smart COMMAND cannot run on a fleet (--hosts): it would run on this "
                "machine, not on the hosts; give --smart none"
            )
        return _NoFleetSmart()

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        self._snapshot(step_dir, SMART_AFTER)


class _NoFleetSmart:
    """``--smart auto`` on a fleet: a note on every member instead of snapshots."""

    def start(self) -> None:
        """Nothing to start."""

    def member(self, out: Path, manifest: Manifest) -> RunHook | None:
        if FLEET_SMART_NOTE not in manifest.notes:
            manifest.notes.append(FLEET_SMART_NOTE)
        return None

    def finish(self) -> None:
        """Nothing to finish."""


def _read_samples(path: Path) -> pl.DataFrame | None:
    """Samples an earlier (interrupted) run left, a torn last line dropped; None for none."""
    data = read_bytes(path, kind="power traces")
    whole = data[: data.rfind(b"\n") + 1]
    if len(whole) != len(data):
        path.write_bytes(whole)
    return POWER_FORMATS[generic.NAME](path, SAMPLE_COLUMNS).frame if whole else None


class PowerHook(RunHook):
    """Samples ``sampler`` from the start of the run to its end into ``power/``."""

    def __init__(self, sampler: PeriodicSampler) -> None:
        self.sampler = sampler
        self.out: Path | None = None
        self.previous = pl.DataFrame(schema={"time_s": pl.Float64, "power_w": pl.Float64})
        self._file: TextIO | None = None

    def start(self, out: Path, manifest: Manifest) -> None:
        self.open(out)

    def open(self, out: Path) -> None:
        """Start sampling into ``out/power/`` (appending to what a resumed run sampled)."""
        directory = out / POWER_DIR
        samples = directory / POWER_SAMPLES
        if (directory / POWER_TRACE).exists() and not samples.exists():
            raise SsdlabError(
                f"{directory}: holds a trace attached with 'ssdlab power attach'; not recording "
                "power (move it away to record)"
            )
        directory.mkdir(parents=True, exist_ok=True)
        previous = _read_samples(samples) if samples.exists() else None
        if previous is not None:
            self.previous = previous
        self._file = samples.open("a", encoding="utf-8")
        if self._file.tell() == 0:
            self._append_line("time_s,power_w")
        self.sampler.on_sample = lambda t, w: self._append_line(f"{t!r},{w!r}")
        self.out = out
        self.sampler.start()
        # the first step starts once the meter has measured: its window is covered from its
        # start (a measurement may take up to its timeout; a hung one does not stop the run)
        self.sampler.wait_first(FIRST_SAMPLE_WAIT_S)

    def _append_line(self, line: str) -> None:
        assert self._file is not None
        self._file.write(line + "\n")
        self._file.flush()

    def trace(self) -> PowerTrace:
        """Every sample so far, a resumed run's earlier ones included."""
        trace = self.sampler.trace()
        frame = pl.concat([self.previous, trace.frame], how="diagonal_relaxed").sort("time_s")
        return PowerTrace(frame, {**trace.meta, "samples": frame.height})

    def _save(self) -> PowerTrace:
        assert self.out is not None
        saved = self.trace()
        store.write_trace(self.out, saved)
        return saved

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        if self.out is not None:
            self._save()

    def finish(self, out: Path, manifest: Manifest) -> None:
        self.close()

    def close(self) -> None:
        """Stop sampling and save the trace; SsdlabError when readings failed."""
        if self.out is None:
            return
        self.sampler.stop()
        meta = self._save().meta
        if self._file is not None:
            self._file.close()
        _raise_errors(meta)

    def on_fleet(self, root: Path) -> FleetHook:
        """One meter for the fleet, sampled here into ``root/power/`` (see above)."""
        return _FleetPower(self, root)


def _raise_errors(meta: dict) -> None:
    """SsdlabError when a trace's ``meta`` counts failed readings."""
    if meta["errors"]:
        raise SsdlabError(
            f"power: {meta['errors']} failed readings from {meta.get('source', 'source')} "
            f"({meta['samples']} samples kept), last: {meta['last_error']}"
        )


class _FleetPower:
    """``--power`` on a fleet: ``hook`` samples into ``root/power/``; members get copies."""

    def __init__(self, hook: PowerHook, root: Path) -> None:
        self.hook = hook
        self.root = root

    def start(self) -> None:
        self.hook.open(self.root)

    def member(self, out: Path, manifest: Manifest) -> RunHook | None:
        return _MemberPower(self.hook, self.root)

    def finish(self) -> None:
        self.hook.close()


class _MemberPower(RunHook):
    """A fleet member's copy of the fleet's power trace, rewritten after each of its steps
    and at its end (its ``source.json`` names the fleet root that recorded it)."""

    def __init__(self, hook: PowerHook, root: Path) -> None:
        self.hook = hook
        self.root = root
        self.out: Path | None = None

    def start(self, out: Path, manifest: Manifest) -> None:
        directory = out / POWER_DIR
        if (directory / POWER_RAW).exists():
            raise SsdlabError(
                f"{directory}: holds a trace attached with 'ssdlab power attach'; not copying "
                "the fleet's power there (move it away to record)"
            )
        self.out = out

    def _copy(self) -> dict:
        assert self.out is not None
        trace = self.hook.trace()
        meta = {**trace.meta, "recorded_by_fleet": str(self.root.absolute())}
        store.write_trace(self.out, PowerTrace(trace.frame, meta))
        return meta

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        if self.out is not None and self.hook.out is not None:
            self._copy()

    def finish(self, out: Path, manifest: Manifest) -> None:
        if self.out is not None and self.hook.out is not None:
            _raise_errors(self._copy())


def telemetry_hooks(
    smart: str = SMART_AUTO, power: str | None = None, power_interval_s: float = 1.0
) -> list[RunHook]:
    """The hooks for ``ssdlab run --smart SMART --power POWER`` (an unknown source fails now)."""
    hooks: list[RunHook] = [] if smart == SMART_NONE else [SmartHook(smart)]
    if power:
        hooks.append(PowerHook(power_sampler(power, power_interval_s)))
    return hooks

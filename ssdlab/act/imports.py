"""Native ACT logs added to a results directory as ACT trials (``ssdlab act import``).

A results directory's ACT trials ran on one device: its target (fio trials), else the device
of its first trial counted in the score. A log whose devices are not shown to be that one
(:meth:`~ssdlab.act.trials.DeviceId.same`: a log names no serial, so a drive with one is
never shown to be the same) is refused unless ``other_device`` is given: it then joins as a
trial marked as another device's, left out of the score.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .. import __version__
from ..atomic import write_bytes_atomic
from ..errors import InputError
from ..importer import write_import
from ..io.text import read_bytes
from ..layout import MANIFEST
from ..manifest import Manifest, new_run_id, now
from ..pipeline import FIO_FRAMES
from .latency import ACT_SLICE_S
from .log import ActLog, read_act_log
from .trials import (
    ActRecord,
    DeviceId,
    Trial,
    describe_devices,
    native_trial,
    same_devices,
    trial_devices,
)
from .workload import load_problem

#: the option (and keyword) that adds a log of another device than the run's
OTHER_DEVICE_OPTION = "--other-device"


def _run_devices(
    out: Path, manifest: Manifest | None, record: ActRecord
) -> tuple[list[DeviceId] | None, str] | None:
    """The devices the ACT trials in ``out`` ran on and what says so; None when ``out`` has
    neither a target nor a trial counted in the score (devices None: not recorded)."""
    if manifest is not None and manifest.target is not None:
        return [DeviceId.of_target(manifest.target)], f"the target of {out}"
    for trial in record.trials:
        if not trial.other_device:
            return trial_devices(trial, None), f"the device of trial {trial.trial} in {out}"
    return None


def _mark_device(
    log: Path, trial: Trial, out: Path, manifest: Manifest | None, record: ActRecord, other: bool
) -> None:
    """Mark ``trial`` as another device's when asked (``other``) and its log's devices are
    not shown to be the run's; InputError (one line, naming both) when they are not and it
    was not asked, or when it was asked of a log with nothing to differ from."""
    run = _run_devices(out, manifest, record)
    mine = describe_devices(trial.devices)
    if run is None:
        if other:
            raise InputError(
                f"{OTHER_DEVICE_OPTION}: {out} holds no ACT trials or target that {log} "
                "could differ from"
            )
        return
    devices, source = run
    if same_devices(trial.devices, devices):
        if other:
            raise InputError(
                f"{OTHER_DEVICE_OPTION}: {log} ran on {mine}, which is {source}, not another device"
            )
        return
    if not other:
        raise InputError(
            f"{log}: ran on {mine}, not shown to be {source} ({describe_devices(devices)}); "
            f"add it as another device's trial, left out of the score, with "
            f"{OTHER_DEVICE_OPTION}, or use another --out"
        )
    trial.other_device = True


def _slice_hint(act: ActLog, slice_s: int) -> str:
    """For a log shorter than ``slice_s``: the ``--slice`` that takes it whole, or nothing."""
    last, interval = (act.reports[-1].seconds if act.reports else 0), act.report_interval_s
    if last >= slice_s or last < interval:
        return ""
    return (
        f"; pass --slice {last - last % interval} for one slice of the whole log, or a "
        f"shorter multiple of its {interval} s report interval"
    )


def import_act_log(
    log: Path,
    out: Path,
    *,
    slice_s: int = ACT_SLICE_S,
    load: float | None = None,
    label: str | None = None,
    other_device: bool = False,
) -> Trial:
    """Judge the act_storage log ``log`` slice by slice and add it to ``out`` as the next
    ACT trial, with a copy of the log; ``out`` is made as an import when it holds no results.

    ``load`` defaults to the log's read rate / 2000 per device, ``label`` (of a new results
    directory) to the log's device names or file name. InputError for a log that is not an
    act_storage log or cannot be sliced so, and for a log of another device than the run's
    unless ``other_device`` (see the module's text).
    """
    if load is not None and (problem := load_problem(load, "--load")):
        raise InputError(problem)
    act = read_act_log(log)
    if "reads" not in act.histogram_names:
        raise InputError(f"{log}: no 'reads' histogram (not an act_storage log?)")
    try:
        trial = native_trial(act, slice_s=slice_s, load=load)
    except ValueError as exc:
        raise InputError(f"{log}: {exc}") from None
    except InputError as exc:  # a log shorter than a slice: say which --slice takes it
        raise InputError(f"{exc}{_slice_hint(act, slice_s)}") from None
    existing = Manifest.load(out) if (out / MANIFEST).exists() else None
    record = ActRecord.load(out)
    _mark_device(log, trial, out, existing, record, other_device)
    manifest = existing or Manifest(
        run_id=new_run_id(),
        label=label or " ".join(act.config.get("device-names", [])) or log.name,
        source="import",
        suite="act",
        suite_description=f"native ACT {act.version} log",
        ssdlab_version=__version__,
        status="complete",
        started=now(),
        ended=now(),
    )
    trial = record.add(trial)
    trial.log = f"act/native-{trial.trial:02d}-{log.name}"
    write_bytes_atomic(out / trial.log, read_bytes(log, kind="ACT logs"))
    record.save(out)
    mark = " from another device, left out of the score" if trial.other_device else ""
    manifest.notes.append(f"ACT trial {trial.trial}: native log {log.absolute()}{mark}")
    if existing is not None:
        manifest.save(out)
    else:
        write_import(out, manifest, {name: pl.DataFrame() for name in FIO_FRAMES})
    return trial

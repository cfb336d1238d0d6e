"""Native ACT logs added to a results directory as ACT trials (``ssdlab act import``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from .. import __version__
from ..atomic import write_bytes_atomic
from ..errors import InputError
from ..importer import write_import
from ..layout import MANIFEST
from ..manifest import Manifest, new_run_id, now
from ..pipeline import FIO_FRAMES
from .latency import ACT_SLICE_S
from .log import read_act_log
from .trials import ActRecord, Trial, native_trial


def import_act_log(
    log: Path,
    out: Path,
    *,
    slice_s: int = ACT_SLICE_S,
    load: float | None = None,
    label: str | None = None,
) -> Trial:
    """Judge the act_storage log ``log`` slice by slice and add it to ``out`` as the next
    ACT trial, with a copy of the log; ``out`` is made as an import when it holds no results.

    ``load`` defaults to the log's read rate / 2000 per device, ``label`` (of a new results
    directory) to the log's device names or file name. InputError for a log that is not an
    act_storage log or cannot be sliced so.
    """
    act = read_act_log(log)
    if "reads" not in act.histogram_names:
        raise InputError(f"{log}: no 'reads' histogram (not an act_storage log?)")
    try:
        trial = native_trial(act, slice_s=slice_s, load=load)
    except ValueError as exc:
        raise InputError(f"{log}: {exc}") from None
    existing = (out / MANIFEST).exists()
    manifest = (
        Manifest.load(out)
        if existing
        else Manifest(
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
    )
    record = ActRecord.load(out)
    trial = record.add(trial)
    trial.log = f"act/native-{trial.trial:02d}-{log.name}"
    write_bytes_atomic(out / trial.log, log.read_bytes())
    record.save(out)
    manifest.notes.append(f"ACT trial {trial.trial}: native log {log.absolute()}")
    if existing:
        manifest.save(out)
    else:
        write_import(out, manifest, {name: pl.DataFrame() for name in FIO_FRAMES})
    return trial

"""Every name ssdlab gives a file or folder on disk (a results directory, a SMART history,
a catalog), in one place.

::

    RESULTS/
      manifest.json           what ran and how each step ended (ssdlab.manifest)
      .ssdlab.lock            held by the process writing RESULTS (ssdlab.lock)
      .ssdlab.reserve         1 MiB freed when the disk fills, to save the manifest
      fleet.json              a fleet run: its hosts and targets
      act.json                an ACT run: its trials
      drive.toml|yaml         the drive's endurance spec (optional, by the user)
      target.tmp              the file a run without --target writes (removed after it)
      steps/NNN-NAME/         a native run: one folder per step
        job.fio  fio.json     the job file fio ran and its JSON+ output
        fio_*.log             fio's bw/iops/lat/clat/histogram logs
        smart/before|after/   SMART captures around the step (``.NAME.rejected``: not SMART)
        smart/captures.json   when each phase was captured, and what failed
      power/                  samples.csv (as measured), trace.parquet, source.json,
                              raw/FILE (a trace attached by ``ssdlab power attach``, as given)
      frames/NAME.parquet     an import: the frames built when it was imported

    HISTORY/                  a fleet SMART history (``ssdlab smart import``)
      smart_history.json      what was imported
      frames/smart_history.parquet

    ROOT/.ssdlab-catalog/     the catalog of every results directory below ROOT (ssdlab.catalog)
      catalog.duckdb          its views
      frames/FRAME/KEY.parquet  FRAME of one run (KEY: its cache key); _empty.parquet: no rows

A native step's record names its folder (``StepRecord.dir``); an imported step names the
files it came from (``StepRecord.sources``) and has no folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .manifest import StepRecord

MANIFEST = "manifest.json"
LOCK_FILE = ".ssdlab.lock"
RESERVE = ".ssdlab.reserve"
FLEET_FILE = "fleet.json"
#: the fio servers' temporary directories of a lockstep root (ssdlab.fleet.local)
SERVERS_RECORD = ".ssdlab-fio-servers"
ACT_RECORD = "act.json"
DRIVE_SPEC_NAMES = ("drive.toml", "drive.yaml", "drive.yml")
STEPS = "steps"
JOB_FILE = "job.fio"
FIO_JSON = "fio.json"
#: what a step's fio logs start with (fio_bw.1.log, fio_clat_hist.1.log...)
LOG_PREFIX = "fio"
TEMP_TARGET = "target.tmp"
SMART_DIR = "smart"
POWER_DIR = "power"
FRAMES = "frames"
#: in ``power/``: live samples as measured, the trace steps are aligned with, what recorded
#: it, and the folder of an attached trace's file
POWER_SAMPLES = "samples.csv"
POWER_TRACE = "trace.parquet"
POWER_SOURCE = "source.json"
POWER_RAW = "raw"
#: in a step's ``smart/``: a folder per phase, and the record of when each was captured
SMART_BEFORE = "before"
SMART_AFTER = "after"
SMART_PHASES = (SMART_BEFORE, SMART_AFTER)
SMART_CAPTURES = "captures.json"
#: what marks a fleet SMART history, beside its ``frames/``
SMART_HISTORY = "smart_history.json"
CATALOG_DIR = ".ssdlab-catalog"
CATALOG_DATABASE = "catalog.duckdb"
#: in each frame's folder of a catalog: the frame's columns (no rows), so that it has a view
CATALOG_EMPTY = "_empty.parquet"


def step_dir_name(index: int, name: str) -> str:
    """The folder name of a native run's step ``index`` named ``name``."""
    return f"{index:03d}-{name}"


def step_dir(results_dir: Path, record: StepRecord) -> Path:
    """The folder of a native run's step (ValueError for an imported step: it has none)."""
    if record.dir is None:
        raise ValueError(f"step {record.name!r} was imported: it has sources, not a folder")
    return results_dir / STEPS / record.dir


def fio_json_of(record: StepRecord) -> str | None:
    """Where a step's fio JSON is: relative to the results directory for a native step, the
    source file for an imported one (None when it has neither)."""
    if record.dir is not None:
        return f"{STEPS}/{record.dir}/{FIO_JSON}"
    return record.sources[0] if record.sources else None


def frame_path(name: str) -> str:
    """Where an import keeps the frame ``name``, relative to its directory."""
    return f"{FRAMES}/{name}.parquet"


def frame_file(results_dir: Path, name: str) -> Path:
    """Where an import keeps the frame ``name``."""
    return results_dir / frame_path(name)


def smart_capture(directory: Path, name: str, *, rejected: bool = False) -> Path:
    """The output of the SMART capture ``name`` in a phase's ``directory``; ``rejected``:
    where it is kept when it is not a SMART document (hidden, so the folder reads as one
    snapshot)."""
    return directory / (f".{name}.rejected" if rejected else f"{name}.json")


def catalog_frames(root: Path) -> Path:
    """The folder of a catalog's cached frames, one folder per frame."""
    return root / CATALOG_DIR / FRAMES


def cached_frame(frames_dir: Path, frame: str, key: str) -> Path:
    """The cached ``frame`` of the run (or history) whose cache key is ``key``."""
    return frames_dir / frame / f"{key}.parquet"


def cached_frames(frames_dir: Path, frame: str = "*", key: str = "*") -> list[Path]:
    """The cached frames whose frame and key match the glob patterns ``frame`` and ``key``
    (``_empty.parquet`` too, unless ``key`` leaves it out), sorted."""
    return sorted(frames_dir.glob(cached_frame(Path(), frame, key).as_posix()))

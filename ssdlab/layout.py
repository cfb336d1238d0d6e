"""Every name ssdlab gives a file or folder in a results directory, in one place.

::

    RESULTS/
      manifest.json           what ran and how each step ended (ssdlab.manifest)
      .ssdlab.lock            held by the process writing RESULTS (ssdlab.lock)
      .ssdlab.reserve         1 MiB freed when the disk fills, to save the manifest
      fleet.json              a fleet run: its hosts and targets
      act.json                an ACT run: its trials
      drive.toml|yaml         the drive's endurance spec (optional, by the user)
      steps/NNN-NAME/         a native run: one folder per step
        job.fio  fio.json     the job file fio ran and its JSON+ output
        fio_*.log             fio's bw/iops/lat/clat/histogram logs
        smart/before|after/   SMART captures around the step
      power/                  samples.csv (as measured), trace.parquet, source.json
      frames/NAME.parquet     an import: the frames built when it was imported

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
SMART_DIR = "smart"
POWER_DIR = "power"
FRAMES = "frames"


def step_dir(results_dir: Path, record: StepRecord) -> Path:
    """The folder of a native run's step (ValueError for an imported step: it has none)."""
    if record.dir is None:
        raise ValueError(f"step {record.name!r} was imported: it has sources, not a folder")
    return results_dir / STEPS / record.dir


def frame_file(results_dir: Path, name: str) -> Path:
    """Where an import keeps the frame ``name``."""
    return results_dir / FRAMES / f"{name}.parquet"

"""The step executor: run one fio job as a step of a results directory.

A step runs in ``steps/NNN-<step>.partial`` (job file written, hooks around fio) and is
renamed when fio has exited; only the manifest says whether it is complete. What varies
between runners comes in through two protocols:

- a :class:`Launcher` starts fio for the step: :class:`LocalFio` (fio on this machine, with
  ``--readonly`` for a step that does not write) or a fleet member's fio client of a remote
  ``fio --server`` (:class:`ssdlab.fleet.client.FioClient`);
- a :class:`Display` shows progress: :class:`ssdlab.progress.RunDisplay` on this machine,
  or a fleet's per-host view of the fleet's display.

Suites (:mod:`ssdlab.runner`), ACT trials (:mod:`ssdlab.act.run`) and fleet members
(:mod:`ssdlab.fleet.run`) each hold a :class:`StepExecutor` and say what a step is (its job
text, its label, how its results are judged).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeVar

import polars as pl

from .atomic import write_error
from .errors import InputError, RunInterrupted, SsdlabError
from .fio import FioStatus, run_fio
from .io.fio_json import FioJson, read_fio_json
from .layout import FIO_JSON, JOB_FILE, step_dir, step_dir_name
from .manifest import Manifest, StepRecord, TargetInfo, now
from .pipeline import fio_error
from .session import save_manifest
from .suite import Step
from .target import check_unchanged, release_target

_ENOSPC = os.strerror(errno.ENOSPC)
T = TypeVar("T")


class StepFailed(SsdlabError):
    """A step's fio run failed; earlier results are kept."""


class Outcome(Protocol):
    """How a step's fio ended: its error (None when it did not fail), whether the user
    stopped it, and fio's own lines (those starting ``fio:`` are its warnings)."""

    @property
    def error(self) -> str | None: ...

    @property
    def interrupted(self) -> bool: ...

    @property
    def notes(self) -> list[str]: ...


class Launcher(Protocol):
    """Starts fio on the job file in a step's directory and waits for it; fio's json+
    output goes to ``fio.json`` and its error output to ``fio.stderr`` there.
    ``target_here``: the target is on this machine (then checked before every step)."""

    target_here: bool

    def launch(self, step_dir: Path, record: StepRecord) -> Outcome: ...


class Display(Protocol):
    """What the user sees of a run's steps."""

    def print(self, message: str) -> None: ...

    def start_step(self, label: str, planned_s: float, planned_bytes: int | None = None) -> None:
        """A step starts; ``planned_bytes``, a size-based step's, is given only to a
        display that shows them (:attr:`ssdlab.runner.SuiteSteps.bytes_progress`)."""

    def end_step(self, message: str) -> None: ...

    def add_planned(self, seconds: float) -> None:
        """More work than planned, or (negative) planned work no longer needed: the rounds
        a block that is steady early does not run."""

    def skip(self, seconds: float) -> None:
        """A step of ``seconds`` planned that was finished before (a resumed run)."""


@dataclass
class LocalFio:
    """fio on this machine, with ``--readonly`` for a step that does not write; its live
    status goes to ``on_status``."""

    on_status: Callable[[FioStatus], None] | None = None
    target_here = True

    def launch(self, step_dir: Path, record: StepRecord) -> Outcome:
        return run_fio(
            step_dir / JOB_FILE,
            step_dir / FIO_JSON,
            on_status=self.on_status,
            readonly=not writes(record),
        )


def writes(record: StepRecord) -> bool:
    """Whether the step of ``record`` may write (a step without a workload, an ACT trial's,
    does)."""
    return record.workload is None or record.workload.writes


class RunHook:
    """Something to do around a run and each of its steps (telemetry, power sampling).

    ``before_step``/``after_step`` get the step's directory while it is still ``.partial``,
    so what they write there is kept with the step's raw results. An ``SsdlabError`` from a
    hook becomes a note on the step (or the run) and never loses a measurement.
    """

    def start(self, out: Path, manifest: Manifest) -> None:
        """Before the first step (or the first step of a resumed run)."""

    def before_step(self, step_dir: Path, record: StepRecord) -> None:
        """After the job file is written, just before fio starts."""

    def after_step(self, step_dir: Path, record: StepRecord) -> None:
        """Just after fio exits, whatever the outcome."""

    def finish(self, out: Path, manifest: Manifest) -> None:
        """After the last step, also when the run fails or is interrupted."""

    def on_fleet(self, root: Path) -> FleetHook:
        """This hook on a fleet run rooted at ``root``: hooks run on the controlling machine,
        not on the hosts, so each says what it means there (SsdlabError when nothing)."""
        raise SsdlabError(f"{type(self).__name__} cannot run on a fleet (--hosts)")


class FleetHook(Protocol):
    """A :class:`RunHook` on a fleet run: ``start``/``finish`` once around the whole fleet,
    ``member`` for each host and target's results directory."""

    def start(self) -> None: ...

    def member(self, out: Path, manifest: Manifest) -> RunHook | None:
        """The hook for one member (None: nothing to do there; a note says why)."""

    def finish(self) -> None: ...


def job_error(jobs: pl.DataFrame) -> str | None:
    """Why a step whose fio exited 0 failed all the same: a job that reported an error
    (``continue_on_error``, a verify error; :func:`~ssdlab.pipeline.fio_error`), or None."""
    return fio_error(jobs.filter(pl.col("error") != 0).to_dicts()) if jobs.height else None


def no_io_error(step_dir: Path, jobs: pl.DataFrame, notes: list[str]) -> str | None:
    """Why fio, exiting 0, did no I/O at all (its stderr and ``fio:`` notes, else a generic
    reason); None when it did some (fio's ``jobs`` rows of the step in ``step_dir``)."""
    if jobs.is_empty() or jobs["io_bytes"].sum() > 0:  # no jobs: inspect says so
        return None
    said: list[str] = []
    with contextlib.suppress(OSError):
        said = (step_dir / "fio.stderr").read_text(errors="replace").splitlines()
    lines = [line.strip() for line in said if line.strip()]
    text = "; ".join(dict.fromkeys(lines + [n for n in notes if n.startswith("fio:")]))
    return "fio did no I/O" + (f": {text[:400]}" if text else "")


def disk_full(error: str, step_dir: Path, target: TargetInfo | None) -> str:
    """``error`` as one line naming the full file system when fio failed for want of space:
    its ENOSPC, or a failure without a word on stderr while the file system of the step
    directory or of a file target is full (fio could not even write its messages)."""
    files = [str(step_dir)] + ([target.path] if target and target.kind == "file" else [])
    if found := re.search(rf"on file (.+?): {_ENOSPC}", error):
        files = [found[1]]
    elif _ENOSPC not in error:
        with contextlib.suppress(OSError):
            if (step_dir / "fio.stderr").stat().st_size:
                return error
        files = [f for f in files if _full(f)]
    if not files:
        return error
    return str(write_error(files[-1], OSError(errno.ENOSPC, _ENOSPC)))


def _full(path: str) -> bool:
    try:
        return os.statvfs(path).f_bavail == 0
    except OSError:
        return False


def end_status(exc: BaseException) -> Literal["interrupted", "failed"]:
    """A run's status when it ends by ``exc``."""
    return "interrupted" if isinstance(exc, RunInterrupted | KeyboardInterrupt) else "failed"


@dataclass
class StepExecutor:
    """Runs the steps of one results directory ``out`` and keeps its manifest current."""

    manifest: Manifest
    out: Path
    display: Display
    launcher: Launcher
    hooks: Sequence[RunHook] = field(default_factory=list)

    def call(self, notes: list[str], method: str, *args: object) -> None:
        """Call ``method`` on every hook; their user-facing errors become notes."""
        for hook in self.hooks:
            try:
                getattr(hook, method)(*args)
            except SsdlabError as exc:
                notes.append(f"{type(hook).__name__}.{method}: {exc}")
                self.display.print(f"warning: {exc}")

    def save(self) -> None:
        save_manifest(self.manifest, self.out)

    def new_record(
        self,
        name: str,
        *,
        workload: Step | None = None,
        block: str | None = None,
        round_no: int | None = None,
    ) -> StepRecord:
        """A new step, numbered after the last one, appended to the manifest."""
        index = len(self.manifest.steps) + 1
        record = StepRecord(
            index=index,
            name=name,
            dir=step_dir_name(index, name),
            workload=workload,
            block=block,
            round=round_no,
        )
        self.manifest.steps.append(record)
        return record

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """The run from its hooks' ``start`` to its end: the manifest's status (complete,
        or as :func:`end_status` says), the hooks' ``finish``, the target released (first:
        it may free the space the save needs) and the last save."""
        manifest = self.manifest
        try:
            self.call(manifest.notes, "start", self.out, manifest)
            yield
            manifest.status = "complete"
        except BaseException as exc:
            manifest.status = end_status(exc)
            raise
        finally:
            try:
                self.call(manifest.notes, "finish", self.out, manifest)
            finally:
                if manifest.target is not None:
                    release_target(manifest.target)
                manifest.ended = now()
                self.save()

    def check_target(self, record: StepRecord) -> None:
        """Before fio starts on a target of this machine (``launcher.target_here``; another
        host's cannot be seen): SsdlabError unless the target is still the one the run
        planned (:func:`ssdlab.target.check_unchanged`)."""
        target = self.manifest.target
        if target is None or not self.launcher.target_here:
            return
        try:
            check_unchanged(target, writes=writes(record))
        except SsdlabError as exc:
            raise SsdlabError(
                f"{exc}; stopped before step '{record.name}' started (results so far are "
                f"kept in {self.out})"
            ) from None

    def execute(
        self,
        record: StepRecord,
        job: str,
        label: str,
        planned_s: float,
        inspect: Callable[[Path, FioJson], T],
        planned_bytes: int | None = None,
    ) -> tuple[Outcome, str | None, T | None]:
        """Run the fio ``job`` text as the step of ``record``: in its ``.partial`` directory,
        hooks around fio, then ``inspect(step_dir, result)`` of fio's result, read once (an
        InputError becomes the step's error; so does a job's error fio went on past,
        :func:`job_error`), the rename and the manifest update. ``planned_bytes``: a
        size-based step's bytes, for a display that shows them (see :class:`Display`).
        Returns fio's outcome, the error, what ``inspect`` returned."""
        final = step_dir(self.out, record)
        partial = final.with_name(final.name + ".partial")
        for old in (final, partial):
            shutil.rmtree(old, ignore_errors=True)
        try:
            partial.mkdir(parents=True)
            (partial / JOB_FILE).write_text(job)
        except OSError as exc:
            raise write_error(partial / JOB_FILE, exc) from None
        record.status, record.started, record.ended, record.error = "running", now(), None, None
        record.notes = []
        try:
            self.check_target(record)
            self.save()
            self.call(record.notes, "before_step", partial, record)
            if planned_bytes is None:
                self.display.start_step(label, planned_s)
            else:
                self.display.start_step(label, planned_s, planned_bytes=planned_bytes)
            outcome = self.launcher.launch(partial, record)
            record.notes += [n for n in outcome.notes if n.startswith("fio:")]  # fio's warnings
            self.call(record.notes, "after_step", partial, record)
            error, inspected = outcome.error, None
            if error is None or outcome.interrupted:  # fio's result, read once
                try:
                    result = read_fio_json(partial / FIO_JSON)
                    if error is None:  # fio exits 0 after a job's error it went on past
                        error = job_error(result.jobs) or no_io_error(
                            partial, result.jobs, outcome.notes
                        )
                    if error is None or outcome.interrupted:
                        inspected = inspect(partial, result)
                except InputError as exc:
                    error = error or str(exc)
            if error and not outcome.interrupted:
                error = disk_full(error, partial, self.manifest.target)
            os.replace(partial, final)
            record.ended = now()
            record.status = "interrupted" if outcome.interrupted else ("failed" if error else "ok")
            record.error = error
        except BaseException as exc:  # never left "running": the run's last save records it
            if record.status == "running":
                record.status, record.ended = "failed", now()
                record.error = str(exc) if isinstance(exc, SsdlabError) else f"stopped: {exc!r}"
            raise
        self.save()
        return outcome, error, inspected

"""Run ACT trials with the fio emulation, keeping everything in an ssdlab results directory.

fio buffers its logs until a job ends, so each slice is its own fio run (the ACT job file with
runtime = the slice) judged before the next starts; a trial is consecutive slices until its
duration or its first failing slice. Layout: the manifest (suite ``act``) lists one step per
slice, ``trial-NN-slice-NNN`` with block ``trial-<n>`` and round = slice, whose directory holds
the job file, fio's json+ output and the small reads' histogram logs, exactly as
:mod:`ssdlab.runner` keeps a step; ``act.json`` holds the trials and their slice tables.

Running again into the same directory reuses every trial already judged with the same load
and settings (a search resumes where it stopped); an interrupted trial is kept as
``abandoned`` and run again.
"""

from __future__ import annotations

import contextlib
import math
import secrets
from pathlib import Path
from types import TracebackType

from rich.console import Console

from .. import __version__
from ..errors import SsdlabError
from ..fio import fio_binary, fio_version
from ..layout import MANIFEST
from ..manifest import Manifest, StepRecord, now
from ..progress import RunDisplay
from ..runner import (
    DEFAULT_FILE_BYTES,
    RunHook,
    RunInterrupted,
    StepFailed,
    _Run,
    end_status,
    guard_run,
    save_manifest,
    target_differences,
)
from ..sysinfo import host_info
from ..target import plan_target, prepare_target, release_target
from .trials import (
    VERDICTS,
    ActRecord,
    FioSettings,
    SliceResult,
    Trial,
    TrialStatus,
    judge_fio_slice,
)
from .workload import ActConfig, derive, fio_jobs, format_derived

SUITE = "act"


def _open_manifest(out: Path, label: str | None, target: Path | None) -> Manifest:
    if not (out / MANIFEST).exists():
        return Manifest(
            run_id=f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}",
            label=label or (target.name if target else "temporary file"),
            suite=SUITE,
            suite_description="Aerospike ACT storage workload emulated with fio",
            host=host_info(),
        )
    manifest = Manifest.load(out)
    if manifest.source == "import":
        raise SsdlabError(f"{out} holds imported results; use another --out for ACT trials")
    if manifest.suite != SUITE:
        raise SsdlabError(f"{out} holds a run of suite {manifest.suite!r}; use another --out")
    return manifest


class ActRunner:
    """ACT trials against one target in one results directory; use as a context manager
    (it releases the target and closes the run, also on errors and interrupts). The results
    directory is locked from construction to exit."""

    def __init__(
        self,
        out: Path,
        *,
        target: Path | None = None,
        target_size: int | None = None,
        label: str | None = None,
        destroy_data: str | None = None,
        hooks: list[RunHook] | None = None,
        console: Console | None = None,
    ) -> None:
        binary = fio_binary()
        self.out = out
        with contextlib.ExitStack() as stack:  # the lock is kept only if all goes well
            stack.enter_context(guard_run(out, "act"))
            manifest = _open_manifest(out, label, target)
            size_bytes = target_size or DEFAULT_FILE_BYTES
            planned = plan_target(
                target, out, size_bytes=size_bytes, writes=True, destroy_data=destroy_data
            )
            if manifest.target is not None and (
                differences := target_differences(manifest.target, planned)
            ):
                raise SsdlabError(
                    f"{out} holds ACT trials on {manifest.target.path}, not on this command's "
                    f"target: {'; '.join(differences)}; use another --out"
                )
            manifest.target = prepare_target(
                target, out, size_bytes=size_bytes, writes=True, planned=planned
            )
            manifest.fio_version = fio_version(binary)
            manifest.ssdlab_version = __version__
            manifest.status, manifest.ended = "running", None
            manifest.started = manifest.started or now()
            stopped = "ssdlab stopped during it"  # killed: no verdict, the slice's data is partial
            for step in manifest.steps:
                if step.status == "running":
                    step.status, step.error = "failed", stopped
            try:
                self.record = ActRecord.load(out)
                for trial in self.record.trials:
                    if trial.status == "running":
                        trial.status, trial.reason = "abandoned", stopped
                self.record.save(out)
                manifest.save(out)
            except BaseException:
                release_target(manifest.target)
                raise
            self._lock = stack.pop_all()
        display = RunDisplay("ACT trials", 0, console)
        self.run = _Run(manifest, out, display, "stop", hooks or [])

    @property
    def manifest(self) -> Manifest:
        return self.run.manifest

    def __enter__(self) -> ActRunner:
        self.run.display.__enter__()
        self.run.call(self.manifest.notes, "start", self.out, self.manifest)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.run.display.__exit__(exc_type, exc, tb)
            self.manifest.status = "complete" if exc is None else end_status(exc)
            try:
                self.run.call(self.manifest.notes, "finish", self.out, self.manifest)
            finally:
                assert self.manifest.target is not None
                release_target(self.manifest.target)  # first: it may free what the save needs
                self.manifest.ended = now()
                save_manifest(self.manifest, self.out)
        finally:
            self._lock.close()

    def trial(self, load: float, settings: FioSettings, *, duration_s: int, slice_s: int) -> Trial:
        """The trial at ``load``: one already judged with the same settings, else a new run."""
        for done in self.record.trials:
            if (
                done.source == "fio"
                and done.status in VERDICTS
                and math.isclose(done.load, load)
                and (done.settings, done.duration_s, done.slice_s)
                == (settings, duration_s, slice_s)
            ):
                self.run.display.print(f"{done.summary} (judged earlier)")
                return done
        if duration_s % slice_s or slice_s * 1000 < 2 * settings.hist_msec:
            raise SsdlabError(
                f"the duration ({duration_s} s) must be whole slices of {slice_s} s, and a slice "
                f"at least two histogram windows ({settings.hist_msec} ms)"
            )
        assert self.manifest.target is not None
        config = ActConfig.model_validate(settings.config)
        try:
            derived = format_derived(derive(config, load))
            job = fio_jobs(
                config,
                load,
                self.manifest.target.path,
                duration_s=slice_s,
                hist_msec=settings.hist_msec,
                small_read_jobs=settings.small_read_jobs,
                size=self.manifest.target.size_bytes,
                ioengine=settings.ioengine,
                direct=self.manifest.target.direct_supported,
                options=settings.fio_options,
                allow_fio_options=settings.allowed_fio_options,
            )
        except ValueError as exc:
            raise SsdlabError(f"{load:g}x load: {exc}") from None
        trial = self.record.add(
            Trial(
                trial=0,
                source="fio",
                load=load,
                duration_s=duration_s,
                slice_s=slice_s,
                started=now(),
                settings=settings,
            )
        )
        self.record.save(self.out)
        display = self.run.display
        display.add_planned(duration_s)
        display.print(
            f"trial {trial.trial}: {load:g}x load on {self.manifest.target.path}\n"
            + derived.rstrip("\n")
        )
        status: TrialStatus = "passed"
        try:
            for n in range(1, duration_s // slice_s + 1):
                result, reason, status = self._slice(trial, n, job, settings.max_lag_s)
                trial.slices.append(result)
                if reason:
                    trial.reason = reason
                    break
                self.record.save(self.out)
        except (RunInterrupted, KeyboardInterrupt):
            trial.status = "abandoned"
            trial.reason = f"interrupted during slice {len(trial.slices) + 1}"
            raise
        except SsdlabError as exc:
            trial.status, trial.reason = "abandoned", str(exc)
            raise
        else:
            if status == "passed":
                trial.mark_passed()
            else:  # stopped at its first failing slice
                trial.status = status
                display.add_planned(-(duration_s - len(trial.slices) * slice_s))
        finally:
            trial.ended = now()
            self.record.save(self.out)
        display.print(trial.summary)
        return trial

    def _slice(
        self, trial: Trial, n: int, job: str, max_lag_s: float
    ) -> tuple[SliceResult, str | None, TrialStatus]:
        """Run one slice as a results step (as the runner runs a step) and judge it."""
        index = len(self.manifest.steps) + 1
        name = f"trial-{trial.trial:02d}-slice-{n:03d}"
        record = StepRecord(
            index=index, name=name, dir=f"{index:03d}-{name}", block=f"trial-{trial.trial}", round=n
        )
        self.manifest.steps.append(record)
        assert self.manifest.target is not None
        record.direct = self.manifest.target.direct_supported
        label = f"trial {trial.trial} ({trial.load:g}x) slice {n}"
        outcome, error, judged = self.run.execute(
            record,
            job,
            label,
            trial.slice_s,
            lambda d: judge_fio_slice(
                d, slice_no=n, slice_s=trial.slice_s, max_lag_s=max_lag_s, step=name
            ),
        )
        display = self.run.display
        if outcome.interrupted:
            raise RunInterrupted(
                f"interrupted during trial {trial.trial}, slice {n}; results so far are in "
                f"{self.out} (run the same command again to continue)"
            )
        if judged is None:
            display.end_step(f"slice {n}: failed: {error}")
            raise StepFailed(f"trial {trial.trial}, slice {n} failed: {error}")
        result, _, status = judged
        display.end_step(
            f"slice {n}: {result.pct_over_1ms:.2f} / {result.pct_over_8ms:.2f} / "
            f"{result.pct_over_64ms:.2f} % of reads >= 1 / 8 / 64 ms, "
            f"{result.read_rate:,.0f} of {result.requested_read_rate:,.0f} reads/s: {status}"
        )
        return judged

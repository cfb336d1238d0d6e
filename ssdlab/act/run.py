"""Run ACT trials with the fio emulation, keeping everything in an ssdlab results directory.

fio buffers its logs until a job ends, so each slice is its own fio run (the ACT job file with
runtime = the slice) judged before the next starts; a trial is consecutive slices until its
duration or its first failing slice. Layout: the manifest (suite ``act``) lists one step per
slice, ``trial-NN-slice-NNN`` with block ``trial-<n>`` and round = slice, whose directory holds
the job file, fio's json+ output and the small reads' histogram logs, exactly as
:mod:`ssdlab.execute` keeps a step; ``act.json`` holds the trials and their slice tables.

Running again into the same directory reuses every trial already judged with the same load
and settings (a search resumes where it stopped); an interrupted trial is kept as
``abandoned`` and run again.
"""

from __future__ import annotations

import contextlib
import math
import numbers
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

from rich.console import Console

from ..errors import SsdlabError
from ..execute import LocalFio, RunHook, RunInterrupted, StepExecutor, StepFailed
from ..fio import fio_binary
from ..io.text import check_utf8_path
from ..manifest import Manifest, now
from ..progress import RunDisplay
from ..runner import DEFAULT_FILE_BYTES
from ..session import guard_run, new_manifest, resumed, set_up_local
from ..target import check_file_size
from .search import Search, check_search, find_score
from .trials import (
    VERDICTS,
    ActRecord,
    DeviceId,
    FioSettings,
    SearchRecord,
    SliceResult,
    Trial,
    TrialStatus,
    judge_fio_slice,
)
from .workload import (
    ActConfig,
    TrialTiming,
    act_config,
    derive,
    fio_jobs,
    fio_settings,
    format_derived,
    load_problem,
)

SUITE = "act"
DESCRIPTION = "Aerospike ACT storage workload emulated with fio"


class ActRunner:
    """ACT trials against one target in one results directory; use as a context manager
    (it releases the target and closes the run, also on errors and interrupts). The results
    directory and the target are locked from construction to exit."""

    record: ActRecord

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
        if target_size is not None:
            check_file_size(target_size)
        binary = fio_binary()
        self.out = out

        def ready(manifest: Manifest) -> None:
            stopped = "ssdlab stopped during it"  # killed: no verdict, the slice's data is partial
            for step in manifest.steps:
                if step.status == "running":
                    step.status, step.error = "failed", stopped
            self.record = ActRecord.load(out)
            for trial in self.record.trials:
                if trial.status == "running":
                    trial.status, trial.reason = "abandoned", stopped
            self.record.save(out)

        with contextlib.ExitStack() as stack:  # the lock is kept only if all goes well
            stack.enter_context(guard_run(out, "act"))
            manifest = stack.enter_context(
                set_up_local(
                    out,
                    target,
                    size_bytes=target_size or DEFAULT_FILE_BYTES,
                    writes=True,
                    destroy_data=destroy_data,
                    binary=binary,
                    open_run=lambda planned: (
                        resumed(out, SUITE, planned, "ACT trials")
                        or new_manifest(SUITE, DESCRIPTION, label, target)
                    ),
                    ready=ready,
                )
            )
            self._stack = stack.pop_all()
        self.display = RunDisplay("ACT trials", 0, console)
        self.run = StepExecutor(
            manifest, out, self.display, LocalFio(self.display.fio_status), hooks or []
        )

    @property
    def manifest(self) -> Manifest:
        return self.run.manifest

    def __enter__(self) -> ActRunner:
        with contextlib.ExitStack() as stack:
            stack.enter_context(self.run.running())
            stack.enter_context(self.display)
            self._stack.push(stack.pop_all())
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stack.__exit__(exc_type, exc, tb)

    def trial(self, load: float, settings: FioSettings, *, duration_s: int, slice_s: int) -> Trial:
        """The trial at ``load``: one already judged with the same settings, else a new run;
        SsdlabError, before anything is recorded, for a load fio cannot run."""
        if problem := load_problem(load):
            raise SsdlabError(problem)
        for done in self.record.trials:
            if (
                done.source == "fio"
                and done.status in VERDICTS
                and math.isclose(done.load, load)
                and (done.settings, done.duration_s, done.slice_s)
                == (settings, duration_s, slice_s)
            ):
                self.display.print(f"{done.summary} (judged earlier)")
                return done
        if problem := _timing_problem(TrialTiming(duration_s, slice_s, settings.hist_msec)):
            raise SsdlabError(problem)
        assert self.manifest.target is not None
        config = ActConfig.model_validate(settings.config)
        try:
            rates = derive(config, load)
            derived = format_derived(rates)
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
        if not rates.internal_read_reqs_per_sec:  # fio would run no small-read job to judge
            raise SsdlabError(
                f"{load:g}x load: the small reads round to 0/s (read-reqs-per-sec "
                f"{config.read_reqs_per_sec} x load x {config.num_devices} device(s)); ACT "
                "judges a trial by its reads"
            )
        trial = self.record.add(
            Trial(
                trial=0,
                source="fio",
                load=load,
                duration_s=duration_s,
                slice_s=slice_s,
                started=now(),
                settings=settings,
                devices=[DeviceId.of_target(self.manifest.target)],
            )
        )
        self.record.save(self.out)
        display = self.display
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
        name = f"trial-{trial.trial:02d}-slice-{n:03d}"
        record = self.run.new_record(name, block=f"trial-{trial.trial}", round_no=n)
        assert self.manifest.target is not None
        record.direct = self.manifest.target.direct_supported
        label = f"trial {trial.trial} ({trial.load:g}x) slice {n}"
        outcome, error, judged = self.run.execute(
            record,
            job,
            label,
            trial.slice_s,
            lambda d, fio: judge_fio_slice(
                d, fio, slice_no=n, slice_s=trial.slice_s, max_lag_s=max_lag_s, step=name
            ),
        )
        display = self.display
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


def _timing_problem(timing: TrialTiming) -> str | None:
    """Why trials cannot run with ``timing``, or None."""
    if timing.duration_s % timing.slice_s or timing.slice_s * 1000 < 2 * timing.hist_msec:
        return (
            f"the duration ({timing.duration_s} s) must be whole slices of {timing.slice_s} s, "
            f"and a slice at least two histogram windows ({timing.hist_msec} ms)"
        )
    return None


def _check_numbers(counts: Mapping[str, int | None], max_lag_s: float | None) -> None:
    """SsdlabError naming the first option of ``counts`` (option -> value) that is given and
    not a whole number >= 1, or a ``max_lag_s`` (--max-lag) that is not a finite number > 0."""
    for name, value in counts.items():
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, int) or value < 1
        ):
            raise SsdlabError(f"{name} must be a whole number of at least 1, not {value!r}")
    if max_lag_s is not None and not (
        isinstance(max_lag_s, numbers.Real)
        and not isinstance(max_lag_s, bool)
        and math.isfinite(max_lag_s)
        and max_lag_s > 0
    ):
        raise SsdlabError(f"--max-lag must be a finite number of seconds > 0, not {max_lag_s!r}")


@dataclass
class ActTrials:
    """Trials of one fio emulation of ACT (``settings`` and ``timing`` fixed) in one results
    directory, made by :func:`act_trials`; a context manager, as :class:`ActRunner`."""

    runner: ActRunner
    settings: FioSettings
    timing: TrialTiming

    def __enter__(self) -> ActTrials:
        self.runner.__enter__()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.runner.__exit__(exc_type, exc, tb)

    def trial(self, load: float) -> Trial:
        """The trial at ``load`` (x the 1x load): one judged earlier, else a new run."""
        timing = self.timing
        return self.runner.trial(
            load, self.settings, duration_s=timing.duration_s, slice_s=timing.slice_s
        )

    def score(
        self, *, start: float | None = None, resolution: float = 1.0, max_load: float = 1024.0
    ) -> Search:
        """The drive's ACT score, the highest load that passes (:func:`find_score`, one trial
        per load it tries), the search kept in the ACT record; SsdlabError for a start,
        resolution or max_load that is not a finite number > 0, or a max_load below start."""
        try:
            search = find_score(
                lambda load: self.trial(load).status == "passed",
                start=start,
                resolution=resolution,
                max_load=max_load,
            )
        except ValueError as exc:
            raise SsdlabError(str(exc)) from None
        record = self.runner.record
        record.searches.append(
            SearchRecord(
                start=start,
                resolution=resolution,
                max_load=max_load,
                duration_s=self.timing.duration_s,
                slice_s=self.timing.slice_s,
                tried=search.tried,
                score=search.score,
                capped=search.capped,
                ended=now(),
            )
        )
        record.save(self.runner.out)
        return search


def act_trials(
    out: Path,
    *,
    settings: Mapping[str, str] | None = None,
    duration_s: int | None = None,
    slice_s: int | None = None,
    hist_msec: int | None = None,
    small_read_jobs: int | None = None,
    ioengine: str = "psync",
    fio_options: Mapping[str, str] | None = None,
    allow_fio_options: Collection[str] = (),
    max_lag_s: float | None = None,
    target: Path | None = None,
    target_size: int | None = None,
    label: str | None = None,
    destroy_data: str | None = None,
    console: Console | None = None,
    load: float | None = None,
    search: tuple[float | None, float, float] | None = None,
) -> ActTrials:
    """ACT trials into ``out`` with ACT's defaults for what is not given: ``settings`` by
    ACT's names with values as text (``{"record-bytes": "1500"}``, :func:`act_config`;
    rates are the 1x load), the timing of :meth:`TrialTiming.of`, the fio settings of
    :func:`fio_settings` (``max_lag_s``: max-lag-sec). Everything is checked before the
    results directory is locked and the target (default: a temporary file of 1 GiB) set
    up, as :class:`ActRunner` does; so are ``load``, the load ``act run`` will try, and
    ``search``, the start (or None), resolution and max load of ``act score`` (SsdlabError
    naming the option: --load, --start, --resolution, --max-load), the timing, the counts and
    ``max_lag_s`` (:func:`_check_numbers`)."""
    check_utf8_path(out, "--out")
    if load is not None and (problem := load_problem(load, "--load")):
        raise SsdlabError(problem)
    if search is not None:
        try:
            check_search(*search, names=("--start", "--resolution", "--max-load"))
        except ValueError as exc:
            raise SsdlabError(str(exc)) from None
    counts = {"--duration": duration_s, "--slice": slice_s, "--hist-msec": hist_msec}
    _check_numbers({**counts, "--small-read-jobs": small_read_jobs}, max_lag_s)
    config = act_config(settings or {})
    timing = TrialTiming.of(config, duration_s=duration_s, slice_s=slice_s, hist_msec=hist_msec)
    if problem := _timing_problem(timing):
        raise SsdlabError(problem)
    fio = fio_settings(
        config,
        timing,
        small_read_jobs=small_read_jobs,
        ioengine=ioengine,
        options=fio_options,
        allow_fio_options=allow_fio_options,
        max_lag_s=max_lag_s,
    )
    runner = ActRunner(
        out,
        target=target,
        target_size=target_size,
        label=label,
        destroy_data=destroy_data,
        console=console,
    )
    if timing.slice_s <= fio.max_lag_s:  # said, in the run's notes too: no verdict is wrong
        note = (
            f"slices of {timing.slice_s} s cannot show a lag above max-lag-sec "
            f"({fio.max_lag_s:g} s): fio restarts its rate clock every slice, so these trials "
            "cannot fail as can't keep up"
        )
        if note not in runner.manifest.notes:
            runner.manifest.notes.append(note)
        runner.display.print(f"warning: {note}")
    return ActTrials(runner, fio, timing)

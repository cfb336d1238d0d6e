"""Run a suite: one fio process per step, raw results kept on disk, manifest kept current.

Layout of a results directory (names in :mod:`ssdlab.layout`)::

    manifest.json                 run, host, target, fio version, every step's status
    steps/NNN-<step>/job.fio      the exact job file fio ran
    steps/NNN-<step>/fio.json     fio's json+ output
    steps/NNN-<step>/fio_*.log    per-second bw/iops/lat logs and latency histogram logs
    steps/NNN-<step>/fio.stderr   fio's error output

Each step runs through :class:`ssdlab.execute.StepExecutor` (in ``NNN-<step>.partial``,
renamed when fio has exited; only the manifest says whether it is complete). Re-running with
the same results directory continues at the first step that is not ``ok``: finished steps
are neither repeated nor rewritten, and a step that was interrupted or killed is run again
from its start. Round blocks are judged again from the rounds already on disk. Only the same
run is continued: the suite as run, its ``--set`` overrides, scale, label (when given) and
target must match the manifest's (:func:`ssdlab.session.open_manifest`). One process at a
time writes to a results directory (:func:`ssdlab.session.guard_run`), and one run at a time
uses a target (:func:`ssdlab.lock.target_lock`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import polars as pl
from rich.console import Console

from . import __version__, fio_options
from .analysis.fill import cut_at_cap
from .analysis.repeats import interval
from .analysis.steady_state import steady_round
from .console import plural
from .errors import InputError, SsdlabError
from .estimate import Rates, suite_seconds, workload_key
from .execute import LocalFio, RunHook, RunInterrupted, StepExecutor, StepFailed
from .fio import fio_binary, job_file, pinned_clocksource
from .io.fio_json import FioJson, read_fio_json
from .io.text import check_utf8_path
from .layout import FIO_JSON, FLEET_FILE, step_dir
from .manifest import LoadPoint, Manifest, SteadyStateRecord, StepRecord, TargetInfo
from .pipeline import result_jobs
from .progress import RunDisplay, result_line
from .repeat import measured_step, repeat_name, split_repeat
from .session import guard_run, open_manifest, ready_run, set_up_local
from .suite import Rounds, Step, Suite, Sweep, load_suite, parse_param, split_rate
from .tables import format_bytes, format_iops
from .target import check_file_size
from .units import format_size

if TYPE_CHECKING:
    from .fleet.store import Fleet
    from .fleet.targets import Mode

__all__ = [
    "Finished",
    "PreparedRun",
    "RunHook",
    "RunInterrupted",
    "RunOptions",
    "StepFailed",
    "SuiteSteps",
    "check_fits",
    "check_job_files",
    "default_file_size",
    "prepare_run",
    "run",
    "run_rates",
    "run_suite",
    "step_headline",
    "suite_jobs",
    "sweep_jobs",
    "tracked_value",
]

DEFAULT_FILE_BYTES = 2**30
OnError = Literal["stop", "continue"]


def default_file_size(suite: Suite, scale: float = 1.0) -> int:
    """Bytes a file target needs: the largest absolute size + offset of any step (``suite``
    is already scaled), or 1 GiB x ``scale`` when every step works on a share (``75%``) of
    the target, which scaling leaves as it is."""
    needs = [n for s in suite.all_steps() if (n := fio_options.furthest_byte(s, None)) is not None]
    return max(needs, default=int(DEFAULT_FILE_BYTES * scale))


def check_fits(suite: Suite, target: TargetInfo) -> None:
    """SsdlabError when a step's absolute size + offset does not fit in ``target``, or its
    block is larger than the span it works on (fio would refuse the step when it starts)."""
    if target.size_bytes is None:
        return
    for step in suite.all_steps():
        needs = fio_options.furthest_byte(step, target.size_bytes)
        if needs is not None and needs > target.size_bytes:
            reach = (
                "offset + offset_increment x (numjobs - 1) + size"
                if "offset_increment" in step.options
                else "size + offset"
            )
            raise SsdlabError(
                f"step '{step.name}' needs {needs:,} bytes of the target ({reach}) but "
                f"{target.path} holds {target.size_bytes:,}; give a larger --target-size or "
                "another target"
            )
        span = fio_options.span_bytes(step, target.size_bytes)
        if step.bs_bytes > span:
            raise SsdlabError(
                f"step '{step.name}': its block ({format_size(step.bs_bytes)}) is larger than "
                f"the {format_size(span)} it works on in {target.path}; fio would refuse it"
            )


#: the maximum a plan's sample rate-limited job of a sweep without ``max_iops`` is split from
#: (fio --parse-only checks the option, not the figure)
PLAN_SAMPLE_IOPS = 100_000.0


def sweep_jobs(sweep: Sweep) -> list[Step]:
    """The fio runs of ``sweep`` a plan checks: its unlimited workload (when it measures or
    ends with one) and its first rate-limited step (at a sample maximum when the maximum is
    measured: fio's parse checks the option, not the figure)."""
    first = sweep.sweep.fractions[0]
    split = split_rate(first * (sweep.sweep.max_iops or PLAN_SAMPLE_IOPS), sweep.workload)
    name = sweep.measure_name or sweep.unlimited_name
    return ([sweep.named(name)] if name else []) + [sweep.rate_step(first, split.option)]


def suite_jobs(suite: Suite, target: str, clocksource: str | None = None) -> list[tuple[str, str]]:
    """``(step name, job file text)`` of every fio run the suite plans: each step, each
    round block's steps as its first round names them (later rounds differ only in name),
    and each load sweep's unlimited and first rate-limited step (:func:`sweep_jobs`)."""
    steps: list[Step] = []
    for item in suite.steps:
        if isinstance(item, Rounds):
            steps += item.round_steps(1)
        elif isinstance(item, Sweep):
            steps += sweep_jobs(item)
        else:
            steps.append(item)
    header = f"ssdlab {__version__}: suite {suite.name}"
    return [
        (
            step.name,
            job_file(
                step,
                target,
                direct=step.direct,
                header=f"{header}, step {step.name}",
                clocksource=clocksource,
            ),
        )
        for step in steps
    ]


_DROPPED = re.compile(r"^fio: job .* dropped$")


def _parse_only(binary: str, directory: Path, files: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [binary, "--parse-only", *files],
        cwd=directory,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        check=False,
    )


def check_job_files(jobs: list[tuple[str, str]], *, binary: str | None = None) -> list[str]:
    """What fio finds wrong in ``jobs``, a suite's ``(step name, job file text)``
    (:func:`suite_jobs`): ``fio --parse-only`` on each (it reads the options and runs
    nothing: no file is opened, created or written), one line per step it refuses naming
    the step and fio's complaint; empty when fio takes them all. Every step is checked
    before the first one runs, so an option fio does not know fails now, not hours into a
    run."""
    gated = [
        f"step {name!r}: {problem}"
        for name, text in jobs
        if (problem := fio_options.job_file_problem(text))
    ]
    if gated:  # before fio reads them: --parse-only would follow an include
        return gated
    binary = binary or fio_binary()
    with tempfile.TemporaryDirectory(prefix="ssdlab-parse-") as tmp:
        directory = Path(tmp)
        files = []
        for index, (_, text) in enumerate(jobs, 1):
            (directory / f"{index:03d}.fio").write_text(text)
            files.append(f"{index:03d}.fio")
        if not files or _parse_only(binary, directory, files).returncode == 0:
            return []  # one fio for all: it stops at the first bad file, so each is retried
        problems = []
        for (name, _), file in zip(jobs, files, strict=True):
            proc = _parse_only(binary, directory, [file])
            if proc.returncode == 0:
                continue
            said = [line.strip() for line in proc.stderr.splitlines() if line.strip()]
            said = [line for line in said if not _DROPPED.match(line)] or said
            said = said or [line.strip() for line in proc.stdout.splitlines() if line.strip()]
            complaint = "; ".join(dict.fromkeys(said))[:300] or f"exit status {proc.returncode}"
            problems.append(f"step {name!r}: fio --parse-only refuses its job file: {complaint}")
    return problems


def step_headline(step_dir: Path, fio: FioJson) -> str:
    """A step's result in one line; InputError when unusable (:func:`result_jobs`)."""
    return result_line(result_jobs(fio, step_dir / FIO_JSON))


def tracked_value(jobs: pl.DataFrame, metric: str, direction: str | None) -> float:
    """A round's tracked variable: rates summed over directions, latencies IOPS-weighted."""
    if direction:
        jobs = jobs.filter(pl.col("direction") == direction)
    if jobs.is_empty():
        raise InputError(f"no {direction or 'any'} direction to track")
    if metric in ("iops", "bw_bytes_s"):
        return float(jobs[metric].sum())
    return float((jobs[metric] * jobs["iops"]).sum() / jobs["iops"].sum())


def _load_header(load: LoadPoint) -> str:
    """What a load sweep's job file header says of its rate."""
    if load.role == "max":
        return f"load sweep {load.sweep}: unlimited, measures the maximum the rates are of"
    if load.role == "unlimited":
        return f"load sweep {load.sweep}: unlimited, after its rates"
    per = load.rate_iops or ""
    mix = " (read,write)" if "," in per else ""
    return (
        f"load sweep {load.sweep}: rate {load.requested_iops:.0f} IOPS requested = "
        f"{load.numjobs} job(s) x rate_iops={per}{mix} per job, each rounded to whole IOPS "
        f"so the jobs add up to it ({load.fraction:g} x {load.max_iops:.0f} "
        f"{load.max_from} = {load.target_iops:.1f})"
        + (f"; ROUNDED: {load.rounding}" if load.rounding else "")
    )


def _judge_load(record: StepRecord, achieved: float) -> str:
    """Record a sweep step's achieved IOPS and, for a rate, whether it reached its rate
    (a note on the record when it did not, and when rounding moved it); the headline's
    addition."""
    load = record.load
    assert load is not None
    load.achieved_iops = achieved
    if load.role != "rate" or not load.requested_iops:
        return ""
    if load.rounding:
        record.notes.append(f"rate rounded: {load.rounding}")
    share = achieved / load.requested_iops
    load.reached = share >= (load.reach or 0)
    said = f"{share * 100:.1f} % of {format_iops(load.requested_iops)} requested"
    if not load.reached:
        record.notes.append(
            f"missed its rate: {format_iops(achieved)} achieved, {said} (needs "
            f"{(load.reach or 0) * 100:g} %)"
        )
        return f"  MISSED its rate: {said}"
    return f"  ({said})"


#: called before each step that runs (a fleet's lockstep)
Gate = Callable[[StepRecord, Step], None]


@dataclasses.dataclass
class SuiteSteps:
    """The steps and round blocks of a suite, each run through ``executor`` unless already
    ``ok``; ``gate`` (when given) is called before each step that runs. Failures kept by
    ``on_error="continue"`` end :meth:`run` with :class:`StepFailed`."""

    executor: StepExecutor
    on_error: OnError
    gate: Gate | None = None
    failures: list[str] = dataclasses.field(default_factory=list)
    #: "of M" / "of up to M" of the line a resumed run prints at its first step
    _of: str | None = dataclasses.field(default=None, init=False, repr=False)
    #: the round block running
    _block: Rounds | None = dataclasses.field(default=None, init=False, repr=False)
    #: ``--max-spread``: a repeated step runs again while its repeats' IOPS spread more than
    #: this (percent: sample standard deviation over mean), up to ``max_repeats`` runs
    max_spread_pct: float | None = None
    max_repeats: int = 10
    #: the rates size-based steps are estimated with (:mod:`ssdlab.estimate`), learned from
    #: each step that ends (default: the target's class defaults)
    rates: Rates | None = None
    #: the display shows a size-based step's progress as bytes (it takes ``planned_bytes``)
    bytes_progress: bool = False
    #: the rates the display's plan counted each step with: a step starting with another
    #: estimate changes the plan by the difference
    _counted: Rates = dataclasses.field(init=False, repr=False)
    #: the workloads (:func:`~ssdlab.estimate.workload_key`) the suite's size-based steps use
    _wanted: set[tuple[str, str]] = dataclasses.field(default_factory=set, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.rates is None:
            self.rates = Rates.of(self.executor.manifest.target)
        self._counted = self.rates

    def run(self, suite: Suite) -> None:
        """Every step and round block of ``suite``; a resumed run says at its first step
        which step of the suite it resumes at. With :attr:`max_spread_pct`, each group of
        repeated steps (:func:`~ssdlab.repeat.repeat_suite`) is settled before the suite
        goes on (:meth:`settle`)."""
        if self.executor.manifest.steps:
            self._of = f"of {'up to ' if suite.has_rounds else ''}{suite.max_steps}"
        self._wanted = {workload_key(s) for s in suite.all_steps() if s.loops}
        group: list[Step] = []
        for item in suite.steps:
            if measured_step(item):
                group.append(item)
            else:
                self.settle(group)
                group = []
            if isinstance(item, Rounds):
                self.rounds(item)
            elif isinstance(item, Sweep):
                self.sweep(item)
            else:
                self.step(item)
        self.settle(group)
        if self.failures:
            raise StepFailed(
                f"{plural(len(self.failures), 'step')} failed: " + "; ".join(self.failures)
            )

    def step(
        self,
        step: Step,
        block: str | None = None,
        round_no: int | None = None,
        load: LoadPoint | None = None,
    ) -> StepRecord:
        """Run ``step`` unless it is already ``ok``; return its record (``load``: a load
        sweep's step, recorded with it)."""
        executor = self.executor
        record = executor.manifest.record(step.name)
        if record is not None and record.status == "ok":
            executor.display.skip(self._counted.seconds(step))
            return record
        if record is None:
            record = executor.new_record(step.name, workload=step, block=block, round_no=round_no)
        if load is not None:
            record.load, record.workload = load, step
        if self._of is not None:
            executor.display.print(f"resuming at step {record.index} {self._of}")
            self._of = None
        if self.gate is not None:
            self.gate(record, step)
        self._execute(record, step, self._label(record, step))
        return record

    def settle(self, group: list[Step]) -> None:
        """Run further repeats of the steps of ``group`` whose repeats spread more than
        :attr:`max_spread_pct`, the widest ones each in turn, until every step is within it
        or has run :attr:`max_repeats` times. Decided from the results on disk, so a resumed
        run decides the same."""
        limit = self.max_spread_pct
        firsts = [s for s in group if split_repeat(s.name)[1] == 1]
        while limit is not None and firsts:
            again = []
            for step in firsts:
                names = self._repeats(step.name)
                values = self._iops(names)
                spread = interval(values).spread_pct if len(values) > 1 else None
                if spread is not None and spread > limit and len(names) < self.max_repeats:
                    again.append((step, len(names) + 1, spread))
            for step, k, spread in again:
                extra = step.model_copy(update={"name": repeat_name(step.name, k)})
                self.executor.display.print(
                    f"{step.name}: repeats spread {spread:.1f} % (over {limit:g} %): "
                    f"repeat {k} of up to {self.max_repeats}"
                )
                self.executor.display.add_planned(self._counted.seconds(extra))
                self.step(extra)
            if not again:
                return

    def _repeats(self, name: str) -> list[str]:
        """Names of the repeats of step ``name`` that ran (or started)."""
        manifest, found = self.executor.manifest, []
        while manifest.record(repeat_name(name, len(found) + 1)) is not None:
            found.append(repeat_name(name, len(found) + 1))
        return found

    def _iops(self, names: list[str]) -> list[float]:
        """IOPS (all directions) of the ``ok`` steps ``names``."""
        values = []
        for name in names:
            record = self.executor.manifest.record(name)
            if record is None or record.status != "ok":
                continue
            path = step_dir(self.executor.out, record) / FIO_JSON
            try:
                values.append(tracked_value(result_jobs(read_fio_json(path), path), "iops", None))
            except InputError:
                continue
        return values

    def _label(self, record: StepRecord, step: Step) -> str:
        """The step as the progress display names it (a round's step with its round)."""
        block = self._block
        load = record.load
        if load is not None and load.role == "rate" and load.requested_iops:
            return f"[{record.index}] {step.name} at {format_iops(load.requested_iops)}"
        if block is None or record.round is None:
            return f"[{record.index}] {step.name}"
        sub = step.name.removeprefix(f"{block.name}-r{record.round:02d}-")
        return f"[{record.index}] {block.name} round {record.round} of up to {block.max}: {sub}"

    def _execute(self, record: StepRecord, step: Step, label: str) -> None:
        executor, manifest = self.executor, self.executor.manifest
        target = manifest.target
        assert target is not None
        record.direct = step.direct and target.direct_supported
        header = f"ssdlab {__version__}: suite {manifest.suite}, step {step.name}"
        if record.load is not None:
            header += f", {_load_header(record.load)}"
            if record.load.rounding:
                executor.display.print(f"{step.name}: ROUNDED rate: {record.load.rounding}")
        job = job_file(
            step,
            target.path,
            direct=record.direct,
            header=header,
            clocksource=manifest.fio_clocksource,
        )

        short: list[str] = []  # a size-based step that ended at its time cap

        def inspect(directory: Path, fio: FioJson) -> str:
            jobs = result_jobs(fio, directory / FIO_JSON)
            headline = result_line(jobs)
            if record.load is not None:
                headline += _judge_load(record, float(jobs["iops"].fill_null(0).sum()))
            if workload_key(step) in self._wanted:  # a rate later size-based steps use
                self.rates = (self.rates or self._counted).learned(step, jobs)
            written = int(jobs["io_bytes"].sum())
            planned = fio_options.planned_io_bytes(step, target.size_bytes)
            if planned and cut_at_cap(planned, step.runtime_s, written, jobs["runtime_s"].max()):
                short.append(
                    f"{format_bytes(written)} of its planned {format_bytes(planned)} written "
                    f"({written / planned:.0%})"
                )
            return headline

        assert self.rates is not None
        estimate = self.rates.step_time(step)
        executor.display.add_planned(estimate.seconds - self._counted.seconds(step))
        sized = estimate.planned_bytes if self.bytes_progress else None
        outcome, error, headline = executor.execute(
            record, job, label, estimate.seconds, inspect, planned_bytes=sized
        )
        if short and record.status == "ok":
            record.notes.append(f"ended at its time cap: {short[0]}")
            executor.save()
            headline += f"  ENDED AT ITS TIME CAP: {short[0]}"
        said = headline if record.status == "ok" else record.status
        if record.status != "ok" and error and error != record.status:
            said += f": {error}"  # never "interrupted: interrupted"
        executor.display.end_step(f"{step.name}: {said}")
        if outcome.interrupted:
            raise RunInterrupted(
                f"interrupted during step '{step.name}'; results so far are in {executor.out} "
                "(run the same command again to continue)"
            )
        if error:
            message = f"step '{step.name}' failed: {error}"
            if self.on_error == "stop":
                raise StepFailed(message)
            self.failures.append(message)

    def sweep(self, sweep: Sweep) -> None:
        """A load sweep: its maximum (measured by its ``-max`` step or given), each rate
        (recorded, so a resumed run asks for the same rates), then its unlimited step. When
        the maximum cannot be measured (its step failed, ``on_error="continue"``), the rest
        of the sweep is skipped and counted as a failure."""
        spec, manifest = sweep.sweep, self.executor.manifest
        names = sweep.names
        max_iops, max_from = spec.max_iops, "given"
        if sweep.measure_name is not None:
            max_from = "measured"
            point = LoadPoint(sweep=sweep.name, role="max", numjobs=sweep.workload.numjobs)
            record = self.step(sweep.named(sweep.measure_name), sweep.name, load=point)
            measured = record.load.achieved_iops if record.load else None
            if record.status != "ok" or not measured:
                skipped = names[1:]
                skipped_s = len(skipped) * self._counted.seconds(sweep.workload)
                self.executor.display.add_planned(-skipped_s)
                self.failures.append(
                    f"load sweep '{sweep.name}': no maximum measured ({record.name} "
                    f"{record.status}), so its {plural(len(skipped), 'step')} did not run"
                )
                return
            max_iops = measured
        assert max_iops is not None
        for fraction in spec.fractions:
            name = sweep.rate_name(fraction)
            old = manifest.record(name)
            kept = old.load if old is not None and old.load is not None else None
            if kept is not None and kept.rate_iops is not None:  # a resumed run: the same rate
                point = kept.model_copy(update={"achieved_iops": None, "reached": None})
                rate = kept.rate_iops
            else:
                split = split_rate(fraction * max_iops, sweep.workload)
                rate = split.option
                point = LoadPoint(
                    sweep=sweep.name,
                    role="rate",
                    fraction=fraction,
                    max_iops=max_iops,
                    max_from=max_from,  # type: ignore[arg-type]
                    target_iops=split.target_iops,
                    requested_iops=split.requested_iops,
                    rate_iops=rate,
                    numjobs=split.numjobs,
                    reach=spec.reach,
                    rounding=split.rounding_problem(),
                )
            self.step(sweep.rate_step(fraction, rate), sweep.name, load=point)
        if sweep.unlimited_name is not None:
            point = LoadPoint(
                sweep=sweep.name,
                role="unlimited",
                max_iops=max_iops,
                max_from=max_from,  # type: ignore[arg-type]
                numjobs=sweep.workload.numjobs,
            )
            self.step(sweep.named(sweep.unlimited_name), sweep.name, load=point)

    def rounds(self, block: Rounds) -> None:
        """Rounds of ``block`` until its tracked variable is steady or ``max`` rounds. The
        display planned every round up to ``max``: the rounds a block no longer needs are
        taken off its plan when it ends."""
        self._block = block
        try:
            rounds_run = self._rounds(block)
        finally:
            self._block = None
        if rounds_run < block.max:
            round_s = sum(self._counted.seconds(s) for s in block.steps)
            self.executor.display.add_planned(-(block.max - rounds_run) * round_s)

    def _rounds(self, block: Rounds) -> int:
        """The rounds of :meth:`rounds`; returns how many ran (or were run before)."""
        executor = self.executor
        values: list[float] = []
        for round_no in range(1, block.max + 1):
            for step in block.round_steps(round_no):
                self.step(step, block.name, round_no)
            tracked = executor.manifest.record(block.tracked_name(round_no))
            assert tracked is not None
            try:
                if tracked.status != "ok":
                    raise InputError(f"tracked step {tracked.name} {tracked.status}")
                path = step_dir(executor.out, tracked) / FIO_JSON
                jobs = result_jobs(read_fio_json(path), path)
                values.append(tracked_value(jobs, block.metric, block.direction))
            except InputError as exc:
                self._determine(block, values, {"steady": False, "reason": str(exc)})
                return round_no
            state = steady_round(values, block.window, block.max)
            if state is None:
                status = "not steady yet"
            elif state.steady:
                status = f"steady after {plural(round_no, 'round')}"
            else:
                status = f"not steady after {plural(round_no, 'round')} (the most it runs)"
            executor.display.print(f"{block.name}: round {round_no} of up to {block.max}: {status}")
            if state is not None:
                self._determine(block, values, dataclasses.asdict(state))
                return round_no
        return block.max

    def _determine(self, block: Rounds, values: list[float], state: dict) -> None:
        """Record a block's determination; ``round_values`` holds every round's value."""
        manifest = self.executor.manifest
        given = {
            "block": block.name,
            "metric": block.metric,
            "direction": block.direction,
            "track": block.track,
            "window": block.window,
            "max_rounds": block.max,
            "round_values": values,
        }
        record = SteadyStateRecord.model_validate(given | state)
        kept = [d for d in manifest.steady_state if d.block != block.name]
        manifest.steady_state = [*kept, record]
        self.executor.save()


def run_suite(
    suite: Suite,
    out: Path,
    *,
    target: Path | None = None,
    target_size: int | None = None,
    label: str | None = None,
    destroy_data: str | None = None,
    purge_first: bool = False,
    on_error: OnError = "stop",
    scale: float = 1.0,
    params: Mapping[str, str] | None = None,
    hooks: list[RunHook] | None = None,
    console: Console | None = None,
    max_spread_pct: float | None = None,
    max_repeats: int = 10,
) -> Manifest:
    """Run every step of ``suite`` not yet ``ok`` in ``out``; return the final manifest.

    ``on_error="continue"`` records a failed step and goes on; the run then ends with
    :class:`StepFailed` listing the failures. ``purge_first`` purges the target before the
    first step of a new run. ``scale`` and ``params`` (the ``--set`` overrides as given) are
    recorded (the suite passed is already scaled and built with them), as are the fio options
    it opted in to; a resumed run must match them, its label when given, and its target.
    ``max_spread_pct`` re-runs repeated steps (:func:`~ssdlab.repeat.repeat_suite`) whose
    repeats spread more than that, up to ``max_repeats`` runs each (:meth:`SuiteSteps.settle`).
    """
    binary = fio_binary()

    def open_run(planned: TargetInfo) -> Manifest:
        manifest = open_manifest(
            out, suite, label, target, params=params or {}, scale=scale, target_info=planned
        )
        check_fits(suite, planned)
        clocksource = manifest.fio_clocksource if manifest.steps else None
        jobs = suite_jobs(suite, planned.path, clocksource or pinned_clocksource(manifest.host))
        problems = check_job_files(jobs, binary=binary)
        if problems:  # before the target is prepared and any step runs
            more = f" (and {plural(len(problems) - 1, 'other step')})" if len(problems) > 1 else ""
            raise SsdlabError(problems[0] + more)
        return manifest

    def ready(manifest: Manifest) -> None:
        ready_run(manifest, purge_first)

    with (
        guard_run(out, "run"),
        set_up_local(
            out,
            target,
            size_bytes=target_size or default_file_size(suite, scale),
            writes=suite.writes or purge_first,
            destroy_data=destroy_data,
            binary=binary,
            open_run=open_run,
            ready=ready,
        ) as manifest,
    ):
        rates = run_rates(suite, manifest, out)
        display = RunDisplay(f"suite {suite.name}", suite_seconds(suite, rates), console)
        executor = StepExecutor(manifest, out, display, LocalFio(display.fio_status), hooks or [])
        with executor.running(), display:
            SuiteSteps(
                executor,
                on_error,
                max_spread_pct=max_spread_pct,
                max_repeats=max_repeats,
                rates=rates,
                bytes_progress=True,
            ).run(suite)
    return manifest


def run_rates(suite: Suite, manifest: Manifest, out: Path) -> Rates:
    """The rates a run in ``out`` estimates its size-based steps with: its target's class
    defaults and, for a resumed run, what its ``ok`` steps of the workloads they use
    measured (:meth:`~ssdlab.estimate.Rates.learned`; a step that cannot be read is passed
    over)."""
    rates = Rates.of(manifest.target)
    wanted = {workload_key(s) for s in suite.all_steps() if s.loops}
    for record in manifest.steps:
        step = record.workload
        if record.status != "ok" or step is None or workload_key(step) not in wanted:
            continue
        path = step_dir(out, record) / FIO_JSON
        with contextlib.suppress(InputError):
            rates = rates.learned(step, result_jobs(read_fio_json(path), path))
    return rates


@dataclasses.dataclass(frozen=True)
class RunOptions:
    """What ``ssdlab run`` is asked, typed: the options of the same names. ``suite`` is a
    built-in suite's name or a suite file; ``params`` the ``--set`` overrides as written
    (``name=value``); ``targets`` the ``--target``'s (none: a temporary file; several: one
    results directory each under ``out``); ``hosts`` the ``--hosts`` list or file;
    ``max_spread_pct`` ``--max-spread`` in percent."""

    suite: str | Path
    out: Path
    targets: Sequence[Path] = ()
    targets_mode: Mode | None = None
    target_size: int | None = None
    label: str | None = None
    destroy_data: str | None = None
    purge: bool = False
    scale: float = 1.0
    params: Sequence[str] = ()
    allow_fio_options: Sequence[str] = ()
    on_error: OnError = "stop"
    hosts: str | None = None
    repeat: int = 1
    max_spread_pct: float | None = None
    max_repeats: int = 10
    fill_first: str | None = None
    smart: str = "auto"
    power: str | None = None
    power_interval_s: float = 1.0

    def __post_init__(self) -> None:
        """Paths as Paths; SsdlabError for what no command line could give (an empty
        ``--out``, ``--target`` or ``--hosts``; one path or text where a list is taken)."""
        for name in ("targets", "params", "allow_fio_options"):
            if isinstance(getattr(self, name), str | os.PathLike):
                raise SsdlabError(
                    f"{name} takes a list, not one {type(getattr(self, name)).__name__}"
                )
        for name in ("destroy_data", "hosts", "label", "fill_first", "power"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise SsdlabError(f"{name} takes text, not {type(value).__name__}")
        if not str(self.out) or any(not str(t) for t in self.targets):
            raise SsdlabError("--out and --target take a path, not an empty one")
        if self.hosts is not None and not self.hosts.strip():
            raise SsdlabError("--hosts is empty: give HOST[:PORT][=TARGET],... or a file")
        object.__setattr__(self, "out", Path(self.out))
        object.__setattr__(self, "targets", [Path(t) for t in self.targets])


@dataclasses.dataclass(frozen=True)
class PreparedRun:
    """A run's options checked and its suite built: loaded with its ``--set`` overrides,
    scaled, with its fill first and its repeats (what :func:`run` runs and
    :func:`ssdlab.plan.plan` plans). ``params``: the overrides as written, as the manifest
    records them; ``mode``: how several targets run."""

    options: RunOptions
    suite: Suite
    params: dict[str, str]
    mode: Mode


def prepare_run(options: RunOptions) -> PreparedRun:
    """``options`` checked (SsdlabError naming the option that cannot be) and the suite they
    ask for built."""
    o = options
    check_utf8_path(o.out, "--out")
    if o.out.exists() and not o.out.is_dir():
        raise SsdlabError(f"--out {o.out} exists and is not a directory")
    params = dict(parse_param(p) for p in o.params)
    given = dict(p.split("=", 1) for p in o.params)  # recorded as the user wrote them
    suite = load_suite(o.suite, params, allow_fio_options=o.allow_fio_options).scaled(o.scale)
    if o.fill_first:
        from .fill import fill_first

        suite = fill_first(suite, o.fill_first)
    if o.max_spread_pct is not None and o.repeat < 2:
        raise SsdlabError("--max-spread needs --repeat 2 or more (a spread needs repeats)")
    if o.max_spread_pct is not None and o.hosts:
        raise SsdlabError("--max-spread does not apply with --hosts (use --repeat alone)")
    if o.repeat > 1:
        from .repeat import repeat_suite

        suite = repeat_suite(suite, o.repeat)
    if o.target_size is not None:
        check_file_size(o.target_size)
    if o.hosts and (o.targets or o.purge):
        raise SsdlabError(
            "with --hosts each host's target is in the list (HOST=TARGET); "
            "--target and --purge do not apply"
        )
    if o.targets_mode is not None and len(o.targets) < 2:
        raise SsdlabError("--targets-mode applies to two or more --target")
    mode = o.targets_mode or "lockstep"
    if len(o.targets) > 1:
        from .fleet.targets import check_mode

        check_mode(mode, o.max_spread_pct)
    return PreparedRun(o, suite, given, mode)


@dataclasses.dataclass(frozen=True)
class Finished:
    """What :func:`run` ran: a single run's ``manifest``, or the ``fleet`` of several
    targets or hosts; ``summary`` says it in one line."""

    summary: str
    manifest: Manifest | None = None
    fleet: Fleet | None = None


def run(options: RunOptions, console: Console | None = None) -> Finished:
    """Run what ``options`` ask for, as ``ssdlab run`` does: on one target
    (:func:`run_suite`), on several targets of this machine
    (:func:`~ssdlab.fleet.targets.run_targets`) or on fio servers (``hosts``:
    :func:`~ssdlab.fleet.run.run_fleet`), with the telemetry ``smart`` and ``power`` ask
    for. ``console`` shows the progress (default: stderr)."""
    from .telemetry.hooks import telemetry_hooks

    prepared = prepare_run(options)
    o, suite, mode = options, prepared.suite, prepared.mode
    hooks = telemetry_hooks(o.smart, o.power, o.power_interval_s)  # a wrong option fails now
    if len(o.targets) > 1:
        from .fleet.targets import run_targets

        fleet = run_targets(
            suite,
            o.targets,
            o.out,
            mode=mode,
            label=o.label,
            target_size=o.target_size,
            destroy_data=o.destroy_data,
            purge_first=o.purge,
            on_error=o.on_error,
            scale=o.scale,
            params=prepared.params,
            hooks=lambda: telemetry_hooks(o.smart, o.power, o.power_interval_s),
            console=console,
            max_spread_pct=o.max_spread_pct,
            max_repeats=o.max_repeats,
        )
        count = plural(fleet.members.height, "target")
        return Finished(
            f"{count} complete ({mode}); results in {o.out} ({FLEET_FILE})", None, fleet
        )
    if o.hosts:
        from .fleet import parse_hosts, run_fleet

        fleet = run_fleet(
            suite,
            parse_hosts(o.hosts),
            o.out,
            label=o.label,
            target_size=o.target_size,
            destroy_data=o.destroy_data,
            on_error=o.on_error,
            scale=o.scale,
            params=prepared.params,
            hooks=hooks,
            console=console,
        )
        count = plural(fleet.members.height, "host")
        return Finished(f"{count} complete; results in {o.out} ({FLEET_FILE})", None, fleet)
    manifest = run_suite(
        suite,
        o.out,
        target=o.targets[0] if o.targets else None,
        target_size=o.target_size,
        label=o.label,
        destroy_data=o.destroy_data,
        purge_first=o.purge,
        on_error=o.on_error,
        scale=o.scale,
        params=prepared.params,
        hooks=hooks,
        console=console,
        max_spread_pct=o.max_spread_pct,
        max_repeats=o.max_repeats,
    )
    return Finished(f"{plural(len(manifest.steps), 'step')} complete; results in {o.out}", manifest)

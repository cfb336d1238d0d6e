"""Run a suite: one fio process per step, raw results kept on disk, manifest kept current.

Layout of a results directory::

    manifest.json                 run, host, target, fio version, every step's status
    steps/NNN-<step>/job.fio      the exact job file fio ran
    steps/NNN-<step>/fio.json     fio's json+ output
    steps/NNN-<step>/fio_*.log    per-second bw/iops/lat logs and latency histogram logs
    steps/NNN-<step>/fio.stderr   fio's error output

A step runs in ``NNN-<step>.partial`` and is renamed when fio has exited; only the manifest
says whether it is complete. Re-running with the same results directory continues at the
first step that is not ``ok``: finished steps are neither repeated nor rewritten, and a
step that was interrupted or killed is run again from its start. Round blocks are judged
again from the rounds already on disk.
"""

from __future__ import annotations

import dataclasses
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Literal, TypeVar

import polars as pl
from rich.console import Console

from . import __version__
from .analysis.steady_state import steady_round
from .errors import InputError, SsdlabError
from .fio import FioOutcome, fio_binary, fio_version, job_file, pinned_clocksource, run_fio
from .io import read_fio_json
from .manifest import MANIFEST, Manifest, StepRecord, now
from .progress import RunDisplay
from .suite import Rounds, Step, Suite
from .sysinfo import host_info
from .tables import format_bw, format_iops
from .target import prepare_target, purge, release_target
from .units import parse_size

FIO_JSON = "fio.json"
JOB_FILE = "job.fio"
DEFAULT_FILE_BYTES = 2**30
OnError = Literal["stop", "continue"]
T = TypeVar("T")


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


class RunInterrupted(SsdlabError):
    """The user stopped the run; everything measured so far is kept."""


class StepFailed(SsdlabError):
    """A step's fio run failed; earlier results are kept."""


def default_file_size(suite: Suite) -> int:
    """Bytes a file target needs: the largest absolute size + offset of any step, or 1 GiB
    when every step works on a share (``75%``) of the target."""
    needs = [
        parse_size(s.size) + (parse_size(s.offset) if s.offset and "%" not in s.offset else 0)
        for s in suite.all_steps()
        if s.size and "%" not in s.size
    ]
    return max(needs, default=DEFAULT_FILE_BYTES)


def inspect_step(step_dir: Path) -> tuple[pl.DataFrame, str]:
    """fio's per-direction rows and a one-line headline; InputError when unusable."""
    jobs = read_fio_json(step_dir / FIO_JSON).jobs
    errors = [e for e in jobs["error"].unique().to_list() if e]
    if errors:
        raise InputError(f"fio reported error {errors[0]} ({os.strerror(errors[0])})")
    iops = float(jobs["iops"].sum())
    bw = float(jobs["bw_bytes_s"].sum())
    p99 = jobs["clat_p99_ns"].max()
    tail = f"  clat p99 {p99 / 1000:,.1f} µs" if p99 is not None else ""
    return jobs, f"{format_iops(iops)}  {format_bw(bw)}{tail}"  # MB/s, as in reports


def tracked_value(jobs: pl.DataFrame, metric: str, direction: str | None) -> float:
    """A round's tracked variable: rates summed over directions, latencies IOPS-weighted."""
    if direction:
        jobs = jobs.filter(pl.col("direction") == direction)
    if jobs.is_empty():
        raise InputError(f"no {direction or 'any'} direction to track")
    if metric in ("iops", "bw_bytes_s"):
        return float(jobs[metric].sum())
    return float((jobs[metric] * jobs["iops"]).sum() / jobs["iops"].sum())


@dataclasses.dataclass
class _Run:
    manifest: Manifest
    out: Path
    display: RunDisplay
    on_error: OnError
    hooks: list[RunHook] = dataclasses.field(default_factory=list)
    failures: list[str] = dataclasses.field(default_factory=list)

    def call(self, notes: list[str], method: str, *args: object) -> None:
        """Call ``method`` on every hook; their user-facing errors become notes."""
        for hook in self.hooks:
            try:
                getattr(hook, method)(*args)
            except SsdlabError as exc:
                notes.append(f"{type(hook).__name__}.{method}: {exc}")
                self.display.print(f"warning: {exc}")

    def save(self) -> None:
        self.manifest.save(self.out)

    def step(self, step: Step, block: str | None = None, round_no: int | None = None) -> StepRecord:
        """Run ``step`` unless it is already ``ok``; return its record."""
        record = self.manifest.record(step.name)
        if record is not None and record.status == "ok":
            self.display.add_planned(-step.planned_s)
            return record
        if record is None:
            index = len(self.manifest.steps) + 1
            record = StepRecord(
                index=index,
                name=step.name,
                dir=f"{index:03d}-{step.name}",
                workload=step,
                block=block,
                round=round_no,
            )
            self.manifest.steps.append(record)
        self._execute(record, step)
        return record

    def launch(self, step_dir: Path, record: StepRecord) -> FioOutcome:
        """Run fio on the step's job file (a fleet member runs it as a fio client instead)."""
        return run_fio(step_dir / JOB_FILE, step_dir / FIO_JSON, on_status=self.display.fio_status)

    def run_items(self, suite: Suite) -> None:
        """Every step and round block of ``suite``; failures kept by ``on_error=continue``
        end it with :class:`StepFailed`."""
        for item in suite.steps:
            if isinstance(item, Rounds):
                self.rounds(item)
            else:
                self.step(item)
        if self.failures:
            raise StepFailed(f"{len(self.failures)} step(s) failed: " + "; ".join(self.failures))

    def execute(
        self,
        record: StepRecord,
        job: str,
        label: str,
        planned_s: float,
        inspect: Callable[[Path], T],
    ) -> tuple[FioOutcome, str | None, T | None]:
        """Run the fio ``job`` text as the step of ``record``: in its ``.partial`` directory,
        hooks around fio, then ``inspect(step_dir)`` (an InputError becomes the step's error),
        the rename and the manifest update. Returns fio's outcome, the error, what ``inspect``
        returned."""
        final = self.out / "steps" / record.dir
        partial = final.with_name(final.name + ".partial")
        for old in (final, partial):
            shutil.rmtree(old, ignore_errors=True)
        partial.mkdir(parents=True)
        (partial / JOB_FILE).write_text(job)
        record.status, record.started, record.ended, record.error = "running", now(), None, None
        record.notes = []
        self.save()
        self.call(record.notes, "before_step", partial, record)
        self.display.start_step(label, planned_s)
        outcome = self.launch(partial, record)
        record.notes += [n for n in outcome.notes if n.startswith("fio:")]  # fio's warnings
        self.call(record.notes, "after_step", partial, record)
        error, inspected = outcome.error, None
        if error is None or outcome.interrupted:
            try:
                inspected = inspect(partial)
            except InputError as exc:
                error = error or str(exc)
        os.replace(partial, final)
        record.ended = now()
        record.status = "interrupted" if outcome.interrupted else ("failed" if error else "ok")
        record.error = error
        self.save()
        return outcome, error, inspected

    def _execute(self, record: StepRecord, step: Step) -> None:
        target = self.manifest.target
        assert target is not None
        record.direct = step.direct and target.direct_supported
        header = f"ssdlab {__version__}: suite {self.manifest.suite}, step {step.name}"
        job = job_file(
            step,
            target.path,
            direct=record.direct,
            header=header,
            clocksource=self.manifest.fio_clocksource,
        )
        label = f"[{record.index}] {step.name}"
        outcome, error, headline = self.execute(
            record, job, label, step.planned_s, lambda d: inspect_step(d)[1]
        )
        self.display.end_step(
            f"{step.name}: {headline if record.status == 'ok' else f'{record.status}: {error}'}"
        )
        if outcome.interrupted:
            raise RunInterrupted(
                f"interrupted during step '{step.name}'; results so far are in {self.out} "
                "(run the same command again to continue)"
            )
        if error:
            message = f"step '{step.name}' failed: {error}"
            if self.on_error == "stop":
                raise StepFailed(message)
            self.failures.append(message)

    def rounds(self, block: Rounds) -> None:
        """Rounds of ``block`` until its tracked variable is steady or ``max`` rounds."""
        values: list[float] = []
        per_round = sum(s.planned_s for s in block.steps)
        for round_no in range(1, block.max + 1):
            if round_no > block.window:
                self.display.add_planned(per_round)
            for step in block.round_steps(round_no):
                self.step(step, block.name, round_no)
            tracked = self.manifest.record(block.tracked_name(round_no))
            assert tracked is not None
            try:
                if tracked.status != "ok":
                    raise InputError(f"tracked step {tracked.name} {tracked.status}")
                jobs = inspect_step(self.out / "steps" / tracked.dir)[0]
                values.append(tracked_value(jobs, block.metric, block.direction))
            except InputError as exc:
                self._determine(block, values, {"steady": False, "reason": str(exc)})
                return
            state = steady_round(values, block.window, block.max)
            status = "steady" if state and state.steady else f"not steady ({len(values)} rounds)"
            self.display.print(f"{block.name}: round {round_no}/{block.max}, {status}")
            if state is not None:
                self._determine(block, values, dataclasses.asdict(state))
                return

    def _determine(self, block: Rounds, values: list[float], state: dict) -> None:
        """Record a block's determination; ``round_values`` holds every round's value."""
        entry = {"block": block.name, "metric": block.metric, "direction": block.direction}
        entry |= {"track": block.track, "window": block.window, "max_rounds": block.max}
        entry |= {"round_values": values}
        self.manifest.steady_state = [
            d for d in self.manifest.steady_state if d["block"] != block.name
        ] + [entry | state]
        self.save()


def open_manifest(out: Path, suite: Suite, label: str | None, target: Path | None) -> Manifest:
    definition = suite.model_dump(mode="json")
    if (out / MANIFEST).exists():
        manifest = Manifest.load(out)
        if manifest.suite_definition != definition:
            raise SsdlabError(
                f"{out} holds a run of suite {manifest.suite!r} with other steps or settings; "
                "use another --out to start a new run"
            )
        return manifest
    return Manifest(
        run_id=f"{now():%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}",
        label=label or (target.name if target else "temporary file"),
        suite=suite.name,
        suite_description=suite.description,
        suite_definition=definition,
        host=host_info(),
    )


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
    hooks: list[RunHook] | None = None,
    console: Console | None = None,
) -> Manifest:
    """Run every step of ``suite`` not yet ``ok`` in ``out``; return the final manifest.

    ``on_error="continue"`` records a failed step and goes on; the run then ends with
    :class:`StepFailed` listing the failures. ``purge_first`` purges the target before the
    first step of a new run. ``scale`` is recorded (the suite passed is already scaled).
    """
    binary = fio_binary()
    out.mkdir(parents=True, exist_ok=True)
    manifest = open_manifest(out, suite, label, target)
    manifest.scale = scale
    fresh = not manifest.steps
    manifest.target = prepare_target(
        target,
        out,
        size_bytes=target_size or default_file_size(suite),
        writes=suite.writes or purge_first,
        destroy_data=destroy_data,
    )
    if purge_first and fresh:
        manifest.purge = purge(manifest.target)
    if fresh:  # a resumed run keeps timing itself the way it started
        manifest.fio_clocksource = pinned_clocksource(manifest.host)
    manifest.fio_version = fio_version(binary)
    manifest.ssdlab_version = __version__
    manifest.status, manifest.started, manifest.ended = "running", manifest.started or now(), None
    manifest.save(out)
    display = RunDisplay(f"suite {suite.name}", suite.planned_s, console)
    run = _Run(manifest, out, display, on_error, hooks or [])
    try:
        run.call(manifest.notes, "start", out, manifest)
        with display:
            run.run_items(suite)
        manifest.status = "complete"
    except RunInterrupted:
        manifest.status = "interrupted"
        raise
    except SsdlabError:
        manifest.status = "failed"
        raise
    finally:
        run.call(manifest.notes, "finish", out, manifest)
        manifest.ended = now()
        manifest.save(out)
        release_target(manifest.target)
    return manifest
